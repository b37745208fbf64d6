from pathlib import Path

import pytest

from helpers import REAL_ROOT, write_files
from kernellab.cli import main

KERNELS = (
    "#pragma once\n"
    "__device__ int f(int x) {\n"
    "    // BEGIN SOLUTION alpha\n"
    "    return 2 * x;\n"
    "    // STUB\n"
    "    // return 0;\n"
    "    // END SOLUTION\n"
    "}\n"
)
HOST = "// BEGIN SOLUTION beta\nrun();\n// END SOLUTION\nint main();\n"
REFERENCE = {"kernels.cu.h": KERNELS, "host.cu.h": HOST, "data/notes.txt": "notes\n"}
SKELETON = {
    "kernels.cu.h": "#pragma once\n__device__ int f(int x) {\n    return 0;\n}\n",
    "host.cu.h": "int main();\n",
    "data/notes.txt": "notes\n",
}


def strip(root: Path, *args: str) -> int:
    return main(["--root", str(root), "strip", *args])


def tree(directory: Path) -> dict[str, str]:
    return {path.relative_to(directory).as_posix(): path.read_text() for path in directory.rglob("*") if path.is_file()}


def test_strip_writes_the_skeleton_tree(make_repo, capsys):
    root = make_repo(REFERENCE)
    assert strip(root, "x") == 0
    assert tree(root / "skeleton" / "x") == SKELETON
    assert capsys.readouterr().out == "x: regenerated skeleton/x (0 changed, 3 new, 0 removed)\n"


def test_strip_leaves_no_staging_directories_behind(make_repo):
    root = make_repo(REFERENCE)
    assert strip(root) == 0
    assert strip(root) == 0
    (root / "reference" / "x" / "host.cu.h").write_text(HOST + "int other();\n")
    assert strip(root) == 0
    assert sorted(path.name for path in (root / "skeleton").iterdir()) == ["x"]


def test_check_passes_when_the_skeleton_is_up_to_date(make_repo, capsys):
    root = make_repo(REFERENCE)
    strip(root)
    capsys.readouterr()
    assert strip(root, "--check") == 0
    assert capsys.readouterr().out == "x: skeleton/x is up to date\n"


def test_check_fails_listing_a_changed_file_with_a_diff(make_repo, capsys):
    root = make_repo(REFERENCE)
    strip(root)
    (root / "reference" / "x" / "kernels.cu.h").write_text(KERNELS.replace("// return 0;", "// return -1;"))
    capsys.readouterr()
    assert strip(root, "--check") == 1
    out = capsys.readouterr().out
    assert "skeleton/x/kernels.cu.h: would change" in out
    assert "-    return 0;\n+    return -1;\n" in out
    assert "run `kernellab strip x`" in out


def test_check_reports_files_that_would_appear_and_disappear(make_repo, capsys):
    root = make_repo(REFERENCE)
    strip(root)
    (root / "reference" / "x" / "data" / "notes.txt").unlink()
    (root / "reference" / "x" / "constants.cu.h").write_text("#define N 4\n")
    capsys.readouterr()
    assert strip(root, "--check", "x") == 1
    out = capsys.readouterr().out
    assert "skeleton/x/constants.cu.h: would be created" in out
    assert "skeleton/x/data/notes.txt: would be removed" in out


def test_check_writes_nothing(make_repo):
    root = make_repo(REFERENCE)
    assert strip(root, "--check") == 1
    assert not (root / "skeleton").exists()


def test_strip_removes_skeleton_files_without_a_reference_counterpart(make_repo):
    root = make_repo(REFERENCE)
    write_files(root / "skeleton" / "x", {"stale.cu.h": "old\n", "data/old.txt": "old\n"})
    assert strip(root) == 0
    assert tree(root / "skeleton" / "x") == SKELETON


def test_an_up_to_date_skeleton_is_not_rewritten(make_repo, capsys):
    root = make_repo(REFERENCE)
    strip(root)
    skeleton_file = root / "skeleton" / "x" / "host.cu.h"
    before = skeleton_file.stat().st_mtime_ns
    capsys.readouterr()
    assert strip(root) == 0
    assert skeleton_file.stat().st_mtime_ns == before
    assert capsys.readouterr().out == "x: skeleton/x is up to date\n"


def test_strip_without_ids_processes_every_assignment(make_repo, capsys):
    make_repo(REFERENCE, assignment_id="a")
    root = make_repo(REFERENCE, assignment_id="b")
    assert strip(root) == 0
    assert tree(root / "skeleton" / "a") == tree(root / "skeleton" / "b") == SKELETON
    assert capsys.readouterr().out.count("regenerated") == 2


def test_a_malformed_marker_exits_2_with_path_and_line_on_stderr_and_writes_nothing(make_repo, capsys):
    root = make_repo({**REFERENCE, "host.cu.h": "int a;\n//END SOLUTION\n"})
    assert strip(root) == 2
    err = capsys.readouterr().err
    assert err.startswith(f"{root / 'reference' / 'x' / 'host.cu.h'}:2: error: malformed marker")
    assert not (root / "skeleton").exists()


def test_an_unknown_assignment_exits_2(make_repo, capsys):
    root = make_repo(REFERENCE)
    assert strip(root, "nope") == 2
    assert "no assignment 'nope'" in capsys.readouterr().err


@pytest.mark.skipif(not (REAL_ROOT / "reference" / "pbb").is_dir(), reason="reference/pbb does not exist yet")
def test_the_committed_pbb_skeleton_is_up_to_date(capsys):
    status = strip(REAL_ROOT, "--check", "pbb")
    assert status == 0, capsys.readouterr().out


def test_a_missing_reference_directory_exits_2(make_repo, capsys):
    root = make_repo({})
    assert strip(root) == 2
    assert "reference directory not found" in capsys.readouterr().err
