import shutil
from pathlib import Path

import pytest

from helpers import REAL_ROOT
from kernellab.cli import main
from kernellab.errors import InputError
from kernellab.known_wrong import find_wrong_versions, prepare_solution
from kernellab.manifest import load_assignment
from kernellab.markers import strip_tree
from kernellab.patches import apply_patch, parse_patch
from kernellab.scaffold import TEMPLATE_ID, TEMPLATE_ROOT, scaffold


def make_empty_root(directory: Path) -> Path:
    (directory / "assignments").mkdir(parents=True)
    (directory / "CMakeLists.txt").write_text("")
    return directory


def files_under(root: Path) -> set[str]:
    return {path.relative_to(root).as_posix() for path in root.rglob("*") if path.is_file()}


def assert_patches_apply(assignment_root: Path, assignment_id: str, work: Path) -> int:
    assignment = load_assignment(assignment_root, assignment_id)
    versions = find_wrong_versions(assignment, None)
    for _, patch_file in versions:
        prepare_solution(assignment.reference_dir, work)
        apply_patch(parse_patch(patch_file), work)
    return len(versions)


def test_new_scaffolds_the_starter_with_every_part_and_its_generated_skeleton(tmp_path: Path, capsys):
    root = make_empty_root(tmp_path / "repo")
    assert main(["--root", str(root), "new", "saxpy2"]) == 0
    assert files_under(root) >= {
        "assignments/saxpy2/assignment.toml",
        "assignments/saxpy2/CMakeLists.txt",
        "assignments/saxpy2/tests/test_saxpy.cu",
        "assignments/saxpy2/wrong/saxpy/factor-dropped.patch",
        "reference/saxpy2/kernels.cuh",
        "skeleton/saxpy2/kernels.cuh",
        "handout/saxpy2.md",
    }
    assignment = load_assignment(root, "saxpy2")
    assert (assignment.reference, assignment.skeleton) == ("reference/saxpy2", "skeleton/saxpy2")
    assert "kernellab_add_assignment_tests(saxpy2\n" in (root / "assignments/saxpy2/CMakeLists.txt").read_text()
    skeleton = strip_tree(assignment.reference_dir, assignment.task_ids)
    assert skeleton == {"kernels.cuh": (root / "skeleton/saxpy2/kernels.cuh").read_bytes()}
    assert "starter" not in "".join(path.read_text() for path in root.rglob("*") if path.is_file())
    assert assert_patches_apply(root, "saxpy2", tmp_path / "work") == 3
    assert "next: edit them, then `kernellab check saxpy2`" in capsys.readouterr().out


def test_every_field_of_the_starter_manifest_is_commented():
    manifest = (TEMPLATE_ROOT / "assignments" / TEMPLATE_ID / "assignment.toml").read_text()
    lines = manifest.splitlines()
    for index, line in enumerate(lines):
        if "=" in line and not line.startswith("#"):
            assert lines[index - 1].startswith("#"), f"field without a comment above it: {line}"


def test_new_from_an_assignment_copies_it_with_its_id_replaced(tmp_path: Path):
    root = tmp_path / "repo"
    for name in ("CMakeLists.txt", "assignments/pbb", "reference/pbb", "handout/pbb.md"):
        source, target = REAL_ROOT / name, root / name
        target.parent.mkdir(parents=True, exist_ok=True)
        shutil.copytree(source, target) if source.is_dir() else shutil.copy(source, target)
    created = scaffold(root, "scan2", "pbb")
    assert [path.relative_to(root).as_posix() for path in created] == [
        "assignments/scan2",
        "reference/scan2",
        "handout/scan2.md",
        "skeleton/scan2",
    ]
    copy = load_assignment(root, "scan2")
    assert copy.task_ids == load_assignment(REAL_ROOT, "pbb").task_ids
    cmake_lists = (root / "assignments/scan2/CMakeLists.txt").read_text()
    assert "kernellab_add_assignment_tests(scan2" in cmake_lists and "reference/scan2" in cmake_lists
    # Words of the id change, names that merely start with it do not.
    assert (root / "assignments/scan2/tests/scan2_testing.cuh").is_file()
    assert "scan2::mapAll" in (root / "assignments/scan2/tests/test_reduce_block.cu").read_text()
    for folder in ("reference", "skeleton"):
        copied, original = root / folder / "scan2" / "pbbKernels.cu.h", REAL_ROOT / folder / "pbb" / "pbbKernels.cu.h"
        assert copied.read_bytes() == original.read_bytes()
    patches = list((REAL_ROOT / "assignments" / "pbb" / "wrong").rglob("*.patch"))
    assert assert_patches_apply(root, "scan2", tmp_path / "work") == len(patches)


@pytest.mark.parametrize("bad_id", ["Pbb", "2x", "-dash", "a b", ""])
def test_an_id_that_is_no_identifier_is_refused(tmp_path: Path, bad_id: str):
    root = make_empty_root(tmp_path)
    with pytest.raises(InputError, match="not an assignment id"):
        scaffold(root, bad_id, None)
    assert files_under(root) == {"CMakeLists.txt"}


def test_a_copy_takes_no_dash_in_its_id_since_its_code_may_name_the_id(tmp_path: Path):
    root = make_empty_root(tmp_path)
    scaffold(root, "first", None)
    scaffold(root, "with-dash", None)
    before = files_under(root)
    with pytest.raises(InputError, match="not an id for a copy of 'first'"):
        scaffold(root, "copy-of-first", "first")
    assert files_under(root) == before


def test_new_refuses_an_existing_assignment_or_folder_and_changes_nothing(tmp_path: Path, capsys):
    root = make_empty_root(tmp_path)
    scaffold(root, "first", None)
    before = {name: (root / name).read_bytes() for name in files_under(root)}
    assert main(["--root", str(root), "new", "first"]) == 2
    assert "assignment 'first' exists already" in capsys.readouterr().err
    (root / "handout" / "second.md").write_text("mine\n")
    assert main(["--root", str(root), "new", "second"]) == 2
    assert "handout/second.md exists already; nothing was created" in capsys.readouterr().err
    assert {name: (root / name).read_bytes() for name in files_under(root)} == before | {"handout/second.md": b"mine\n"}


def test_new_from_an_unknown_assignment_is_an_input_error(tmp_path: Path, capsys):
    root = make_empty_root(tmp_path)
    assert main(["--root", str(root), "new", "x", "--from", "nope"]) == 2
    assert "no assignment 'nope'" in capsys.readouterr().err
    assert files_under(root) == {"CMakeLists.txt"}
