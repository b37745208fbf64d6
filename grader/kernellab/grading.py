"""Grade one submission: intake, build, run each test group in its own process, judge, score.

The stages are small functions over plain data; `GradingRun` holds what the submissions of one
grading run share (the assignment, the backend, the sandbox, the secret seed and hidden sizes,
the reference build and its records). Student code only ever runs in the sandbox (sandbox.py):
its build, and each test, speed or sanitizer program started by runner.py; everything that
decides a score runs here, in the grader's process, which never loads student code.
"""

import fcntl
import hashlib
import json
import os
import random
import re
import secrets
import shutil
import subprocess
import threading
import time
import tomllib
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from contextlib import contextmanager
from dataclasses import asdict, dataclass, field, replace
from pathlib import Path

from kernellab import cmake, environment, gpu_memory, runner, sanitizer, speed
from kernellab.cmake import BUILD_FAILED, CRASHED, FAILED, NO_GPU, PASSED, TIMED_OUT
from kernellab.errors import InputError
from kernellab.binary_checks import symbols_in_binaries
from kernellab.intake import Intake, SubmissionRejected, take
from kernellab.judge import TestCaseResult, by_test_case, judge, own_results
from kernellab.manifest import Assignment, Task
from kernellab.records import read_records
from kernellab.sandbox import Sandbox, SandboxFailure, Step, build_step, fresh_output, run_step, toolchain_paths
from kernellab.speed import SpeedResult
from kernellab.static_checks import forbidden_in_sources

GROUPS = ("public", "hidden")
# The CPU backend's verdict on warp-synchronous code a manifest only warns about: no points, no fail.
NEEDS_GPU = "not run: needs a GPU to confirm"
# Compiling a submission: wall clock for the whole build.
BUILD_TIMEOUT_S = 900
# What a build of the assignment reads besides the solution: the frozen sources, relative to the
# repository root (the assignment's own folder is added). Not reference/, not the grader's work.
FROZEN_SOURCES = ("CMakeLists.txt", "grader/harness", "grader/cpu")
# The programs a build runs, as the configure step recorded them in CMakeCache.txt: the build's
# sandbox must see their installation folders (a compiler in /opt, a Python virtual environment).
BUILD_TOOL_ENTRIES = re.compile(
    r"^(CMAKE_\w+_COMPILER|CMAKE_CUDA_HOST_COMPILER|CMAKE_MAKE_PROGRAM|CMAKE_COMMAND|_?Python3_EXECUTABLE):\w+=(/.+)$",
    re.MULTILINE,
)
# Test executables of one submission run at once on the GPU (correctness only; speed runs alone).
PARALLEL_RUNS = 8
# Runs of student or reference code (test groups, sanitizers) at once on the machine, however
# many submissions are graded together: about what one pbb grade starts (12 groups and 18
# sanitizer runs on 16 cores). Past the slots a run waits before it starts, its time limit with
# it, instead of slowing the runs already going past their limits: each run that times out beside
# others is run again with the GPU to itself, which holds up every other grade.
RUN_SLOTS = 2 * (os.cpu_count() or 1)
# How much longer a test executable may run on the CPU backend than the manifest's time limit,
# unless the manifest says (cpu_timeout): each CUDA thread is a fiber there, and every launch
# runs under several thread orders.
CPU_BACKEND_SLOWDOWN = 10
OUTPUT_TAIL_LINES = 6
# The role each grading build's test executables are compiled for (harness kernellab/record.hpp):
# a student's records device results only, the reference's the expected results too.
STUDENT_ROLE = "-DKERNELLAB_RECORD_ROLE=student"
REFERENCE_ROLE = "-DKERNELLAB_RECORD_ROLE=reference"
# The CPU backend's own default number of thread orders per launch (grader/cpu/src/runtime.cpp).
CPU_ORDERS = 3


def student_build_args(backend: str) -> tuple[str, ...]:
    """What a build of student code fixes at compile time: its role, and on the CPU backend the
    thread orders of the race check (as the TA's KERNELLAB_CPU_ORDERS says), which the student's
    process could otherwise change in its own environment."""
    if backend != "cpu":
        return (STUDENT_ROLE,)
    chosen = os.environ.get("KERNELLAB_CPU_ORDERS", "")
    orders = int(chosen) if chosen.isdigit() and int(chosen) > 0 else CPU_ORDERS
    return (STUDENT_ROLE, f"-DKERNELLAB_CPU_FIXED_ORDERS={orders}")


class GpuLock:
    """Who may use the GPU: correctness runs share it (they are not timed), a speed measurement
    or a run confirmed alone has it alone. Each holder locks its own open file description of a
    lock file (flock), so the rule holds between the threads of a batch and between grader
    processes on the machine. flock lets new shared holders in while an exclusive one waits, so
    in a busy batch the exclusive one could wait for ever: every holder first passes a turnstile
    (a second lock file), which an exclusive holder keeps until it is done."""

    def __init__(self, path: Path = Path("/tmp/kernellab-gpu.lock")):
        self._path = path
        self._turnstile = path.with_name(f"{path.name}.turnstile")

    @contextmanager
    def shared(self) -> Iterator[None]:
        with self._held(self._turnstile, fcntl.LOCK_EX):
            pass
        with self._held(self._path, fcntl.LOCK_SH):
            yield

    @contextmanager
    def exclusive(self) -> Iterator[None]:
        with self._held(self._turnstile, fcntl.LOCK_EX), self._held(self._path, fcntl.LOCK_EX):
            yield

    @staticmethod
    @contextmanager
    def _held(path: Path, mode: int) -> Iterator[None]:
        with open(path, "a") as lock_file:
            fcntl.flock(lock_file, mode)
            try:
                yield
            finally:
                fcntl.flock(lock_file, fcntl.LOCK_UN)


class GradingError(Exception):
    """Grading itself could not run (not the student's fault): the submission is 'not graded'."""


@dataclass(frozen=True)
class GroupResult:
    group: str
    verdict: str
    detail: str = ""
    test_cases: tuple[TestCaseResult, ...] = ()
    seconds: float = 0.0
    # The group's share of its task's points, and what it earned (set by score_task).
    points: float = 0.0
    max_points: float = 0.0
    # False when the run ran out of time or of GPU memory: what other runs on the GPU did could
    # have caused that.
    conclusive: bool = True


@dataclass(frozen=True)
class TaskGrade:
    id: str
    title: str
    points: float
    max_points: float
    groups: tuple[GroupResult, ...] = ()
    # For answered tasks (questions) and static findings: what the student reads.
    feedback: str = ""
    speed: tuple[SpeedResult, ...] = ()
    # compute-sanitizer's reports on the task's test executable (GPU only), and what they cost.
    sanitizer: str = ""
    sanitizer_clean: bool = True
    sanitizer_deduction: float = 0.0


@dataclass(frozen=True)
class Grade:
    student: str
    assignment: str
    backend: str
    # "graded", "rejected" (intake refused the submission: 0 points, the student's to fix) or
    # "not graded" (grading could not run: a problem of the grader's, never a zero).
    status: str
    message: str = ""
    tasks: tuple[TaskGrade, ...] = ()
    files: tuple[str, ...] = ()
    ignored: tuple[str, ...] = ()
    findings: tuple[str, ...] = ()
    seed: int = 0
    hidden_sizes: tuple[int, ...] = ()
    environment: dict = field(default_factory=dict)
    seconds: float = 0.0
    # Seconds per stage ("build", "tests", "speed"): where grading time goes.
    stages: dict = field(default_factory=dict)

    @property
    def score(self) -> float:
        return round(sum(task.points for task in self.tasks), 2)

    @property
    def max_score(self) -> float:
        return round(sum(task.max_points for task in self.tasks), 2)

    def to_json(self) -> str:
        """The grade with its total and maximum first, for whoever reads the file."""
        return json.dumps({"score": self.score, "max_score": self.max_score, **asdict(self)}, indent=2) + "\n"

    @classmethod
    def from_json(cls, text: str) -> "Grade":
        data = json.loads(text)
        for total in ("score", "max_score"):
            data.pop(total, None)
        data["tasks"] = tuple(
            TaskGrade(
                **{
                    **task,
                    "groups": tuple(
                        GroupResult(**{**group, "test_cases": tuple(TestCaseResult(**case) for case in group["test_cases"])})
                        for group in task["groups"]
                    ),
                    "speed": tuple(SpeedResult(**result) for result in task["speed"]),
                }
            )
            for task in data["tasks"]
        )
        for key in ("files", "ignored", "findings", "hidden_sizes"):
            data[key] = tuple(data[key])
        return cls(**data)


class GradingRun:
    """What one grading run shares between its submissions; the reference is built and run once."""

    def __init__(
        self,
        assignment: Assignment,
        backend: str,
        work: Path,
        sandbox: Sandbox | None,
        seed: int | None = None,
        cmake_args: tuple[str, ...] = (),
    ):
        """`sandbox` None runs student code without one: only for trusted code, or where the TA
        said so explicitly (--unsandboxed)."""
        self.assignment = assignment
        self.backend = backend
        self.sandbox = sandbox
        self.work = work
        self.seed = seed if seed is not None else secrets.randbits(62) + 1
        self.hidden_sizes = draw_hidden_sizes(assignment, self.seed)
        self.cmake_args = (*_architecture_args(backend, cmake_args), *cmake_args, f"-DKERNELLAB_BACKEND={backend}")
        self.gpu_lock = GpuLock()
        self.run_slots = threading.BoundedSemaphore(RUN_SLOTS)
        self._reference_lock = threading.Lock()
        self._reference_ready = False
        # Set once the reference build has ended, built or not (see prebuilt_mains).
        self._reference_built = threading.Event()
        self.environment = {
            **environment.describe(backend),
            "sandbox": sandbox.describe() if sandbox else "none: graded with --unsandboxed",
        }

    def group_environment(self, group: str) -> dict[str, str]:
        if group == "public":
            return {}
        return {"KERNELLAB_SEED": str(self.seed), "KERNELLAB_SIZES": ",".join(map(str, self.hidden_sizes))}

    def prepare_reference(self) -> None:
        """Build the reference and record its results, once per grading run (later calls wait for it)."""
        with self._reference_lock:
            if not self._reference_ready:
                self._run_reference()
                self._reference_ready = True

    def expected_records(self, tests: str, group: str) -> Path:
        """The reference's records for one test executable and group."""
        self.prepare_reference()
        return self.work / "reference-records" / f"{tests}.{group}.rec"

    @property
    def times_speed(self) -> bool:
        return self.backend == "cuda" and bool(self.assignment.speed)

    @property
    def reference_build(self) -> Path:
        return self.work / f"reference-{self.assignment.id}-{self.backend}"

    def prebuilt_mains(self) -> tuple[Path, ...]:
        """The harness mains the reference build compiled, if it has ended by now: a submission
        graded alone does not wait for it (its own build runs beside the reference's), the
        others of a batch link them instead of compiling them again."""
        if not self._reference_built.is_set():
            return ()
        return tuple(sorted((self.reference_build / "grader" / "harness" / "CMakeFiles").glob("kernellab_*_main.dir/src/catch_main.cpp.o")))

    def _run_reference(self) -> None:
        build_dir = self.reference_build
        targets = test_targets(self.assignment, self.times_speed)
        try:
            built = build(self.assignment, self.assignment.reference_dir, build_dir, targets,
                          (*self.cmake_args, REFERENCE_ROLE), sandbox=None)
        finally:
            self._reference_built.set()
        broken = {target: errors for target, errors in built.items() if errors is not None}
        if broken:
            target, errors = next(iter(broken.items()))
            raise GradingError(f"the reference does not build ({target}):\n{errors}")
        self._record_reference(build_dir)

    def _record_reference(self, build_dir: Path) -> None:
        """The reference's records of every test executable and group, each checked against
        itself. A run that fails out of time or out of GPU memory beside other runs (students'
        runs in a batch) runs again with the GPU to itself, and only that run decides, as for a
        student's groups (confirm_alone)."""
        records_dir = self.work / "reference-records"
        shutil.rmtree(records_dir, ignore_errors=True)
        records_dir.mkdir(parents=True)
        # Public groups first: they are the larger ones, so the longest runs start at once.
        jobs = [(tests, group) for group in self.active_groups() for tests in tested(self.assignment)]

        def run_one(job: tuple[str, str], alone: bool = False) -> tuple[str, str] | None:
            """Record and check one group; the job back, when its run must be repeated alone."""
            tests, group = job
            record = records_dir / f"{tests}.{group}.rec"
            program = executable(build_dir, self.assignment.id, tests)
            kept = self.kept_public_records(program) if group == "public" else None
            if kept is not None and kept.exists():
                os.link(kept, record)
                return None
            with self.run_slots:
                outcome = runner.run(
                    [str(program), "--order", "decl"],
                    cwd=records_dir,
                    timeout_s=self.timeout_s,
                    environment={
                        **self.group_environment(group),
                        "KERNELLAB_RECORD": str(record),
                        # The reference's results are the same under any thread order: one is enough.
                        **({"KERNELLAB_CPU_ORDERS": "1"} if self.backend == "cpu" else {}),
                    },
                )
            if outcome.exit_code == cmake.NO_GPU_EXIT_CODE:
                return None  # no records: every student group of this executable is "not run: no GPU"
            if not alone and _may_owe_to_neighbours(outcome, time.monotonic()):
                return job
            recorded = read_records(record)
            results = judge(recorded.records, own_results(recorded.records))
            failures = [result for result in results if not result.passed]
            if outcome.exit_code != 0 or recorded.problem or not results or failures:
                if outcome.timed_out or outcome.signal_name:  # its records say less than how it ended
                    reason = _outcome_summary(outcome)
                else:
                    reason = failures[0].message if failures else recorded.problem or _outcome_summary(outcome)
                raise GradingError(f"the reference fails its own {tests} tests ({group}): {reason}")
            if kept is not None:
                kept.parent.mkdir(exist_ok=True)
                unique = kept.with_suffix(f".{threading.get_ident()}")
                os.link(record, unique)
                unique.replace(kept)
            return None

        with self.gpu_lock.shared(), ThreadPoolExecutor(PARALLEL_RUNS) as pool:
            again = [job for job in pool.map(run_one, jobs) if job is not None]
        if again:
            with self.gpu_lock.exclusive():
                for job in again:
                    run_one(job, alone=True)

    def kept_public_records(self, program: Path) -> Path:
        """Where the reference's public records are kept between grading runs: public cases do
        not depend on the run's seed, so the same executable on the same device records the same
        results (a later grade of one submission then runs only the hidden cases)."""
        identity = hashlib.sha256(program.read_bytes())
        identity.update(json.dumps([self.backend, self.environment.get("gpu"), self.environment.get("driver")]).encode())
        return self.work / "reference-public-records" / f"{program.name}.{identity.hexdigest()[:32]}.rec"

    @property
    def timeout_s(self) -> float:
        """Seconds one run of a test executable may take: the manifest's for this backend."""
        limits = self.assignment.grading
        if self.backend != "cpu":
            return limits.timeout_s
        return limits.cpu_timeout_s or limits.timeout_s * CPU_BACKEND_SLOWDOWN

    def active_groups(self) -> tuple[str, ...]:
        return GROUPS if self.hidden_sizes else ("public",)


SPEED_TARGET = "speed"


def _architecture_args(backend: str, cmake_args: tuple[str, ...]) -> tuple[str, ...]:
    """The GPU's architecture for CMake, unless the TA chose one: the build's sandbox has no GPU,
    so nvcc's -arch=native there would fall back to a default and JIT-compile at run time."""
    if backend != "cuda" or any(arg.startswith("-DCMAKE_CUDA_ARCHITECTURES") for arg in cmake_args):
        return ()
    found = environment.gpus()
    if not found or not found[0].get("compute_cap"):
        return ()
    return (f"-DCMAKE_CUDA_ARCHITECTURES={found[0]['compute_cap'].replace('.', '')}",)


def tested(assignment: Assignment) -> list[str]:
    """The test executables of the assignment's tasks (by their manifest `tests` names)."""
    return sorted({task.tests for task in assignment.tested_tasks})


def test_targets(assignment: Assignment, with_speed: bool) -> list[str]:
    """What a grading build builds: the test executables, and the speed program when timed."""
    return tested(assignment) + ([SPEED_TARGET] if with_speed else [])


def target_name(assignment_id: str, target: str) -> str:
    return f"{assignment_id}_speed" if target == SPEED_TARGET else cmake.test_target(assignment_id, target)


def executable(build_dir: Path, assignment_id: str, target: str) -> Path:
    return build_dir / "assignments" / assignment_id / target_name(assignment_id, target)


def draw_hidden_sizes(assignment: Assignment, seed: int) -> tuple[int, ...]:
    """One size from each of the manifest's hidden ranges, drawn from the run's secret seed."""
    chooser = random.Random(seed)
    return tuple(chooser.randint(low, high) for low, high in assignment.grading.hidden_size_ranges)


def grade_submission(run: GradingRun, submission: Path, student: str, job: Path) -> Grade:
    """Grade one submission in the private job directory `job` (emptied first)."""
    started = time.monotonic()
    base = dict(
        student=student,
        assignment=run.assignment.id,
        backend=run.backend,
        seed=run.seed,
        hidden_sizes=run.hidden_sizes,
        environment=run.environment,
    )
    shutil.rmtree(job, ignore_errors=True)
    job.mkdir(parents=True)
    try:
        intake = take(submission, run.assignment, job / "submission")
    except SubmissionRejected as rejection:
        tasks = tuple(TaskGrade(task.id, task.title, 0, task.points, feedback="submission rejected") for task in run.assignment.tasks)
        return Grade(status="rejected", message=rejection.message, tasks=tasks, seconds=time.monotonic() - started, **base)
    stages: dict[str, float] = {}
    try:
        tasks, findings = _grade_files(run, intake, job, stages)
    except (GradingError, InputError, OSError, SandboxFailure) as error:
        message = error.message if isinstance(error, InputError) else str(error)
        return Grade(status="not graded", message=message, files=intake.files, seconds=time.monotonic() - started, **base)
    return Grade(
        status="graded",
        tasks=tasks,
        files=intake.files,
        ignored=intake.ignored,
        findings=findings,
        seconds=time.monotonic() - started,
        stages={stage: round(seconds, 1) for stage, seconds in stages.items()},
        **base,
    )


def _grade_files(
    run: GradingRun, intake: Intake, job: Path, stages: dict[str, float]
) -> tuple[tuple[TaskGrade, ...], tuple[str, ...]]:
    assignment = run.assignment
    solution = job / "submission"
    source_findings = forbidden_in_sources(solution, assignment.grading.forbidden)
    targets = tested(assignment)
    started = time.monotonic()
    # The reference's build and runs go on beside the student's build and runs: none is timed.
    with ThreadPoolExecutor(1) as background:
        reference = background.submit(run.prepare_reference)
        prebuilt = run.prebuilt_mains()
        cmake_args = (*run.cmake_args, *student_build_args(run.backend))
        cmake_args = (*cmake_args, f"-DKERNELLAB_PREBUILT_MAINS={run.reference_build}") if prebuilt else cmake_args
        built = build(assignment, solution, job / "build", test_targets(assignment, run.times_speed), cmake_args, run.sandbox,
                      readable=prebuilt)
        stages["build"] = time.monotonic() - started
        started = time.monotonic()
        runnable = [(tests, group) for group in run.active_groups() for tests in targets if built[tests] is None]
        with ThreadPoolExecutor(1) as sanitizing_thread:
            sanitizing = sanitizing_thread.submit(run_sanitizers, run, job, [tests for tests in targets if built[tests] is None])
            with run.gpu_lock.shared(), ThreadPoolExecutor(PARALLEL_RUNS) as pool:
                runs = list(pool.map(lambda key: run_group(run, job, *key), runnable))
            stages["tests"] = time.monotonic() - started
            sanitizer_reports = sanitizing.result()
            stages["sanitizers"] = time.monotonic() - started
        reference.result()
    results = {(tests, group): GroupResult(group, BUILD_FAILED, built[tests])
               for tests in targets if built[tests] is not None for group in run.active_groups()}
    results |= {(ran.tests, ran.group): judge_group(run, ran) for ran in runs}
    started = time.monotonic()
    if confirmed := confirm_alone(run, job, results):
        results |= confirmed
        stages["confirmed alone"] = time.monotonic() - started
    symbol_findings = symbols_in_binaries(
        job / "build", assignment.id, test_targets(assignment, run.times_speed), assignment.grading.forbidden,
        baseline=run.reference_build,
    )
    # A forbidden word in a file costs the tasks whose test executable includes that file.
    included = solution_files_by_target(job / "build", set(source_findings))
    grades = []
    for task in assignment.tasks:
        if task.answers is not None:
            grades.append(score_answers(assignment, task, solution))
            continue
        groups = tuple(results[(task.tests, group)] for group in run.active_groups())
        files = included.get(target_name(assignment.id, task.tests)) if included else None
        findings = tuple(found for name, per_file in source_findings.items() if files is None or name in files for found in per_file)
        grades.append(score_task(assignment, task, groups, findings + symbol_findings.get(task.tests, ())))
    started = time.monotonic()
    grades = add_speed(run, job, grades, built.get(SPEED_TARGET), symbol_findings.get(SPEED_TARGET, ()))
    stages["speed"] = time.monotonic() - started
    grades = add_sanitizer_reports(run, grades, sanitizer_reports)
    all_findings = tuple(found for per_file in source_findings.values() for found in per_file)
    all_findings += tuple(finding for found in symbol_findings.values() for finding in found)
    return tuple(grades), tuple(dict.fromkeys(all_findings))


def build(
    assignment: Assignment,
    solution: Path,
    build_dir: Path,
    targets: list[str],
    cmake_args: tuple[str, ...],
    sandbox: Sandbox | None,
    readable: tuple[Path, ...] = (),
) -> dict[str, str | None]:
    """Build each target (test executables by `tests` name, or SPEED_TARGET); None for those that
    built, else their first compiler errors. CMake's configure step runs the grader's own
    CMake code and is trusted; the build compiles the solution, in `sandbox` when given, which
    also sees `readable` (the reference build's harness mains, and nothing else of it)."""
    log_dir = build_dir / "logs"
    cmake.configure(assignment.root, build_dir, assignment.id, solution, log_dir / "configure.log", cmake_args)
    command = ["cmake", "--build", str(build_dir), "-j", str(os.cpu_count() or 1), "--target"]
    command += [target_name(assignment.id, target) for target in targets]
    command += ["--", "-k", "0"] if (build_dir / "build.ninja").exists() else ["--", "-k"]
    step = _build_step(assignment, solution, build_dir, readable)
    outcome = runner.run(command, build_dir, BUILD_TIMEOUT_S, sandbox=sandbox, step=step)
    output = outcome.output
    if outcome.timed_out:
        output += f"\nerror: the build took longer than {BUILD_TIMEOUT_S} s and was stopped"
    elif outcome.limit_hit:
        output += f"\nerror: the build was stopped by its {_limit_words(outcome.limit_hit, step)}"
    log_dir.mkdir(parents=True, exist_ok=True)
    (log_dir / "build.log").write_text(output, encoding="utf-8")
    built: dict[str, str | None] = {}
    for target in targets:
        if executable(build_dir, assignment.id, target).is_file():
            built[target] = None
        else:
            errors = cmake.first_error_lines(_failures_of(output, target_name(assignment.id, target)) or output)
            built[target] = "\n".join(errors)
    return built


def _build_step(assignment: Assignment, solution: Path, build_dir: Path, extra: tuple[Path, ...]) -> Step:
    """What a build sees: the system, the toolchain, the frozen sources and the solution; it
    writes only into its build folder."""
    root = assignment.root
    frozen = [root / path for path in FROZEN_SOURCES if (root / path).exists()]
    cache = (build_dir / "CMakeCache.txt").read_text(encoding="utf-8", errors="replace")
    tools = [match[2] for match in BUILD_TOOL_ENTRIES.finditer(cache)]
    readable = [*toolchain_paths(tools), *frozen, root / "assignments" / assignment.id, solution, *extra]
    return build_step(readable, build_dir)


def _limit_words(limit: str, step: Step) -> str:
    """'memory limit (8 GiB)', 'GPU memory limit (16 GiB)' or 'process limit (256 processes and threads)'."""
    if limit == "memory":
        return f"memory limit ({step.memory_bytes / (1 << 30):g} GiB)"
    if limit == "GPU memory":
        return f"GPU memory limit ({step.gpu_memory_bytes / (1 << 30):g} GiB)"
    return f"process limit ({step.processes} processes and threads)"


def _failures_of(output: str, target: str) -> str:
    """The build tool's output for the failed steps of one target (Ninja and Make mark them)."""
    blocks = re.split(r"(?m)^(?=FAILED: |\[\s*\d+%\]|\[\d+/\d+\] )", output)
    return "\n".join(block for block in blocks if f"/{target}.dir/" in block and block.startswith("FAILED: "))


@dataclass(frozen=True)
class GroupRun:
    """One run of a test executable on one group's inputs: what the student's process left."""

    tests: str
    group: str
    records: Path
    outcome: runner.RunOutcome
    step: Step
    # time.monotonic() when the run ended: with its seconds, when the GPU's memory mattered.
    ended: float


def run_group(run: GradingRun, job: Path, tests: str, group: str) -> GroupRun:
    """Run one test executable on one group's inputs in a fresh process; its records are judged later."""
    records = job / "records" / f"{tests}.{group}.rec"
    fresh_output(records)
    program = executable(job / "build", run.assignment.id, tests)
    step = run_step(program, [records], gpu=run.backend == "cuda")
    with run.run_slots:
        outcome = runner.run(
            [str(program), "--order", "decl"],
            cwd=records.parent,
            timeout_s=run.timeout_s,
            environment={**run.group_environment(group), "KERNELLAB_RECORD": str(records)},
            sandbox=run.sandbox,
            step=step,
        )
    (job / "logs").mkdir(exist_ok=True)
    (job / "logs" / f"{tests}.{group}.log").write_text(outcome.output, encoding="utf-8")
    return GroupRun(tests, group, records, outcome, step, time.monotonic())


def judge_group(run: GradingRun, ran: GroupRun) -> GroupResult:
    """The verdict on one group's run: its records against the reference's, then how the run ended."""
    group, outcome, step = ran.group, ran.outcome, ran.step
    expected = read_records(run.expected_records(ran.tests, group))
    if not expected.records:
        return GroupResult(group, NO_GPU, "no CUDA device: the reference could not run either", seconds=outcome.seconds)
    produced = read_records(ran.records)
    checks = judge(expected.records, produced.records)
    cases = tuple(by_test_case(checks))
    failed = [case for case in cases if not case.passed]
    verdict, detail = PASSED, ""
    if outcome.limit_hit:  # first: a fork bomb also runs out of time
        verdict, detail = FAILED, f"stopped by the sandbox's {_limit_words(outcome.limit_hit, step)}"
    elif outcome.timed_out:
        verdict = TIMED_OUT
        detail = f"no result after {run.timeout_s:g} s (a kernel that never finishes?)"
    elif outcome.exit_code == cmake.NO_GPU_EXIT_CODE and not produced.records:
        verdict, detail = NO_GPU, "no CUDA device"
    elif outcome.signal_name:
        verdict, detail = f"{CRASHED} ({outcome.signal_name})", ""
    elif failed or produced.problem:
        verdict = FAILED
    elif outcome.exit_code == cmake.NO_GPU_EXIT_CODE and run.backend == "cpu":
        # The CPU backend only warned of warp-synchronous code (the manifest's "warn"): every
        # result is right here, but lockstep execution is what only a GPU can confirm.
        verdict, detail = NEEDS_GPU, "warp-synchronous code: right on the CPU backend; only a GPU can confirm it"
    elif outcome.exit_code != 0:
        verdict = FAILED
    if verdict not in (PASSED, NO_GPU, NEEDS_GPU):
        detail = _failure_detail(detail, failed, produced.problem, outcome, len(checks))
    # What other runs on the GPU can do to this one: take the memory it needs, or slow it past
    # its time limit. A crash, a wrong result or a sandbox limit (the step's own) is the run's.
    return GroupResult(group, verdict, detail, cases, outcome.seconds, conclusive=not _may_owe_to_neighbours(outcome, ran.ended))


def _may_owe_to_neighbours(outcome: runner.RunOutcome, ended: float) -> bool:
    """Whether a run may have failed through the runs beside it: out of time, or out of GPU memory
    while the grader saw the device nearly full (what the run printed alone decides nothing, where
    the grader watches the device), but not at its own sandbox limit."""
    if outcome.limit_hit:
        return False
    if outcome.timed_out:
        return True
    if not _OUT_OF_GPU_MEMORY.search(outcome.output):
        return False
    use = gpu_memory.machine_use()
    return (use.nearly_full(ended - outcome.seconds, ended) if use else None) is not False


def confirm_alone(run: GradingRun, job: Path, results: dict[tuple[str, str], GroupResult]) -> dict[tuple[str, str], GroupResult]:
    """The groups that failed out of time or out of GPU memory, each run again alone (no other
    test program beside it, the GPU its own): their verdicts come from that run. Runs that share
    the machine (this submission's other groups, other submissions' runs in a batch) can take the
    GPU's memory or slow a run past its time limit; a student must not lose points to that, so
    only such a failure seen alone counts."""
    confirmed = {}
    for key, result in results.items():
        if result.verdict in (PASSED, NO_GPU, NEEDS_GPU, BUILD_FAILED) or result.conclusive:
            continue
        with run.gpu_lock.exclusive():
            again = judge_group(run, run_group(run, job, *key))
        reason = "out of time" if result.verdict == TIMED_OUT else "out of GPU memory"
        note = f"run again with the GPU to itself: the first run, beside other runs, ran {reason}"
        confirmed[key] = replace(again, detail="\n".join(filter(None, (again.detail, note))))
    return confirmed


def _failure_detail(detail: str, failed: list[TestCaseResult], problem: str, outcome: runner.RunOutcome, checks: int) -> str:
    lines = [detail] if detail else []
    if failed:
        first = failed[0]
        lines += [first.name, first.first_failure]
        if len(failed) > 1:
            lines.append(f"{len(failed) - 1} more test case(s) failed")
    if problem:
        lines.append(f"its records end early: {problem}")
    if reported := _first_reported_error(outcome.output):
        lines.append(f"the run reported: {reported}")
    if not failed and outcome.exit_code not in (0, None) and not outcome.signal_name:
        lines.append(f"the test executable exited with status {outcome.exit_code} after its {checks} checks")
    tail = [line for line in outcome.output.splitlines() if line.strip()][-OUTPUT_TAIL_LINES:]
    if tail and (outcome.signal_name or outcome.timed_out or not failed):
        lines += ["last output:", *(f"  {line}" for line in tail)]
    return "\n".join(lines)


# How CUDA reports that the GPU had no memory left for a run (its context or an allocation).
_OUT_OF_GPU_MEMORY = re.compile(r"cudaErrorMemoryAllocation|CUDA_ERROR_OUT_OF_MEMORY|out of memory")
# Catch2's words for an exception that ended a test case: a CUDA error, or a finding of the CPU
# backend (a race, barrier divergence...) thrown from the launch that made it. With captured
# values ("messages"), those come first, one `name := value` per line, then the exception's text.
_UNEXPECTED_EXCEPTION = re.compile(r"due to unexpected exception with messages?:$")
_CAPTURED_VALUE = re.compile(r"^\w+ := ")


def _first_reported_error(output: str) -> str:
    """The message of the first exception that ended a test case, as the run printed it (it
    explains a missing result; it is feedback, never a verdict)."""
    lines = output.splitlines()
    for index, line in enumerate(lines):
        if _UNEXPECTED_EXCEPTION.search(line):
            message = []
            for following in lines[index + 1 :]:
                if not following.strip() or following.startswith(("---", "===", "...")):
                    break
                if not _CAPTURED_VALUE.match(following.strip()):
                    message.append(following.strip())
            return " ".join(message)
    return ""


def _outcome_summary(outcome: runner.RunOutcome) -> str:
    if outcome.timed_out:
        return "timed out"
    return f"exit status {outcome.exit_code}" + (f" ({outcome.signal_name})" if outcome.signal_name else "")


def correctness_points(assignment: Assignment, task: Task) -> float:
    """A task's points less those its [[speed]] cases give."""
    return task.points - sum(case.points for case in assignment.speed if case.task == task.id)


def score_task(assignment: Assignment, task: Task, groups: tuple[GroupResult, ...], findings: tuple[str, ...]) -> TaskGrade:
    """Each group that passed earns its share of the task's correctness points; a forbidden library
    earns none. Speed points come later (add_speed)."""
    shares = {"public": assignment.grading.public_share, "hidden": 1 - assignment.grading.public_share}
    if len(groups) == 1:
        shares = {groups[0].group: 1.0}
    correctness = correctness_points(assignment, task)
    scored = tuple(
        replace(
            group,
            max_points=round(shares[group.group] * correctness, 2),
            points=round(shares[group.group] * correctness, 2) if group.verdict == PASSED and not findings else 0.0,
        )
        for group in groups
    )
    feedback = "no points: " + "; ".join(findings) if findings else ""
    return TaskGrade(task.id, task.title, round(sum(group.points for group in scored), 2), task.points, scored, feedback)


def add_speed(
    run: GradingRun, job: Path, grades: list[TaskGrade], speed_build_errors: str | None, speed_findings: tuple[str, ...]
) -> list[TaskGrade]:
    """Each task's speed results and points: timed on the GPU only for a task whose tests all passed."""
    if not run.assignment.speed:
        return grades
    why_not: dict[str, str] = {}
    for grade in grades:
        if not grade.groups or any(group.verdict != PASSED for group in grade.groups) or grade.feedback:
            why_not[grade.id] = "speed is scored once the task passes all its tests"
    for case in run.assignment.speed:
        if run.backend != "cuda":
            why_not.setdefault(case.task, "the CPU backend gives no speed scores; grade on a GPU for them")
        elif speed_build_errors is not None:
            why_not.setdefault(case.task, f"the speed program did not build:\n{speed_build_errors}")
        elif speed_findings:
            why_not.setdefault(case.task, "the speed program is not run: " + "; ".join(speed_findings))
    timed = [case for case in run.assignment.speed if case.task not in why_not]
    results: list[SpeedResult] = [result for case in run.assignment.speed if case.task in why_not
                                  for result in speed.not_measured(case, why_not[case.task])]
    if timed:
        try:
            with run.gpu_lock.exclusive():
                results += speed.measure(
                    timed,
                    executable(job / "build", run.assignment.id, SPEED_TARGET),
                    executable(run.reference_build, run.assignment.id, SPEED_TARGET),
                    job / "speed",
                    run.seed,
                    run.sandbox,
                )
        except speed.SpeedError as error:
            raise GradingError(str(error)) from None
    by_task: dict[str, list[SpeedResult]] = {}
    for result in results:
        by_task.setdefault(result.task, []).append(result)
    return [
        replace(grade, speed=tuple(by_task.get(grade.id, ())),
                points=round(grade.points + sum(result.points for result in by_task.get(grade.id, ())), 2))
        for grade in grades
    ]


def run_sanitizers(run: GradingRun, job: Path, built: list[str]) -> list[sanitizer.SanitizerReport]:
    """compute-sanitizer's reports on each built test executable (GPU only; none without the tool)."""
    tool_path = sanitizer.find_tool()
    if run.backend != "cuda" or tool_path is None:
        return []

    def sanitize(job_key: tuple[str, str]) -> sanitizer.SanitizerReport:
        tests, tool = job_key
        with run.run_slots:
            return sanitizer.sanitize(
                tool_path, tool, executable(job / "build", run.assignment.id, tests), tests,
                job / "sanitizers" / f"{tests}.{tool}.log", run.timeout_s * sanitizer.TIMEOUT_FACTOR, run.sandbox,
            )

    with run.gpu_lock.shared(), ThreadPoolExecutor(PARALLEL_RUNS) as pool:
        return list(pool.map(sanitize, [(tests, tool) for tests in built for tool in sanitizer.TOOLS]))


def add_sanitizer_reports(run: GradingRun, grades: list[TaskGrade], reports: list[sanitizer.SanitizerReport]) -> list[TaskGrade]:
    """The sanitizers' reports as feedback on the tasks whose tests they ran; a task with errors
    loses the manifest's sanitizer_penalty share of its points."""
    penalty = run.assignment.grading.sanitizer_penalty
    tests_of = {task.id: task.tests for task in run.assignment.tasks}
    updated = []
    for grade in grades:
        own = [report for report in reports if report.tests == tests_of[grade.id]]
        if not own:
            updated.append(grade)
            continue
        where = f"at size {', '.join(map(str, sanitizer.SIZES))}, blocks of {' and '.join(map(str, sanitizer.BLOCK_SIZES))} threads:"
        lines = [where] + [report.describe() for report in own]
        clean = not any(report.errors for report in own)
        deduction = 0.0 if clean else round(grade.points * penalty, 2)
        if deduction:
            lines.append(f"sanitizer errors cost {penalty:.0%} of this task's points: -{deduction:g}")
        updated.append(replace(grade, points=round(grade.points - deduction, 2), sanitizer="\n".join(lines),
                               sanitizer_clean=clean, sanitizer_deduction=deduction))
    return updated


def score_answers(assignment: Assignment, task: Task, solution: Path) -> TaskGrade:
    """Each question's points for an answer equal to the instructor's (within its tolerance)."""
    try:
        questions = tomllib.loads(assignment.questions_path.read_text(encoding="utf-8"))["questions"]
    except (OSError, tomllib.TOMLDecodeError, KeyError) as error:
        raise GradingError(f"the questions of {assignment.id} cannot be read: {error}") from None
    answers_file = solution / task.answers
    try:
        answers = tomllib.loads(answers_file.read_text(encoding="utf-8")) if answers_file.is_file() else {}
        problem = "" if answers_file.is_file() else f"no {task.answers} in the submission"
    except (tomllib.TOMLDecodeError, UnicodeDecodeError) as error:
        answers, problem = {}, f"{task.answers} is not valid TOML: {error}"
    earned = 0.0
    lines = [problem] if problem else []
    for question in questions:
        given = answers.get(question["id"])
        right = answer_matches(given, question["answer"], question.get("tolerance", 0.0))
        earned += question["points"] if right else 0
        verdict = "right" if right else "no answer" if given is None else "wrong"
        lines.append(f"{question['id']}: {verdict} ({question['points'] if right else 0}/{question['points']})")
    max_points = sum(question["points"] for question in questions)
    if max_points != task.points:
        raise GradingError(f"the questions of {assignment.id} give {max_points} points, its task {task.id} {task.points}")
    return TaskGrade(task.id, task.title, earned, task.points, (), "\n".join(lines))


def answer_matches(given: object, answer: int | float, tolerance: float) -> bool:
    if type(given) not in (int, float):
        return False
    if tolerance == 0:
        return given == answer
    return abs(given - answer) <= tolerance * abs(answer)


def solution_files_by_target(build_dir: Path, names: set[str]) -> dict[str, set[str]] | None:
    """Per CMake target, which of the files `names` its objects include (by file name: the CPU
    backend compiles rewritten copies), from Ninja's dependency log; None without one."""
    if not names or not (build_dir / "build.ninja").exists() or shutil.which("ninja") is None:
        return None
    log = subprocess.run(["ninja", "-C", str(build_dir), "-t", "deps"], capture_output=True, text=True, errors="replace")
    included: dict[str, set[str]] = {}
    target = None
    for line in log.stdout.splitlines():
        if line and not line[0].isspace():
            match = re.search(r"CMakeFiles/([^/]+)\.dir/", line)
            target = match[1] if match else None
            if target:
                included.setdefault(target, set())  # built, even if it includes none of `names`
        elif target and (name := Path(line.strip()).name) in names:
            included.setdefault(target, set()).add(name)
    return included
