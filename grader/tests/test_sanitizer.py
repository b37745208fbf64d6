"""compute-sanitizer's reports, read from its log file, and what they show and cost in a grade."""

import random
import re
import threading
import time
from concurrent.futures import ThreadPoolExecutor
from dataclasses import replace

import pytest

from helpers import REAL_ROOT
from kernellab import reports
from kernellab.errors import InputError
from kernellab.grading.model import Grade, GroupResult
from kernellab.grading.resources import GpuLock
from kernellab.grading.run import GradingRun
from kernellab.grading.sanitizers import compute_sanitizer
from kernellab.grading.sanitizers.compute_sanitizer import parse_report, sanitize
from kernellab.grading import pipeline
from kernellab.grading.progress import Progress
from kernellab.grading.resources import PARALLEL_RUNS
from kernellab.grading.building import BuiltSoFar
from kernellab.grading.sanitizers.stage import add_sanitizer_reports, deciding, run_sanitizers, start_as_built
from kernellab.grading.scoring import score_task
from kernellab.grading.start import open_run
from kernellab.manifest import load_manifest
from kernellab.runner import RunOutcome
from kernellab.scaffold import TEMPLATE_ID, TEMPLATE_ROOT
from kernellab.verdict import Verdict

FINISHED = RunOutcome(exit_code=0, timed_out=False, seconds=1.0, output="")

MEMCHECK_LOG = """\
========= COMPUTE-SANITIZER
========= Invalid __global__ read of size 4 bytes
=========     at scanIncBlockKernel(int *, const int *, unsigned long)+0x1b0 in /job/submission/pbbKernels.cu.h:212
=========     by thread (1024,0,0) in block (0,0,0)
=========     Address 0x7f00001000 is out of bounds
=========     and is 4 bytes after the nearest allocation at 0x7f00000000 of size 4096 bytes
=========
========= ERROR SUMMARY: 7 errors
"""

RACECHECK_LOG = """\
========= COMPUTE-SANITIZER
========= Error: Race reported between Write access at scanIncWarp+0x90 in /job/submission/pbbKernels.cu.h:101
=========     and Read access at scanIncWarp+0x70 in /job/submission/pbbKernels.cu.h:100 [512 hazards]
=========
========= RACECHECK SUMMARY: 1 hazard displayed (1 error, 0 warnings)
"""


def test_a_memcheck_report_gives_the_error_count_and_the_first_error_with_its_line():
    report = parse_report("scan_block", "memcheck", MEMCHECK_LOG, FINISHED)
    assert report.errors == 7
    assert report.first_error.splitlines()[0] == "Invalid __global__ read of size 4 bytes"
    assert "pbbKernels.cu.h:212" in report.first_error
    assert report.describe().startswith("memcheck: 7 error(s), the first:")


def test_a_racecheck_report_counts_its_hazards():
    report = parse_report("scan_warp", "racecheck", RACECHECK_LOG, FINISHED)
    assert report.errors == 1 and "pbbKernels.cu.h:101" in report.first_error


def test_a_clean_report_says_no_errors():
    report = parse_report("copy", "synccheck", "========= COMPUTE-SANITIZER\n========= ERROR SUMMARY: 0 errors\n", FINISHED)
    assert (report.errors, report.describe()) == (0, "synccheck: no errors")


@pytest.mark.parametrize("outcome, why", [
    (RunOutcome(exit_code=None, timed_out=True, seconds=60.0, output=""), "timed out"),
    (RunOutcome(exit_code=-11, timed_out=False, seconds=1.0, output=""), "ended with -11"),
])
def test_a_report_without_a_summary_is_no_report_and_says_why(outcome, why):
    report = parse_report("copy", "memcheck", "========= COMPUTE-SANITIZER\n", outcome)
    assert report.errors is None and why in report.describe()


def test_the_sanitizer_row_shows_in_every_report_and_its_deduction_adds_up():
    pbb = load_manifest(REAL_ROOT / "assignments" / "pbb" / "assignment.toml", REAL_ROOT)
    copy = score_task(pbb, pbb.tasks[0], (GroupResult("public", Verdict.PASSED), GroupResult("hidden", Verdict.PASSED)), ())
    flagged = replace(copy, points=copy.points - 2, sanitizer="memcheck: 7 error(s)", sanitizer_clean=False,
                      sanitizer_deduction=2.0)
    grade = Grade(student="bob", assignment="pbb", backend="cuda", status="graded", tasks=(flagged,))
    document = reports.gradescope(grade)
    row = next(test for test in document["tests"] if test["name"] == "copy: GPU sanitizers")
    assert (row["score"], row["max_score"], row["status"]) == (-2.0, 0.0, "failed")
    assert sum(test["score"] for test in document["tests"]) == document["score"] == copy.points - 2
    assert "memcheck: 7 error(s)" in reports.markdown(grade)


@pytest.mark.parametrize("penalty", ["-0.5", "1.5"])
def test_a_sanitizer_penalty_outside_0_to_1_is_a_manifest_error(tmp_path, penalty):
    text = (REAL_ROOT / "assignments" / "pbb" / "assignment.toml").read_text()
    manifest = tmp_path / "assignment.toml"
    manifest.write_text(text.replace("[grading]\n", f"[grading]\nsanitizer_penalty = {penalty}\n"))
    with pytest.raises(InputError, match="sanitizer_penalty"):
        load_manifest(manifest, REAL_ROOT)


def starter_manifest_with(tmp_path, grading: str):
    """The starter template's manifest with a [grading] table of `grading`, loaded."""
    text = (TEMPLATE_ROOT / "assignments" / TEMPLATE_ID / "assignment.toml").read_text()
    manifest = tmp_path / "assignments" / TEMPLATE_ID / "assignment.toml"
    manifest.parent.mkdir(parents=True)
    manifest.write_text(f"{text}\n[grading]\n{grading}\n")
    return load_manifest(manifest, tmp_path)


def test_the_sanitizer_sizes_come_from_the_manifest_and_reach_the_run(tmp_path):
    chooser = random.Random()
    sizes = sorted(chooser.sample(range(2, 1 << 20), 2))
    blocks = [chooser.choice([32, 64, 128, 256, 512, 1024])]
    assignment = starter_manifest_with(tmp_path, f"sanitizer_sizes = {sizes}\nsanitizer_block_sizes = {blocks}")
    assert (assignment.grading.sanitizer_sizes, assignment.grading.sanitizer_block_sizes) == (tuple(sizes), tuple(blocks))
    # A stand-in for compute-sanitizer that logs what the test executable would read, then a clean summary.
    tool = tmp_path / "compute-sanitizer"
    tool.write_text('#!/bin/sh\necho "========= sizes $KERNELLAB_SIZES blocks $KERNELLAB_BLOCK_SIZES" > "$4"\n'
                    'echo "========= ERROR SUMMARY: 0 errors" >> "$4"\n')
    tool.chmod(0o755)
    log = tmp_path / "logs" / "saxpy.memcheck.log"
    grading = assignment.grading
    report = sanitize(str(tool), "memcheck", tmp_path / "program", "saxpy", log, 10, None,
                      grading.sanitizer_sizes, grading.sanitizer_block_sizes)
    assert report.errors == 0, log.read_text()
    assert f"sizes {','.join(map(str, sizes))} blocks {blocks[0]}" in log.read_text(), (sizes, blocks)


@pytest.mark.parametrize("field, value", [("sanitizer_sizes", "[]"), ("sanitizer_sizes", "[0]"),
                                          ("sanitizer_block_sizes", "[32, -1]"), ("sanitizer_block_sizes", "['32']")])
def test_sanitizer_sizes_must_be_positive_integers(tmp_path, field, value):
    with pytest.raises(InputError, match=rf"grading\.{field}: .*{re.escape(value)}"):
        starter_manifest_with(tmp_path, f"{field} = {value}")


def test_sanitizer_runs_share_the_gpu_with_test_runs_and_wait_for_a_speed_measurement(tmp_path, monkeypatch):
    # Holding it alone made a batch's GPU serial: nine grades' tests waited on one grade's sanitizers.
    assignment = starter_manifest_with(tmp_path, "")
    grading = GradingRun(assignment, "cuda", tmp_path / "work", None, seed=1)
    grading.gpu_lock = GpuLock(tmp_path / "gpu.lock")
    measured = tmp_path / "measured"
    # A stand-in for compute-sanitizer that logs whether a test run could share the GPU with it
    # now, and whether the speed measurement had ended when it started.
    tool = tmp_path / "compute-sanitizer"
    tool.write_text(f'#!/bin/sh\nif flock -n -s "{tmp_path / "gpu.lock"}" true; then held=shared; else held=alone; fi\n'
                    f'if [ -e "{measured}" ]; then speed=after; else speed=during; fi\n'
                    'echo "========= $held $speed" > "$4"\necho "========= ERROR SUMMARY: 0 errors" >> "$4"\n')
    tool.chmod(0o755)
    monkeypatch.setattr(compute_sanitizer, "find_tool", lambda: str(tool))
    runs = [("saxpy", tool_name) for tool_name in compute_sanitizer.TOOLS]
    measuring = threading.Event()

    def speed_measurement() -> None:
        with grading.gpu_lock.exclusive():
            measuring.set()
            time.sleep(1)
            measured.touch()

    threading.Thread(target=speed_measurement).start()
    assert measuring.wait(10)
    assert [report.errors for report in run_sanitizers(grading, tmp_path / "job", runs, {"saxpy": tmp_path / "saxpy"})] == [0] * len(runs)
    for _tests, tool_name in runs:
        assert "========= shared after" in (tmp_path / "job" / "sanitizers" / f"saxpy.{tool_name}.log").read_text()


def stand_in_tool(tmp_path, seconds: float):
    """compute-sanitizer standing in: it logs each run's program and tool, takes `seconds`, and
    reports no errors."""
    tool = tmp_path / "compute-sanitizer"
    tool.write_text(f'#!/bin/sh\necho "$2 $7" >> "{tmp_path / "ran"}"\nsleep {seconds}\n'
                    'echo "========= ERROR SUMMARY: 0 errors" > "$4"\n')
    tool.chmod(0o755)
    return tool


def test_the_sanitizers_run_on_each_program_as_its_build_folder_ends_past_the_build_and_leave_the_rest_for_after_speed(
        tmp_path, monkeypatch):
    # After speed they took 10.5 s of a grade alone on an H200, while the GPU idled through the build.
    grading = GradingRun(starter_manifest_with(tmp_path, ""), "cuda", tmp_path / "work", None, seed=1)
    grading.gpu_lock, grading.run_slots = GpuLock(tmp_path / "gpu.lock"), threading.BoundedSemaphore(PARALLEL_RUNS)
    monkeypatch.setattr(compute_sanitizer, "find_tool", lambda: str(stand_in_tool(tmp_path, 1.5)))
    programs = {f"tests{index}": tmp_path / f"tests{index}" for index in range(3)}
    so_far = BuiltSoFar()
    beside = ThreadPoolExecutor(PARALLEL_RUNS)
    stage = ThreadPoolExecutor(1).submit(start_as_built, grading, tmp_path / "job", so_far, beside)
    so_far.add({"tests0": programs["tests0"], "speed_tests0": tmp_path / "speed_tests0"})
    ran = tmp_path / "ran"
    deadline = time.monotonic() + 10
    while (not ran.exists() or len(ran.read_text().splitlines()) < 3) and time.monotonic() < deadline:
        time.sleep(0.05)  # the first folder's runs start while the others build
    assert sorted(ran.read_text().splitlines()) == [f"{tool} {programs['tests0']}" for tool in compute_sanitizer.TOOLS]
    so_far.add({name: programs[name] for name in ("tests1", "tests2")})
    so_far.close()  # the build ends with 9 runs asked, 8 at a time: one did not start
    early = stage.result(10)
    # The stage ends with the build; the runs it started go on (beside the grade's tests).
    assert len(early) == PARALLEL_RUNS and not any(run.done() for run in early)
    state = pipeline.Submission(tmp_path / "job", Progress(grading.deadline, {}, None), turn_ticket=0, sanitizing=early,
                       built={name: None for name in programs}, programs=programs)
    after_speed = pipeline.sanitize(grading, state).sanitizer_reports
    assert sorted((report.tests, report.tool) for report in after_speed) == sorted(
        (name, tool) for name in programs for tool in compute_sanitizer.TOOLS)
    assert len(ran.read_text().splitlines()) == 9, "a run beside the build ran again after speed"


def test_a_sanitizer_run_beside_the_build_does_not_wait_for_another_grades_measurement(tmp_path, monkeypatch):
    # The build's step holds a build turn: waiting behind speed stages would hold up every build.
    grading = GradingRun(starter_manifest_with(tmp_path, ""), "cuda", tmp_path / "work", None, seed=1)
    grading.gpu_lock = GpuLock(tmp_path / "gpu.lock")
    monkeypatch.setattr(compute_sanitizer, "find_tool", lambda: str(stand_in_tool(tmp_path, 0)))
    measuring, measured = threading.Event(), threading.Event()

    def speed_measurement() -> None:
        with GpuLock(tmp_path / "gpu.lock").exclusive():
            measuring.set()
            measured.wait(10)

    threading.Thread(target=speed_measurement).start()
    assert measuring.wait(10)
    so_far = BuiltSoFar()
    so_far.add({"tests0": tmp_path / "tests0"})
    so_far.close()
    started = time.monotonic()
    assert [run.result() for run in start_as_built(grading, tmp_path / "job", so_far, ThreadPoolExecutor(1))] == [None]
    measured.set()
    assert time.monotonic() - started < 2
    assert not (tmp_path / "ran").exists()


def test_no_sanitizer_runs_beside_a_cpu_backend_build(tmp_path, monkeypatch):
    grading = GradingRun(starter_manifest_with(tmp_path, ""), "cpu", tmp_path / "work", None, seed=1)
    monkeypatch.setattr(compute_sanitizer, "find_tool", lambda: str(stand_in_tool(tmp_path, 0)))
    so_far = BuiltSoFar()
    so_far.add({"tests0": tmp_path / "tests0"})
    so_far.close()
    assert start_as_built(grading, tmp_path / "job", so_far, ThreadPoolExecutor(1)) == []
    assert not (tmp_path / "ran").exists()


RACECHECK_WARNINGS_ONLY = ("========= COMPUTE-SANITIZER\n========= Warning: Race reported between Write access at k+0x10\n"
                           "========= RACECHECK SUMMARY: 3 hazards displayed (0 errors, 3 warnings)\n")


def test_racecheck_counts_its_errors_not_its_warnings():
    assert parse_report("scan_block", "racecheck", RACECHECK_WARNINGS_ONLY, FINISHED).errors == 0


@pytest.mark.parametrize("tests, report, left, line", [
    # Seen on an H200: the course's racy scanIncBlock, 5 racecheck errors at 1025 elements in blocks of 1024.
    ("scan_block", parse_report("scan_block", "racecheck", RACECHECK_LOG, FINISHED), 0,
     "a race on the GPU, as its race check (\"fail\") counts one, costs all of this task's points: -10"),
    ("scan_block", compute_sanitizer.SanitizerReport("scan_block", "racecheck", None, "timed out"), 0,
     "racecheck, this task's race check on the GPU, gave no report (timed out): a check that cannot run costs"),
    # A task without a race check: the manifest's sanitizer_penalty (pbb: 0), feedback only.
    ("copy", parse_report("copy", "racecheck", RACECHECK_LOG, FINISHED), 10, "racecheck: 1 error(s)"),
    ("scan_block", parse_report("scan_block", "memcheck", MEMCHECK_LOG, FINISHED), 10, "memcheck: 7 error(s)"),
], ids=["race", "no-report", "no-race-check", "memcheck"])
def test_racecheck_is_the_gpu_half_of_a_failing_race_check(tmp_path, tests, report, left, line):
    # The CPU backend's race check runs what the CPU backend compiles, which code can tell apart
    # from a GPU's: racecheck checks the GPU's own path.
    pbb = load_manifest(REAL_ROOT / "assignments" / "pbb" / "assignment.toml", REAL_ROOT)
    grading = GradingRun(pbb, "cuda", tmp_path / "work", None, seed=1)
    task = next(task for task in pbb.tasks if task.tests == tests)
    passed = score_task(pbb, task, (GroupResult("public", Verdict.PASSED), GroupResult("hidden", Verdict.PASSED)), ())
    (graded,) = add_sanitizer_reports(grading, [passed], [report])
    assert graded.points == left and line in graded.sanitizer, graded.sanitizer
    runs = [(name, tool) for name in ("copy", "scan_block", "scan_multi") for tool in compute_sanitizer.TOOLS]
    assert deciding(grading, runs) == [("scan_block", "racecheck"), ("scan_multi", "racecheck")]


@pytest.mark.parametrize("backend, tool, refused", [
    ("cuda", None, True),  # racecheck decides scan-block's points on a GPU: without it, no grade starts
    ("cuda", "/usr/local/cuda/bin/compute-sanitizer", False),
    ("cpu", None, False),  # the CPU backend runs no sanitizer: its race check is the thread orders
])
def test_a_gpu_grading_run_without_compute_sanitizer_is_refused_when_racecheck_decides_points(
        tmp_path, monkeypatch, backend, tool, refused):
    monkeypatch.setattr(compute_sanitizer, "find_tool", lambda: tool)
    def start():
        return open_run(REAL_ROOT, "pbb", backend, 1, tmp_path / "work", True, [])
    if refused:
        with pytest.raises(InputError, match=r"compute-sanitizer was not found .* scan-block"):
            start()
    else:
        assert start().backend == backend
