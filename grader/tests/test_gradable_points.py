"""A grade on a backend that times no speed (the CPU backend) says which share of the points it
could give: "this grade covers 88 of 100 points; the other 12 (speed) need a GPU", from the
manifest's speed cases and the grade, in every report (the terminal, the Markdown and HTML
feedback, Gradescope's output, PrairieLearn's message) and in a batch's class summary."""

import json
from dataclasses import replace
from pathlib import Path

from helpers import REAL_ROOT
from kernellab import reports
from kernellab.console import print_grade
from kernellab.deadline import Deadline
from kernellab.grading.model import Grade, GroupResult
from kernellab.grading.run import GradingRun
from kernellab.grading.scoring import score_task
from kernellab.grading.speed_stage import add_speed, plan_speed
from kernellab.manifest import load_assignment
from kernellab.summary import Similarity, html_page, markdown, summarize
from kernellab.verdict import Verdict

PBB = load_assignment(REAL_ROOT, "pbb")
SPEED_POINTS = sum(case.points for case in PBB.speed)
CPU_LINE = f"This grade covers {100 - SPEED_POINTS:g} of 100 points; the other {SPEED_POINTS:g} (speed) need a GPU."


def pbb_grade(tmp_path: Path, backend: str, student: str = "ana", passed: bool = True) -> Grade:
    """A pbb grade through the real scoring and speed stage on `backend`, the speed program not
    built (so nothing is timed, on either backend)."""
    run = GradingRun(PBB, backend, tmp_path / "work", None, seed=1, deadline=Deadline(None))
    verdict = Verdict.PASSED if passed else Verdict.FAILED
    tasks = [score_task(PBB, task, (GroupResult("public", verdict), GroupResult("hidden", verdict)), ()) for task in PBB.tasks]
    tasks = add_speed(run, tmp_path, tasks, plan_speed(run, tasks, "speed program: no such file", ()))
    return Grade(student, "pbb", backend, "graded", tasks=tuple(tasks), environment={"gpu": "the CPU"})


def test_a_cpu_grade_says_how_many_points_it_covers_in_every_report(tmp_path, capsys):
    grade = pbb_grade(tmp_path, "cpu")
    assert SPEED_POINTS == 12, "pbb's [[speed]] cases give 4 + 5 + 3 points"
    assert reports.needs_gpu_points(grade) == SPEED_POINTS
    assert grade.score == grade.max_score - SPEED_POINTS == 88
    assert CPU_LINE in reports.summary(grade)
    assert CPU_LINE in reports.markdown(grade) and CPU_LINE in reports.html_page(grade)
    assert CPU_LINE in reports.gradescope(grade)["output"]
    assert CPU_LINE in reports.prairielearn(grade)["message"]
    print_grade(grade)
    assert CPU_LINE in " ".join(capsys.readouterr().out.split())
    reports.write_all(grade, tmp_path / "out")
    assert CPU_LINE in json.loads((tmp_path / "out" / reports.GRADESCOPE_FILE).read_text())["output"]


def test_a_gpu_grade_that_timed_no_speed_covers_every_point_and_says_nothing_of_it(tmp_path):
    grade = pbb_grade(tmp_path, "cuda")
    assert all(result.problem.startswith("the speed program did not build") for task in grade.tasks for result in task.speed)
    assert reports.needs_gpu_points(grade) == 0
    assert "covers" not in reports.summary(grade) and "covers" not in reports.gradescope(grade)["output"]


def test_an_assignment_without_speed_cases_covers_every_point_on_the_cpu(tmp_path):
    grade = replace(pbb_grade(tmp_path, "cpu"), tasks=tuple(replace(task, speed=()) for task in pbb_grade(tmp_path, "cpu").tasks))
    assert reports.coverage(grade.max_score, reports.needs_gpu_points(grade)) == ""
    assert "covers" not in reports.summary(grade)


def test_the_class_summary_of_cpu_grades_says_what_they_cover(tmp_path):
    grades = {name: pbb_grade(tmp_path, "cpu", name, passed) for name, passed in (("ana", True), ("bo", False))}
    summary = summarize(PBB, grades, {}, Similarity(0, (), "not checked"))
    line = f"These grades cover {100 - SPEED_POINTS:g} of 100 points; the other {SPEED_POINTS:g} (speed) need a GPU."
    assert line in markdown(summary) and line in html_page(summary)
    on_gpu = summarize(PBB, {"ana": pbb_grade(tmp_path, "cuda")}, {}, Similarity(0, (), "not checked"))
    assert "cover" not in markdown(on_gpu)
