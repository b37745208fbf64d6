"""The batch: which submissions it finds, and that killing it at any moment loses and duplicates
nothing. Grading itself is replaced by a quick stand-in here (the end-to-end test grades for real):
what is under test is the batch's bookkeeping, in a real process killed with SIGKILL."""

import csv
import json
import random
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from helpers import REAL_ROOT, write_files
from kernellab.batch import find_submissions, print_summary
from kernellab.errors import InputError
from kernellab.grading.isolation.stage import WHOLE_SUBMISSION_NOTE
from kernellab.grading.model import Grade
from kernellab.scaffold import TEMPLATE_ID, TEMPLATE_ROOT
from kernellab.verdict import Status

# Runs `kernellab` with grade_submission replaced by a stand-in that takes a little time and
# gives each student a score that depends only on the name.
STAND_IN = """
import sys, time
sys.path.insert(0, {grader!r})
from kernellab import batch
from kernellab.grading.model import Grade, TaskGrade

def grade_submission(run, submission, student, job, publish):
    time.sleep(0.03)
    for scratch in ("build-task-copy/test_copy", "records/copy.public.rec", "logs/copy.public.log", "submission/x.cu"):
        (job / scratch).parent.mkdir(parents=True, exist_ok=True)
        (job / scratch).write_text("made while grading")
    points = sum(map(ord, student)) % 11
    grade = Grade(student=student, assignment=run.assignment.id, backend=run.backend, status="graded",
                  tasks=(TaskGrade("copy", "Copies", points, 10),), seed=run.seed)
    publish(grade)  # as the pipeline does after the tests stage
    return grade

batch.grade_submission = grade_submission
from kernellab.cli import main
sys.exit(main(sys.argv[1:]))
"""


def batch_command(submissions: Path, out: Path) -> list[str]:
    script = STAND_IN.format(grader=str(REAL_ROOT / "grader"))
    return [sys.executable, "-c", script, "--root", str(TEMPLATE_ROOT), "batch", str(submissions),
            "--assignment", TEMPLATE_ID, "--out", str(out), "--jobs", "2", "--backend", "cuda",
            "--work", str(submissions.parent / "work")]


def test_submissions_are_folders_and_archives_named_by_student(tmp_path):
    write_files(tmp_path, {"alice/x.cu.h": "", "bob.zip": "", "carol.tar.gz": "", "notes.txt": "", ".hidden/x": ""})
    assert {name: path.name for name, path in find_submissions(tmp_path).items()} == {
        "alice": "alice", "bob": "bob.zip", "carol": "carol.tar.gz"}
    write_files(tmp_path, {"alice.zip": ""})
    with pytest.raises(InputError, match="two submissions for alice"):
        find_submissions(tmp_path)


def test_the_batch_log_says_when_each_student_starts_and_what_each_stage_earned(tmp_path):
    # The log of a batch whose output is no terminal (rich draws no bar there): each grade takes
    # minutes, so it must not stay silent from "N to grade" to the first finished student.
    submissions = tmp_path / "submissions"
    for name in ("ann", "bob"):
        (submissions / name).mkdir(parents=True)
    finished = subprocess.run(batch_command(submissions, tmp_path / "out"), capture_output=True, text=True)
    assert finished.returncode == 0, finished.stdout + finished.stderr
    lines = finished.stdout.splitlines()
    for student in ("ann", "bob"):
        points = sum(map(ord, student)) % 11
        said = [lines.index(f"{student}: grading"), lines.index(f"{student}: {points}/10 (graded)")]
        so_far = [index for index, line in enumerate(lines) if line.startswith(f"{student}: {points}/10 so far, after ")]
        assert len(so_far) == 1 and said[0] < so_far[0] < said[1], finished.stdout


def test_a_graded_submissions_builds_and_records_go_and_its_logs_stay(tmp_path):
    submissions = tmp_path / "submissions"
    (submissions / "ann").mkdir(parents=True)
    finished = subprocess.run(batch_command(submissions, tmp_path / "out"), capture_output=True, text=True)
    assert finished.returncode == 0, finished.stdout + finished.stderr
    job = tmp_path / "work" / TEMPLATE_ID / "jobs" / "ann"
    assert sorted(path.relative_to(job).as_posix() for path in job.rglob("*") if path.is_file()) == [
        "logs/copy.public.log", "submission/x.cu"]


def test_a_batch_killed_twenty_times_ends_with_the_gradebook_of_an_uninterrupted_run(tmp_path):
    submissions = tmp_path / "submissions"
    for index in range(40):
        (submissions / f"student{index:02d}").mkdir(parents=True)
    reference = tmp_path / "uninterrupted"
    subprocess.run(batch_command(submissions, reference), check=True, capture_output=True)
    expected = (reference / "grades.csv").read_text()

    out = tmp_path / "killed"
    chooser = random.Random(7)
    for _ in range(20):
        process = subprocess.Popen(batch_command(submissions, out), stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        time.sleep(chooser.uniform(0.3, 1.5))
        process.send_signal(signal.SIGKILL)
        process.wait()
        # Whatever the moment, every grade.json there is complete and readable.
        for grade_file in out.glob("students/*/grade.json"):
            assert json.loads(grade_file.read_text())["status"] == "graded"
    finished = subprocess.run(batch_command(submissions, out), capture_output=True, text=True)
    assert finished.returncode == 0, finished.stdout + finished.stderr
    assert (out / "grades.csv").read_text() == expected
    rows = list(csv.DictReader((out / "grades.csv").open()))
    assert len(rows) == 40 == len({row["student"] for row in rows})


def test_the_gradebook_names_the_grades_that_were_not_isolated_once_for_the_whole_class(capsys):
    # A submission whose files libclang cannot parse has every task graded on the whole submission:
    # each grade's message says so, and the batch's summary tells the TA which grades, in one line.
    def graded(student: str, message: str) -> Grade:
        return Grade(student=student, assignment="x", backend="cpu", status=Status.GRADED, message=message)

    whole = f"{WHOLE_SUBMISSION_NOTE}, not on its own functions (parsing the solution took more than 120 s)"
    print_summary({"ann": graded("ann", whole), "bob": graded("bob", ""), "cy": graded("cy", whole)})
    out = " ".join(capsys.readouterr().out.split())
    assert "graded on the whole submission (2)" in out and out.endswith("each grade's message says why: ann, cy")
