"""The compat fixtures' shapes (course_api/years.py) and reference/pmph-w2, which is the
2020-2023 shape written by the same generator."""

import sys
from pathlib import Path

import pytest

from helpers import REAL_ROOT
from kernellab import applicability
from kernellab.grading.isolation import splice
from kernellab.grading.isolation import stage as isolation
from kernellab.manifest import load_assignment

sys.path.insert(0, str(Path(__file__).parent / "course_api"))
from years import SHAPES, write_fixture  # noqa: E402


def test_reference_pmph_w2_is_the_generated_2020_shape(tmp_path):
    written = write_fixture(2020, tmp_path)
    reference = REAL_ROOT / "reference" / "pmph-w2"
    assert sorted(path.name for path in reference.iterdir()) == sorted(path.name for path in written.values())
    for path in written.values():
        assert (reference / path.name).read_text() == path.read_text(), (
            f"reference/pmph-w2/{path.name} is out of date: regenerate it with "
            "years.write_fixture(2020, Path('reference/pmph-w2')), then `kernellab strip pmph-w2`"
        )


@pytest.mark.parametrize("year", sorted(SHAPES))
def test_each_shape_has_the_declarations_of_its_course_year(year, tmp_path):
    files = {role: path.read_text() for role, path in write_fixture(year, tmp_path).items()}
    index = "uint32_t" if year == 2025 else "unsigned int"
    assert f"scanIncWarp(volatile typename OP::RedElTp* ptr, const {index} idx)" in files["kernels"]
    assert "apply(volatile MyInt4& a, volatile MyInt4& b)" in files["kernels"]
    assert "MyInt4(const volatile" not in files["kernels"]
    assert ("NUM_BLOCKS_SCAN" in files["constants"]) == (year != 2025)
    assert ("#ifndef ELEMS_PER_THREAD" in files["constants"]) == (year == 2025)
    assert ("ELEMS_PER_THREAD    12" in files["constants"]) == (year == 2020)
    assert ("closestMul32" in files["host"]) == (year == 2020)
    assert "uint32_t closestMul32(uint32_t x) {" in files["host"] or "uint32_t nextMul32(uint32_t x) {" in files["host"]
    assert "\nvoid log2UB(" in files["host"]  # not inline: a second translation unit would not link


@pytest.mark.parametrize("year", sorted(SHAPES))
def test_every_isolated_build_of_each_shape_keeps_the_students_chunk_choice(year, tmp_path):
    """Issue 25: the tests overrule a probe of the host wrappers only in builds that hold the
    student's own withChunk and ELEMS_PER_THREAD (applicability.in_builds). No task's folder of
    the course's shapes takes them from elsewhere: there the tests decide from the probe's code,
    and they skip the cases the probe marks (test_course_api.py), so nothing is overruled."""
    pbb = load_assignment(REAL_ROOT, "pbb")
    write_fixture(year, tmp_path / "solution")
    isolations = splice.isolated_solutions(pbb, tmp_path / "solution", pbb.reference_dir, tmp_path / "tasks")
    not_students = isolation.not_students(isolations)
    assert set(not_students) == {"copy", "scan_warp", "scan_block", "reduce_block", "scan_multi", "sgm_scan"}
    assert not_students["scan_multi"] == (*isolations["scan_multi"].from_reference, *isolations["scan_multi"].from_skeleton)
    assert all(not condition.not_students_in for condition in applicability.in_builds(applicability.CONDITIONS, not_students))
