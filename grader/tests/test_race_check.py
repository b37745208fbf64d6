"""The CPU backend's race check as a stage of a GPU grade (race_check.py), on the adversarial
suite's fixture: a block reduction without its barrier, which a GPU's scheduling may hide, is found
by the thread orders; the reference is clean. Builds with CMake and the CPU backend."""

import shutil
from pathlib import Path

import pytest

from kernellab.manifest import load_assignment
from kernellab.race_check import check_races
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
    work = tmp_path / "work"
    clean = check_races(assignment, assignment.reference_dir, work, None, 7, ["sum"])
    assert clean["sum"].verdict == Verdict.PASSED and clean["sum"].finding == ""
    found = check_races(assignment, racy, work, None, 7, ["sum"])
    assert found["sum"].verdict != Verdict.PASSED
    assert "race in" in found["sum"].finding, found["sum"].finding
