"""Grade one submission: the stages in order, each a module of its own.

    intake -> isolation -> build (beside the reference's) -> run (race check beside) -> judge
    -> confirm alone -> findings (races) -> score -> speed -> sanitizers -> the Grade

Confirming alone, speed and the sanitizers are skipped, and said so, when they will not fit in
what the run's deadline leaves; the grade so far is published after each stage (progress.py).

Student code only ever runs in the sandbox (sandbox/): its build, and each test, speed or
sanitizer program started by runner.py; everything that decides a score runs here, in the
grader's process, which never loads student code.
"""

import shutil
import time
from collections.abc import Callable, Iterator
from concurrent.futures import ThreadPoolExecutor
from contextlib import contextmanager
from pathlib import Path
from typing import TypeVar

from kernellab import properties
from kernellab.binary_checks import symbols_in_binaries
from kernellab.errors import InputError
from kernellab.grading import findings, groups, reference
from kernellab.grading.building import Built, build, student_role_args, unmet_conditions
from kernellab.grading.isolation import stage as isolation
from kernellab.grading.isolation.splice import Isolation
from kernellab.grading.model import Grade, GradingError, GroupResult, TaskGrade
from kernellab.grading.progress import Progress
from kernellab.grading.race.stage import add_race_warnings, race_findings, run_race_check
from kernellab.grading.run import GradingRun
from kernellab.grading.sanitizers import stage as sanitizers
from kernellab.grading.scoring import score_tasks
from kernellab.grading.speed.stage import add_speed, plan_speed
from kernellab.grading.targets import SPEED_TARGET, is_speed_target, test_targets
from kernellab.intake import SubmissionRejected, take
from kernellab.manifest import Assignment
from kernellab.sandbox.step import SandboxFailure
from kernellab.static_checks import forbidden_in_sources
from kernellab.verdict import LOCKSTEP_MEASUREMENT, Status, Verdict

T = TypeVar("T")

LARGE_CASES_NOTE = ("the large cases (the course's own array sizes) run on a GPU only: "
                    "a GPU grade runs them with the hidden cases")


@contextmanager
def timed(stages: dict[str, float], stage: str) -> Iterator[None]:
    """Add the seconds the block takes to `stages` (the grade's: where grading time goes)."""
    started = time.monotonic()
    yield
    stages[stage] = time.monotonic() - started


def timed_call(stages: dict[str, float], stage: str, function: Callable[..., T], *args: object) -> T:
    """`function(*args)`, its seconds added to `stages` (for a stage that runs in a thread)."""
    with timed(stages, stage):
        return function(*args)


def grade_submission(grading: GradingRun, submission: Path, student: str, job: Path,
                     publish: Callable[[Grade], None] | None = None) -> Grade:
    """Grade one submission in the private job directory `job` (emptied first); `publish` is
    given the grade so far after each stage that earns points."""
    started = time.monotonic()
    base = dict(student=student, assignment=grading.assignment.id, backend=grading.backend, seed=grading.seed,
                hidden_sizes=grading.hidden_sizes, large_size=grading.large_size, environment=grading.environment)
    shutil.rmtree(job, ignore_errors=True)
    job.mkdir(parents=True)
    def rejected(rejection: SubmissionRejected) -> Grade:
        tasks = tuple(TaskGrade(task.id, task.title, 0, task.points, feedback="submission rejected") for task in grading.assignment.tasks)
        return Grade(status=Status.REJECTED, message=rejection.message, tasks=tasks, seconds=time.monotonic() - started, **base)

    try:
        intake = take(submission, grading.assignment, job / "submission")
    except SubmissionRejected as rejection:
        return rejected(rejection)
    stages: dict[str, float] = {}
    progress = Progress(grading.deadline, dict(files=intake.files, ignored=intake.ignored, **base), publish)
    try:
        tasks, found = grade_files(grading, job, stages, progress)
    except SubmissionRejected as rejection:  # a build's harness check (compiled_checks.py)
        return rejected(rejection)
    except (GradingError, InputError, OSError, SandboxFailure) as error:
        message = error.message if isinstance(error, InputError) else str(error)
        return Grade(status=Status.NOT_GRADED, message=message, files=intake.files, seconds=time.monotonic() - started, **base)
    return progress.grade(tasks, found, seconds=time.monotonic() - started,
                          stages={stage: round(took, 1) for stage, took in stages.items()})


def grade_files(grading: GradingRun, job: Path, stages: dict[str, float],
                progress: Progress) -> tuple[list[TaskGrade], tuple[str, ...]]:
    """The stages after intake, on the files taken into <job>/submission: every task's grade, and
    every static finding."""
    assignment = grading.assignment
    solution, build_dir = job / "submission", job / "build"
    source_findings = forbidden_in_sources(solution, assignment.grading.forbidden, given=assignment.skeleton_dir)
    with timed(stages, "isolation"):
        isolations, whole_submission_note = isolation.isolate_tasks(assignment, solution, job)
    if whole_submission_note:
        progress.note(tuple(task.id for task in assignment.tested_tasks), whole_submission_note)
    if assignment.large_tests and grading.large_size is None:
        progress.note(tuple(task.id for task in assignment.tested_tasks if task.large_cases), LARGE_CASES_NOTE)
    with reference_beside(grading):
        with timed(stages, "build"):
            built = build_solution(grading, solution, build_dir, isolations)
            built, standing = isolation.whole_where_isolated_failed(
                built, isolations, lambda whole_dir, targets: build_solution(grading, solution, whole_dir, {}, targets),
                job, assignment.id)
            fell_back, whole_build_note = isolation.whole_build_note(assignment, isolations, standing)
            if whole_build_note:
                progress.note(fell_back, whole_build_note)
            isolations = standing
            not_applicable = unmet_conditions(assignment, solution, build_dir, student_cmake_args(grading),
                                              grading.sandbox, readable=reference.prebuilt_mains(grading),
                                              cache=grading.compile_cache)
        tests_built = {tests: errors for tests, errors in built.items() if not is_speed_target(tests)}
        # The race check uses CPU cores beside the tests (race/stage.py).
        with ThreadPoolExecutor(1) as race_thread:
            race_checking = race_thread.submit(timed_call, stages, "race check", run_race_check,
                                               grading, solution, job, tests_built, not_applicable, isolations)
            with timed(stages, "tests"):
                runs = groups.run_groups(grading, job, tests_built, not_applicable)
            races = race_checking.result()
    results = isolation.noted(groups.judge_groups(grading, tests_built, runs), isolations)
    # Every program that built, the speed programs that time tasks included: the timed program is a checked one.
    symbol_findings = symbols_in_binaries(
        build_dir, assignment.id, [target for target, errors in built.items() if errors is None], assignment.grading.forbidden,
        baseline=grading.reference_build, root=assignment.root,
    )
    static_findings = findings.findings_by_task(assignment, build_dir, source_findings, symbol_findings)
    # The properties' records are read each time: a group confirmed alone records them again.
    def task_findings_now() -> dict[str, tuple[str, ...]]:
        return race_findings(assignment, races, add_unmet_requirements(assignment, runs, results, static_findings))

    task_findings = task_findings_now()
    found = findings.all_findings(source_findings, symbol_findings)
    grades = score_tasks(assignment, results, grading.active_groups(), task_findings, solution)
    progress.reached("tests", grades, found)
    confirming = groups.confirming_cost(grading, results)
    if confirming and progress.may_run(confirming):
        with timed(stages, "confirmed alone"):
            results |= groups.confirm_alone(grading, job, results, not_applicable)
        task_findings = task_findings_now()
        grades = score_tasks(assignment, results, grading.active_groups(), task_findings, solution)
        progress.reached("confirming failures alone", grades, found)
    speed_plan = plan_speed(grading, grades, built, symbol_findings)
    if speed_plan.timed and not progress.may_run(speed_plan.cost()):
        speed_plan = speed_plan.without_timing("skipped: the grading deadline was near")
    with timed(stages, "speed"):
        grades = add_speed(grading, job, grades, speed_plan, built)
    if speed_plan.timed:
        progress.reached("speed", grades, found)
    # Last, sharing the GPU with other grades' runs (sanitizers/stage.py): the first stage to go when time is short,
    # but for the runs that decide points (a race check's GPU half).
    sanitizer_runs = sanitizers.planned_runs(grading, tests_built)
    deciding = sanitizers.deciding(grading, sanitizer_runs)
    optional = [run for run in sanitizer_runs if run not in deciding]
    if optional and not progress.may_run(sanitizers.cost(grading, optional)):
        sanitizer_runs = deciding
    with timed(stages, "sanitizers"):
        sanitizer_reports = sanitizers.run_sanitizers(grading, job, sanitizer_runs)
    # After speed, which a task's feedback withholds: a warning costs nothing.
    grades = add_race_warnings(assignment, grades, races)
    return sanitizers.add_sanitizer_reports(grading, grades, sanitizer_reports), found


def add_unmet_requirements(assignment: Assignment, runs: list[groups.GroupRun],
                           results: dict[groups.GroupKey, GroupResult], task_findings: dict[str, tuple[str, ...]]) -> dict[str, tuple[str, ...]]:
    """A requirement of [[tasks.requires]] that the records of a task's runs do not meet costs the
    task its points like a finding, and its line is the feedback (properties.py). Where the task's
    groups were left to a GPU (warp-synchronous code on the CPU backend), the line says that its
    measurement is the CPU backend's too."""
    unmet = {}
    for task in assignment.tested_tasks:
        lines = properties.unmet_requirements(task.requires, [ran.records for ran in runs if ran.tests == task.tests])
        if any(result.verdict == Verdict.NEEDS_GPU for (tests, _), result in results.items() if tests == task.tests):
            lines = tuple(f"{line} ({LOCKSTEP_MEASUREMENT})" for line in lines)
        unmet[task.id] = task_findings[task.id] + lines
    return unmet


@contextmanager
def reference_beside(grading: GradingRun) -> Iterator[None]:
    """The reference's build and runs, going on beside what the block does (none is timed); its
    failure is raised when the block ends."""
    with ThreadPoolExecutor(1) as background:
        preparing = background.submit(reference.prepare, grading)
        yield
        preparing.result()


def build_solution(grading: GradingRun, solution: Path, build_dir: Path, isolations: dict[str, Isolation],
                   targets: list[str] | None = None) -> Built:
    """The build stage: the test executables, each against its task's isolated folder where it
    has one, and, when speed is timed, the speed program (the whole submission) and one per
    isolated task with speed cases; linked with the reference build's harness mains once it has them,
    and after the harness warm-up, whose objects it finds in the compile cache."""
    reference.warm_harness(grading)
    if targets is None:
        targets = test_targets(grading.assignment, grading.times_speed) + isolation.speed_targets(
            grading.assignment, isolations, grading.times_speed)
    return build(grading.assignment, solution, build_dir, targets, student_cmake_args(grading), grading.sandbox,
                 readable=reference.prebuilt_mains(grading), views=isolation.views(isolations), cache=grading.compile_cache)


def student_cmake_args(grading: GradingRun) -> tuple[str, ...]:
    """What every build of the submission is configured with: the run's, the student role's, and
    the reference build's harness mains to link once it has them."""
    cmake_args = (*grading.cmake_args, *student_role_args(grading.backend))
    if reference.prebuilt_mains(grading):
        cmake_args += (f"-DKERNELLAB_PREBUILT_MAINS={grading.reference_build}",)
    return cmake_args
