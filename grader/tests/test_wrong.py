import os
import re
import threading
import time
from dataclasses import replace
from pathlib import Path

import pytest

from helpers import write_files
from kernellab import cmake
from kernellab.cli import main
from kernellab.known_wrong import (
    Row,
    check_version,
    check_versions,
    find_wrong_versions,
    format_problem_details,
    format_table,
    prepare_solution,
    run_verdict,
)
from kernellab.errors import InputError
from kernellab.manifest import load_assignment
from kernellab.verdict import Verdict

BUILD_FAILED, NO_GPU, NOT_REJECTED, PATCH_FAILED, REJECTED = (
    Verdict.BUILD_FAILED, Verdict.NO_GPU, Verdict.NOT_REJECTED, Verdict.PATCH_FAILED, Verdict.REJECTED
)

REFERENCE = {"kernels.cu.h": "int f() {\n    return 1;\n}\n"}
GOOD_PATCH = "Returns 2.\n--- a/kernels.cu.h\n+++ b/kernels.cu.h\n@@ -2 +2 @@\n-    return 1;\n+    return 2;\n"


def assignment_with_wrong(make_repo, wrong_files: dict[str, str]):
    root = make_repo(REFERENCE)
    write_files(root / "assignments" / "x" / "wrong", wrong_files)
    return load_assignment(root, "x")


def test_wrong_versions_are_found_in_manifest_task_order_then_by_name(make_repo):
    assignment = assignment_with_wrong(
        make_repo, {"beta/a.patch": GOOD_PATCH, "alpha/z.patch": GOOD_PATCH, "alpha/b.patch": GOOD_PATCH}
    )
    versions = find_wrong_versions(assignment, None)
    assert [(task.id, path.name) for task, path in versions] == [
        ("alpha", "b.patch"),
        ("alpha", "z.patch"),
        ("beta", "a.patch"),
    ]


def test_the_task_option_selects_one_task(make_repo):
    assignment = assignment_with_wrong(make_repo, {"beta/a.patch": GOOD_PATCH, "alpha/b.patch": GOOD_PATCH})
    assert [task.id for task, _ in find_wrong_versions(assignment, "beta")] == ["beta"]


def test_an_unknown_task_option_is_an_error(make_repo):
    assignment = assignment_with_wrong(make_repo, {"alpha/b.patch": GOOD_PATCH})
    with pytest.raises(InputError, match="--task gamma: not a task of x"):
        find_wrong_versions(assignment, "gamma")


def test_a_wrong_folder_that_is_not_a_task_is_an_error(make_repo):
    assignment = assignment_with_wrong(make_repo, {"gamma/b.patch": GOOD_PATCH})
    with pytest.raises(InputError, match="'gamma' is not a task of x") as caught:
        find_wrong_versions(assignment, None)
    assert caught.value.path == assignment.wrong_dir / "gamma"


def test_a_file_that_is_not_a_patch_in_a_task_folder_is_an_error(make_repo):
    assignment = assignment_with_wrong(make_repo, {"alpha/b.diff": GOOD_PATCH})
    with pytest.raises(InputError, match="only <name>.patch files"):
        find_wrong_versions(assignment, None)


def test_an_assignment_without_a_wrong_folder_has_no_wrong_versions(make_repo):
    assert find_wrong_versions(load_assignment(make_repo(REFERENCE), "x"), None) == []


def test_a_patch_that_does_not_apply_is_reported_without_building(make_repo, tmp_path: Path):
    bad = GOOD_PATCH.replace("-    return 1;", "-    return 7;")
    assignment = assignment_with_wrong(make_repo, {"alpha/bad.patch": bad})
    patch_file = assignment.wrong_dir / "alpha" / "bad.patch"
    row = check_version(assignment, assignment.tasks[0], patch_file, tmp_path / "job", tmp_path / "w")
    assert (row.task, row.name, row.description, row.verdict) == ("alpha", "bad", "Returns 2.", PATCH_FAILED)
    assert "does not apply to kernels.cu.h" in row.details[0]


def test_a_patch_that_does_not_parse_is_reported_as_patch_failed(make_repo, tmp_path: Path):
    assignment = assignment_with_wrong(make_repo, {"alpha/empty.patch": "no diff here\n"})
    patch_file = assignment.wrong_dir / "alpha" / "empty.patch"
    row = check_version(assignment, assignment.tasks[0], patch_file, tmp_path / "job", tmp_path)
    assert row.verdict == PATCH_FAILED
    assert "no file diff" in row.details[0]


def returns_patch(value: int) -> str:
    return GOOD_PATCH.replace("Returns 2.", f"Returns {value}.").replace("+    return 2;", f"+    return {value};")


def fake_builds_and_tests(monkeypatch, waits_for: dict[int, int] | None = None) -> tuple[list, list]:
    """Configure and build do nothing; the test run of a version that returns <value> fails the
    test case `returns <value>`, after the run of waits_for[value] has ended where there is one.
    Returns the build dirs configured and (build dir, whether the run stops at a failure) per run."""
    configured, tested = [], []
    ended = {value: threading.Event() for value in range(10)}

    def configure(root, build_dir, assignment_id, solution, log, cmake_args):
        configured.append(build_dir)

    def run_tests(build_dir, assignment_id, tests, report, log, timeout_s, stop_at_first_failure):
        value = int(re.search(r"return (\d+);", (build_dir.parent / "solution" / "kernels.cu.h").read_text())[1])
        tested.append((build_dir, stop_at_first_failure))
        if value in (waits_for or {}):
            assert ended[waits_for[value]].wait(timeout=30)
        ended[value].set()
        report.parent.mkdir(parents=True, exist_ok=True)
        report.write_text(f'<testsuites><testcase name="returns {value}"><failure/></testcase></testsuites>\n')
        return cmake.Completed(1, "")

    monkeypatch.setattr(cmake, "configure", configure)
    monkeypatch.setattr(cmake, "run_logged", lambda command, log, timeout_s=None: cmake.Completed(0, ""))
    monkeypatch.setattr(cmake, "run_tests", run_tests)
    return configured, tested


def test_two_jobs_give_the_rows_of_one_in_the_same_order_each_in_its_own_folder(
    make_repo, tmp_path: Path, monkeypatch, capsys
):
    bad = GOOD_PATCH.replace("-    return 1;", "-    return 7;")
    patches = {"alpha/a.patch": returns_patch(2), "alpha/b.patch": bad, "alpha/c.patch": returns_patch(4)}
    assignment = assignment_with_wrong(make_repo, patches | {"beta/d.patch": returns_patch(5)})
    versions = find_wrong_versions(assignment, None)
    fake_builds_and_tests(monkeypatch)
    one = check_versions(assignment, versions, tmp_path / "one", jobs=1)
    assert [(row.name, row.verdict, row.caught_by) for row in one] == [
        ("a", REJECTED, ["returns 2"]),
        ("b", PATCH_FAILED, []),
        ("c", REJECTED, ["returns 4"]),
        ("d", REJECTED, ["returns 5"]),
    ]
    printed = ["alpha/a: rejected", "alpha/b: patch failed", "alpha/c: rejected", "beta/d: rejected"]
    assert capsys.readouterr().out.splitlines() == printed
    # Version a's test run ends only after the last version's: the other job takes the rest.
    configured, tested = fake_builds_and_tests(monkeypatch, waits_for={2: 5})
    assert check_versions(assignment, versions, tmp_path / "two", jobs=2) == one
    # Each line is printed as its version ends: b and c before a (d's line races a's).
    printed = capsys.readouterr().out.splitlines()
    assert printed[:2] == ["alpha/b: patch failed", "alpha/c: rejected"]
    assert sorted(printed[2:]) == ["alpha/a: rejected", "beta/d: rejected"]
    build_dirs = [tmp_path / "two" / "job-1" / "build", tmp_path / "two" / "job-2" / "build"]
    assert sorted(configured) == build_dirs
    assert {build_dir for build_dir, _ in tested} == set(build_dirs)
    assert all(stop for _, stop in tested)


def test_a_failed_configure_step_stops_the_other_jobs_after_their_current_version(
    make_repo, tmp_path: Path, monkeypatch
):
    assignment = assignment_with_wrong(make_repo, {f"alpha/{n}.patch": returns_patch(2) for n in "abcdef"})
    _, tested = fake_builds_and_tests(monkeypatch)
    job_2_failed = threading.Event()

    def configure(root, build_dir, assignment_id, solution, log, cmake_args):
        if build_dir.parent.name == "job-2":
            job_2_failed.set()
            raise InputError("configuring x with CMake failed")
        # Job 1 is ready only a while after job 2 failed: by then it is told to stop.
        assert job_2_failed.wait(timeout=30)
        time.sleep(0.5)

    monkeypatch.setattr(cmake, "configure", configure)
    with pytest.raises(InputError, match="configuring x"):
        check_versions(assignment, find_wrong_versions(assignment, None), tmp_path, jobs=2)
    assert tested == []


@pytest.mark.parametrize("command", ["wrong", "check"])
@pytest.mark.parametrize("jobs", ["0", "-1", "two"])
def test_jobs_must_be_a_whole_number_of_at_least_one(command: str, jobs: str, capsys):
    with pytest.raises(SystemExit) as exited:
        main([command, "x", "--jobs", jobs])
    assert exited.value.code == 2
    assert f"argument --jobs: expected a whole number of at least 1, got '{jobs}'" in capsys.readouterr().err


def test_preparing_the_solution_replaces_earlier_contents_with_fresh_files(tmp_path: Path):
    reference, solution = tmp_path / "reference", tmp_path / "solution"
    write_files(reference, REFERENCE)
    old = time.time() - 3600
    os.utime(reference / "kernels.cu.h", (old, old))
    write_files(solution, {"kernels.cu.h": "patched\n", "leftover.h": "x\n"})
    prepare_solution(reference, solution)
    assert sorted(path.name for path in solution.iterdir()) == ["kernels.cu.h"]
    assert (solution / "kernels.cu.h").read_text() == REFERENCE["kernels.cu.h"]
    assert (solution / "kernels.cu.h").stat().st_mtime > old + 60


def junit_report(tmp_path: Path, failed: str) -> Path:
    report = tmp_path / "r.xml"
    testcase = f'<testcase name="{failed}"><failure/></testcase>'
    report.write_text(f"<testsuites><testsuite>{testcase}</testsuite></testsuites>\n")
    return report


def test_a_passing_run_is_not_rejected(tmp_path: Path):
    assert run_verdict(cmake.Completed(0, ""), tmp_path / "r.xml") == (NOT_REJECTED, [])


def test_exit_77_means_no_gpu(tmp_path: Path):
    assert run_verdict(cmake.Completed(77, ""), tmp_path / "r.xml") == (NO_GPU, [])


def test_failed_cases_beside_a_warp_synchronous_warning_do_not_reject_a_version(tmp_path: Path):
    # The CPU backend exits 77 after warning of warp-synchronous code, failed cases or not.
    assert run_verdict(cmake.Completed(77, ""), junit_report(tmp_path, "scan/warp")) == (NO_GPU, [])


def test_a_failing_run_is_rejected_by_its_failed_test_cases(tmp_path: Path):
    assert run_verdict(cmake.Completed(1, ""), junit_report(tmp_path, "scan/large")) == (REJECTED, ["scan/large"])


def test_a_crash_without_a_report_is_rejected_naming_the_signal(tmp_path: Path):
    verdict, caught_by = run_verdict(cmake.Completed(-11, ""), tmp_path / "r.xml")
    assert verdict == REJECTED
    assert caught_by == ["(crashed (SIGSEGV), no failed test case in the report)"]


def test_a_timed_out_run_is_rejected(tmp_path: Path):
    verdict, caught_by = run_verdict(cmake.Completed(-1, "", timed_out=True), tmp_path / "r.xml")
    assert verdict == REJECTED
    assert "timed out" in caught_by[0]


def test_the_table_lists_every_version_and_the_suite_strength():
    rows = [
        Row("alpha", "no-sync", "Drops the barrier.", REJECTED, ["a", "b", "c", "d"]),
        Row("beta", "off-by-one", "x" * 100, NOT_REJECTED),
        Row("beta", "typo", "Misspells a name.", BUILD_FAILED, details=["k.cu.h:3: error: 'fo' was not declared"]),
    ]
    cells = [re.split(r" {2,}", line) for line in format_table(rows).splitlines()]
    assert cells[0] == ["task", "name", "description", "verdict", "caught by"]
    assert cells[1] == ["alpha", "no-sync", "Drops the barrier.", "rejected", "a, b, c (+1 more)"]
    assert cells[2] == ["beta", "off-by-one", "x" * 57 + "...", "NOT rejected"]
    assert cells[-1] == ["test-suite strength: 1/3 rejected"]
    assert format_problem_details(rows) == "\nbeta/typo: build failed\n    k.cu.h:3: error: 'fo' was not declared\n"


def test_the_configure_command_names_the_assignment_and_the_solution(tmp_path: Path, monkeypatch):
    monkeypatch.setattr(cmake.shutil, "which", lambda name: "/usr/bin/ninja")
    command = cmake.configure_command(Path("/repo"), tmp_path / "build", "pbb", tmp_path / "solution")
    assert command == [
        "cmake",
        "-S",
        "/repo",
        "-B",
        str(tmp_path / "build"),
        "-DKERNELLAB_ASSIGNMENTS=pbb",
        f"-DKERNELLAB_SOLUTION={tmp_path / 'solution'}",
        "-DCMAKE_BUILD_TYPE=Release",
        "-G",
        "Ninja",
    ]


def test_the_configure_command_keeps_the_generator_of_an_existing_build_dir(tmp_path: Path, monkeypatch):
    monkeypatch.setattr(cmake.shutil, "which", lambda name: "/usr/bin/ninja")
    (tmp_path / "CMakeCache.txt").write_text("")
    assert "-G" not in cmake.configure_command(Path("/repo"), tmp_path, "pbb", tmp_path / "solution")


def test_the_configure_command_uses_the_default_generator_without_ninja(tmp_path: Path, monkeypatch):
    monkeypatch.setattr(cmake.shutil, "which", lambda name: None)
    assert "-G" not in cmake.configure_command(Path("/repo"), tmp_path, "pbb", tmp_path / "solution")


def test_the_build_and_test_commands_follow_the_target_naming(tmp_path: Path):
    assert cmake.build_command(tmp_path, "pbb_test_scan_block")[:5] == [
        "cmake",
        "--build",
        str(tmp_path),
        "--target",
        "pbb_test_scan_block",
    ]
    executable = cmake.test_executable(tmp_path, "pbb", "scan_block")
    assert executable == tmp_path / "assignments" / "pbb" / "pbb_test_scan_block"
    assert cmake.test_command(executable, tmp_path / "r.xml") == [
        str(executable),
        "--reporter",
        "junit",
        "--out",
        str(tmp_path / "r.xml"),
    ]
    stopping = cmake.test_command(executable, tmp_path / "r.xml", stop_at_first_failure=True)
    assert stopping[-1] == "--abort"


def test_the_first_compiler_error_is_shown_with_the_lines_after_it():
    log = "[1/3] Building\n\nk.cu.h(3): error: \"fo\" is undefined\n    fo(1);\n    ^\n\nk.cu.h(9): error: bad\nstop\n"
    assert cmake.first_error_lines(log, limit=4) == [
        'k.cu.h(3): error: "fo" is undefined',
        "    fo(1);",
        "    ^",
        "k.cu.h(9): error: bad",
    ]


def test_a_build_log_without_error_lines_yields_its_last_lines():
    assert cmake.first_error_lines("a\nb\nc\n", limit=2) == ["b", "c"]


def test_run_logged_captures_output_exit_code_and_timeouts(tmp_path: Path):
    completed = cmake.run_logged(["sh", "-c", "echo out; echo err >&2; exit 3"], tmp_path / "logs" / "a.log")
    assert (completed.exit_code, completed.output, completed.timed_out) == (3, "out\nerr\n", False)
    assert (tmp_path / "logs" / "a.log").read_text() == "out\nerr\n"
    assert cmake.run_logged(["sleep", "5"], tmp_path / "b.log", timeout_s=0.2).timed_out
