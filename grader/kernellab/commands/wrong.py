"""`kernellab wrong`: prove that the tests reject every known-wrong version of the solution.

A known-wrong version is `assignments/<id>/wrong/<task-id>/<name>.patch`, a patch against the
reference files that plants one bug; the tests of its task must fail on it.
"""

import argparse
import json
import os
import queue
import shutil
import tempfile
import threading
from collections.abc import Sequence
from concurrent.futures import ThreadPoolExecutor, as_completed
from dataclasses import asdict, dataclass, field
from pathlib import Path

from kernellab import cmake
from kernellab.cmake import BUILD_FAILED, NO_GPU
from kernellab.errors import InputError
from kernellab.junit import failed_test_cases
from kernellab.manifest import Assignment, Task, load_assignment
from kernellab.patches import PatchError, apply_patch, parse_patch
from kernellab.table import format_columns, shortened

REJECTED = "rejected"
NOT_REJECTED = "NOT rejected"
PATCH_FAILED = "patch failed"
# Verdicts that mean the test suite or a fixture needs work.
PROBLEMS = (NOT_REJECTED, BUILD_FAILED, PATCH_FAILED)

CAUGHT_BY_SHOWN = 3
DESCRIPTION_WIDTH = 60
# A quarter of the CPUs: a job's first build (-j<CPUs>) and, on the CPU backend, its test runs
# (KERNELLAB_CPU_WORKERS, every core) already spread over the cores, but much of a job is one
# process (the one test source a patch changes, the link, a GPU test run), so a few jobs at
# once keep the cores busy; many would make the first builds of all jobs compete for memory.
DEFAULT_JOBS = max(1, (os.cpu_count() or 1) // 4)


@dataclass(frozen=True)
class Row:
    task: str
    name: str
    description: str
    verdict: str
    caught_by: list[str] = field(default_factory=list)
    details: list[str] = field(default_factory=list)


def add_parser(subparsers: argparse._SubParsersAction) -> argparse.ArgumentParser:
    parser = subparsers.add_parser(
        "wrong",
        help="check that the tests reject every known-wrong version",
        description="Apply each assignments/<ID>/wrong/<task>/<name>.patch to a copy of the reference, "
        "build that task's test executable against it and check that the tests fail. They stop at the "
        "first failure (but for tasks with warp_synchronous = \"warn\"): the test that caught the version.",
    )
    parser.add_argument("assignment", metavar="ID", help="the assignment")
    parser.add_argument("--task", metavar="TASK", help="only the known-wrong versions of this task")
    parser.add_argument(
        "--build-dir", metavar="DIR", type=Path, help="work directory to use and keep (default: a temporary one)"
    )
    parser.add_argument("--keep", action="store_true", help="keep the temporary work directory")
    add_jobs_option(parser)
    cmake.add_cmake_arg_option(parser)
    return parser


def add_jobs_option(parser: argparse.ArgumentParser) -> None:
    """The --jobs option of the verbs that check the known-wrong versions."""
    parser.add_argument(
        "--jobs",
        type=_job_count,
        default=DEFAULT_JOBS,
        metavar="N",
        help="check N known-wrong versions at a time, each job in its own solution and build folder "
        "(default: a quarter of the CPUs, here %(default)s). Each build runs with -j<CPUs>, but after a "
        "job's first build a version recompiles only the test source its patch reaches, so N jobs "
        "compile about N files at a time",
    )


def _job_count(text: str) -> int:
    if not text.isdigit() or int(text) < 1:
        raise argparse.ArgumentTypeError(f"expected a whole number of at least 1, got {text!r}")
    return int(text)


def run(args: argparse.Namespace) -> int:
    assignment = load_assignment(args.root, args.assignment)
    versions = find_wrong_versions(assignment, args.task)
    if not versions:
        print(f"{assignment.id}: no known-wrong versions under {assignment.wrong_dir}")
        return 0
    work = (args.build_dir or Path(tempfile.mkdtemp(prefix=f"kernellab-wrong-{assignment.id}-"))).resolve()
    try:
        rows = check_versions(assignment, versions, work, args.cmake_args, args.jobs)
        (work / "wrong.json").write_text(json.dumps([asdict(row) for row in rows], indent=2) + "\n")
    finally:
        if args.build_dir is None and not args.keep:
            shutil.rmtree(work, ignore_errors=True)
    print(format_table(rows))
    print(format_problem_details(rows), end="")
    if args.build_dir is not None or args.keep:
        print(f"work directory: {work} (rows in {work / 'wrong.json'})")
    return 1 if any(row.verdict in PROBLEMS for row in rows) else 0


def find_wrong_versions(assignment: Assignment, only_task: str | None) -> list[tuple[Task, Path]]:
    """(task, patch file) for each known-wrong version, in manifest task order, then by name."""
    if only_task is not None and only_task not in assignment.task_ids:
        raise InputError(f"--task {only_task}: not a task of {assignment.id} (tasks: {', '.join(assignment.task_ids)})")
    if not assignment.wrong_dir.is_dir():
        return []
    for entry in assignment.wrong_dir.iterdir():
        if not entry.is_dir() or entry.name not in assignment.task_ids:
            raise InputError(
                f"only task folders belong here, and {entry.name!r} is not a task of {assignment.id} "
                f"(tasks: {', '.join(assignment.task_ids)})",
                entry,
            )
        for patch_file in entry.iterdir():
            if not patch_file.is_file() or patch_file.suffix != ".patch":
                raise InputError("only <name>.patch files belong in a task folder of wrong/", patch_file)
    return [
        (task, patch_file)
        for task in assignment.tested_tasks
        if only_task in (None, task.id)
        for patch_file in sorted((assignment.wrong_dir / task.id).glob("*.patch"))
    ]


def check_versions(
    assignment: Assignment,
    versions: list[tuple[Task, Path]],
    work: Path,
    cmake_args: Sequence[str] = (),
    jobs: int = 1,
) -> list[Row]:
    """The rows of `versions`, in their order, checked `jobs` at a time; each row's line is printed
    as it is done. Job n builds in <work>/job-<n>/ and every job logs to <work>/logs and <work>/reports."""
    pending: queue.SimpleQueue[tuple[int, Task, Path]] = queue.SimpleQueue()
    for index, (task, patch_file) in enumerate(versions):
        pending.put((index, task, patch_file))
    rows: list[Row | None] = [None] * len(versions)
    # Set when the command stops (Ctrl-C, a failed configure step), so that the other jobs end
    # after their current version instead of working through the rest of the queue.
    stopping = threading.Event()
    printing = threading.Lock()

    def job(number: int) -> None:
        job_dir = work / f"job-{number}"
        # Configured once: the versions this job takes rebuild only what their patch changes.
        prepare_solution(assignment.reference_dir, job_dir / "solution")
        log = work / "logs" / f"configure-{number}.log"
        cmake.configure(assignment.root, job_dir / "build", assignment.id, job_dir / "solution", log, cmake_args)
        while not stopping.is_set():
            try:
                index, task, patch_file = pending.get_nowait()
            except queue.Empty:
                return
            row = check_version(assignment, task, patch_file, job_dir, work)
            rows[index] = row
            with printing:
                print(f"{row.task}/{row.name}: {row.verdict}", flush=True)

    with ThreadPoolExecutor(max_workers=jobs) as pool:
        running = [pool.submit(job, number) for number in range(1, min(jobs, len(versions)) + 1)]
        try:
            # In the order they end, so that the first job to fail stops the others at once.
            for future in as_completed(running):
                future.result()
        finally:
            stopping.set()
    return rows


def check_version(assignment: Assignment, task: Task, patch_file: Path, job_dir: Path, work: Path) -> Row:
    """Patch a fresh copy of the reference in <job_dir>/solution, build the task's tests in
    <job_dir>/build and run them; the logs and the test report go under <work>."""
    name = patch_file.stem
    try:
        patch = parse_patch(patch_file)
    except PatchError as error:
        return Row(task.id, name, "", PATCH_FAILED, details=[str(error)])
    solution = job_dir / "solution"
    prepare_solution(assignment.reference_dir, solution)
    try:
        apply_patch(patch, solution)
    except PatchError as error:
        return Row(task.id, name, patch.description, PATCH_FAILED, details=[str(error)])
    build_dir = job_dir / "build"
    target = cmake.test_target(assignment.id, task.tests)
    built = cmake.run_logged(cmake.build_command(build_dir, target), work / "logs" / f"{task.id}-{name}.build.log")
    if built.exit_code != 0:
        return Row(task.id, name, patch.description, BUILD_FAILED, details=cmake.first_error_lines(built.output))
    report = work / "reports" / f"{task.id}-{name}.xml"
    log = work / "logs" / f"{task.id}-{name}.test.log"
    tested = cmake.run_tests(
        build_dir, assignment.id, task.tests, report, log, cmake.TEST_TIMEOUT_S, stop_at_first_failure(task)
    )
    verdict, caught_by = run_verdict(tested, report)
    return Row(task.id, name, patch.description, verdict, caught_by)


def stop_at_first_failure(task: Task) -> bool:
    """Whether a known-wrong version's test run may stop at its first failed assertion.

    One failed test is all the verdict needs, and the test that failed first is the one that
    caught it; the rest could only take time (minutes per version on the CPU backend), or hang
    until the timeout after the version is already rejected. A crash, a timeout or a pass before
    the first failure reads as it would without stopping. Not where the CPU backend only warns of
    warp-synchronous races (`warp_synchronous = "warn"`): there a warning in a later test turns
    the exit status into 77, "needs a GPU", which stopping early would turn into rejected.
    """
    return task.warp_synchronous != "warn"


def prepare_solution(reference_dir: Path, solution: Path) -> None:
    """Replace `solution` with a copy of the reference, at the same path so the build stays configured."""
    shutil.rmtree(solution, ignore_errors=True)
    # shutil.copy, unlike copy2, gives the copies new mtimes: a file reverted from the previous
    # patch with its old mtime would look older than its object file and not be rebuilt.
    shutil.copytree(reference_dir, solution, copy_function=shutil.copy)


def run_verdict(tested: cmake.Completed, report: Path) -> tuple[str, list[str]]:
    """The verdict on one test run and the failed test cases (or why it failed) that caught it."""
    if tested.timed_out:
        return REJECTED, [f"(timed out after {cmake.TEST_TIMEOUT_S} s)"]
    if tested.exit_code == 0:
        return NOT_REJECTED, []
    if tested.exit_code == cmake.NO_GPU_EXIT_CODE:
        return NO_GPU, []
    return REJECTED, failed_test_cases(report) or [_exit_description(tested.exit_code)]


def _exit_description(exit_code: int) -> str:
    if exit_code < 0:
        return f"(crashed: signal {-exit_code}, no failed test case in the report)"
    return f"(exit code {exit_code}, no failed test case in the report)"


def format_table(rows: list[Row]) -> str:
    header = ("task", "name", "description", "verdict", "caught by")
    cells = [header] + [
        (row.task, row.name, shortened(row.description, DESCRIPTION_WIDTH), row.verdict, _caught_by_cell(row.caught_by))
        for row in rows
    ]
    lines = format_columns(cells)
    rejected = sum(row.verdict == REJECTED for row in rows)
    return "\n".join(lines + [f"test-suite strength: {rejected}/{len(rows)} rejected"])


def format_problem_details(rows: list[Row]) -> str:
    """The patch errors and compiler errors behind the problem verdicts, indented under each version."""
    return "".join(
        f"\n{row.task}/{row.name}: {row.verdict}\n" + "".join(f"    {detail}\n" for detail in row.details)
        for row in rows
        if row.details
    )


def _caught_by_cell(caught_by: list[str]) -> str:
    shown = ", ".join(caught_by[:CAUGHT_BY_SHOWN])
    return shown + (f" (+{len(caught_by) - CAUGHT_BY_SHOWN} more)" if len(caught_by) > CAUGHT_BY_SHOWN else "")
