"""End to end: `kernellab batch` over the reference, the skeleton and known-wrong versions of pbb.

Real builds and real runs on a GPU; skipped without one. KERNELLAB_E2E_WRONG=all grades every
known-wrong version; by default one per task.
"""

import csv
import json
import os
import shutil
from pathlib import Path

import pytest

from helpers import REAL_ROOT, has_gpu, has_nvcc
from kernellab.cli import main
from kernellab.commands.wrong import find_wrong_versions
from kernellab.manifest import Assignment, load_assignment
from kernellab.patches import apply_patch, parse_patch

pytestmark = [pytest.mark.slow, pytest.mark.skipif(not has_nvcc() or not has_gpu(), reason="needs nvcc and a GPU")]


def make_submissions(assignment: Assignment, folder: Path, every_wrong_version: bool) -> dict[str, set[str]]:
    """Student folders for the reference, the skeleton and known-wrong versions; for each, the
    tasks that must not get full points."""
    expected: dict[str, set[str]] = {}
    shutil.copytree(assignment.reference_dir, folder / "reference")
    expected["reference"] = set()
    shutil.copytree(assignment.skeleton_dir, folder / "skeleton")
    expected["skeleton"] = {task.id for task in assignment.tasks if task.skeleton_fails}
    seen_tasks: set[str] = set()
    for task, patch_file in find_wrong_versions(assignment, None):
        if not every_wrong_version and task.id in seen_tasks:
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


def test_batch_grades_the_reference_the_skeleton_and_known_wrong_versions(tmp_path):
    assignment = load_assignment(REAL_ROOT, "pbb")
    expected = make_submissions(assignment, tmp_path / "submissions", os.environ.get("KERNELLAB_E2E_WRONG") == "all")
    (tmp_path / "submissions" / "not-an-archive.zip").write_bytes(b"this is not a zip file")
    out = tmp_path / "out"
    code = main(["--root", str(REAL_ROOT), "batch", str(tmp_path / "submissions"), "--assignment", "pbb",
                 "--out", str(out), "--jobs", "3", "--work", str(tmp_path / "work")])
    assert code == 0
    rows = {row["student"]: row for row in csv.DictReader((out / "grades.csv").open())}
    assert set(rows) == set(expected) | {"not-an-archive"}
    assert rows["not-an-archive"]["status"] == "rejected" and "cannot be read as an archive" in rows["not-an-archive"]["message"]
    for student, failing in expected.items():
        grade = json.loads((out / "students" / student / "grade.json").read_text())
        assert grade["status"] == "graded", (student, grade["message"])
        for task in grade["tasks"]:
            groups_passed = all(group["verdict"] == "passed" for group in task["groups"])
            if task["id"] in failing:
                assert not groups_passed, f"{student}: {task['id']} passed"
            elif student in ("reference", "renamed-zip", "skeleton"):
                # A known-wrong building block may fail the tasks built on it too: only these must pass.
                assert groups_passed, f"{student}: {task['id']} failed: {task['groups']}"
        if student in ("reference", "renamed-zip"):
            assert float(rows[student]["score"]) == float(rows[student]["max_score"]) == 100
    # A second run resumes: every student is already graded, and the gradebook is the same.
    before = (out / "grades.csv").read_text()
    assert main(["--root", str(REAL_ROOT), "batch", str(tmp_path / "submissions"), "--assignment", "pbb",
                 "--out", str(out), "--work", str(tmp_path / "work")]) == 0
    assert (out / "grades.csv").read_text() == before
