"""The known-wrong versions of an assignment, and whether its tests reject each one.

A known-wrong version is `assignments/<id>/wrong/<task-id>/<name>.patch`, a patch against the
reference files that plants one bug; the tests of its task must fail on it.
"""

import json
import queue
import shutil
import tempfile
import threading
from collections.abc import Sequence
from concurrent.futures import ThreadPoolExecutor, as_completed
from dataclasses import asdict, dataclass, field, replace
from pathlib import Path

from kernellab import cmake
from kernellab.errors import InputError
from kernellab.junit import failed_test_cases
from kernellab.manifest import Assignment, Task, load_assignment
from kernellab.patches import PatchError, apply_patch, parse_patch
from kernellab.public_tests import run_end
from kernellab.table import format_columns, shortened
from kernellab.verdict import NOT_RUN, Verdict, decide, is_crash

# Verdicts that mean the test suite or a fixture needs work.
PROBLEMS = (Verdict.NOT_REJECTED, Verdict.BUILD_FAILED, Verdict.PATCH_FAILED)
# A wrong version can hang a kernel; a run longer than this counts as a failure.
TEST_TIMEOUT_S = 600
CAUGHT_BY_SHOWN = 3
DESCRIPTION_WIDTH = 60


@dataclass(frozen=True)
class Row:
    task: str
    name: str
    description: str
    verdict: str
    caught_by: list[str] = field(default_factory=list)
    details: list[str] = field(default_factory=list)


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


def check_assignment(
    root: Path, assignment_id: str, only_task: str | None, build_dir: Path | None, keep: bool, cmake_args: list[str], jobs: int
) -> list[Row]:
    """`kernellab wrong`: check every known-wrong version (of `only_task`, when given) and print
    the table; the work goes to `build_dir`, or to a temporary folder removed after unless `keep`."""
    assignment = load_assignment(root, assignment_id)
    versions = find_wrong_versions(assignment, only_task)
    if not versions:
        print(f"{assignment.id}: no known-wrong versions under {assignment.wrong_dir}")
        return []
    work = (build_dir or Path(tempfile.mkdtemp(prefix=f"kernellab-wrong-{assignment.id}-"))).resolve()
    try:
        rows = check_versions(assignment, versions, work, cmake_args, jobs)
        (work / "wrong.json").write_text(json.dumps([asdict(row) for row in rows], indent=2) + "\n")
    finally:
        if build_dir is None and not keep:
            shutil.rmtree(work, ignore_errors=True)
    print(format_table(rows))
    print(format_problem_details(rows), end="")
    if build_dir is not None or keep:
        print(f"work directory: {work} (rows in {work / 'wrong.json'})")
    return rows


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
        return Row(task.id, name, "", Verdict.PATCH_FAILED, details=[str(error)])
    solution = job_dir / "solution"
    prepare_solution(assignment.reference_dir, solution)
    try:
        apply_patch(patch, solution)
    except PatchError as error:
        return Row(task.id, name, patch.description, Verdict.PATCH_FAILED, details=[str(error)])
    build_dir = job_dir / "build"
    target = cmake.test_target(assignment.id, task.tests)
    built = cmake.run_logged(cmake.build_command(build_dir, target), work / "logs" / f"{task.id}-{name}.build.log")
    if built.exit_code != 0:
        return Row(task.id, name, patch.description, Verdict.BUILD_FAILED, details=cmake.first_error_lines(built.output))
    report = work / "reports" / f"{task.id}-{name}.xml"
    log = work / "logs" / f"{task.id}-{name}.test.log"
    # One failed test is all the verdict needs, and the one that failed first caught the version;
    # the rest could only take time (minutes a version on the CPU backend, most of `check
    # pmph-w2`'s in CI) or hang until the timeout. A crash, a timeout or a pass before the first
    # failure reads as it would without stopping. Where the CPU backend only warns of
    # warp-synchronous races (`warp_synchronous = "warn"`), a warning before the failure still
    # makes the exit status 77 ("needs a GPU"); a failure that no warning came before is proven
    # (no launch so far left lanes' order to chance), whatever later tests would have warned.
    tested = cmake.run_tests(build_dir, assignment.id, task.tests, report, log, TEST_TIMEOUT_S, stop_at_first_failure=True)
    verdict, caught_by = run_verdict(tested, report)
    return Row(task.id, name, patch.description, verdict, caught_by)


def prepare_solution(reference_dir: Path, solution: Path) -> None:
    """Replace `solution` with a copy of the reference, at the same path so the build stays configured."""
    shutil.rmtree(solution, ignore_errors=True)
    # shutil.copy, unlike copy2, gives the copies new mtimes: a file reverted from the previous
    # patch with its old mtime would look older than its object file and not be rebuilt.
    shutil.copytree(reference_dir, solution, copy_function=shutil.copy)


def run_verdict(tested: cmake.Completed, report: Path) -> tuple[str, list[str]]:
    """The verdict on one test run and the failed test cases (or why it failed) that caught it."""
    failed_cases = failed_test_cases(report)
    # Failed cases beside the CPU backend's warning of warp-synchronous code (its exit status 77)
    # prove nothing: only a GPU can tell whether that code is wrong, so the version is not run here.
    verdict = decide(replace(run_end(tested, failed_cases), has_results=False))
    if verdict == Verdict.PASSED:
        return Verdict.NOT_REJECTED, []
    if verdict in NOT_RUN:
        return Verdict.NO_GPU, []
    if verdict == Verdict.TIMED_OUT:
        return Verdict.REJECTED, [f"(timed out after {TEST_TIMEOUT_S} s)"]
    return Verdict.REJECTED, failed_cases or [f"({verdict if is_crash(verdict) else f'exit code {tested.exit_code}'}, "
                                              "no failed test case in the report)"]


def format_table(rows: list[Row]) -> str:
    header = ("task", "name", "description", "verdict", "caught by")
    cells = [header] + [
        (row.task, row.name, shortened(row.description, DESCRIPTION_WIDTH), row.verdict, _caught_by_cell(row.caught_by))
        for row in rows
    ]
    lines = format_columns(cells)
    rejected = sum(row.verdict == Verdict.REJECTED for row in rows)
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
