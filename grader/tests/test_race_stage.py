"""The race-check stage's decision (grading/race/stage.py): which tasks' tests it checks, and what
a race it found costs a task as the manifest says: "fail" all its points, "warn" nothing but a
warning, and a warp-synchronous race that the task's policy warns of never a finding."""

from dataclasses import replace
from pathlib import Path

import pytest

from kernellab.backend import Backend
from kernellab.deadline import Deadline
from kernellab.grading.model import GradingError, GroupResult
from kernellab.grading.race import check as race_check
from kernellab.grading.race.check import RaceCheck
from kernellab.grading.race.stage import add_race_warnings, checked_tests, race_findings, race_run, run_race_check
from kernellab.grading.run import GradingRun
from kernellab.grading.scoring import score_tasks
from kernellab.manifest import load_assignment
from kernellab.verdict import Verdict

REAL_ROOT = Path(__file__).resolve().parents[2]
RACE = ("race in kernel scanIncBlock<Add<int>> launched at pbbKernels.cu.h:212: device memory differs between thread "
        "orders ascending and descending, first at element 1000 of argument 1 (`d_out`)")


def grade_with(assignment, checks):
    """Every task's grade with every group passed, then the stage's findings and warnings."""
    groups = ("public", "hidden")
    results = {(task.tests, group): GroupResult(group, Verdict.PASSED) for task in assignment.tested_tasks for group in groups}
    findings = race_findings(assignment, checks, {task.id: () for task in assignment.tested_tasks})
    grades = score_tasks(assignment, results, groups, findings, assignment.reference_dir)
    return {grade.id: grade for grade in add_race_warnings(assignment, grades, checks)}


def test_the_stage_checks_the_tests_of_the_tasks_whose_manifest_asks():
    assert checked_tests(load_assignment(REAL_ROOT, "pbb")) == ["scan_block", "reduce_block", "scan_multi", "sgm_scan"]
    assert checked_tests(load_assignment(REAL_ROOT, "pmph-w2")) == ["scan_warp", "scan_block"]


def test_a_race_costs_a_fail_task_its_points_and_names_the_race():
    assignment = load_assignment(REAL_ROOT, "pbb")
    grades = grade_with(assignment, {"scan_block": RaceCheck("scan_block", Verdict.FAILED, RACE, (33, 1025))})
    assert grades["scan-block"].points == 0
    assert "race in kernel scanIncBlock<Add<int>> launched at pbbKernels.cu.h:212" in grades["scan-block"].feedback
    # Other tasks, checked clean or not checked at all, keep their points.
    assert grades["scan-multi"].points == grades["scan-multi"].max_points - 5  # less its speed points
    assert grades["copy"].points == grades["copy"].max_points


def test_a_clean_check_costs_nothing():
    assignment = load_assignment(REAL_ROOT, "pbb")
    grades = grade_with(assignment, {"scan_block": RaceCheck("scan_block", Verdict.PASSED)})
    assert grades["scan-block"].points == grades["scan-block"].max_points and grades["scan-block"].feedback == ""


def test_a_warn_task_keeps_its_points_with_a_warning():
    pbb = load_assignment(REAL_ROOT, "pbb")
    tasks = tuple(replace(task, race_check="warn") if task.id == "scan-block" else task for task in pbb.tasks)
    assignment = replace(pbb, tasks=tasks)
    grades = grade_with(assignment, {"scan_block": RaceCheck("scan_block", Verdict.FAILED, RACE, (33, 1025))})
    assert grades["scan-block"].points == grades["scan-block"].max_points
    assert grades["scan-block"].feedback.startswith("warning: the CPU backend's race check (sizes 33 and 1025) found: race in")


def test_a_warp_synchronous_race_that_the_task_warns_of_is_no_finding():
    # pmph-w2's scan-block: race_check = "fail", warp_synchronous = "warn". The check's build
    # compiles the warn policy in, and such a race ends its run "needs a GPU to confirm".
    assignment = load_assignment(REAL_ROOT, "pmph-w2")
    # Its scan-warp (race_check = "warn") is checked only for that warning: the course's lockstep
    # idiom passes on a GPU, and the warning is how the student hears that it is warp-synchronous.
    warned = RaceCheck("scan_block", Verdict.NEEDS_GPU, "warp-synchronous code: right on the CPU backend; only a GPU can confirm it")
    grades = grade_with(assignment, {"scan_block": warned, "scan_warp": replace(warned, tests="scan_warp")})
    for task in ("scan-block", "scan-warp"):
        assert grades[task].points == grades[task].max_points
        assert "warning: the CPU backend's race check" in grades[task].feedback


def test_the_cpu_backend_runs_no_race_check_stage(tmp_path: Path):
    # Its own runs put every launch under several thread orders already.
    grading = GradingRun(load_assignment(REAL_ROOT, "pbb"), Backend.CPU, tmp_path, None, seed=7)
    assert run_race_check(grading, tmp_path / "submission", tmp_path / "job", {"scan_block": None}) == {}
    assert not (tmp_path / "job").exists()


def test_a_grading_machine_where_the_cpu_backend_does_not_build_grades_nobody_on_a_check_that_decides_points(
        tmp_path, monkeypatch):
    # Seen on an H100 host with Boost but not its Context library: CMake could not configure the
    # check's reference build. Here CMake is told that Boost is not there, a real configure failure
    # of the same find_package. The check is the machine's to give: a student loses nothing, and
    # nobody passes a race that no check ran; the build is tried once.
    monkeypatch.setattr(race_check, "CPU_ARGS", (*race_check.CPU_ARGS, "-DCMAKE_DISABLE_FIND_PACKAGE_Boost=TRUE"))
    assignment = load_assignment(REAL_ROOT, "pbb")
    grading = GradingRun(assignment, Backend.CUDA, tmp_path / "work", None)
    built = {tests: None for tests in checked_tests(assignment)}
    with pytest.raises(GradingError, match=r"race check, which decides its points, could not run .*"
                                           r"configuring pbb with CMake failed"):
        run_race_check(grading, assignment.reference_dir, tmp_path / "job", built)
    with pytest.raises(GradingError):
        run_race_check(grading, assignment.reference_dir, tmp_path / "job2", built)
    assert not (tmp_path / "job2").exists()
    # A "warn" task is told, and loses nothing.
    unavailable = RaceCheck("scan_warp", race_check.UNAVAILABLE, "Boost was not found", (33,))
    warn = replace(assignment, tasks=tuple(replace(task, race_check="warn") for task in assignment.tasks))
    feedback = grade_with(warn, {"scan_warp": unavailable})["scan-warp"].feedback
    assert feedback == "note: the CPU backend's race check did not run (no points lost): Boost was not found"


def test_the_check_reports_the_race_not_a_failed_launch_before_it():
    # Seen on an H100 with a 2024 course submission under pbb: its failed launches in blocks of
    # 1024 (not applicable to its host wrappers) came first in the output, the race later.
    launch = "/t/test_scan_multi.cu:18: kernel launch failed: cudaErrorInvalidValue (invalid argument)"
    output = (
        "/t/test_scan_multi.cu:27: FAILED:\ndue to unexpected exception with messages:\n  n := 1\n  block := 1024 (0x400)\n"
        "  /t/test_scan_multi.cu:18: kernel launch failed:\n  cudaErrorInvalidValue (invalid argument)\n\n"
        "/t/test_scan_multi.cu:27: FAILED:\ndue to unexpected exception with messages:\n  n := 131071 (0x1ffff)\n"
        "  block := 32\n  warp-synchronous race in kernel scan3rdKernel<OP, CHUNK> launched at /t/\n"
        "  host_skel.cuh:216: the result depends on the order of the lanes within a warp\n\n"
    )
    assert race_check.race_reported(output) == (
        "warp-synchronous race in kernel scan3rdKernel<OP, CHUNK> launched at /t/ host_skel.cuh:216: the result "
        "depends on the order of the lanes within a warp")
    assert race_check.race_reported(output[: output.index("/t/test_scan_multi.cu:27", 10)]) == launch
    assert race_check.race_reported("All tests passed\n") == ""


def test_a_passed_check_that_warned_of_the_lockstep_idiom_warns_and_costs_nothing():
    # pmph-w2's scan-warp with the course's lockstep scan: right with the lanes in step, a warning.
    assignment = load_assignment(REAL_ROOT, "pmph-w2")
    warning = "warp-synchronous race in kernel scanIncWarpKernel launched at t.cu:30: add __syncwarp()"
    grades = grade_with(assignment, {"scan_warp": RaceCheck("scan_warp", Verdict.PASSED, warning, (33, 1025))})
    assert grades["scan-warp"].points == grades["scan-warp"].max_points
    assert f"warning: the CPU backend's race check (sizes 33 and 1025) found: {warning}" in grades["scan-warp"].feedback


def test_the_race_check_runs_under_the_grades_deadline_at_the_manifests_sizes(tmp_path):
    # Seen: its runs got the CPU backend's own limit (up to 1800 s each) whatever --deadline said.
    pbb = load_assignment(REAL_ROOT, "pbb")
    grading = GradingRun(pbb, Backend.CUDA, tmp_path, None, seed=5, deadline=Deadline(60))
    run = race_run(grading)
    assert run.deadline is grading.deadline and run.run_timeout_s <= 60
    assert run.hidden_sizes == pbb.grading.race_sizes == (33, 1025, 4097, 20481, 94209)
    assert run.group_environment("hidden")["KERNELLAB_BLOCK_SIZES"] == "32,1024"
