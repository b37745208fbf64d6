"""End to end: `kernellab batch` over the reference, the skeleton and known-wrong versions of pbb.

Real builds and real runs on a GPU; skipped without one. One known-wrong version per task.
"""

import csv
import json

import pytest

from grading_fixtures import make_submissions
from helpers import REAL_ROOT, has_gpu, has_nvcc
from kernellab.cli import main
from kernellab.manifest import load_assignment

pytestmark = [pytest.mark.slow, pytest.mark.skipif(not has_nvcc() or not has_gpu(), reason="needs nvcc and a GPU")]


def test_batch_grades_the_reference_the_skeleton_and_known_wrong_versions(tmp_path):
    assignment = load_assignment(REAL_ROOT, "pbb")
    expected = make_submissions(assignment, tmp_path / "submissions", None)
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
