"""`kernellab strip`: generate skeleton/<id> from the solution markers in reference/<id>."""

import argparse
import difflib
import shutil
from pathlib import Path

from kernellab.errors import InputError
from kernellab.manifest import Assignment, list_assignments, load_assignment
from kernellab.markers import strip_tree

DIFF_LINES_SHOWN = 20

# (relative path, current skeleton content or None, generated content or None)
Change = tuple[str, bytes | None, bytes | None]


def add_parser(subparsers: argparse._SubParsersAction) -> argparse.ArgumentParser:
    parser = subparsers.add_parser(
        "strip",
        help="regenerate skeleton/<ID> from reference/<ID>",
        description="Regenerate each assignment's skeleton directory from its reference directory: "
        "solution regions are dropped and their stubs uncommented; other files are copied.",
    )
    parser.add_argument("assignments", nargs="*", metavar="ID", help="assignments to process (default: all)")
    parser.add_argument(
        "--check",
        action="store_true",
        help="write nothing; exit 1 and show the differences when a skeleton is out of date",
    )
    return parser


def run(args: argparse.Namespace) -> int:
    assignment_ids = args.assignments or list_assignments(args.root)
    if not assignment_ids:
        raise InputError(f"no assignments under {args.root / 'assignments'}")
    # Load and strip everything first so that an error in any one writes nothing.
    assignments = [load_assignment(args.root, assignment_id) for assignment_id in assignment_ids]
    generated = [strip_tree(assignment.reference_dir, assignment.task_ids) for assignment in assignments]
    out_of_date = False
    for assignment, files in zip(assignments, generated):
        changes = tree_changes(files, assignment.skeleton_dir)
        if args.check:
            report_changes(assignment, changes)
            out_of_date |= bool(changes)
        elif changes:
            replace_tree(assignment.skeleton_dir, files)
            print(f"{assignment.id}: regenerated {assignment.skeleton} ({_summary(changes)})")
        else:
            print(f"{assignment.id}: {assignment.skeleton} is up to date")
    return 1 if out_of_date else 0


def read_tree(directory: Path) -> dict[str, bytes]:
    if not directory.is_dir():
        return {}
    return {
        path.relative_to(directory).as_posix(): path.read_bytes()
        for path in sorted(directory.rglob("*"))
        if path.is_file()
    }


def tree_changes(generated: dict[str, bytes], directory: Path) -> list[Change]:
    """What writing `generated` to `directory` would change, by relative path."""
    existing = read_tree(directory)
    return [
        (name, existing.get(name), generated.get(name))
        for name in sorted(existing.keys() | generated.keys())
        if existing.get(name) != generated.get(name)
    ]


def replace_tree(directory: Path, files: dict[str, bytes]) -> None:
    """Make `directory` hold exactly `files`, built aside first so a failure leaves the old tree."""
    directory.parent.mkdir(parents=True, exist_ok=True)
    staging = directory.with_name(f".{directory.name}.kernellab-new")
    retired = directory.with_name(f".{directory.name}.kernellab-old")
    for leftover in (staging, retired):
        shutil.rmtree(leftover, ignore_errors=True)
    try:
        staging.mkdir()
        for name, content in files.items():
            path = staging / name
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_bytes(content)
    except BaseException:
        shutil.rmtree(staging, ignore_errors=True)
        raise
    # A directory cannot be swapped in one rename: the old one is gone only between two renames.
    if directory.exists():
        directory.rename(retired)
    staging.rename(directory)
    shutil.rmtree(retired, ignore_errors=True)


def report_changes(assignment: Assignment, changes: list[Change]) -> None:
    for name, current, generated in changes:
        path = f"{assignment.skeleton}/{name}"
        if current is None:
            print(f"{path}: would be created")
        elif generated is None:
            print(f"{path}: would be removed")
        else:
            print(f"{path}: would change")
            print(_short_diff(path, current, generated), end="")
    if changes:
        print(
            f"{assignment.id}: {assignment.skeleton} is out of date ({_summary(changes)}); "
            f"run `kernellab strip {assignment.id}`"
        )
    else:
        print(f"{assignment.id}: {assignment.skeleton} is up to date")


def _short_diff(path: str, current: bytes, generated: bytes) -> str:
    diff = list(
        difflib.unified_diff(
            current.decode("utf-8", "replace").splitlines(keepends=True),
            generated.decode("utf-8", "replace").splitlines(keepends=True),
            fromfile=f"{path} (committed)",
            tofile=f"{path} (generated)",
            n=2,
        )
    )
    shown = [line if line.endswith("\n") else line + "\n" for line in diff[:DIFF_LINES_SHOWN]]
    if len(diff) > DIFF_LINES_SHOWN:
        shown.append(f"... ({len(diff) - DIFF_LINES_SHOWN} more diff lines)\n")
    return "".join(shown)


def _summary(changes: list[Change]) -> str:
    created = sum(current is None for _, current, _ in changes)
    removed = sum(generated is None for _, _, generated in changes)
    return f"{len(changes) - created - removed} changed, {created} new, {removed} removed"
