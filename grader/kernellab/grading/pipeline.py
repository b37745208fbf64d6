"""Grade one submission: intake, then STAGES in order, each a module of its own.

    intake -> isolation -> build | race-check build | sanitizers as built
    -> tests | race check | program checks -> judge and score -> confirming failures alone -> speed
    -> sanitizers -> feedback -> the Grade

Stages joined by "|" form one step and run at once: the CPU's work beside the GPU's, which one
after another left all but a few of a grade's cores idle (docs/performance.md). The sanitizers
run as the build's folders end, the GPU idle meanwhile; the runs started go on beside the tests
(beside a whole stage of instrumented kernels a test run of many short launches went from 2.3
to 19 s on an H100, and runs out of their time are confirmed alone), and what the build's end
left runs after speed. The reference's build and records go on beside the first steps; the
program checks and the judge wait for them. Each stage takes the submission's state
(`Submission`) and returns it with what it made, fields of its own, and declares what it holds
of the machine (`Holds`). Confirming alone, speed and the sanitizers are skipped, and said so,
when they will not fit in what the run's deadline leaves; the grade so far is published after
each stage that earns points (progress.py).

Student code only ever runs in the sandbox (sandbox/): its build, and each test, speed or
sanitizer program started by runner.py; everything that decides a score runs here, in the
grader's process, which never loads student code.
"""

import shutil
import time
from collections.abc import Callable, Iterator
from concurrent.futures import Executor, Future, ThreadPoolExecutor
from contextlib import contextmanager, nullcontext
from dataclasses import dataclass, field, fields, replace
from enum import StrEnum
from pathlib import Path

from kernellab import applicability, properties
from kernellab.applicability import Condition
from kernellab.binary_checks import symbols_in_binaries
from kernellab.errors import InputError
from kernellab.grading import findings, groups, reference
from kernellab.grading.building import Built, BuiltSoFar, build, student_role_args, unmet_conditions
from kernellab.grading.isolation import stage as isolation
from kernellab.grading.isolation.splice import Isolation
from kernellab.grading.model import Grade, GradingError, GroupResult, TaskGrade
from kernellab.grading.progress import Progress
from kernellab.grading.race.check import RaceBuild, RaceCheck
from kernellab.grading.race.stage import add_race_warnings, build_race_check, race_findings, run_race_check
from kernellab.grading.run import GradingRun
from kernellab.grading.sanitizers import stage as sanitizers
from kernellab.grading.sanitizers.compute_sanitizer import SanitizerReport
from kernellab.grading.scoring import score_tasks
from kernellab.grading.speed.stage import add_speed, plan_speed
from kernellab.grading.targets import Programs, is_speed_target, programs_of, test_targets
from kernellab.intake import SubmissionRejected, take
from kernellab.manifest import Assignment
from kernellab.sandbox.step import SandboxFailure
from kernellab.static_checks import forbidden_in_sources
from kernellab.verdict import LOCKSTEP_MEASUREMENT, Status, Verdict

LARGE_CASES_NOTE = ("the large cases (the course's own array sizes) run on a GPU only: "
                    "a GPU grade runs them with the hidden cases")


class Holds(StrEnum):
    """What a stage holds of the machine while it runs, on a GPU backend (on the CPU backend the
    GPU's runs are the CPU's too). The stages' modules take the GPU lock themselves
    (resources.GpuLock): shared by each run of the tests and the sanitizers for its own time
    (GradingRun.run_slot), alone for a measurement or a confirmation. A step with a stage that
    builds takes one of the run's build turns first (run_step)."""

    CPU = "CPU cores"
    BUILD_TURN = "a build turn: the machine's compilers, given to grades in the order they started"
    GPU_SHARED = "the GPU, shared"
    GPU_ALONE = "the GPU alone"


@dataclass
class Submission:
    """One submission's state between stages, in its private job folder: each stage takes it and
    returns it with what it made."""

    job: Path
    progress: Progress
    # The grade's place in the queue for build turns (GradingRun.build_turns): its start.
    turn_ticket: int
    # Seconds per stage (the Grade's `stages`: where grading time goes).
    seconds: dict[str, float] = field(default_factory=dict)
    # Work beside the steps, waited for when the grade ends: the reference's, the sanitizers' (`sanitizing`).
    beside: Executor | None = None
    reference_ready: Future | None = None
    source_findings: dict[str, tuple[str, ...]] = field(default_factory=dict)
    isolations: dict[str, Isolation] = field(default_factory=dict)
    built: Built = field(default_factory=dict)
    built_so_far: BuiltSoFar = field(default_factory=BuiltSoFar)  # for the sanitizers beside the build
    sanitizing: list[Future] = field(default_factory=list)
    # The build's result: the program of each target that built.
    programs: Programs = field(default_factory=dict)
    not_applicable: tuple[Condition, ...] = ()
    race_build: RaceBuild | None = None
    runs: list[groups.GroupRun] = field(default_factory=list)
    races: dict[str, RaceCheck] = field(default_factory=dict)
    results: dict[groups.GroupKey, GroupResult] = field(default_factory=dict)
    symbol_findings: dict[str, tuple[str, ...]] = field(default_factory=dict)
    static_findings: dict[str, tuple[str, ...]] = field(default_factory=dict)
    found: tuple[str, ...] = ()
    grades: list[TaskGrade] = field(default_factory=list)
    sanitizer_reports: list[SanitizerReport] = field(default_factory=list)

    @property
    def solution(self) -> Path:
        return self.job / "submission"

    @property
    def build_dir(self) -> Path:
        return self.job / "build"

    @property
    def tests_built(self) -> Built:
        """The test executables' part of the build: None for each that built, else its errors."""
        return {tests: errors for tests, errors in self.built.items() if not is_speed_target(tests)}

    @property
    def test_programs(self) -> Programs:
        return {tests: program for tests, program in self.programs.items() if not is_speed_target(tests)}


@dataclass(frozen=True)
class Stage:
    name: str
    holds: frozenset[Holds]
    run: Callable[[GradingRun, Submission], Submission]


@contextmanager
def timed(seconds: dict[str, float], stage: str) -> Iterator[None]:
    """Add the seconds the block takes to `seconds` (the grade's: where grading time goes)."""
    started = time.monotonic()
    yield
    seconds[stage] = time.monotonic() - started


def isolate(grading: GradingRun, state: Submission) -> Submission:
    """The forbidden names in the sources, and each task's own folder (isolation/stage.py)."""
    assignment, progress = grading.assignment, state.progress
    source_findings = forbidden_in_sources(state.solution, assignment.grading.forbidden, given=assignment.skeleton_dir)
    with timed(state.seconds, "isolation"):
        isolations, whole_submission_note = isolation.isolate_tasks(assignment, state.solution, state.job)
    if whole_submission_note:
        progress.note(tuple(task.id for task in assignment.tested_tasks), whole_submission_note)
    if assignment.large_tests and grading.large_size is None:
        progress.note(tuple(task.id for task in assignment.tested_tasks if task.large_cases), LARGE_CASES_NOTE)
    return replace(state, source_findings=source_findings, isolations=isolations)


def build_programs(grading: GradingRun, state: Submission) -> Submission:
    """The test executables and speed programs, each task whose isolated build failed built whole;
    beside them the applicability probes, in a folder of their own (after them: 2.3 s more)."""
    assignment, solution, build_dir = grading.assignment, state.solution, state.build_dir
    with timed(state.seconds, "build"), ThreadPoolExecutor(1) as beside:
        probing = beside.submit(unmet_conditions, assignment, solution, state.job / "probes", student_cmake_args(grading),
                                grading.sandbox, readable=reference.prebuilt_mains(grading), cache=grading.compile_cache)
        try:
            built = build_solution(grading, solution, build_dir, state.isolations, so_far=state.built_so_far)
        finally:
            state.built_so_far.close()
        built, standing = isolation.whole_where_isolated_failed(
            built, state.isolations, lambda whole_dir, targets: build_solution(grading, solution, whole_dir, {}, targets),
            state.job, assignment.id)
        fell_back, whole_build_note = isolation.whole_build_note(assignment, state.isolations, standing)
        if whole_build_note:
            state.progress.note(fell_back, whole_build_note)
        unmet = probing.result()
        # The runs of the executables built from the student's own code of a probe's question can
        # overrule it (applicability.believed); those of the others, built in part from the
        # reference's or the skeleton's code, cannot.
        not_applicable = applicability.in_builds(unmet, isolation.not_students(standing))
    return replace(state, built=built, programs=programs_of(build_dir, assignment.id, built), isolations=standing,
                   not_applicable=not_applicable)


def build_for_race_check(grading: GradingRun, state: Submission) -> Submission:
    """The race check's programs, on the CPU backend, beside the GPU build (race/stage.py)."""
    with timed(state.seconds, "race-check build"):
        race_build = build_race_check(grading, state.solution, state.job, state.isolations)
    return replace(state, race_build=race_build)


def sanitize_as_built(grading: GradingRun, state: Submission) -> Submission:
    """compute-sanitizer on each test executable as its build folder ends (sanitizers/stage.py)."""
    return replace(state, sanitizing=sanitizers.start_as_built(grading, state.job, state.built_so_far, state.beside))


def run_tests(grading: GradingRun, state: Submission) -> Submission:
    """Every group of every test executable, several at once on the shared GPU."""
    with timed(state.seconds, "tests"):
        runs = groups.run_groups(grading, state.job, state.test_programs, state.not_applicable)
    return replace(state, runs=runs)


def check_races(grading: GradingRun, state: Submission) -> Submission:
    """The race check's runs, on the CPU's cores beside the GPU's (race/stage.py)."""
    with timed(state.seconds, "race check"):
        races = run_race_check(grading, state.solution, state.job, state.tests_built, state.not_applicable,
                               state.isolations, state.race_build)
    return replace(state, races=races)


def check_programs(grading: GradingRun, state: Submission) -> Submission:
    """What every program that built links, defines and calls, against the reference's programs
    (binary_checks.py), once the reference has built them."""
    if state.reference_ready is not None:
        state.reference_ready.result()  # its failure is the grade's
    assignment = grading.assignment
    with timed(state.seconds, "program checks"):
        # Every program that built, the speed programs that time tasks included: the timed program is a checked one.
        symbol_findings = symbols_in_binaries(
            state.build_dir, assignment.id, list(state.programs), assignment.grading.forbidden,
            baseline=grading.reference_build, root=assignment.root,
        )
    return replace(state, symbol_findings=symbol_findings)


def judge_and_score(grading: GradingRun, state: Submission) -> Submission:
    """The runs' records against the reference's (once it has them), the findings of every
    program that built, and each task's score."""
    if state.reference_ready is not None:
        state.reference_ready.result()  # its failure is the grade's
    assignment = grading.assignment
    results = isolation.noted(groups.judge_groups(grading, state.tests_built, state.runs), state.isolations)
    state = replace(state, results=results,
                    static_findings=findings.findings_by_task(assignment, state.build_dir, state.source_findings, state.symbol_findings),
                    found=findings.all_findings(state.source_findings, state.symbol_findings))
    state = scored(grading, state)
    state.progress.reached("tests", state.grades, state.found)
    return state


def confirm_alone(grading: GradingRun, state: Submission) -> Submission:
    """The groups that failed out of time or GPU memory beside other runs, run again alone."""
    confirming = groups.confirming_cost(grading, state.results)
    if not confirming or not state.progress.may_run(confirming):
        return state
    with timed(state.seconds, "confirmed alone"):
        confirmed = groups.confirm_alone(grading, state.job, state.test_programs, state.results, state.not_applicable)
    state = scored(grading, replace(state, results=state.results | confirmed))
    state.progress.reached("confirming failures alone", state.grades, state.found)
    return state


def time_speed(grading: GradingRun, state: Submission) -> Submission:
    """The tasks that passed every test timed against the reference (speed/stage.py)."""
    speed_plan = plan_speed(grading, state.grades, state.built, state.symbol_findings)
    if speed_plan.timed and not state.progress.may_run(speed_plan.cost()):
        speed_plan = speed_plan.without_timing("skipped: the grading deadline was near")
    with timed(state.seconds, "speed"):
        grades = add_speed(grading, state.job, state.grades, speed_plan, state.programs)
    if speed_plan.timed:
        state.progress.reached("speed", grades, state.found)
    return replace(state, grades=grades)


def sanitize(grading: GradingRun, state: Submission) -> Submission:
    """compute-sanitizer on the test executables, sharing the GPU with other grades' runs: the first
    stage to go when time is short, but for the runs that decide points (a race check's GPU half;
    sanitizers/stage.py)."""
    beside = [report for run in state.sanitizing if (report := run.result()) is not None]
    done = {(report.tests, report.tool) for report in beside}
    sanitizer_runs = [run for run in sanitizers.planned_runs(grading, state.tests_built) if run not in done]
    deciding = sanitizers.deciding(grading, sanitizer_runs)
    optional = [run for run in sanitizer_runs if run not in deciding]
    if optional and not state.progress.may_run(sanitizers.cost(grading, optional)):
        sanitizer_runs = deciding
    with timed(state.seconds, "sanitizers"):
        reports = sanitizers.run_sanitizers(grading, state.job, sanitizer_runs, state.test_programs)
    return replace(state, sanitizer_reports=[*beside, *reports])


def add_feedback(grading: GradingRun, state: Submission) -> Submission:
    """The race check's warnings, after speed, which a task's feedback withholds (a warning costs
    nothing), and the sanitizers' reports with what they cost."""
    grades = add_race_warnings(grading.assignment, state.grades, state.races)
    return replace(state, grades=sanitizers.add_sanitizer_reports(grading, grades, state.sanitizer_reports))


# Each step: its stages, which run at once, each on the state the step before made.
STAGES: tuple[tuple[Stage, ...], ...] = (
    (Stage("isolation", frozenset({Holds.CPU}), isolate),),
    (Stage("build", frozenset({Holds.BUILD_TURN}), build_programs),
     Stage("race-check build", frozenset({Holds.BUILD_TURN}), build_for_race_check),
     Stage("sanitizers as built", frozenset({Holds.GPU_SHARED}), sanitize_as_built)),
    (Stage("tests", frozenset({Holds.CPU, Holds.GPU_SHARED}), run_tests),
     Stage("race check", frozenset({Holds.CPU}), check_races),
     Stage("program checks", frozenset({Holds.CPU}), check_programs)),
    (Stage("judge and score", frozenset(), judge_and_score),),
    (Stage("confirming failures alone", frozenset({Holds.GPU_ALONE}), confirm_alone),),
    (Stage("speed", frozenset({Holds.GPU_ALONE}), time_speed),),
    (Stage("sanitizers", frozenset({Holds.GPU_SHARED}), sanitize),),
    (Stage("feedback", frozenset(), add_feedback),),
)


def run_step(grading: GradingRun, state: Submission, step: tuple[Stage, ...]) -> Submission:
    """`state` with what each stage of `step` made, the stages run at once (a stage's failure is
    raised once all have ended). Each makes fields of its own: two that set one field are a
    mistake of STAGES. A step that builds waits for a build turn, which the grades that started
    first get first: sixteen grades building at once each took 218 s to build on an H100 host,
    and none reached the GPU meanwhile (docs/performance.md)."""
    builds = any(Holds.BUILD_TURN in stage.holds for stage in step)
    with grading.build_turn(state.turn_ticket) if builds else nullcontext():
        if len(step) == 1:
            return step[0].run(grading, state)
        with ThreadPoolExecutor(len(step)) as pool:
            made = [future.result() for future in [pool.submit(stage.run, grading, state) for stage in step]]
    changed: dict[str, object] = {}
    for stage, output in zip(step, made):
        for name in (entry.name for entry in fields(Submission)):
            if getattr(output, name) is not getattr(state, name):
                if name in changed:
                    raise AssertionError(f"two stages beside each other made the submission's {name}, {stage.name} one of them")
                changed[name] = getattr(output, name)
    return replace(state, **changed)


def grade_submission(grading: GradingRun, submission: Path, student: str, job: Path,
                     publish: Callable[[Grade], None] | None = None) -> Grade:
    """Grade one submission in the private job directory `job` (emptied first): intake, then
    STAGES; `publish` is given the grade so far after each stage that earns points."""
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
    state = Submission(job, Progress(grading.deadline, dict(files=intake.files, ignored=intake.ignored, **base), publish),
                       turn_ticket=grading.build_turns.ticket())
    try:
        with ThreadPoolExecutor(1 + sanitizers.PARALLEL_RUNS) as beside:
            state = replace(state, beside=beside, reference_ready=beside.submit(reference.prepare, grading))
            for step in STAGES:
                state = run_step(grading, state, step)
    except SubmissionRejected as rejection:  # a build's harness check (compiled_checks.py)
        return rejected(rejection)
    except (GradingError, InputError, OSError, SandboxFailure) as error:
        message = error.message if isinstance(error, InputError) else str(error)
        return Grade(status=Status.NOT_GRADED, message=message, files=intake.files, seconds=time.monotonic() - started, **base)
    return state.progress.grade(state.grades, state.found, seconds=time.monotonic() - started,
                                stages={stage: round(took, 1) for stage, took in state.seconds.items()})


def scored(grading: GradingRun, state: Submission) -> Submission:
    """Each task's grade from the groups' verdicts and its findings: the static checks', the unmet
    requirements' (the properties' records are read each time: a group confirmed alone records
    them again) and the race check's."""
    assignment = grading.assignment
    task_findings = race_findings(assignment, state.races,
                                  add_unmet_requirements(assignment, state.runs, state.results, state.static_findings))
    return replace(state, grades=score_tasks(assignment, state.results, grading.active_groups(), task_findings, state.solution))


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


def build_solution(grading: GradingRun, solution: Path, build_dir: Path, isolations: dict[str, Isolation],
                   targets: list[str] | None = None, so_far: BuiltSoFar | None = None) -> Built:
    """The build stage: the test executables, each against its task's isolated folder where it
    has one, and, when speed is timed, the speed program (the whole submission) and one per
    isolated task with speed cases; linked with the reference build's harness mains once it has them,
    and after the harness warm-up, whose objects it finds in the compile cache."""
    reference.warm_harness(grading)
    if targets is None:
        targets = test_targets(grading.assignment, grading.times_speed) + isolation.speed_targets(
            grading.assignment, isolations, grading.times_speed)
    return build(grading.assignment, solution, build_dir, targets, student_cmake_args(grading), grading.sandbox,
                 readable=reference.prebuilt_mains(grading), views=isolation.views(isolations), cache=grading.compile_cache,
                 so_far=so_far)


def student_cmake_args(grading: GradingRun) -> tuple[str, ...]:
    """What every build of the submission is configured with: the run's, the student role's, and
    the reference build's harness mains to link once it has them."""
    cmake_args = (*grading.cmake_args, *student_role_args(grading.backend))
    if reference.prebuilt_mains(grading):
        cmake_args += (f"-DKERNELLAB_PREBUILT_MAINS={grading.reference_build}",)
    return cmake_args
