"""A race the GPU hides is still a race: the CPU backend's race check, for a GPU grade.

A kernel that races between warps can pass every run on a GPU, whose scheduling happens to hide
it. The CPU backend runs every launch under several thread orders and fails a launch whose orders
leave different memory (grader/cpu). The check builds the submission a second time, on the CPU
backend, and runs the test executables of the tasks that need it on small cases only (every size
of the manifest's `grading.race_sizes` with the tests' block sizes, as the hidden group: the
secret seed, those sizes), recorded and judged against the reference's CPU-backend records like
any group.

What a grading run's submissions share, a RaceCheckRun, lives in its own folder of the grading
run's work folder: the reference's CPU build, whose runtime (its thread orders fixed at compile
time, as in every build of student code) and harness mains each submission's build links instead
of compiling them again, and the reference's records, made once. stage.py builds the check's
programs beside the GPU build (`build_for_races`), runs them beside the GPU's runs
(`run_race_checks`) and turns what they find into findings.
"""

import re
import threading
from collections.abc import Iterator, Sequence
from concurrent.futures import ThreadPoolExecutor
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

from kernellab.applicability import Condition
from kernellab.backend import Backend
from kernellab.deadline import Deadline
from kernellab.errors import InputError
from kernellab.grading import reference
from kernellab.grading.building import Built, build, cpu_fixed_orders_arg, student_role_args
from kernellab.grading.groups import judge_group, out_of_time, reported_errors, run_group, warned_lockstep
from kernellab.grading.isolation import stage as isolation
from kernellab.grading.isolation.splice import Isolation
from kernellab.grading.model import GradingError
from kernellab.grading.resources import PARALLEL_RUNS
from kernellab.grading.run import GradingRun
from kernellab.grading.targets import Programs, programs_of
from kernellab.manifest import Assignment
from kernellab.sandbox.bubblewrap import Sandbox
from kernellab.sandbox.container import ContainerSandbox
from kernellab.verdict import Verdict

# No nvcc check here: the GPU build already compiled the sources with nvcc. The reference's
# runtime is compiled with the thread orders fixed, as a student build's must be: every
# submission's build links it.
CPU_ARGS = ("-DKERNELLAB_CPU_NVCC_CHECK=OFF", cpu_fixed_orders_arg())
GROUP = "hidden"
# Each race size in blocks of one warp and of 1024 threads, the smallest and the largest.
BLOCK_SIZES = "32,1024"
# Where the reference build keeps what a submission's build links instead of compiling.
PREBUILT_RUNTIME = Path("grader/cpu/libkernellab_cpu_runtime.a")
# The check's verdict where the reference does not build or record on the grading machine's CPU
# backend (a GPU host without Boost.Context, say): the machine's shortcoming, never the student's
# (stage.py: a note on a "warn" task, "not graded" where it decides points).
UNAVAILABLE = "not run: the reference does not build or run on this machine's CPU backend"
# What the CPU backend's runtime says of a race it found, within a warp or not (grader/cpu/src/runtime.cpp).
_RACE = re.compile(r"race in kernel ")


@dataclass(frozen=True)
class RaceCheck:
    tests: str
    # PASSED, or the group's verdict on the CPU backend (failed, crashed, build failed, ...).
    verdict: str
    # What the check found: the race the run reported ("race in kernel K launched at file:line:
    # ..."), else the group's first failure; when it passed, the warning of a warp-synchronous
    # race that the task accepts, or "".
    finding: str = ""
    # The array sizes it ran.
    sizes: tuple[int, ...] = ()


class RaceCheckRun(GradingRun):
    """A grading run on the CPU backend whose only group is the hidden one, at the manifest's
    race sizes, in the folder `race-check` of the GPU grading run's work folder."""

    def __init__(self, assignment: Assignment, work: Path, sandbox: Sandbox | ContainerSandbox | None, seed: int,
                 deadline: Deadline | None = None):
        # The GPU run's compile caches: one pair per work folder.
        super().__init__(assignment, Backend.CPU, work / "race-check", sandbox, seed, CPU_ARGS, deadline=deadline,
                         caches_in=work)
        self.hidden_sizes = assignment.grading.race_sizes
        self._unavailable: str | None = None
        self._availability_lock = threading.Lock()

    def unavailable(self) -> str:
        """"" once the reference's CPU build and records exist, else why the CPU backend does not
        build here: found once, as every submission's check would try the same build again."""
        with self._availability_lock:
            if self._unavailable is None:
                try:
                    reference.prepare(self)
                    self._unavailable = ""
                except (GradingError, InputError) as error:
                    self._unavailable = " ".join(line.strip() for line in str(error).strip().splitlines()[:3])
            return self._unavailable

    @contextmanager
    def run_slot(self) -> Iterator[None]:
        """A run slot only: the race check runs on the CPU's cores, and never waits for a GPU's
        measurement (nor makes one wait)."""
        with self.run_slots:
            yield

    def active_groups(self) -> tuple[str, ...]:
        return (GROUP,)

    def group_environment(self, group: str) -> dict[str, str]:
        return {**super().group_environment(group), "KERNELLAB_BLOCK_SIZES": BLOCK_SIZES}

    def prebuilt(self) -> tuple[Path, ...]:
        """The reference build's CPU runtime and harness mains, once it has them."""
        runtime = self.reference_build / PREBUILT_RUNTIME
        return (runtime, *reference.prebuilt_mains(self)) if runtime.is_file() else ()


@dataclass(frozen=True)
class RaceBuild:
    """The check's build of a submission: what built of each test executable, or why the check
    cannot build here at all."""

    # Why the CPU backend does not build on this machine (RaceCheckRun.unavailable), or "".
    unavailable: str
    built: Built
    programs: Programs
    # The test executables built against their task's isolated folder.
    isolated: frozenset[str] = frozenset()


def build_for_races(run: RaceCheckRun, solution: Path, job: Path, tests: Sequence[str],
                    isolations: dict[str, Isolation] | None = None) -> RaceBuild:
    """`tests` built from `solution` (the intake's folder) on the CPU backend under `job`, each
    against its task's isolated folder where it has one (`isolations`, as the GPU build)."""
    if reason := run.unavailable():
        return RaceBuild(reason, {}, {})
    isolations = {tests_name: isolation for tests_name, isolation in (isolations or {}).items() if tests_name in tests}
    prebuilt = run.prebuilt()
    cmake_args = (*run.cmake_args, *student_role_args(run.backend))
    if prebuilt:
        cmake_args += (f"-DKERNELLAB_PREBUILT_MAINS={run.reference_build}", f"-DKERNELLAB_PREBUILT_CPU_RUNTIME={run.reference_build}")
    built = build(run.assignment, solution, job / "build", list(tests), cmake_args, run.sandbox,
                  readable=prebuilt, views=isolation.views(isolations), cache=run.compile_cache)
    return RaceBuild("", built, programs_of(job / "build", run.assignment.id, built), frozenset(isolations))


def run_race_checks(run: RaceCheckRun, job: Path, race_build: RaceBuild, tests: Sequence[str],
                    not_applicable: tuple[Condition, ...] = ()) -> dict[str, RaceCheck]:
    """Per test executable of `tests`, what the CPU backend's thread orders found in its program
    of `race_build`, several at once; `not_applicable`: the cases the submission's code does not
    promise (applicability.py), left out as in its GPU groups."""
    if race_build.unavailable:
        return {name: RaceCheck(name, UNAVAILABLE, race_build.unavailable, run.hidden_sizes) for name in tests}

    def check(name: str) -> RaceCheck:
        if race_build.built[name] is not None:
            return RaceCheck(name, Verdict.BUILD_FAILED, f"its CPU-backend build failed:\n{race_build.built[name]}", run.hidden_sizes)
        ran = run_group(run, job, race_build.programs[name], name, GROUP, not_applicable)
        if why := out_of_time(run, [ran]):
            # As for the tests: a run the grading deadline cut says nothing of the code, and
            # neither a race finding nor a pass may come of it.
            raise GradingError(f"the race check: {why}")
        result = judge_group(run, ran, failures_left_to_gpu=False)
        if result.verdict == Verdict.PASSED:
            # A warp-synchronous race that the task's policy accepts: right in lockstep, a warning.
            return RaceCheck(name, result.verdict, warned_lockstep(ran), run.hidden_sizes)
        return RaceCheck(name, result.verdict, race_reported(ran.outcome.output) or result.detail, run.hidden_sizes)

    with ThreadPoolExecutor(PARALLEL_RUNS) as pool:
        return dict(zip(tests, pool.map(check, tests)))


def check_races(run: RaceCheckRun, solution: Path, job: Path, tests: Sequence[str],
                not_applicable: tuple[Condition, ...] = (), isolations: dict[str, Isolation] | None = None) -> dict[str, RaceCheck]:
    """`tests` built from `solution` and checked (build_for_races, then run_race_checks)."""
    return run_race_checks(run, job, build_for_races(run, solution, job, tests, isolations), tests, not_applicable)


def race_reported(output: str) -> str:
    """What the check found, as the run reported it: the first race, else the first error (a case
    the submission's code does not promise may end in a failed launch before the race shows)."""
    errors = list(reported_errors(output))
    return next((error for error in errors if _RACE.search(error)), errors[0] if errors else "")
