import os
import re
import time
from pathlib import Path

import pytest

from helpers import write_files
from kernellab import cmake
from kernellab.commands.wrong import (
    BUILD_FAILED,
    NO_GPU,
    NOT_REJECTED,
    PATCH_FAILED,
    REJECTED,
    Row,
    check_version,
    find_wrong_versions,
    format_problem_details,
    format_table,
    prepare_solution,
    run_verdict,
)
from kernellab.errors import InputError
from kernellab.manifest import load_assignment

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
    row = check_version(assignment, assignment.tasks[0], assignment.wrong_dir / "alpha" / "bad.patch", tmp_path / "w")
    assert (row.task, row.name, row.description, row.verdict) == ("alpha", "bad", "Returns 2.", PATCH_FAILED)
    assert "does not apply to kernels.cu.h" in row.details[0]


def test_a_patch_that_does_not_parse_is_reported_as_patch_failed(make_repo, tmp_path: Path):
    assignment = assignment_with_wrong(make_repo, {"alpha/empty.patch": "no diff here\n"})
    row = check_version(assignment, assignment.tasks[0], assignment.wrong_dir / "alpha" / "empty.patch", tmp_path)
    assert row.verdict == PATCH_FAILED
    assert "no file diff" in row.details[0]


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


def test_a_failing_run_is_rejected_by_its_failed_test_cases(tmp_path: Path):
    assert run_verdict(cmake.Completed(1, ""), junit_report(tmp_path, "scan/large")) == (REJECTED, ["scan/large"])


def test_a_crash_without_a_report_is_rejected_naming_the_signal(tmp_path: Path):
    verdict, caught_by = run_verdict(cmake.Completed(-11, ""), tmp_path / "r.xml")
    assert verdict == REJECTED
    assert caught_by == ["(crashed: signal 11, no failed test case in the report)"]


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
