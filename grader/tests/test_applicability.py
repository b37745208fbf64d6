"""Applicability (kernellab/applicability.py): which conditions a build's probes left unmet, and
which of the reference's records that excludes."""

from dataclasses import dataclass
from pathlib import Path

import numpy as np

from helpers import judge_stand_in, record_bytes
from kernellab import applicability
from kernellab.applicability import CONDITIONS, PREFIX, Condition, probe_library, probe_target, unmet, without_not_applicable
from kernellab.verdict import Verdict

LIFTED = next(condition for condition in CONDITIONS if condition.probe == "lifted_mssp")
BLOCK_1024 = next(condition for condition in CONDITIONS if condition.probe == "host_block_1024")


@dataclass(frozen=True)
class Named:
    test: str
    case: str


def failed_line(target: str) -> str:
    return f"FAILED: assignments/pbb/CMakeFiles/{target}.dir/kernellab_cpu/pbb/{target}.cpp.o \n"


def built(build_dir: Path, condition) -> None:
    library = probe_library(build_dir, "pbb", condition)
    library.parent.mkdir(parents=True, exist_ok=True)
    library.write_bytes(b"!<arch>\n")


def test_a_probe_is_unmet_only_when_its_compile_failed_and_left_no_library(tmp_path):
    output = failed_line(probe_target("pbb", LIFTED)) + failed_line(probe_target("pbb", BLOCK_1024))
    built(tmp_path, BLOCK_1024)  # an earlier build's library: the failure of this one decides
    assert unmet(tmp_path, "pbb", output) == (LIFTED,)


def test_a_probe_that_was_not_built_excludes_nothing(tmp_path):
    assert unmet(tmp_path, "pbb", "") == ()
    # Text a submission's compile could print is no FAILED line of the build tool.
    forged = f"pbbKernels.cu.h:3: warning: #warning {failed_line(probe_target('pbb', LIFTED))}"
    assert unmet(tmp_path, "pbb", forged) == ()


def test_probe_targets_are_those_the_build_defines(tmp_path):
    targets = tmp_path / "assignments" / "pbb" / "CMakeFiles"
    (targets / "pbb_probe_lifted_mssp.dir").mkdir(parents=True)
    assert applicability.probe_targets(tmp_path, "pbb") == ["pbb_probe_lifted_mssp"]
    assert applicability.probe_targets(tmp_path, "reduce") == []


def test_lifted_mssp_excludes_the_segmented_scans_of_mssp_only():
    records = [
        Named("sgmScanIncWarp scans each warp's pairs, restarting at every flag - Mssp", "n := 33, block := 32"),
        Named("sgmScanIncBlock scans each block's pairs, restarting at every flag - Jitter<Mssp>", "n := 1, block := 64"),
        Named("sgmScanInc scans segmented arrays of any size with any block size - Add<int>", "n := 1, block := 32"),
        Named("sgmScanInc scans segmented arrays of any size with any block size - Mssp", "n := 1, block := 32"),
    ]
    kept, notes = without_not_applicable(records, "sgm_scan", (LIFTED,))
    assert kept == (records[2],)
    assert len(notes) == 3 and all(PREFIX + LIFTED.reason in note for note in notes)
    # The same names in another test executable are not covered.
    assert without_not_applicable(records, "scan_warp", (LIFTED,))[0] == tuple(records)


def test_a_block_size_condition_excludes_that_block_size_of_the_host_wrappers_only():
    scan = "scanInc scans arrays of any size with any block size - Add<int>"
    records = [
        Named(scan, "n := 1025, block := 1024, seed := 9025"),
        Named(scan, "n := 1025, block := 1024, seed := 9025"),  # a second check of the same case
        Named(scan, "n := 1024, block := 102, seed := 9024"),
        Named(scan, "n := 1023, block := 10240"),
        Named("mapReduce reduces the whole array into element 0 - Add<int>", "n := 1, block := 1024, seed := 7001"),
    ]
    kept, notes = without_not_applicable(records, "scan_multi", (BLOCK_1024,))
    assert kept == tuple(records[2:])
    assert notes == (f"{scan} (1 case): {PREFIX}{BLOCK_1024.reason}",)
    mssp = Named("mapReduce reduces the whole array into element 0 - Mssp", "n := 1, block := 1024, seed := 7001")
    commutative = Named("mapReduce reduces the whole array into element 0 - Add<int>", "n := 1, block := 1024")
    assert without_not_applicable([mssp, commutative], "reduce_block", (BLOCK_1024,))[0] == (commutative,)
    large = Named("scanInc scans the course's array size, past 2^26 elements", "n := 100003565, block := 1024, seed := 42")
    assert without_not_applicable([large], "scan_multi", (BLOCK_1024,))[0] == ()


def test_every_condition_has_a_probe_in_the_pbb_tests():
    probes = (Path(__file__).resolve().parents[2] / "assignments" / "pbb" / "tests" / "probes.cmake").read_text()
    for condition in CONDITIONS:
        if condition.probe.startswith("host_block_"):
            assert f" {condition.probe.removeprefix('host_block_')}" in probes, condition.probe
        else:
            assert f" {condition.probe} " in probes, condition.probe


def test_a_run_s_records_of_a_case_not_applicable_are_set_aside_not_taken_for_forged(tmp_path):
    # Seen on an H100 with the 2024 handout under pbb: reduce-block's isolated build held the
    # reference's chunk choice, so its tests ran mapReduce of Mssp in blocks of 1024, which the
    # handout's own code does not promise; the records of that case read as forged, and the
    # launch's failure as a race-check finding.
    values = np.arange(1, 6, dtype=np.int32)
    applicable = dict(test="saxpy scales - Add<int>", case="n := 5, block := 32")
    beyond = dict(test="saxpy scales - Add<int>", case="n := 5, block := 1024")
    condition = Condition("host_block_1024", (("saxpy", r"saxpy .*"),), r"block := 1024", "beyond the promise")
    expected = record_bytes(values, "expected", **applicable) + record_bytes(values, "expected", **beyond)
    produced = (record_bytes(values, "device", **applicable) + record_bytes(values + 1, "device", **beyond)
                + record_bytes(values, "end", test="", case="", check=""))
    result = judge_stand_in(tmp_path / "beyond", "cuda", expected, produced, 1, not_applicable=(condition,))
    assert result.verdict == Verdict.PASSED, result.detail
    assert f"saxpy scales - Add<int> (1 case): {PREFIX}beyond the promise" in result.detail
    # The applicable case still counts.
    wrong = record_bytes(values + 1, "device", **applicable) + record_bytes(values, "end", test="", case="", check="")
    assert judge_stand_in(tmp_path / "wrong", "cuda", expected, wrong, 1, not_applicable=(condition,)).verdict == Verdict.FAILED


def test_a_probe_the_tests_contradict_is_not_believed(tmp_path):
    # Issue 25: a submission that makes only the probe's translation unit fail (told apart by its
    # include depth) dropped every Mssp case of sgm-scan and hid an operand-order bug. The tests
    # decide the same question from the same operators: a case they ran is applicable.
    assert LIFTED.decided_by_tests and not BLOCK_1024.decided_by_tests
    values = np.arange(1, 6, dtype=np.int32)
    add, mssp = (dict(test=f"saxpy scales - {op}", case="n := 5, block := 32") for op in ("Add<int>", "Mssp"))
    condition = Condition("lifted_mssp", (("saxpy", r"saxpy .* - Mssp"),), "", "not liftable", decided_by_tests=True)
    expected = record_bytes(values, "expected", **add) + record_bytes(values, "expected", **mssp)
    end = record_bytes(values, "end", test="", case="", check="")
    produced = record_bytes(values, "device", **add) + record_bytes(values + 1, "device", **mssp) + end
    result = judge_stand_in(tmp_path / "told-apart", "cuda", expected, produced, 1, not_applicable=(condition,))
    assert result.verdict == Verdict.FAILED and PREFIX not in result.detail, result.detail
    # Where the tests skipped the cases too, the probe stands.
    skipped = record_bytes(values, "device", **add) + end
    result = judge_stand_in(tmp_path / "course", "cuda", expected, skipped, 0, not_applicable=(condition,))
    assert result.verdict == Verdict.PASSED and PREFIX in result.detail, result.detail
