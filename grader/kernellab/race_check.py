"""A race the GPU hides is still a race: the CPU backend's race check, as a stage of a GPU grade.

A kernel that races between warps can pass every run on a GPU, whose scheduling happens to hide
it. The CPU backend runs every launch under several thread orders and fails a launch whose orders
leave different memory (grader/cpu). This stage builds the submission a second time, on the CPU
backend, and runs the test executables of the tasks that need it on small cases only (every size
in RACE_SIZES with the tests' block sizes, as the hidden group: the secret seed, those sizes),
recorded and judged against the reference's CPU-backend records like any group. A failed group
is the task's finding; the manifest says what it costs.

The stage has a plain interface (data in, data out) for the grading pipeline to call beside the
GPU's runs: `check_races(...)` gives, per test executable, a RaceCheck.
"""

from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from kernellab.backend import Backend
from kernellab.grading.building import build, student_role_args
from kernellab.grading.groups import judge_group, run_group
from kernellab.grading.run import GradingRun
from kernellab.manifest import Assignment
from kernellab.sandbox.bubblewrap import Sandbox
from kernellab.verdict import Verdict

# Small enough for every launch under three thread orders in seconds; just over a block of 1024,
# and one partial warp, as the sanitizers' sizes (sanitizer.py).
RACE_SIZES = (33, 1025)
# The CPU backend's build here needs no nvcc check: the GPU build already compiled the sources with nvcc.
CPU_ARGS = ("-DKERNELLAB_CPU_NVCC_CHECK=OFF",)
GROUP = "hidden"


@dataclass(frozen=True)
class RaceCheck:
    tests: str
    # PASSED, or the group's verdict on the CPU backend (failed, crashed, build failed, ...).
    verdict: str
    # What the check found (the first failure and what the run reported: "race in ..."), or "".
    finding: str = ""


class _SmallCases(GradingRun):
    """A grading run on the CPU backend whose only group is the hidden one, at RACE_SIZES."""

    def __init__(self, assignment: Assignment, work: Path, sandbox: Sandbox | None, seed: int):
        super().__init__(assignment, Backend.CPU, work, sandbox, seed, CPU_ARGS)
        self.hidden_sizes = RACE_SIZES

    def active_groups(self) -> tuple[str, ...]:
        return (GROUP,)


def check_races(
    assignment: Assignment, solution: Path, work: Path, sandbox: Sandbox | None, seed: int, tests: Sequence[str]
) -> dict[str, RaceCheck]:
    """Per test executable of `tests`, what the CPU backend's thread orders found in `solution`
    (the intake's folder), with the reference built and recorded under `work` once per `work`."""
    run = _SmallCases(assignment, work, sandbox, seed)
    job = work / "race-check"
    built = build(assignment, solution, job / "build", list(tests), (*run.cmake_args, *student_role_args(run.backend)), sandbox)
    checks = {}
    for name in tests:
        if built[name] is not None:
            checks[name] = RaceCheck(name, Verdict.BUILD_FAILED, built[name])
            continue
        result = judge_group(run, run_group(run, job, name, GROUP))
        checks[name] = RaceCheck(name, result.verdict, "" if result.verdict == Verdict.PASSED else result.detail)
    return checks
