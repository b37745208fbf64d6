"""A solution folder (the student's files): which assignment it is for, and whether it holds the
files that assignment requires."""

from pathlib import Path

from kernellab.errors import InputError
from kernellab.manifest import Assignment, list_assignments, load_assignment


def choose_assignment(root: Path, given: str | None, solution: Path | None) -> Assignment:
    """The assignment named, else the only one, else the one whose skeleton or reference folder
    `solution` is, else the only one whose required files `solution` holds."""
    if given:
        return load_assignment(root, given)
    assignment_ids = list_assignments(root)
    if len(assignment_ids) == 1:
        return load_assignment(root, assignment_ids[0])
    assignments = [load_assignment(root, assignment_id) for assignment_id in assignment_ids]
    if solution is not None:
        folder = solution.resolve()
        owning = [a for a in assignments if folder in (a.skeleton_dir.resolve(), a.reference_dir.resolve())]
        if len(owning) == 1:
            return owning[0]
        matching = [a for a in assignments if missing_file(a, solution) is None]
        if len(matching) == 1:
            return matching[0]
        if matching:
            fitting = ", ".join(a.id for a in matching)
            raise InputError(f"name the assignment with --assignment ID: {solution} holds the files of {fitting}")
    known = ", ".join(assignment_ids) or "none"
    raise InputError(f"name the assignment with --assignment ID (assignments: {known})")


def missing_file(assignment: Assignment, folder: Path) -> list[str] | None:
    """The names (manifest name, then aliases) of the first required file that `folder` does not
    hold under any of them; None when it holds them all (and is a folder)."""
    for required in assignment.files.required:
        names = assignment.files.names_of(required)
        if not folder.is_dir() or not any((folder / name).is_file() for name in names):
            return names
    return None


def check_solution(assignment: Assignment, given: Path | None) -> Path:
    """The absolute solution folder, which must hold each required file under its name or an alias."""
    solution = (given or assignment.skeleton_dir).resolve()
    if not solution.is_dir():
        raise InputError(f"the solution folder {given or solution} is not a directory")
    if (names := missing_file(assignment, solution)) is not None:
        raise InputError(f"the solution folder has no {' or '.join(names)}", solution)
    return solution
