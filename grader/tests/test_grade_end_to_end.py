"""End to end: `kernellab batch` over the reference, the skeleton and known-wrong versions.

On a GPU: pbb, one known-wrong version per task. On the CPU backend (every machine with nvcc and
g++, CI's too): the starter assignment that `kernellab new` scaffolds, whose one task is small
enough to grade in minutes there, with all its known-wrong versions. Real builds, real runs, the
real sandbox.
"""

import csv
import json
import shutil

import pytest

from grading_fixtures import make_submissions
from helpers import REAL_ROOT, copy_build_system, has_gpu, has_nvcc
from kernellab.cli import main
from kernellab.known_wrong import find_wrong_versions
from kernellab.manifest import load_assignment
from kernellab.patches import apply_patch, parse_patch
from kernellab.sandbox.bubblewrap import machine_sandbox
from kernellab.sandbox.step import SandboxUnavailable
from kernellab.scaffold import scaffold

pytestmark = [pytest.mark.slow, pytest.mark.skipif(not has_nvcc(), reason="needs nvcc")]


def sandbox_missing() -> str:
    try:
        machine_sandbox()
    except SandboxUnavailable as why:
        return str(why)
    return ""


@pytest.mark.skipif(not has_gpu(), reason="needs a GPU")
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


@pytest.mark.skipif(bool(sandbox_missing()), reason=f"grades only in the sandbox: {sandbox_missing()}")
def test_on_the_cpu_backend_a_batch_passes_the_reference_and_fails_the_skeleton_and_every_known_wrong_version(tmp_path):
    root = copy_build_system(tmp_path / "repo")
    scaffold(root, "demo", None)
    assignment = load_assignment(root, "demo")
    submissions = tmp_path / "submissions"
    shutil.copytree(assignment.reference_dir, submissions / "reference")
    shutil.copytree(assignment.skeleton_dir, submissions / "skeleton")
    wrong = [f"{task.id}--{patch_file.stem}" for task, patch_file in find_wrong_versions(assignment, None)]
    for (task, patch_file), student in zip(find_wrong_versions(assignment, None), wrong):
        shutil.copytree(assignment.reference_dir, submissions / student)
        apply_patch(parse_patch(patch_file), submissions / student)
    out = tmp_path / "out"
    assert main(["--root", str(root), "batch", str(submissions), "--assignment", "demo", "--backend", "cpu",
                 "--out", str(out), "--work", str(tmp_path / "work")]) == 0
    rows = {row["student"]: row for row in csv.DictReader((out / "grades.csv").open())}
    assert set(rows) == {"reference", "skeleton", *wrong} and len(wrong) == 3
    for student in rows:
        grade = json.loads((out / "students" / student / "grade.json").read_text())
        assert grade["status"] == "graded" and grade["backend"] == "cpu", (student, grade["message"])
        verdicts = [group["verdict"] for task in grade["tasks"] for group in task["groups"]]
        if student == "reference":
            assert verdicts == ["passed", "passed"] and float(rows[student]["score"]) == 100, grade
        else:
            assert "passed" not in verdicts and float(rows[student]["score"]) == 0, (student, verdicts)
    # The class view of the batch: the reference alone passes, the other four score 0.
    summary = (out / "summary.md").read_text()
    assert "| 0-10 | 4 |" in summary and "| 90-100 | 1 |" in summary, summary
    assert "| saxpy | public | 1 | 5 | 20% |" in summary, summary
    assert "| saxpy | hidden | 1 | 5 | 20% |" in summary, summary
