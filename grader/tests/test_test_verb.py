import json
import re
import shutil
from pathlib import Path

import pytest

from helpers import REAL_ROOT, has_gpu, has_nvcc, write_files
from kernellab import cmake
from kernellab import public_tests as verb
from kernellab.cli import build_parser, main
from kernellab.errors import InputError
from kernellab.grading.model import SpeedResult
from kernellab.junit import first_failure
from kernellab.manifest import load_assignment
from kernellab.public_tests import TaskResult, format_report, select_tasks, task_verdict
from kernellab.solution import check_solution, choose_assignment
from kernellab.verdict import LOCKSTEP_RIGHT, LOCKSTEP_WRONG, Verdict

PASSED, FAILED, NO_GPU, BUILD_FAILED, TIMED_OUT = (
    Verdict.PASSED, Verdict.FAILED, Verdict.NO_GPU, Verdict.BUILD_FAILED, Verdict.TIMED_OUT
)

# What Catch2 v2.13's JUnit reporter writes for a FAIL with captured inputs inside a SECTION, a
# failed REQUIRE and an exception (a test compiled and run to see it; v2 leaves the message
# attribute out when the assertion has no expression).
CATCH2_V2_REPORT = """<?xml version="1.0" encoding="UTF-8"?>
<testsuites>
  <testsuite name="pbb_test_copy" errors="1" failures="2" tests="5" time="0.001" timestamp="2026-11-22T04:44:12Z">
    <testcase classname="pbb_test_copy.global" name="glb2shr pads past N/int, 7 per thread" time="0.001" status="run">
      <failure type="FAIL">
FAILED:
first mismatch at index 40 (block 0, warp 1, lane 8 (thread 40)): device -559038737, host -7; 24 of 64 elements differ
n := 40
block := 64
seed := 1040
at /repo/assignments/pbb/tests/test_copy.cu:89
      </failure>
    </testcase>
    <testcase classname="pbb_test_copy.global" name="shr2glb stops at N/char, 9 per thread" time="0.000" status="run">
      <failure message="n &lt; 10" type="REQUIRE">
FAILED:
  REQUIRE( n &lt; 10 )
with expansion:
  40 &lt; 10
n := 40
block := 32
at /repo/assignments/pbb/tests/test_copy.cu:120
      </failure>
    </testcase>
    <testcase classname="pbb_test_copy.global" name="copy of one element" time="0.000" status="run"/>
    <testcase classname="pbb_test_copy.global" name="copy throws" time="0.000" status="run">
      <error type="TEST_CASE">
FAILED:
test_copy.cu:3: kernel run failed: cudaErrorIllegalAddress (an illegal memory access was encountered)
at /repo/assignments/pbb/tests/test_copy.cu:12
      </error>
    </testcase>
    <system-out/>
    <system-err/>
  </testsuite>
</testsuites>
"""

# Catch2 v3 (catch_reporter_junit.cpp): a `skipped` attribute and properties on the suite,
# `<skipped>` for !mayfail test cases, the expression in the message attribute.
CATCH2_V3_REPORT = """<?xml version="1.0" encoding="UTF-8"?>
<testsuites>
  <testsuite name="scan" errors="0" failures="1" skipped="0" tests="12" time="0.4" timestamp="2026-11-22T04:44:12Z">
    <properties>
      <property name="random-seed" value="1234"/>
    </properties>
    <testcase classname="scan.global" name="scanIncBlock may fail" time="0.001" status="run">
      <skipped message="TEST_CASE tagged with !mayfail"/>
    </testcase>
    <testcase classname="scan.global" name="scanIncBlock scans each block/1024 threads" time="0.2" status="run">
      <failure message="mismatch.empty()" type="REQUIRE">
FAILED:
  REQUIRE( mismatch.empty() )
with expansion:
  false
first mismatch at index 1024 (block 1, warp 0, lane 0 (thread 0)): device 7, host 9; 3 of 4096 elements differ
n := 4096
block := 1024
at /repo/assignments/pbb/tests/test_scan_block.cu:41
      </failure>
    </testcase>
    <system-out/>
    <system-err/>
  </testsuite>
</testsuites>
"""

V2_FIRST_MESSAGE = (
    "first mismatch at index 40 (block 0, warp 1, lane 8 (thread 40)): device -559038737, host -7; "
    "24 of 64 elements differ\n"
    "n := 40\n"
    "block := 64\n"
    "seed := 1040\n"
    "at /repo/assignments/pbb/tests/test_copy.cu:89"
)
V2_FAILED_CASES = [
    "glb2shr pads past N/int, 7 per thread",
    "shr2glb stops at N/char, 9 per thread",
    "copy throws",
]
NO_GPU_OUTPUT = (
    "/b/pbb_test_copy: no CUDA device (no CUDA-capable device is detected): these GPU tests were not run\n"
)


def write_report(tmp_path: Path, text: str) -> Path:
    report = tmp_path / "report.xml"
    report.write_text(text)
    return report


# First failure messages, from both Catch2 versions.


def test_the_first_failure_of_a_catch2_v2_report_has_its_mismatch_line_and_captured_inputs(tmp_path: Path):
    failure = first_failure(write_report(tmp_path, CATCH2_V2_REPORT))
    assert failure.test_case == "glb2shr pads past N/int, 7 per thread"
    assert failure.message == V2_FIRST_MESSAGE


def test_the_first_failure_of_a_catch2_v3_report_keeps_the_expression_and_skips_mayfail_cases(tmp_path: Path):
    failure = first_failure(write_report(tmp_path, CATCH2_V3_REPORT))
    assert failure.test_case == "scanIncBlock scans each block/1024 threads"
    assert failure.message.splitlines() == [
        "  REQUIRE( mismatch.empty() )",
        "with expansion:",
        "  false",
        "first mismatch at index 1024 (block 1, warp 0, lane 0 (thread 0)): device 7, host 9; "
        "3 of 4096 elements differ",
        "n := 4096",
        "block := 1024",
        "at /repo/assignments/pbb/tests/test_scan_block.cu:41",
    ]


def test_a_failure_without_text_falls_back_to_its_message_attribute_then_its_type(tmp_path: Path):
    report = '<testsuites><testsuite><testcase name="a"><failure message="x == 1" type="CHECK"/></testcase>'
    assert first_failure(write_report(tmp_path, report + "</testsuite></testsuites>")).message == "x == 1"
    report = '<testsuites><testsuite><testcase name="a"><error type="TEST_CASE"/></testcase>'
    assert first_failure(write_report(tmp_path, report + "</testsuite></testsuites>")).message == "TEST_CASE failed"


def test_a_report_without_failures_or_without_a_file_has_no_first_failure(tmp_path: Path):
    cut = CATCH2_V3_REPORT.index('name="scanIncBlock scans')
    passing = CATCH2_V3_REPORT[: CATCH2_V3_REPORT.rindex("<testcase", 0, cut)]
    assert first_failure(write_report(tmp_path, passing + "</testsuite></testsuites>")) is None
    assert first_failure(tmp_path / "never-written.xml") is None


# Verdicts from an exit status and a JUnit report.


def test_exit_code_0_with_a_clean_report_passes(tmp_path: Path):
    assert task_verdict(cmake.Completed(0, ""), tmp_path / "r.xml", 300) == (PASSED, "", [])


def test_exit_code_77_means_no_gpu_with_the_reason_the_executable_printed(tmp_path: Path):
    verdict = task_verdict(cmake.Completed(77, NO_GPU_OUTPUT), tmp_path / "r.xml", 300)
    assert verdict == (NO_GPU, "no CUDA device (no CUDA-capable device is detected)", [])


def test_exit_code_77_with_failed_test_cases_is_77_failed_assertions_not_a_missing_gpu(tmp_path: Path):
    verdict, _, failed_cases = task_verdict(cmake.Completed(77, ""), write_report(tmp_path, CATCH2_V2_REPORT), 300)
    assert (verdict, failed_cases) == (FAILED, V2_FAILED_CASES)


def test_on_the_cpu_backend_exit_code_77_leaves_the_tests_to_a_gpu_right_results_or_not(tmp_path: Path):
    # The CPU backend's warning of warp-synchronous code: its lanes ran one after another, so
    # failed cases say only what they computed there.
    assert task_verdict(cmake.Completed(77, ""), tmp_path / "r.xml", 300, cpu_backend=True) == (
        Verdict.NEEDS_GPU, LOCKSTEP_RIGHT, [])
    verdict, detail, failed_cases = task_verdict(cmake.Completed(77, ""), write_report(tmp_path, CATCH2_V2_REPORT), 300,
                                                 cpu_backend=True)
    assert (verdict, failed_cases) == (Verdict.NEEDS_GPU, [])
    assert detail == f"{LOCKSTEP_WRONG}\nglb2shr pads past N/int, 7 per thread\n{V2_FIRST_MESSAGE}"
    # Right with the lanes in step: a pass, with the warning.
    warned = "t.cu:9: warning: warp-synchronous race in kernel scan launched at t.cu:9: add __syncwarp()\n"
    assert task_verdict(cmake.Completed(0, warned), tmp_path / "none.xml", 300, cpu_backend=True) == (
        PASSED, "warning: warp-synchronous race in kernel scan launched at t.cu:9: add __syncwarp()", [])
    # Without the warning, the CPU backend's failures are failures.
    assert task_verdict(cmake.Completed(1, ""), write_report(tmp_path, CATCH2_V2_REPORT), 300, cpu_backend=True)[0] == FAILED


def test_tests_left_to_a_gpu_are_shown_with_why_and_their_points_are_not_counted():
    results = [TaskResult("copy", "Coalesced copies", 30, PASSED),
               TaskResult("scan-warp", "Warp-level scan", 40, Verdict.NEEDS_GPU, f"{LOCKSTEP_WRONG}\nscans in place")]
    text = format_report(results)
    assert f"\nscan-warp: {Verdict.NEEDS_GPU}\n    {LOCKSTEP_WRONG}\n    scans in place\n" in text
    assert "correctness: 30 of 30 points from tests that ran" in text
    assert text.splitlines()[-1] == ("The tests of scan-warp (40 points) are left to a GPU: warp-synchronous code, "
                                     "which only a GPU can judge (see above).")
    assert verb.all_fine(results)


def test_a_failed_run_names_its_first_failed_test_case_and_message(tmp_path: Path):
    verdict, detail, failed_cases = task_verdict(cmake.Completed(3, ""), write_report(tmp_path, CATCH2_V2_REPORT), 300)
    assert verdict == FAILED
    assert detail == f"glb2shr pads past N/int, 7 per thread\n{V2_FIRST_MESSAGE}"
    assert failed_cases == V2_FAILED_CASES


def test_a_truncated_report_gives_the_failures_written_before_the_cut(tmp_path: Path):
    cut = CATCH2_V2_REPORT[: CATCH2_V2_REPORT.index("  REQUIRE( n &lt; 10 )")]
    verdict, detail, failed_cases = task_verdict(cmake.Completed(1, ""), write_report(tmp_path, cut), 300)
    assert verdict == FAILED
    assert detail.splitlines()[1].startswith("first mismatch at index 40")
    assert failed_cases == ["glb2shr pads past N/int, 7 per thread"]


def test_a_crash_with_a_truncated_report_names_the_signal_and_never_passes(tmp_path: Path):
    cut = CATCH2_V2_REPORT[: CATCH2_V2_REPORT.index("<testcase")]
    verdict, detail, failed_cases = task_verdict(
        cmake.Completed(-11, "running\nSegmentation fault\n"), write_report(tmp_path, cut), 300
    )
    assert verdict == "crashed (SIGSEGV)"
    assert detail.splitlines() == [
        "no failed test case in the report",
        "last output:",
        "  running",
        "  Segmentation fault",
    ]
    assert failed_cases == []


def test_a_crash_after_failures_were_reported_shows_the_first_one(tmp_path: Path):
    verdict, detail, _ = task_verdict(cmake.Completed(-6, ""), write_report(tmp_path, CATCH2_V2_REPORT), 300)
    assert verdict == "crashed (SIGABRT)"
    assert detail.startswith("glb2shr pads past N/int, 7 per thread\nfirst mismatch at index 40")


def test_a_nonzero_exit_without_a_report_fails_with_the_exit_code_and_the_last_output(tmp_path: Path):
    verdict, detail, _ = task_verdict(cmake.Completed(2, "error: unknown option\n"), tmp_path / "r.xml", 300)
    assert verdict == FAILED
    assert detail.splitlines() == [
        "exit code 2, no failed test case in the report",
        "last output:",
        "  error: unknown option",
    ]


def test_exit_code_0_with_failed_test_cases_in_the_report_does_not_pass(tmp_path: Path):
    assert task_verdict(cmake.Completed(0, ""), write_report(tmp_path, CATCH2_V3_REPORT), 300)[0] == FAILED


def test_a_timed_out_run_is_timed_out_whatever_its_exit_code(tmp_path: Path):
    verdict, detail, _ = task_verdict(cmake.Completed(-1, "", timed_out=True), tmp_path / "r.xml", 2.5)
    assert verdict == TIMED_OUT
    assert "no result after 2.5 s" in detail


def ninja_log(test_file: str) -> str:
    """What Ninja and nvcc print when a student's header does not compile (a real log, shortened)."""
    return (
        f"[1/4] Building CUDA object assignments/pbb/CMakeFiles/pbb_test_{test_file}.dir/tests/test_{test_file}.cu.o\n"
        f"FAILED: assignments/pbb/CMakeFiles/pbb_test_{test_file}.dir/tests/test_{test_file}.cu.o \n"
        "/usr/local/cuda/bin/nvcc -forward-unknown-to-host-compiler -I/tmp/mine -O3 -x cu -c test.cu\n"
        '/tmp/mine/pbbKernels.cu.h(179): error: identifier "d_inpt" is undefined\n'
        "          if (glb_ind < N) { elm = d_inpt[glb_ind]; }\n"
        "                                   ^\n"
        "\n"
        f'1 error detected in the compilation of "/repo/assignments/pbb/tests/test_{test_file}.cu".\n'
        "[2/4] Building CXX object grader/harness/CMakeFiles/kernellab_gpu_main.dir/src/catch_main.cpp.o\n"
        "ninja: build stopped: subcommand failed.\n"
    )


def test_a_compile_error_is_shown_with_its_source_line_and_without_the_build_tools_lines():
    assert cmake.first_error_lines(ninja_log("copy")) == [
        '/tmp/mine/pbbKernels.cu.h(179): error: identifier "d_inpt" is undefined',
        "          if (glb_ind < N) { elm = d_inpt[glb_ind]; }",
        "                                   ^",
    ]
    # So the same error in a header reads the same from every test executable.
    assert cmake.first_error_lines(ninja_log("copy")) == cmake.first_error_lines(ninja_log("scan_warp"))


def test_a_log_whose_only_error_word_is_nvccs_closing_count_shows_its_last_lines():
    log = 'FAILED: x.o\nx.cu(3): catastrophic failure: cannot open source file "y.h"\n1 error detected in the compilation of "x.cu".\n'
    assert cmake.first_error_lines(log) == log.strip().splitlines()


def test_several_compile_errors_are_shown_up_to_the_limit():
    log = 'e.cu(2): error: identifier "fo" is undefined\n  return fo;\n         ^\n\n'
    log += 'e.cu(5): error: identifier "bar" is undefined\n      p[0] = bar(1);\n             ^\n\n'
    log += '2 errors detected in the compilation of "e.cu".\n'
    assert cmake.first_error_lines(log, limit=5) == [
        'e.cu(2): error: identifier "fo" is undefined',
        "  return fo;",
        "         ^",
        'e.cu(5): error: identifier "bar" is undefined',
        "      p[0] = bar(1);",
    ]


# The report: table, details, summary.

MIXED_RESULTS = [
    TaskResult("copy", "Coalesced copies", 10, NO_GPU, "no CUDA device (no CUDA-capable device is detected)"),
    TaskResult("scan-warp", "Warp-level scan", 20, PASSED),
    TaskResult(
        "scan-block",
        "Find the race",
        10,
        FAILED,
        f"glb2shr pads past N/int, 7 per thread\n{V2_FIRST_MESSAGE}",
        V2_FAILED_CASES,
    ),
    TaskResult(
        "reduce-block", "Block reduction", 20, BUILD_FAILED, "/s/pbbKernels.cu.h(45): error: undefined\n  fo(1);"
    ),
    TaskResult(
        "scan-multi", "Multi-block scan", 25, BUILD_FAILED, "/s/pbbKernels.cu.h(45): error: undefined\n  fo(1);"
    ),
    TaskResult("sgm-scan", "Segmented scan", 15, "crashed (SIGSEGV)", "no failed test case in the report"),
    TaskResult("bonus", "Bonus", 5, TIMED_OUT, "no result after 300 s (a kernel that never finishes?)"),
]


def table_cells(text: str) -> list[list[str]]:
    return [re.split(r" {2,}", line) for line in text.split("\n\n")[0].splitlines()]


def test_the_table_gives_each_task_its_title_points_verdict_and_a_one_line_detail():
    cells = table_cells(format_report(MIXED_RESULTS))
    assert cells == [
        ["task", "title", "points", "verdict", "detail"],
        ["copy", "Coalesced copies", "10", "not run: no GPU", "no CUDA device (no CUDA-capable device is detected)"],
        ["scan-warp", "Warp-level scan", "20", "passed"],
        ["scan-block", "Find the race", "10", "FAILED", "glb2shr pads past N/int, 7 per thread (+2 more)"],
        ["reduce-block", "Block reduction", "20", "build failed", "pbbKernels.cu.h(45): error: undefined"],
        ["scan-multi", "Multi-block scan", "25", "build failed", "pbbKernels.cu.h(45): error: undefined"],
        ["sgm-scan", "Segmented scan", "15", "crashed (SIGSEGV)", "no failed test case in the report"],
        ["bonus", "Bonus", "5", "timed out", "no result after 300 s (a kernel that never finishes?)"],
    ]


def test_the_details_show_the_failure_message_and_a_repeated_compile_error_once():
    text = format_report(MIXED_RESULTS)
    assert (
        "\nscan-block: FAILED\n"
        "    glb2shr pads past N/int, 7 per thread\n"
        "    first mismatch at index 40 (block 0, warp 1, lane 8 (thread 40)): device -559038737, host -7; "
        "24 of 64 elements differ\n"
        "    n := 40\n"
        "    block := 64\n"
        "    seed := 1040\n"
        "    at /repo/assignments/pbb/tests/test_copy.cu:89\n"
        "    also failed: shr2glb stops at N/char, 9 per thread, copy throws\n"
    ) in text
    assert (
        "\nreduce-block: build failed\n"
        "    /s/pbbKernels.cu.h(45): error: undefined\n"
        "      fo(1);\n"
        "\nscan-multi: build failed\n"
        "    the same as reduce-block\n"
    ) in text
    assert "\ncopy:" not in text and "\nscan-warp:" not in text


def test_the_summary_counts_points_of_tasks_that_ran_and_says_the_gpu_tests_were_skipped():
    lines = format_report(MIXED_RESULTS).splitlines()
    assert "correctness: 20 of 95 points from tests that ran" in lines
    assert lines[-1] == (
        "The GPU tests of copy (10 points) were skipped because this machine has no CUDA device, so no "
        "correctness verdict was given for those tasks (--cmake-arg=-DKERNELLAB_BACKEND=cpu runs them on the "
        "CPU backend)."
    )
    copy_row = next(line for line in lines if line.startswith("copy "))
    assert "pass" not in copy_row


def test_a_report_where_no_test_ran_never_says_passed():
    results = [
        TaskResult("copy", "Coalesced copies", 10, NO_GPU, "no CUDA device"),
        TaskResult("scan-warp", "Warp-level scan", 20, NO_GPU, "no CUDA device"),
    ]
    text = format_report(results)
    assert "pass" not in text
    assert "correctness: 0 of 0 points from tests that ran" in text
    assert "The GPU tests of copy, scan-warp (30 points) were skipped because this machine has no CUDA device" in text


def test_a_report_without_skipped_tasks_has_no_skipped_sentence():
    text = format_report([TaskResult("copy", "Coalesced copies", 10, PASSED)])
    assert text.splitlines()[-1] == "correctness: 10 of 10 points from tests that ran"
    assert "skipped" not in text


# Choosing the assignment, the solution folder and the tests.


def test_the_tests_option_takes_test_executable_names_or_task_ids_in_manifest_order(make_repo):
    assignment = load_assignment(make_repo({}, task_ids=("alpha", "beta-two", "gamma")), "x")
    assert [task.id for task in select_tasks(assignment, ["gamma", "beta_two"])] == ["beta-two", "gamma"]
    assert [task.id for task in select_tasks(assignment, ["beta-two"])] == ["beta-two"]
    assert [task.id for task in select_tasks(assignment, None)] == ["alpha", "beta-two", "gamma"]


def test_an_unknown_test_name_is_an_error_listing_the_test_executables(make_repo):
    assignment = load_assignment(make_repo({}), "x")
    with pytest.raises(InputError, match=r"--tests delta: not a test executable or task of x \(tests: alpha, beta\)"):
        select_tasks(assignment, ["delta"])


def test_a_solution_folder_may_name_a_required_file_by_an_alias(make_repo, tmp_path: Path):
    assignment = load_assignment(make_repo({}), "x")
    write_files(tmp_path / "mine", {"kernels.cuh": "", "host.cu.h": ""})
    assert check_solution(assignment, tmp_path / "mine") == (tmp_path / "mine").resolve()


def test_a_solution_folder_missing_a_required_file_is_an_error(make_repo, tmp_path: Path):
    assignment = load_assignment(make_repo({}), "x")
    write_files(tmp_path / "mine", {"host.cu.h": ""})
    with pytest.raises(InputError, match="the solution folder has no kernels.cu.h or kernels.cuh"):
        check_solution(assignment, tmp_path / "mine")


def test_a_solution_that_is_not_a_folder_exits_2(make_repo, tmp_path: Path, capsys):
    root = make_repo({})
    assert main(["--root", str(root), "test", str(tmp_path / "nowhere")]) == 2
    assert "is not a directory" in capsys.readouterr().err


def test_the_assignment_is_required_when_there_are_several(make_repo, capsys):
    root = make_repo({})
    make_repo({}, assignment_id="y")
    assert main(["--root", str(root), "test"]) == 2
    assert "name the assignment with --assignment ID (assignments: x, y)" in capsys.readouterr().err


def skeleton_repo(make_repo) -> Path:
    root = make_repo({})
    write_files(root / "skeleton" / "x", {"kernels.cu.h": "", "host.cu.h": ""})
    return root


def test_a_missing_cmake_exits_2(make_repo, monkeypatch, capsys):
    root = skeleton_repo(make_repo)
    monkeypatch.setattr(cmake.shutil, "which", lambda name: None)
    assert main(["--root", str(root), "test"]) == 2
    assert "cmake is not on PATH" in capsys.readouterr().err


@pytest.mark.skipif(shutil.which("cmake") is None, reason="needs cmake")
def test_a_failing_configure_step_exits_2_showing_the_cmake_error(make_repo, tmp_path: Path, capsys):
    root = skeleton_repo(make_repo)
    (root / "CMakeLists.txt").write_text('cmake_minimum_required(VERSION 3.24)\nmessage(FATAL_ERROR "no Catch2")\n')
    write_files(tmp_path / "b", {"results.json": "[]"})
    assert main(["--root", str(root), "test", "--build-dir", str(tmp_path / "b")]) == 2
    assert not (tmp_path / "b" / "results.json").exists(), "an earlier run's verdicts must not look current"
    err = capsys.readouterr().err
    assert "configuring x with CMake failed" in err
    assert "CMake Error at CMakeLists.txt:2 (message):" in err
    assert "no Catch2" in err


def fake_build(monkeypatch, outcomes: dict[str, verb.Outcome]) -> list:
    """Stand-ins for CMake: configuring makes the build directory, each executable gets its outcome."""
    calls = []

    def configure(*args):
        calls.append(("configure", *args))
        args[1].mkdir(parents=True, exist_ok=True)

    monkeypatch.setattr(cmake, "configure", configure)

    def build_and_run(assignment_id, tests, build_dir, timeout_s):
        calls.append(("build_and_run", tests, timeout_s))
        return outcomes[tests]

    monkeypatch.setattr(verb, "build_and_run", build_and_run)
    return calls


def test_results_json_has_one_object_per_task_and_a_failure_exits_1(make_repo, tmp_path: Path, monkeypatch):
    root = skeleton_repo(make_repo)
    calls = fake_build(monkeypatch, {"alpha": (FAILED, "case\nmessage", ["case"]), "beta": (NO_GPU, "no GPU", [])})
    build_dir = tmp_path / "b"
    argv = ["--root", str(root), "test", "--build-dir", str(build_dir), "--timeout", "5", "--cmake-arg=-DA=1"]
    assert main(argv) == 1
    configure = calls[0]
    assert configure[1:5] == (root.resolve(), build_dir.resolve(), "x", (root / "skeleton" / "x").resolve())
    assert configure[6] == ["-DA=1"]
    assert calls[1:] == [("build_and_run", "alpha", 5.0), ("build_and_run", "beta", 5.0)]
    assert json.loads((build_dir / "results.json").read_text()) == [
        {
            "id": "alpha",
            "title": "Task alpha",
            "points": 10,
            "verdict": "FAILED",
            "detail": "case\nmessage",
            "failed_cases": ["case"],
            "speed_preview": [],
        },
        {"id": "beta", "title": "Task beta", "points": 10, "verdict": NO_GPU, "detail": "no GPU", "failed_cases": [],
         "speed_preview": []},
    ]


def test_the_preview_of_speed_points_goes_into_results_json_under_its_task(make_repo, tmp_path: Path, monkeypatch):
    root = skeleton_repo(make_repo)
    fake_build(monkeypatch, {"alpha": (PASSED, "", []), "beta": (PASSED, "", [])})
    scored = SpeedResult(task="beta", case="map", size=1024, points=1.5, max_points=2.0, student_us=20.0,
                         reference_us=15.0, copy_us=10.0)
    monkeypatch.setattr(verb, "print_speed_table", lambda assignment, results, build_dir: [scored])
    assert main(["--root", str(root), "test", "--build-dir", str(tmp_path / "b")]) == 0
    results = verb.read_results(tmp_path / "b" / "results.json")
    assert [(result.id, result.speed_preview) for result in results] == [("alpha", []), ("beta", [scored])]


def test_passed_and_no_gpu_verdicts_exit_0(make_repo, tmp_path: Path, monkeypatch, capsys):
    root = skeleton_repo(make_repo)
    fake_build(monkeypatch, {"alpha": (PASSED, "", []), "beta": (NO_GPU, "no GPU", [])})
    assert main(["--root", str(root), "test", "--build-dir", str(tmp_path / "b")]) == 0
    assert "correctness: 10 of 10 points from tests that ran" in capsys.readouterr().out


def test_a_build_failure_exits_1(make_repo, tmp_path: Path, monkeypatch):
    root = skeleton_repo(make_repo)
    fake_build(monkeypatch, {"alpha": (PASSED, "", []), "beta": (BUILD_FAILED, "k.cu.h(3): error: x", [])})
    assert main(["--root", str(root), "test", "--build-dir", str(tmp_path / "b")]) == 1


def test_the_build_dir_defaults_to_build_test_id_in_the_repository(make_repo, monkeypatch):
    root = skeleton_repo(make_repo)
    calls = fake_build(monkeypatch, {"alpha": (PASSED, "", []), "beta": (PASSED, "", [])})
    assert main(["--root", str(root), "test"]) == 0
    assert calls[0][2] == root.resolve() / "build" / "test-x"
    assert (root / "build" / "test-x" / "results.json").is_file()


def test_tasks_sharing_a_test_executable_build_and_run_it_once(make_repo, tmp_path: Path, monkeypatch):
    root = skeleton_repo(make_repo)
    manifest = root / "assignments" / "x" / "assignment.toml"
    manifest.write_text(manifest.read_text().replace('tests = "beta"', 'tests = "alpha"'))
    calls = fake_build(monkeypatch, {"alpha": (PASSED, "", [])})
    assert main(["--root", str(root), "test", "--build-dir", str(tmp_path / "b")]) == 0
    assert [call[1] for call in calls[1:]] == ["alpha"]


def test_wrong_and_test_accept_repeated_cmake_args():
    parser = build_parser()
    args = parser.parse_args(["wrong", "pbb", "--cmake-arg=-DA=1", "--cmake-arg=-DB=2"])
    assert args.cmake_args == ["-DA=1", "-DB=2"]
    assert parser.parse_args(["test", "--cmake-arg=-DA=1"]).cmake_args == ["-DA=1"]
    assert parser.parse_args(["test"]).cmake_args == []


def test_cmake_args_come_last_in_the_configure_command(tmp_path: Path, monkeypatch):
    monkeypatch.setattr(cmake.shutil, "which", lambda name: None)
    command = cmake.configure_command(Path("/repo"), tmp_path, "pbb", tmp_path / "s", ["-DCMAKE_CUDA_ARCHITECTURES=90"])
    assert command[-2:] == ["-DCMAKE_BUILD_TYPE=Release", "-DCMAKE_CUDA_ARCHITECTURES=90"]


# The real thing: nvcc, CMake and Catch2 build one test executable of the skeleton.


@pytest.mark.slow
@pytest.mark.skipif(shutil.which("cmake") is None or not has_nvcc(), reason="needs nvcc and cmake")
def test_the_skeleton_copy_tests_build_and_run_for_real(tmp_path: Path, capsys):
    build_dir = tmp_path / "build"
    argv = ["--root", str(REAL_ROOT), "test", "--assignment", "pbb", "--build-dir", str(build_dir), "--tests", "copy"]
    exit_code = main(argv + ["--cmake-arg=-DCMAKE_CUDA_ARCHITECTURES=90"])
    out = capsys.readouterr().out
    results = json.loads((build_dir / "results.json").read_text())
    # The skeleton's copy functions are correct (skeleton_fails = false): on a GPU they pass.
    expected = PASSED if has_gpu() else NO_GPU
    assert [(result["id"], result["verdict"]) for result in results] == [("copy", expected)], out
    assert exit_code == 0
    assert (build_dir / "assignments" / "pbb" / "pbb_test_copy").is_file()
    if expected == NO_GPU:
        assert "correctness: 0 of 0 points from tests that ran" in out
        assert "were skipped because this machine has no CUDA device" in out
        assert "passed" not in out


def test_the_assignment_is_inferred_from_the_files_a_solution_folder_holds(tmp_path):
    assert choose_assignment(REAL_ROOT, None, REAL_ROOT / "skeleton" / "pbb").id == "pbb"
    assert choose_assignment(REAL_ROOT, None, REAL_ROOT / "skeleton" / "reduce").id == "reduce"
    assert choose_assignment(REAL_ROOT, None, REAL_ROOT / "reference" / "pmph-w2").id == "pmph-w2"
    assert choose_assignment(REAL_ROOT, "reduce", REAL_ROOT / "skeleton" / "pbb").id == "reduce"
    with pytest.raises(InputError, match="name the assignment with --assignment ID"):
        choose_assignment(REAL_ROOT, None, tmp_path)
    # A student's folder with the course's file names fits both pbb and pmph-w2: both are named.
    for name in ("pbbKernels.cu.h", "hostSkel.cu.h"):
        (tmp_path / name).write_text("// a student's file\n")
    with pytest.raises(InputError, match="holds the files of pbb, pmph-w2"):
        choose_assignment(REAL_ROOT, None, tmp_path)
