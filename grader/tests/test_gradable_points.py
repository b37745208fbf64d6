"""A grade on a backend that times no speed (the CPU backend) says which share of the points it
could give: "This grade covers 88 of 100 points; the other 12 (speed) need a GPU", and
the test groups it left to a GPU, from the manifest's points and the grade, in every report (the
terminal, the Markdown and HTML feedback, Gradescope's output, PrairieLearn's message) and in a
batch's class summary and table (coverage.py)."""

import json
from dataclasses import replace
from pathlib import Path

from helpers import REAL_ROOT
from kernellab import coverage, reports
from kernellab.batch import print_summary
from kernellab.console import print_grade
from kernellab.deadline import Deadline
from kernellab.grading.model import Grade, GroupResult
from kernellab.grading.run import GradingRun
from kernellab.grading.scoring import score_task
from kernellab.grading.speed_stage import add_speed, plan_speed
from kernellab.manifest import load_assignment
from kernellab.summary import Similarity, html_page, markdown, summarize
from kernellab.verdict import Status, Verdict

PBB = load_assignment(REAL_ROOT, "pbb")
SPEED_POINTS = sum(case.points for case in PBB.speed)
CPU_LINE = f"This grade covers {100 - SPEED_POINTS:g} of 100 points; the other {SPEED_POINTS:g} (speed) need a GPU."


def pbb_grade(tmp_path: Path, backend: str, student: str = "ana", passed: bool = True,
              verdicts: dict[str, str] | None = None) -> Grade:
    """A pbb grade through the real scoring and speed stage on `backend`, the speed program not
    built (so nothing is timed, on either backend); `verdicts` gives some tasks' groups another
    verdict than passed (or failed)."""
    run = GradingRun(PBB, backend, tmp_path / "work", None, seed=1, deadline=Deadline(None))
    verdict_of = {task.id: Verdict.PASSED if passed else Verdict.FAILED for task in PBB.tasks} | (verdicts or {})
    tasks = [score_task(PBB, task, (GroupResult("public", verdict_of[task.id]), GroupResult("hidden", verdict_of[task.id])), ())
             for task in PBB.tasks]
    tasks = add_speed(run, tmp_path, tasks, plan_speed(run, tasks, "speed program: no such file", ()), {})
    return Grade(student, "pbb", backend, Status.GRADED, tasks=tuple(tasks), environment={"gpu": "the CPU"})


def test_a_cpu_grade_says_how_many_points_it_covers_in_every_report(tmp_path, capsys):
    grade = pbb_grade(tmp_path, "cpu")
    assert SPEED_POINTS == 12, "pbb's [[speed]] cases give 4 + 5 + 3 points"
    assert coverage.left_to_gpu(grade).total == SPEED_POINTS
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
    assert coverage.left_to_gpu(grade).total == 0
    assert "covers" not in reports.summary(grade) and "covers" not in reports.gradescope(grade)["output"]


def test_an_assignment_without_speed_cases_covers_every_point_on_the_cpu(tmp_path):
    grade = replace(pbb_grade(tmp_path, "cpu"), tasks=tuple(replace(task, speed=()) for task in pbb_grade(tmp_path, "cpu").tasks))
    assert coverage.line(grade) == ""
    assert "covers" not in reports.summary(grade)


def test_the_class_summary_of_cpu_grades_says_what_they_cover(tmp_path):
    grades = {name: pbb_grade(tmp_path, "cpu", name, passed) for name, passed in (("ana", True), ("bo", False))}
    summary = summarize(PBB, grades, {}, Similarity(0, (), "not checked"))
    line = f"These grades cover {100 - SPEED_POINTS:g} of 100 points; the other {SPEED_POINTS:g} (speed) need a GPU."
    assert line in markdown(summary) and line in html_page(summary)
    on_gpu = summarize(PBB, {"ana": pbb_grade(tmp_path, "cuda")}, {}, Similarity(0, (), "not checked"))
    assert "cover" not in markdown(on_gpu)


def test_tests_left_to_a_gpu_are_counted_with_their_task_s_speed_points(tmp_path, capsys):
    grade = pbb_grade(tmp_path, "cpu", verdicts={"scan-warp": Verdict.NEEDS_GPU})
    scan_warp = next(task for task in grade.tasks if task.id == "scan-warp")
    tests_points = sum(group.max_points for group in scan_warp.groups)
    assert tests_points > 0 and scan_warp.points == 0
    left = coverage.left_to_gpu(grade)
    assert left.tests == {"scan-warp": tests_points} and left.speed == SPEED_POINTS
    assert coverage.line(grade) == (
        f"This grade covers {100 - SPEED_POINTS - tests_points:g} of 100 points; the other {SPEED_POINTS + tests_points:g} "
        f"({SPEED_POINTS:g} for speed, {tests_points:g} for scan-warp's tests) need a GPU.")
    assert coverage.line(grade) in reports.gradescope(grade)["output"]
    # The CUDA backend on a machine without a device ("not run: no GPU"): the task's tests and its speed.
    on_gpu = coverage.left_to_gpu(pbb_grade(tmp_path, "cuda", verdicts={"scan-warp": Verdict.NO_GPU}))
    scan_warp_speed = sum(case.points for case in PBB.speed if case.task == "scan-warp")
    assert on_gpu.tests == {"scan-warp": tests_points} and on_gpu.speed == scan_warp_speed
    only_tests = pbb_grade(tmp_path, "cuda", verdicts={"scan-warp": Verdict.NO_GPU})
    only_tests = replace(only_tests, tasks=tuple(replace(task, speed=()) for task in only_tests.tasks))
    assert coverage.line(only_tests).endswith(f"the other {tests_points:g} (scan-warp's tests) need a GPU.")
    grades = {"ana": grade, "bo": pbb_grade(tmp_path, "cpu", "bo")}
    class_line = coverage.class_line(list(grades.values()))
    assert class_line.endswith("1 of 2 grades also left tests of scan-warp to a GPU (their feedback says why).")
    print_summary(grades)
    assert class_line in " ".join(capsys.readouterr().out.split())


def test_a_rejected_grade_says_nothing_of_coverage_a_failed_one_only_of_speed(tmp_path):
    rejected = replace(pbb_grade(tmp_path, "cpu"), status=Status.REJECTED)
    assert coverage.line(rejected) == "" and coverage.class_line([rejected]) == ""
    failed = pbb_grade(tmp_path, "cpu", passed=False)
    assert coverage.line(failed) == CPU_LINE, "failed tests need no GPU: only the speed points do"
