"""`kernellab wrong`: prove that the tests reject every known-wrong version of the solution.

A known-wrong version is `assignments/<id>/wrong/<task-id>/<name>.patch`, a patch against the
reference files that plants one bug; the tests of its task must fail on it.
"""

import argparse
import json
import shutil
import tempfile
from collections.abc import Sequence
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
        "build that task's test executable against it and check that the tests fail.",
    )
    parser.add_argument("assignment", metavar="ID", help="the assignment")
    parser.add_argument("--task", metavar="TASK", help="only the known-wrong versions of this task")
    parser.add_argument(
        "--build-dir", metavar="DIR", type=Path, help="work directory to use and keep (default: a temporary one)"
    )
    parser.add_argument("--keep", action="store_true", help="keep the temporary work directory")
    cmake.add_cmake_arg_option(parser)
    return parser


def run(args: argparse.Namespace) -> int:
    assignment = load_assignment(args.root, args.assignment)
    versions = find_wrong_versions(assignment, args.task)
    if not versions:
        print(f"{assignment.id}: no known-wrong versions under {assignment.wrong_dir}")
        return 0
    work = (args.build_dir or Path(tempfile.mkdtemp(prefix=f"kernellab-wrong-{assignment.id}-"))).resolve()
    try:
        rows = check_versions(assignment, versions, work, args.cmake_args)
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
    assignment: Assignment, versions: list[tuple[Task, Path]], work: Path, cmake_args: Sequence[str] = ()
) -> list[Row]:
    solution = work / "solution"
    build_dir = work / "build"
    prepare_solution(assignment.reference_dir, solution)
    cmake.configure(assignment.root, build_dir, assignment.id, solution, work / "logs" / "configure.log", cmake_args)
    rows = []
    for task, patch_file in versions:
        row = check_version(assignment, task, patch_file, work)
        print(f"{row.task}/{row.name}: {row.verdict}", flush=True)
        rows.append(row)
    return rows


def check_version(assignment: Assignment, task: Task, patch_file: Path, work: Path) -> Row:
    """Patch a fresh copy of the reference in <work>/solution, build the task's tests, run them."""
    name = patch_file.stem
    try:
        patch = parse_patch(patch_file)
    except PatchError as error:
        return Row(task.id, name, "", PATCH_FAILED, details=[str(error)])
    solution = work / "solution"
    prepare_solution(assignment.reference_dir, solution)
    try:
        apply_patch(patch, solution)
    except PatchError as error:
        return Row(task.id, name, patch.description, PATCH_FAILED, details=[str(error)])
    build_dir = work / "build"
    target = cmake.test_target(assignment.id, task.tests)
    built = cmake.run_logged(cmake.build_command(build_dir, target), work / "logs" / f"{task.id}-{name}.build.log")
    if built.exit_code != 0:
        return Row(task.id, name, patch.description, BUILD_FAILED, details=cmake.first_error_lines(built.output))
    report = work / "reports" / f"{task.id}-{name}.xml"
    tested = cmake.run_tests(
        build_dir, assignment.id, task.tests, report, work / "logs" / f"{task.id}-{name}.test.log", cmake.TEST_TIMEOUT_S
    )
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
