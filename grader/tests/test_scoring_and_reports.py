"""Scoring (shares of public and hidden cases, forbidden libraries, answers) and every report format,
each validated against the schema its reader publishes."""

import json
import xml.etree.ElementTree as ElementTree
from dataclasses import replace
from pathlib import Path

import jsonschema
import pytest

from helpers import REAL_ROOT, write_files
from kernellab import reports
from kernellab.backend import Backend
from kernellab.grading.groups import first_reported_error
from kernellab.grading.model import Grade, GroupResult, SpeedResult, TestCaseResult
from kernellab.grading.run import GradingRun, draw_hidden_sizes, draw_large_size
from kernellab.grading.scoring import answer_matches, score_answers, score_task
from kernellab.grading.speed.timing import speed_points
from kernellab.manifest import Grading, load_assignment
from kernellab.manifest_fields import ManifestError
from kernellab.static_checks import forbidden_in_sources
from kernellab.verdict import Verdict

PASSED, FAILED = Verdict.PASSED, Verdict.FAILED

SCHEMAS = Path(__file__).parent / "schemas"
PBB = load_assignment(REAL_ROOT, "pbb")
SCAN_MULTI = next(task for task in PBB.tasks if task.id == "scan-multi")


def groups(public: str, hidden: str) -> tuple[GroupResult, ...]:
    return (
        GroupResult("public", public, "" if public == PASSED else "scanInc scans...\nn := 33: first mismatch at index 3"),
        GroupResult("hidden", hidden, "" if hidden == PASSED else "scanInc scans...\nn := 4099: no result"),
    )


# scan-multi has 25 points, 5 of them for speed: its tests share the other 20.
@pytest.mark.parametrize(
    "public, hidden, points",
    [(PASSED, PASSED, 20), (PASSED, FAILED, 10), (FAILED, PASSED, 10), (FAILED, "crashed (SIGSEGV)", 0)],
)
def test_each_group_that_passed_earns_its_share_of_the_points_speed_leaves(public, hidden, points):
    task = score_task(PBB, SCAN_MULTI, groups(public, hidden), ())
    assert task.points == points and task.max_points == 25
    assert [group.max_points for group in task.groups] == [10, 10]


def test_the_public_share_comes_from_the_manifest():
    assignment = replace(PBB, grading=Grading(public_share=0.2))
    task = score_task(assignment, SCAN_MULTI, groups(PASSED, FAILED), ())
    assert task.points == 4


@pytest.mark.parametrize("ratio, points", [(0.8, 2.5), (1.2, 2.5), (1.3, 2.25), (2.0, 1.25), (3.9, 0.0), (4.0, 0.0), (9.0, 0.0)])
def test_speed_points_follow_a_log_scale_in_steps(ratio, points):
    case = PBB.speed[1]  # scanInc: 5 points over two sizes, full at 1.2x the reference's time, none at 4x
    assert speed_points(case, ratio) == points


@pytest.mark.parametrize("ratio, points", [(0.5, 6.25), (1.2, 6.25), (1.3, 4.38), (2.0, 3.12), (10.0, 0.62), (100.0, 0.0)])
def test_the_inverse_scale_gives_the_share_reference_over_student_as_cs149_does(ratio, points):
    """CS149's checker: full points within 20% of the reference's time, else the share
    reference time / student time (here in the grader's steps of a tenth), never a ratio at which none are left."""
    case = load_assignment(REAL_ROOT, "cs149-scan").speed[0]  # exclusive_scan: 25 points over four sizes
    assert (case.scale, case.full_at, case.zero_at) == ("inverse", 1.2, float("inf"))
    assert speed_points(case, ratio) == points


def test_a_speed_case_on_the_log_scale_needs_zero_at(tmp_path):
    manifest = (REAL_ROOT / "assignments" / "cs149-scan" / "assignment.toml").read_text()
    write_files(tmp_path, {"assignments/cs149-scan/assignment.toml": manifest.replace('scale = "inverse"', 'scale = "log"', 1)})
    with pytest.raises(ManifestError, match="needs zero_at"):
        load_assignment(tmp_path, "cs149-scan")
    write_files(tmp_path, {"assignments/cs149-scan/assignment.toml": manifest.replace('scale = "inverse"', 'scale = "linear"', 1)})
    with pytest.raises(ManifestError, match="expected one of log, inverse"):
        load_assignment(tmp_path, "cs149-scan")


def test_a_forbidden_library_in_the_skeletons_given_code_is_no_finding_but_a_use_beyond_it_is(tmp_path):
    given = '#include <thrust/scan.h>\nvoid timeThrust(int* a, int n) { thrust::exclusive_scan(a, a + n, a); }\n'
    write_files(tmp_path, {"skeleton/scan.cu": given,
                           "kept/scan.cu": given + "void mine() {}\n",
                           "added/scan.cu": given + "void mine(int* a, int n) { thrust::inclusive_scan(a, a + n, a); }\n",
                           "copied/scan.cu": given + "void timeThrust(int* a, int n) { thrust::exclusive_scan(a, a + n, a); }\n"})
    def found(folder: str) -> dict:
        return forbidden_in_sources(tmp_path / folder, ("thrust",), given=tmp_path / "skeleton")
    assert found("kept") == {}
    assert found("added") == {"scan.cu": ("scan.cu:3 uses thrust, which this assignment forbids",)}
    assert found("copied") == {"scan.cu": ("scan.cu:3 uses thrust, which this assignment forbids",)}
    assert forbidden_in_sources(tmp_path / "kept", ("thrust",))["scan.cu"][-1] == "scan.cu:2 uses thrust, which this assignment forbids"


def test_a_forbidden_library_earns_nothing_and_says_where():
    task = score_task(PBB, SCAN_MULTI, groups(PASSED, PASSED), ("pbbKernels.cu.h:12 uses cub, which this assignment forbids",))
    assert task.points == 0
    assert "pbbKernels.cu.h:12 uses cub" in task.feedback


def test_forbidden_words_count_in_code_not_in_comments(tmp_path):
    write_files(tmp_path, {
        "a.cu.h": "// unlike cub::DeviceScan, we ...\n/* thrust\n is not used */\n#include <cub/cub.cuh>\n",
        "b.cu.h": "int cubic = 3; // 'cubic' is not 'cub'\n",
    })
    found = forbidden_in_sources(tmp_path, ("cub", "thrust"))
    # Line 4 where the compiler finds CUB; the file alone where it does not (no CUDA toolkit).
    assert list(found) == ["a.cu.h"] and len(found["a.cu.h"]) == 1
    assert found["a.cu.h"][0] in ("a.cu.h:4 reaches cub (cub/cub.cuh), which this assignment forbids",
                                  "a.cu.h reaches cub (cub/cub.cuh), which this assignment forbids")


def test_hidden_sizes_are_drawn_from_the_seed_within_the_ranges():
    sizes = draw_hidden_sizes(PBB, 12345)
    assert sizes == draw_hidden_sizes(PBB, 12345)
    assert sizes != draw_hidden_sizes(PBB, 54321)
    for size, (low, high) in zip(sizes, PBB.grading.hidden_size_ranges):
        assert low <= size <= high


def test_the_large_cases_run_in_the_hidden_group_on_a_gpu_at_a_size_drawn_from_the_seed(tmp_path):
    low, high = PBB.grading.large_size_range
    assert low > 2**26 and high == 100003565
    size = draw_large_size(PBB, Backend.CUDA, 12345)
    assert low <= size <= high and size == draw_large_size(PBB, Backend.CUDA, 12345) != draw_large_size(PBB, Backend.CUDA, 54321)
    assert draw_large_size(PBB, Backend.CPU, 12345) is None
    assert PBB.large_tests == {"reduce_block", "scan_multi", "sgm_scan"}
    run = GradingRun(PBB, Backend.CUDA, tmp_path, None, seed=12345)
    program = Path("pbb_test_scan_multi")
    assert run.group_command(program, "scan_multi", "hidden") == [str(program), "--order", "decl", "~[.],[large]"]
    assert run.group_command(program, "scan_multi", "public") == [str(program), "--order", "decl"]
    assert run.group_command(Path("pbb_test_copy"), "copy", "hidden") == ["pbb_test_copy", "--order", "decl"]
    assert run.group_environment("hidden")["KERNELLAB_LARGE_SIZE"] == str(size)
    cpu = GradingRun(PBB, Backend.CPU, tmp_path, None, seed=12345)
    assert "KERNELLAB_LARGE_SIZE" not in cpu.group_environment("hidden")
    assert cpu.group_command(program, "scan_multi", "hidden") == [str(program), "--order", "decl"]


@pytest.mark.parametrize(
    "given, answer, tolerance, right",
    [(16, 16, 0.0, True), (16.0, 16, 0.0, True), (15, 16, 0.0, False), ("16", 16, 0.0, False),
     (True, 1, 0.0, False), (1.04, 1.0, 0.05, True), (1.06, 1.0, 0.05, False), (None, 3, 0.0, False)],
)
def test_answers_match_exactly_or_within_the_relative_tolerance(given, answer, tolerance, right):
    assert answer_matches(given, answer, tolerance) is right


def test_answers_are_scored_per_question(tmp_path):
    write_files(tmp_path / "assignments" / "q", {"questions.toml": (
        '[[questions]]\nid = "warps"\npoints = 2\nquestion = "How many?"\nanswer = 16\n'
        '[[questions]]\nid = "speedup"\npoints = 3\nquestion = "How fast?"\nanswer = 4.5\ntolerance = 0.1\n'
    )})
    assignment = replace(PBB, manifest_path=tmp_path / "assignments" / "q" / "assignment.toml")
    task = replace(SCAN_MULTI, id="questions", points=5, tests=None, answers="answers.toml")
    write_files(tmp_path / "sub", {"answers.toml": "warps = 16\nspeedup = 5.5\n"})
    graded = score_answers(assignment, task, tmp_path / "sub")
    assert graded.points == 2 and graded.max_points == 5
    assert graded.feedback == "warps: right (2/2)\nspeedup: wrong (0/3)"
    write_files(tmp_path / "broken", {"answers.toml": "warps = = 16\n"})
    assert "not valid TOML" in score_answers(assignment, task, tmp_path / "broken").feedback
    assert "no answers.toml" in score_answers(assignment, task, tmp_path / "nothing").feedback


def a_grade(status: str = "graded") -> Grade:
    cases = (TestCaseResult("scanInc scans arrays - Add<int>", 78, 1, "n := 33, block := 32: first mismatch at index 3"),)
    scan_multi = score_task(PBB, SCAN_MULTI, (
        GroupResult("public", FAILED, "scanInc scans arrays - Add<int>\nn := 33: first mismatch", cases, 1.5),
        GroupResult("hidden", PASSED, "", (), 2.0),
    ), ())
    timed = SpeedResult("scan-multi", "scanInc<Add<int>>", 1 << 28, 2.5, 2.5, student_us=1161.3, reference_us=880.0,
                        copy_us=752.0, baseline="cub-scan", baseline_us=878.0, bytes=8.0 * (1 << 28))
    scan_multi = replace(scan_multi, speed=(timed,), points=scan_multi.points + timed.points)
    copy = score_task(PBB, PBB.tasks[0], (GroupResult("public", PASSED), GroupResult("hidden", PASSED)), ())
    return Grade(
        student="alice", assignment="pbb", backend="cuda", status=status,
        message="" if status == "graded" else "the reference does not build",
        tasks=(copy, scan_multi) if status == "graded" else (), files=("hostSkel.cu.h", "pbbKernels.cu.h"),
        seed=42, hidden_sizes=(17, 555), environment={"gpu": "NVIDIA H100 80GB HBM3", "driver": "580.159.04"},
        seconds=12.3,
    )


def validate(document: dict, schema_name: str) -> None:
    jsonschema.validate(document, json.loads((SCHEMAS / schema_name).read_text()))


def test_the_gradescope_results_validate_and_add_up():
    document = reports.gradescope(a_grade())
    validate(document, "gradescope-results.schema.json")
    assert document["score"] == 10 + 10 + 2.5
    assert document["leaderboard"] == [{"name": "scanInc<Add<int>> 2^28 (GB/s)", "value": 1849.2, "order": "desc"}]
    assert sum(test["score"] for test in document["tests"]) == document["score"]
    failed = [test for test in document["tests"] if test["status"] == "failed"]
    assert [test["name"] for test in failed] == ["scan-multi: public tests"]
    assert "first mismatch" in failed[0]["output"]


def test_the_feedback_prints_each_timed_cases_score_table_as_cs149s_checker_does():
    feedback = reports.markdown(a_grade())
    table = feedback[feedback.index("scanInc<Add<int>> score table:"):].split("\n")
    assert table[2:6] == ["| element count | ref time (ms) | your time (ms) | score |", "|---|---|---|---|",
                          f"| {1 << 28} | 0.880 | 1.161 | 2.5 |", "| | | total score: | 2.5/2.5 |"]


def test_the_prairielearn_results_validate_and_say_when_not_gradable():
    validate(reports.prairielearn(a_grade()), "prairielearn-results.schema.json")
    not_graded = reports.prairielearn(a_grade("not graded"))
    validate(not_graded, "prairielearn-results.schema.json")
    assert not_graded["gradable"] is False


def test_the_junit_report_has_a_case_per_group_and_a_failure_per_failed_one():
    root = ElementTree.fromstring(reports.junit(a_grade()))
    suite = root.find("testsuite")
    assert suite.get("tests") == "5" and suite.get("failures") == "1"
    failures = [case.get("name") for case in suite.iter("testcase") if case.find("failure") is not None]
    assert failures == ["scan-multi: public tests"]


def test_reports_are_written_with_grade_json_and_a_grade_reads_back(tmp_path):
    grade = a_grade()
    reports.write_all(grade, tmp_path)
    assert sorted(path.name for path in tmp_path.iterdir()) == sorted(
        ["results.json", "prairielearn.json", "junit.xml", "feedback.md", "feedback.html", "grade.json"]
    )
    assert Grade.from_json((tmp_path / "grade.json").read_text()) == grade
    assert "scan-multi: public tests: FAILED" in (tmp_path / "feedback.md").read_text()
    page = (tmp_path / "feedback.html").read_text()
    assert "<pre>" in page and 'src="data:image/png;base64,' in page
    # A mismatch's "device X, expected Y" is at the end of a long line: wrapped, not scrolled out of sight.
    assert "pre{" in page and "white-space:pre-wrap" in page


def test_a_grade_that_could_not_be_made_writes_no_gradescope_score(tmp_path):
    reports.write_all(a_grade(), tmp_path)
    reports.write_all(a_grade("not graded"), tmp_path)
    assert not (tmp_path / "results.json").exists()
    assert json.loads((tmp_path / "grade.json").read_text())["status"] == "not graded"


def test_a_missing_result_is_explained_by_the_exception_the_run_reported():
    output = (
        "/x/test_scan_block.cu:35: FAILED:\ndue to unexpected exception with message:\n"
        "  race in kernel scanIncBlockKernel: device memory differs between thread orders\n"
        "  n := 1024\n\n=====\n"
    )
    assert first_reported_error(output) == (
        "race in kernel scanIncBlockKernel: device memory differs between thread orders"
    )
    # Catch2 v3 with captured values (an H100 run of the adversarial suite's illegal address).
    output = (
        "/r/test_map.cu:13: FAILED:\ndue to unexpected exception with messages:\n  n := 2102 (0x836)\n"
        "  block := 32\n  /r/device_buffer.hpp:28:\n  cudaMalloc(&data_, bytes()) failed: cudaErrorIllegalAddress (an illegal\n"
        "  memory access was encountered)\n\n"
    )
    assert first_reported_error(output) == (
        "/r/device_buffer.hpp:28: cudaMalloc(&data_, bytes()) failed: cudaErrorIllegalAddress (an illegal "
        "memory access was encountered)"
    )
    assert first_reported_error("All tests passed\n") == ""


def test_the_feedback_shows_a_problem_and_a_warning_beside_a_pass_but_not_a_quiet_pass():
    def row(passed: bool, output: str) -> reports.Entry:
        return reports.Entry("scan-warp: public tests", "scan-warp", 20, 20, passed, "passed" if passed else "FAILED",
                             output, 1.0, "public")
    assert reports.shows_output(row(False, "first mismatch at index 2"))
    assert reports.shows_output(row(True, "warning: warp-synchronous race in kernel scanIncWarpKernel launched at t.cu:38"))
    assert not reports.shows_output(row(True, "")) and not reports.shows_output(row(True, "Task scan-warp is judged alone"))
