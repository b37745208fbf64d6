"""The overall grading deadline (`--deadline`) in the stages: each run's limit cut to what is
left, the stages that may be skipped (confirming a failure alone, speed, the sanitizers) skipped
when they will not fit, each with a note in the grade's message and its tasks' feedback, and the
grade published after each stage. The decisions run on a fake clock; one real grade on the CPU
backend runs out of time before its tests (test_out_of_time.py: runs the deadline cut)."""

import os
import shutil
from pathlib import Path

import pytest

from helpers import REAL_ROOT, copy_build_system
from kernellab import reports
from kernellab.deadline import Deadline, StageCost
from kernellab.grading import groups
from kernellab.grading.model import GroupResult, TaskGrade
from kernellab.grading.pipeline import grade_submission
from kernellab.grading.progress import Progress
from kernellab.grading.run import GradingRun
from kernellab.grading.sanitizers import stage as sanitizers
from kernellab.grading.speed.stage import SECONDS_PER_CASE_SIZE, add_speed, plan_speed
from kernellab.grading.start import open_run
from kernellab.manifest import load_assignment
from kernellab.scaffold import scaffold
from kernellab.verdict import Status, Verdict

PBB = load_assignment(REAL_ROOT, "pbb")


class Clock:
    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


def pbb_run(tmp_path: Path, backend: str, deadline: Deadline) -> GradingRun:
    return GradingRun(PBB, backend, tmp_path / "work", None, seed=1, deadline=deadline)


def passed_grades() -> list[TaskGrade]:
    """Every pbb task with all its groups passed (before speed)."""
    return [TaskGrade(task.id, task.title, task.points, task.points,
                      (GroupResult("public", Verdict.PASSED), GroupResult("hidden", Verdict.PASSED)))
            for task in PBB.tasks]


def test_each_run_s_limit_is_cut_to_what_the_deadline_leaves(tmp_path):
    clock = Clock()
    run = pbb_run(tmp_path, "cuda", Deadline(100, clock))
    assert run.run_timeout_s == run.timeout_s == 60, "pbb's own limit"
    clock.now += 70
    assert run.run_timeout_s == 30
    clock.now += 500
    assert run.run_timeout_s == 1, "a run past the deadline still starts, with the least limit"
    assert pbb_run(tmp_path, "cuda", Deadline(None)).run_timeout_s == 60


def test_a_stage_that_fits_runs_one_that_does_not_is_noted_in_the_message_and_its_tasks(tmp_path):
    clock = Clock()
    published = []
    progress = Progress(Deadline(600, clock), {"student": "ana", "assignment": "pbb", "backend": "cuda"}, published.append)
    speed = StageCost("speed", 12, "up to 12 speed points", ("reduce-block", "scan-multi"))
    assert progress.may_run(speed) and not progress.notes
    clock.now += 590
    assert not progress.may_run(speed)
    progress.reached("tests", passed_grades(), ())
    grade = progress.grade(passed_grades(), ())
    note = ("speed: skipped, the grading deadline was near (it needs about 12 s, 10 s were left of 600 s); "
            "it would have given up to 12 speed points")
    assert grade.message == note and grade.status == Status.GRADED
    noted = {task.id: task.feedback for task in grade.tasks}
    assert noted["reduce-block"] == noted["scan-multi"] == note
    assert not noted["copy"], "a task the stage does not concern gets no note"
    [partial] = published
    assert partial.message.startswith("a partial grade, written when the tests stage ended") and note in partial.message


def test_without_a_deadline_nothing_is_skipped_and_nothing_published_without_a_publisher():
    progress = Progress(Deadline(None), {"student": "ana", "assignment": "pbb", "backend": "cuda"})
    assert progress.may_run(StageCost("speed", 1e9, "everything"))
    progress.reached("tests", passed_grades(), ())
    assert progress.grade(passed_grades(), ()).message == ""


def test_speed_is_planned_for_the_tasks_that_passed_and_skipped_it_scores_no_points_and_says_why(tmp_path):
    run = pbb_run(tmp_path, "cuda", Deadline(None))
    grades = passed_grades()
    grades[0:1] = [TaskGrade(grades[0].id, grades[0].title, 0, grades[0].max_points,
                             (GroupResult("public", Verdict.FAILED), GroupResult("hidden", Verdict.PASSED)))]
    plan = plan_speed(run, grades, {"speed": None}, {})
    timed_tasks = {case.task for case in plan.timed}
    assert timed_tasks == {case.task for case in PBB.speed} - {grades[0].id}
    cost = plan.cost()
    assert cost.estimate_s == SECONDS_PER_CASE_SIZE * sum(len(case.sizes) for case in plan.timed)
    assert cost.would_give == f"up to {sum(case.points for case in plan.timed):g} speed points"
    skipped = add_speed(run, tmp_path, grades, plan.without_timing("skipped: the grading deadline was near"), {})
    results = [result for grade in skipped for result in grade.speed if result.task in timed_tasks]
    assert results and all(result.points == 0 and result.problem == "skipped: the grading deadline was near" for result in results)
    assert sum(grade.points for grade in skipped) == sum(grade.points for grade in grades)


def test_the_cpu_backend_plans_no_speed_so_nothing_is_skipped(tmp_path):
    assert not plan_speed(pbb_run(tmp_path, "cpu", Deadline(None)), passed_grades(), {"speed": None}, {}).timed


def test_confirming_alone_costs_a_timed_out_group_its_whole_limit(tmp_path):
    run = pbb_run(tmp_path, "cuda", Deadline(None))
    results = {
        ("copy", "public"): GroupResult("public", Verdict.PASSED, seconds=2),
        ("copy", "hidden"): GroupResult("hidden", Verdict.TIMED_OUT, seconds=300, conclusive=False),
        ("scan-warp", "public"): GroupResult("public", Verdict.CRASHED, seconds=4, conclusive=False),
        ("scan-warp", "hidden"): GroupResult("hidden", Verdict.FAILED, seconds=4),
    }
    cost = groups.confirming_cost(run, results)
    assert cost.estimate_s == run.timeout_s + 4
    assert "copy (hidden), scan-warp (public)" in cost.would_give
    assert set(cost.tasks) == {task.id for task in PBB.tested_tasks if task.tests in ("copy", "scan-warp")}
    conclusive = {key: result for key, result in results.items() if result.conclusive}
    assert groups.confirming_cost(run, conclusive) is None


def test_the_sanitizers_cost_their_runs_and_concern_the_tasks_of_their_tests(tmp_path):
    run = pbb_run(tmp_path, "cuda", Deadline(None))
    cost = sanitizers.cost(run, [("copy", "memcheck"), ("copy", "racecheck")])
    assert cost.estimate_s == 2 * sanitizers.SECONDS_PER_RUN
    assert cost.tasks == tuple(task.id for task in PBB.tested_tasks if task.tests == "copy")
    assert sanitizers.planned_runs(pbb_run(tmp_path, "cpu", Deadline(None)), {"copy": None}) == []


HANGING_KERNEL = "while (*(volatile uint32_t*)&n != 0) {}  // never ends\n"


@pytest.mark.slow
def test_a_grade_whose_deadline_passes_before_the_tests_is_not_graded_and_says_why(tmp_path):
    root = Path("/tmp") / f"kernellab-deadline-test-{os.getpid()}"
    shutil.rmtree(root, ignore_errors=True)
    try:
        copy_build_system(root)
        scaffold(root, "starter", None)
        submission = tmp_path / "hangs"
        shutil.copytree(root / "reference/starter", submission)
        kernels = submission / "kernels.cuh"
        kernels.write_text(kernels.read_text().replace("if (i < n) {", HANGING_KERNEL + "    if (i < n) {"))
        out = tmp_path / "out"
        published = []
        # One second: the build alone takes longer, so no test run can start, and a hang, which
        # no run had the time to show, is no zero (test_out_of_time.py: the same without a build).
        grading = open_run(root, "starter", "cpu", None, root / "work", True, [], deadline_s=1)
        grade = grade_submission(grading, submission, "hangs", root / "work" / "job", published.append)
    finally:
        shutil.rmtree(root, ignore_errors=True)
    assert grade.status == Status.NOT_GRADED and published == []
    assert grade.message.startswith("the grading deadline (1 s) ran out before the tests could run"), grade.message
    reports.write_all(grade, out)
    assert not (out / reports.GRADESCOPE_FILE).exists()
