"""The CPU backend's race check as a stage of a GPU grade (grading/race/check.py), on the adversarial
suite's fixture: a block reduction without its barrier, which a GPU's scheduling may hide, is found
by the thread orders; the reference is clean. Builds with CMake and the CPU backend."""

import shutil
from pathlib import Path

import pytest

from kernellab.grading.race.check import RaceCheckRun, check_races
from kernellab.manifest import load_assignment
from kernellab.verdict import Verdict
from test_adversarial import ASSIGNMENT, fixture_root

pytestmark = [
    pytest.mark.slow,
    pytest.mark.skipif(not all(shutil.which(tool) for tool in ("cmake", "ninja", "g++")), reason="needs cmake, ninja and g++"),
]

RACY = ("        __syncthreads();\n", "")


def test_a_reduction_without_its_barrier_is_a_race_and_the_reference_is_clean(tmp_path: Path):
    root = fixture_root(tmp_path / "root")
    assignment = load_assignment(root, ASSIGNMENT)
    racy = tmp_path / "racy"
    shutil.copytree(assignment.reference_dir, racy)
    source = (racy / "sum.cuh").read_text()
    assert RACY[0] in source
    (racy / "sum.cuh").write_text(source.replace(*RACY, 1))
    run = RaceCheckRun(assignment, tmp_path / "work", None, 7)
    clean = check_races(run, assignment.reference_dir, tmp_path / "clean", ["sum"])
    assert clean["sum"].verdict == Verdict.PASSED and clean["sum"].finding == ""
    # The second submission links the reference build's CPU runtime instead of compiling it.
    assert any(path.name == "libkernellab_cpu_runtime.a" for path in run.prebuilt())
    # Its job folder apart from the submission, as a grade's: the build's rewritten copies of the
    # tests are then no student's files.
    found = check_races(run, racy, tmp_path / "racy-job", ["sum"])
    assert "libkernellab_cpu_runtime.a" not in {path.name for path in (tmp_path / "racy-job" / "build").rglob("*.a")}
    assert found["sum"].verdict != Verdict.PASSED
    assert "race in kernel blockSums launched at" in found["sum"].finding, found["sum"].finding
