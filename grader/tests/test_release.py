import json
import re
import shutil
import stat
import tarfile
import zipfile
from pathlib import Path

import pytest

from helpers import REAL_ROOT, has_gpu, has_nvcc
from kernellab.bundle import BundleError, archive_members, audit, bundle_files, release, self_check, tasks_table, unpack
from kernellab.cli import main
from kernellab.grading.speed.calibration import CALIBRATION_FILE, calibration_path
from kernellab.manifest import load_assignment
from kernellab.release_check import kernel_backend
from kernellab.verdict import Verdict

PBB = load_assignment(REAL_ROOT, "pbb")


@pytest.fixture(scope="module")
def pbb_archives(tmp_path_factory) -> list[Path]:
    return release(PBB, tmp_path_factory.mktemp("release"))


def test_release_writes_a_tar_gz_and_a_zip_holding_the_same_files(pbb_archives: list[Path]):
    tar_gz, zip_file = pbb_archives
    assert (tar_gz.name, zip_file.name) == ("kernellab-pbb.tar.gz", "kernellab-pbb.zip")
    assert archive_members(tar_gz) == archive_members(zip_file)


def test_the_same_tree_gives_byte_identical_archives(pbb_archives: list[Path], tmp_path: Path):
    again = release(PBB, tmp_path)
    assert [path.read_bytes() for path in again] == [path.read_bytes() for path in pbb_archives]


def test_the_handout_holds_what_a_student_needs_and_nothing_of_the_instructor(pbb_archives: list[Path]):
    names = set(archive_members(pbb_archives[0]))
    top = "kernellab-pbb/"
    expected = [
        "CMakeLists.txt",
        "README.md",
        "kernellab",
        "assignments/pbb/assignment.toml",
        "assignments/pbb/tests/test_scan_block.cu",
        "skeleton/pbb/pbbKernels.cu.h",
        "grader/harness/CMakeLists.txt",
        "grader/kernellab/commands/test.py",
        "handout/pbb.md",
        "handout/pbb.html",
    ]
    assert {top + name for name in expected} <= names
    assert all(name.startswith(top) for name in names)
    assert not [name for name in names if "/reference/" in name or "/wrong/" in name]
    assert audit(archive_members(pbb_archives[0]), PBB) == []


def test_the_handout_readme_installs_what_its_builds_need_and_names_only_the_verb_its_script_has():
    readme = bundle_files(PBB)["README.md"].content.decode()
    packages = set(re.search(r"`apt-get install ([^`]+)`", readme)[1].split())
    # The handout holds the CPU backend (grader/cpu), whose fibers are Boost.Context's.
    assert {"cmake", "catch2", "ninja-build", "libboost-context-dev"} <= packages
    assert set(re.findall(r"kernellab (\w+)", readme)) == {"test"}, "the handout's script has `test` alone"


def test_the_skeleton_in_the_handout_is_the_generated_one(pbb_archives: list[Path]):
    members = archive_members(pbb_archives[0])
    for path in PBB.skeleton_dir.iterdir():
        assert members[f"kernellab-pbb/skeleton/pbb/{path.name}"] == path.read_bytes()


def test_modes_and_times_are_fixed_and_the_launcher_is_executable(pbb_archives: list[Path]):
    with tarfile.open(pbb_archives[0]) as archive:
        members = {member.name: member for member in archive.getmembers()}
    assert {member.mtime for member in members.values()} == {315532800}
    assert {member.uid for member in members.values()} == {0}
    assert members["kernellab-pbb/kernellab"].mode == 0o755
    assert members["kernellab-pbb/README.md"].mode == 0o644
    with zipfile.ZipFile(pbb_archives[1]) as archive:
        assert stat.S_IMODE(archive.getinfo("kernellab-pbb/kernellab").external_attr >> 16) == 0o755


def test_the_task_text_is_kept_as_markdown_and_rendered_to_html_with_the_points_table():
    files = bundle_files(PBB)
    markdown_text = files["handout/pbb.md"].content.decode()
    html = files["handout/pbb.html"].content.decode()
    assert markdown_text.startswith((REAL_ROOT / "handout" / "pbb.md").read_text())
    assert markdown_text.endswith(tasks_table(PBB))
    assert "<h2>Tasks and points</h2>" in html
    for task in PBB.tasks:
        points_cell = f'<td style="text-align: right;">{task.points}</td>'
        assert f"<td><code>{task.id}</code></td>\n<td>{task.title}</td>\n{points_cell}" in html
    assert "<strong>100</strong>" in html
    # The Markdown's own table is rendered as a table too, and its code blocks as code.
    assert "<td><code>scanIncBlock</code></td>" in html
    assert "<pre><code" in html


def test_the_audit_names_each_thing_that_must_stay_with_the_instructor():
    members = {
        "k/reference/pbb/pbbKernels.cu.h": b"",
        "k/assignments/pbb/wrong/copy/a.patch": b"",
        "k/assignments/pbb/tests/hidden/test_more.cu": b"",
        "k/grader/secrets.toml": b"",
        "k/assignments/pbb/questions.toml": b"",
        "k/skeleton/pbb/copied.cu.h": b"int x;\n    // BEGIN SOLUTION scan-warp\n",
        "k/skeleton/pbb/answers.toml": b"# BEGIN SOLUTION copy\r\n",
        "k/skeleton/pbb/fine.cu.h": b"// BEGIN SOLUTION <task-id> is how a marker reads\n",
    }
    assert audit(members, PBB) == [
        "k/assignments/pbb/questions.toml: the questions with their exact answers",
        "k/assignments/pbb/tests/hidden/test_more.cu: hidden tests",
        "k/assignments/pbb/wrong/copy/a.patch: known-wrong versions",
        "k/grader/secrets.toml: a file named like a secret",
        "k/reference/pbb/pbbKernels.cu.h: the reference solution",
        "k/skeleton/pbb/answers.toml: a solution marker: a reference file",
        "k/skeleton/pbb/copied.cu.h: a solution marker: a reference file",
    ]


def test_a_release_that_would_leak_the_reference_writes_nothing(make_repo, tmp_path: Path):
    reference = {
        "kernels.cu.h": "// BEGIN SOLUTION alpha\n// END SOLUTION\n// BEGIN SOLUTION beta\n// END SOLUTION\n",
        "host.cu.h": "",
    }
    root = make_repo(reference)
    (root / "handout").mkdir()
    (root / "handout" / "x.md").write_text("# x\n")
    # A careless instructor copies a reference file next to the public tests.
    tests = root / "assignments" / "x" / "tests"
    tests.mkdir()
    (tests / "kernels.cu.h").write_text(reference["kernels.cu.h"])
    out = tmp_path / "out"
    with pytest.raises(BundleError, match="assignments/x/tests/kernels.cu.h: a solution marker"):
        release(load_assignment(root, "x"), out)
    assert list(out.iterdir()) == []


def test_the_handout_ships_the_reference_s_speed_calibration_when_there_is_one(make_repo, tmp_path: Path):
    # Times of the reference, no code: `kernellab test` previews speed points from them.
    root = make_repo({"k.cu": "// BEGIN SOLUTION alpha\n// END SOLUTION\n// BEGIN SOLUTION beta\n// END SOLUTION\n"})
    (root / "handout").mkdir()
    (root / "handout" / "x.md").write_text("# x\n")
    assignment = load_assignment(root, "x")
    assert not [name for name in bundle_files(assignment) if name.endswith(CALIBRATION_FILE)]
    calibration = calibration_path(assignment)
    calibration.parent.mkdir()
    calibration.write_text('[gpu."NVIDIA H100 80GB HBM3"]\n')
    members = archive_members(release(assignment, tmp_path / "out")[0])
    assert members[f"kernellab-x/assignments/x/speed/{CALIBRATION_FILE}"] == calibration.read_bytes()


def test_release_needs_the_task_text(make_repo, tmp_path: Path, capsys):
    root = make_repo({"k.cu": "// BEGIN SOLUTION alpha\n// END SOLUTION\n// BEGIN SOLUTION beta\n// END SOLUTION\n"})
    assert main(["--root", str(root), "release", "x", "--out", str(tmp_path / "out")]) == 2
    assert "handout/x.md" in capsys.readouterr().err


# The real thing: a student unpacks the handout into an empty directory and runs its self-check.


@pytest.mark.slow
@pytest.mark.skipif(shutil.which("cmake") is None or not has_nvcc(), reason="needs nvcc and cmake")
def test_the_unpacked_handout_builds_and_its_self_check_fails_a_missing_stub(pbb_archives: list[Path], tmp_path: Path):
    unpack(pbb_archives[0], tmp_path)
    # One executable, of a task whose stub is missing: what proves the point, at CI's cost. Its
    # kernels run on the GPU, else on the CPU backend (the handout's own), else not at all; nvcc
    # builds for one architecture.
    task = next(task for task in PBB.tasks if task.id == "reduce-block")
    runs_kernels, backend, backend_args = kernel_backend("auto", tmp_path / "kernellab-pbb")
    architecture = "native" if has_gpu() else "75-real"
    cmake_args = backend_args or [f"-DCMAKE_CUDA_ARCHITECTURES={architecture}"]
    arguments = ["--tests", task.tests, *(f"--cmake-arg={argument}" for argument in cmake_args)]
    completed = self_check(tmp_path / "kernellab-pbb", arguments)
    results = json.loads((tmp_path / "kernellab-pbb" / "build" / "test-pbb" / "results.json").read_text())
    expected = (Verdict.FAILED if task.skeleton_fails else Verdict.PASSED) if runs_kernels else Verdict.NO_GPU
    verdicts = [(result["id"], result["verdict"]) for result in results]
    assert verdicts == [(task.id, expected)], f"{backend}\n{completed.stdout}"
    assert completed.returncode == (1 if expected == Verdict.FAILED else 0), completed.stdout + completed.stderr


def test_an_assignment_that_shares_another_s_tests_ships_them_where_its_build_looks():
    # pmph-w2 runs pbb's tests (build.tests): its handout holds them, and not pbb's manifest or
    # CMakeLists, which would make a second assignment of the handout.
    pmph_w2 = load_assignment(REAL_ROOT, "pmph-w2")
    assert pmph_w2.tests_dir == REAL_ROOT / "assignments" / "pbb" / "tests"
    files = bundle_files(pmph_w2)
    shared = {path for path in files if path.startswith("assignments/pbb/")}
    assert {"assignments/pbb/tests/test_copy.cu", "assignments/pbb/tests/probes.cmake"} <= shared
    assert all(path.startswith("assignments/pbb/tests/") for path in shared)
    assert PBB.tests_dir == REAL_ROOT / "assignments" / "pbb" / "tests"
