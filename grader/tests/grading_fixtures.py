"""Submissions for end-to-end grading: the reference, the skeleton, known-wrong versions, and the
reference under the 2024-2025 file names in a zip. Used by the end-to-end test and the grading benchmark."""

import shutil
from pathlib import Path

from kernellab.known_wrong import find_wrong_versions
from kernellab.manifest import Assignment
from kernellab.patches import apply_patch, parse_patch


def make_submissions(assignment: Assignment, folder: Path, wrong_versions: int | None) -> dict[str, set[str]]:
    """Student folders for the reference, the skeleton and known-wrong versions (one per task when
    `wrong_versions` is None, else the first that many); for each, the tasks that must not pass."""
    expected: dict[str, set[str]] = {}
    shutil.copytree(assignment.reference_dir, folder / "reference")
    expected["reference"] = set()
    shutil.copytree(assignment.skeleton_dir, folder / "skeleton")
    expected["skeleton"] = {task.id for task in assignment.tasks if task.skeleton_fails}
    seen_tasks: set[str] = set()
    versions = find_wrong_versions(assignment, None)
    for task, patch_file in versions if wrong_versions is None else versions[:wrong_versions]:
        if wrong_versions is None and task.id in seen_tasks:
            continue
        seen_tasks.add(task.id)
        student = f"{task.id}--{patch_file.stem}"
        shutil.copytree(assignment.reference_dir, folder / student)
        apply_patch(parse_patch(patch_file), folder / student)
        expected[student] = {task.id}
    # The same reference files under the 2024-2025 names, in a zip: intake and aliases end to end.
    renamed = folder / "renamed"
    renamed.mkdir()
    for canonical in ("pbbKernels.cu.h", "hostSkel.cu.h", "constants.cu.h"):
        alias = next(alias for alias, name in assignment.files.aliases.items() if name == canonical)
        text = (assignment.reference_dir / canonical).read_text()
        for other, other_alias in (("pbbKernels.cu.h", "pbb_kernels.cuh"), ("constants.cu.h", "constants.cuh")):
            text = text.replace(f'"{other}"', f'"{other_alias}"')
        (renamed / alias).write_text(text)
    shutil.make_archive(str(folder / "renamed-zip"), "zip", renamed)
    shutil.rmtree(renamed)
    expected["renamed-zip"] = set()
    return expected
