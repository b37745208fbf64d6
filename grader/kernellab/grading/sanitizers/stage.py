"""The sanitizer stage: compute-sanitizer on each built test executable (GPU only), its reports as
feedback on the tasks, and what the manifest's sanitizer_penalty makes them cost.

Racecheck on the tests of a task whose manifest sets `race_check = "fail"` is the race check's
GPU half: the CPU backend's thread orders check the code the CPU backend compiles, which code can
tell apart from a GPU's (its device, its macros); racecheck checks the GPU's own path for
shared-memory races. Its hazards cost such a task its points, whatever sanitizer_penalty says, its
runs are never skipped for the deadline, and a run that gives no report costs them too."""

from concurrent.futures import Executor, Future, ThreadPoolExecutor
from dataclasses import replace
from pathlib import Path

from kernellab.deadline import StageCost
from kernellab.grading.building import Built, BuiltSoFar
from kernellab.grading.model import TaskGrade
from kernellab.grading.resources import PARALLEL_RUNS
from kernellab.grading.run import GradingRun
from kernellab.grading.sanitizers import compute_sanitizer
from kernellab.grading.targets import Programs, is_speed_target


STAGE = "GPU sanitizers"
# Wall seconds one sanitizer run adds, several at once with the GPU to themselves (docs/performance.md).
SECONDS_PER_RUN = 2.5

# (tests, tool): one sanitizer run.
SanitizerRun = tuple[str, str]
RACECHECK = "racecheck"


def planned_runs(grading: GradingRun, built: Built) -> list[SanitizerRun]:
    """Each sanitizer tool on each test executable that built (GPU only; none without the tool)."""
    if not grading.backend.runs_sanitizers or compute_sanitizer.find_tool() is None:
        return []
    return [(tests, tool) for tests, errors in built.items() if errors is None for tool in compute_sanitizer.TOOLS]


def deciding(grading: GradingRun, runs: list[SanitizerRun]) -> list[SanitizerRun]:
    """The runs of `runs` that decide points: racecheck on the tests of a "fail" race-check task."""
    failing = {task.tests for task in grading.assignment.tested_tasks if task.race_check == "fail"}
    return [(tests, tool) for tests, tool in runs if tool == RACECHECK and tests in failing]


def cost(grading: GradingRun, runs: list[SanitizerRun]) -> StageCost:
    """What `runs` would take, several at once, and give, and the tasks whose tests they run."""
    penalty = grading.assignment.grading.sanitizer_penalty
    gives = (f"its reports on your tests, errors costing {penalty:.0%} of a task's points" if penalty
             else "its reports on your tests, as feedback (they cost no points)")
    tests = {tests for tests, _tool in runs}
    return StageCost(STAGE, SECONDS_PER_RUN * len(runs), gives,
                     tuple(task.id for task in grading.assignment.tested_tasks if task.tests in tests))


def run_sanitizers(grading: GradingRun, job: Path, runs: list[SanitizerRun], programs: Programs) -> list[compute_sanitizer.SanitizerReport]:
    """compute-sanitizer's reports of `runs`, each on its program of `programs` (the build's), each
    run's limit cut to what the deadline leaves."""
    tool_path = compute_sanitizer.find_tool()
    if not runs or tool_path is None:
        return []
    # Each run has the GPU shared (run_slot), as the tests' runs: correctness runs, whose verdicts
    # no time decides but their limits. Holding the GPU alone here made a batch's GPU serial
    # (issue 26: nine grades' tests waited on one grade's sanitizers); beside instrumented kernels
    # a test run goes slower (on an H100 sgm_scan's 2.3 s took 19 s), and one that runs out of
    # time beside others is confirmed alone, as any (groups.confirm_alone).
    def sanitize(run: SanitizerRun) -> compute_sanitizer.SanitizerReport:
        with grading.run_slot():
            return _sanitize(grading, job, tool_path, run, programs[run[0]])

    with ThreadPoolExecutor(PARALLEL_RUNS) as pool:
        return list(pool.map(sanitize, runs))


def start_as_built(grading: GradingRun, job: Path, so_far: BuiltSoFar, beside: Executor) -> list[Future]:
    """compute-sanitizer on each test executable as its build folder ends, while the others build:
    the GPU idles through a build, and after speed the sanitizers took 10.5 s of a grade alone on an
    H200, 8.0 of them GPU-busy (docs/performance.md). A run starts (in `beside`) only if a run slot
    and the GPU are free to share then: the build's step, which holds a build turn, must not wait
    behind other grades' speed measurements. Returns, once the build has ended, the runs started:
    they go on beside the grade's tests, as other grades' sanitizers do in a batch (waited for, the
    last folder's took 5.7 s past a grade's build alone on an H200). Their reports are None where
    the slot or the GPU was not free; those runs, and the ones not started, run after speed."""
    tool_path = compute_sanitizer.find_tool()
    sanitizes = grading.backend.runs_sanitizers and tool_path is not None

    def sanitize_if_free(run: SanitizerRun, program: Path) -> compute_sanitizer.SanitizerReport | None:
        with grading.run_slot_if_free() as free:
            return _sanitize(grading, job, tool_path, run, program) if free else None

    asked = []
    for programs in so_far:
        asked += [beside.submit(sanitize_if_free, (tests, tool), program)
                  for tests, program in programs.items() if sanitizes and not is_speed_target(tests)
                  for tool in compute_sanitizer.TOOLS]
    for run in asked:
        run.cancel()  # not started when the build ended
    return [run for run in asked if not run.cancelled()]


def _sanitize(grading: GradingRun, job: Path, tool_path: str, run: SanitizerRun, program: Path) -> compute_sanitizer.SanitizerReport:
    """One sanitizer run, its slot and the GPU held by the caller."""
    tests, tool = run
    limits = grading.assignment.grading
    return compute_sanitizer.sanitize(
        tool_path, tool, program, tests,
        job / "sanitizers" / f"{tests}.{tool}.log", grading.deadline.timeout_for(grading.timeout_s * compute_sanitizer.TIMEOUT_FACTOR),
        grading.sandbox, limits.sanitizer_sizes, limits.sanitizer_block_sizes,
    )


def add_sanitizer_reports(grading: GradingRun, grades: list[TaskGrade], reports: list[compute_sanitizer.SanitizerReport]) -> list[TaskGrade]:
    """The sanitizers' reports as feedback on the tasks whose tests they ran; a task with errors
    loses the manifest's sanitizer_penalty share of its points."""
    limits = grading.assignment.grading
    penalty = limits.sanitizer_penalty
    tests_of = {task.id: task.tests for task in grading.assignment.tasks}
    deciding_runs = set(deciding(grading, [(report.tests, report.tool) for report in reports]))
    sizes, blocks = ", ".join(map(str, limits.sanitizer_sizes)), " and ".join(map(str, limits.sanitizer_block_sizes))
    updated = []
    for grade in grades:
        # In the tools' order, whichever ran beside the build and whichever after speed.
        own = sorted((report for report in reports if report.tests == tests_of[grade.id]),
                     key=lambda report: compute_sanitizer.TOOLS.index(report.tool))
        if not own:
            updated.append(grade)
            continue
        lines = [f"at size {sizes}, blocks of {blocks} threads:"] + [report.describe() for report in own]
        clean = not any(report.errors for report in own)
        deduction = 0.0 if clean else round(grade.points * penalty, 2)
        racy = [report for report in own if (report.tests, report.tool) in deciding_runs and report.errors != 0]
        if racy and grade.points:
            deduction = grade.points
            lines.append(f"a race on the GPU, as its race check (\"fail\") counts one, costs all of this task's points: "
                         f"-{deduction:g}" if racy[0].errors else
                         f"racecheck, this task's race check on the GPU, gave no report ({racy[0].first_error}): "
                         f"a check that cannot run costs the task's points: -{deduction:g}")
        elif deduction:
            lines.append(f"sanitizer errors cost {penalty:.0%} of this task's points: -{deduction:g}")
        updated.append(replace(grade, points=round(grade.points - deduction, 2), sanitizer="\n".join(lines),
                               sanitizer_clean=clean, sanitizer_deduction=deduction))
    return updated
