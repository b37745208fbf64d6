"""A grade on a backend that times no speed (the CPU backend) says which share of the points it
could give: "This grade covers 88 of 100 points; the other 12 (speed) need a GPU", and
the test groups it left to a GPU, from the manifest's points and the grade, in every report (the
terminal, the Markdown and HTML feedback, Gradescope's output, PrairieLearn's message) and in a
batch's class summary and table (coverage.py)."""

import json
import xml.etree.ElementTree as ElementTree
from dataclasses import replace
from pathlib import Path

from helpers import REAL_ROOT
from kernellab import coverage, reports
from kernellab.batch import print_summary
from kernellab.cli import main
from kernellab.console import print_grade
from kernellab.deadline import Deadline, cut_limits_warning
from kernellab.grading.model import Grade, GroupResult
from kernellab.grading.run import GradingRun
from kernellab.grading.scoring import score_task
from kernellab.grading.speed.stage import add_speed, plan_speed
from kernellab.manifest import load_assignment
from kernellab.summary import Similarity, html_page, markdown, summarize
from kernellab.verdict import Status, Verdict
from test_scoring_and_reports import validate

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
    tasks = add_speed(run, tmp_path, tasks, plan_speed(run, tasks, {"speed": "speed program: no such file"}, {}), {})
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


def test_a_perfect_cpu_grade_is_full_marks_on_each_platform_the_speed_tests_no_failures(tmp_path):
    grade = pbb_grade(tmp_path, "cpu")
    gradescope = reports.gradescope(grade)
    validate(gradescope, "gradescope-results.schema.json")
    assert gradescope["score"] == 88 and sum(test["max_score"] for test in gradescope["tests"]) == 88
    assert not [test for test in gradescope["tests"] if "speed" in test["name"]], "no test there: the output says why"
    assert {test["status"] for test in gradescope["tests"]} == {"passed"}
    assert gradescope["output"].startswith(f"**pbb: 88 of 88 points (graded)**\n\n{CPU_LINE}")
    prairielearn = reports.prairielearn(grade)
    validate(prairielearn, "prairielearn-results.schema.json")
    assert prairielearn["score"] == 1.0 and not [test for test in prairielearn["tests"] if "speed" in test["name"]]
    suite = ElementTree.fromstring(reports.junit(grade)).find("testsuite")
    skipped = [case for case in suite.iter("testcase") if case.find("skipped") is not None]
    assert (suite.get("failures"), suite.get("skipped")) == ("0", "6")
    assert [case.find("skipped").get("message") for case in skipped] == ["not run: needs a GPU"] * 6
    assert all(" speed of " in case.get("name") for case in skipped)
    page = reports.html_page(grade)
    assert 'class="fail"' not in page and page.count('class="skip"') == 6
    feedback = reports.markdown(grade)
    assert "| not run: needs a GPU |" in feedback and "\n## " not in feedback, "nothing to explain below the table"


def test_a_failed_cpu_grade_is_out_of_the_points_the_cpu_backend_gives(tmp_path):
    grade = pbb_grade(tmp_path, "cpu", verdicts={"copy": Verdict.FAILED})
    copy_points = next(task.max_points for task in grade.tasks if task.id == "copy")
    assert reports.prairielearn(grade)["score"] == (88 - copy_points) / 88
    assert reports.summary(grade).startswith(f"pbb: {88 - copy_points:g} of 88 points (graded)")
    failed = [test["name"] for test in reports.gradescope(grade)["tests"] if test.get("status") == "failed"]
    assert failed == ["copy: public tests", "copy: hidden tests"]


def test_a_group_left_to_a_gpu_is_neither_passed_nor_failed_and_keeps_its_points_in_the_total(tmp_path):
    grade = pbb_grade(tmp_path, "cpu", verdicts={"scan-warp": Verdict.NEEDS_GPU})
    tests_points = coverage.left_to_gpu(grade).tests["scan-warp"]
    gradescope = {test["name"]: test for test in reports.gradescope(grade)["tests"]}
    left = gradescope["scan-warp: public tests"]
    assert "status" not in left and left["score"] == left["max_score"] == 0
    assert left["output"].startswith(f"not run: needs a GPU to confirm (its {tests_points / 2:g} points need a GPU)")
    # A run's own process can leave it to a GPU (it prints the warning): its points stay in the
    # total the score is out of, or that would give them away.
    assert reports.prairielearn(grade)["score"] == (88 - tests_points) / 88
    suite = ElementTree.fromstring(reports.junit(grade)).find("testsuite")
    assert (suite.get("failures"), suite.get("skipped")) == ("0", "8")


def test_a_group_that_passed_without_points_says_what_took_them(tmp_path, capsys):
    unmet = "copyFromGlb2ShrMem: 32 sectors per warp, required at most 4"
    copy = score_task(PBB, PBB.tasks[0], (GroupResult("public", Verdict.PASSED), GroupResult("hidden", Verdict.PASSED)), (unmet,))
    grade = replace(pbb_grade(tmp_path, "cuda"), tasks=(copy,))
    rows = [row for row in reports.entries(grade) if row.group]
    assert [row.verdict for row in rows] == [f"passed, no points: {unmet}"] * 2
    assert not any(row.passed for row in rows)
    assert {test["status"] for test in reports.gradescope(grade)["tests"] if test["name"].startswith("copy: ")} == {"failed"}
    print_grade(grade)
    shown = " ".join(capsys.readouterr().out.split())
    assert f"passed, no points: {unmet}" in shown


def test_a_gpu_grade_keeps_its_speed_tests_on_the_platforms(tmp_path):
    grade = pbb_grade(tmp_path, "cuda")
    speed = [test for test in reports.gradescope(grade)["tests"] if " speed of " in test["name"]]
    assert len(speed) == 6 and {test["status"] for test in speed} == {"failed"}, "the speed program did not build: the code's"
    assert reports.prairielearn(grade)["score"] == 88 / 100


def test_the_export_says_what_total_to_set_and_when_a_hang_cannot_be_told_from_a_cut_limit(tmp_path, capsys):
    assert coverage.platform_note(PBB, "gradescope", False) == (
        "Gradescope: set the assignment's total points to 88, what the CPU backend grades: the other 12 (speed) need a "
        "GPU (export with --remote URL, a GPU host running `kernellab serve`, for them).")
    assert "total points to 100; a grade that falls back to the CPU backend" in coverage.platform_note(PBB, "gradescope", True)
    assert "its share of the 88 points the CPU backend grades" in coverage.platform_note(PBB, "prairielearn", False)
    assert cut_limits_warning(300, 540) == ""
    assert main(["--root", str(REAL_ROOT), "export", "gradescope", "pbb", "--out", str(tmp_path)]) == 0
    printed = " ".join(capsys.readouterr().out.split())
    assert coverage.platform_note(PBB, "gradescope", False) in printed
    assert ("warning: one test run may take 1800 s on the CPU backend (the manifest's [grading] cpu_timeout), no less "
            "than the 540 s grading gets there") in printed
