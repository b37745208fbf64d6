"""The skeleton of an assignment: generated from the solution markers of its reference
(markers.py), compared with the one committed, and written in one step."""

import difflib
import shutil
from pathlib import Path

from kernellab.errors import InputError
from kernellab.manifest import Assignment, list_assignments, load_assignment
from kernellab.markers import strip_tree

DIFF_LINES_SHOWN = 20

# (relative path, current skeleton content or None, generated content or None)
Change = tuple[str, bytes | None, bytes | None]


def regenerate(root: Path, assignment_ids: list[str], check_only: bool) -> bool:
    """`kernellab strip`: write each assignment's skeleton (all assignments without ids) from its
    reference, or with `check_only` show how it would change; whether any was out of date."""
    assignment_ids = assignment_ids or list_assignments(root)
    if not assignment_ids:
        raise InputError(f"no assignments under {root / 'assignments'}")
    # Load and strip everything first so that an error in any one writes nothing.
    assignments = [load_assignment(root, assignment_id) for assignment_id in assignment_ids]
    generated = [strip_tree(assignment.reference_dir, assignment.written_task_ids) for assignment in assignments]
    out_of_date = False
    for assignment, files in zip(assignments, generated):
        changes = tree_changes(files, assignment.skeleton_dir)
        if check_only:
            report_changes(assignment, changes)
            out_of_date |= bool(changes)
        elif changes:
            replace_tree(assignment.skeleton_dir, files)
            print(f"{assignment.id}: regenerated {assignment.skeleton} ({_summary(changes)})")
        else:
            print(f"{assignment.id}: {assignment.skeleton} is up to date")
    return out_of_date


def changes_to_skeleton(assignment: Assignment) -> list[Change]:
    """How the committed skeleton differs from what the reference's markers give."""
    return tree_changes(strip_tree(assignment.reference_dir, assignment.written_task_ids), assignment.skeleton_dir)


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
