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
    (condition,) = applicability.in_builds(
        [Condition("host_block_1024", (("saxpy", r"saxpy .*"),), r"block := 1024", "beyond the promise", ("withChunk",))],
        {"saxpy": ("scanInc", "withChunk")})
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
    values = np.arange(1, 6, dtype=np.int32)
    add, mssp = (dict(test=f"saxpy scales - {op}", case="n := 5, block := 32") for op in ("Add<int>", "Mssp"))
    condition = Condition("lifted_mssp", (("saxpy", r"saxpy .* - Mssp"),), "", "not liftable", ("Mssp",))
    expected = record_bytes(values, "expected", **add) + record_bytes(values, "expected", **mssp)
    end = record_bytes(values, "end", test="", case="", check="")
    produced = record_bytes(values, "device", **add) + record_bytes(values + 1, "device", **mssp) + end
    result = judge_stand_in(tmp_path / "told-apart", "cuda", expected, produced, 1, not_applicable=(condition,))
    assert result.verdict == Verdict.FAILED and PREFIX not in result.detail, result.detail
    # Where the tests skipped the cases too, the probe stands.
    skipped = record_bytes(values, "device", **add) + end
    result = judge_stand_in(tmp_path / "course", "cuda", expected, skipped, 0, not_applicable=(condition,))
    assert result.verdict == Verdict.PASSED and PREFIX in result.detail, result.detail


def test_a_host_wrapper_probe_is_overruled_only_by_the_tests_built_from_the_students_own_chunk_choice():
    # Issue 25: a header that fails only host_block_1024's probe (KERNELLAB_PROBE_BLOCK) marked
    # every scanInc case of 1024 threads "not applicable" and hid a bug there. The tests' trait
    # reads withChunk and ELEMS_PER_THREAD: where the executable's build holds the student's own,
    # the tests decide from the probe's code, and a case they ran contradicts it. An isolated build
    # that took withChunk from the reference may run cases the student's code does not promise.
    isolated = {"scan_multi": ("scanIncWarp", "scanIncBlock"), "reduce_block": ("scanInc", "withChunk")}
    lifted, block_1024 = applicability.in_builds((LIFTED, BLOCK_1024), isolated)
    assert lifted.not_students_in == frozenset() and block_1024.not_students_in == {"reduce_block"}
    scan = [Named("scanInc scans arrays of any size with any block size - Add<int>", "n := 1025, block := 1024, seed := 9025")]
    reduce = [Named("mapReduce reduces the whole array into element 0 - Mssp", "n := 1025, block := 1024, seed := 9025")]
    assert applicability.believed((lifted, block_1024), "scan_multi", scan) == (lifted,)
    assert applicability.believed((lifted, block_1024), "reduce_block", reduce) == (lifted, block_1024)
    # A condition the pipeline did not place in its builds is decided by the tests everywhere.
    assert applicability.believed((BLOCK_1024,), "reduce_block", reduce) == ()
    # A case of another block size, or another executable's, contradicts nothing.
    other = [Named("scanInc scans arrays of any size with any block size - Add<int>", "n := 1025, block := 512, seed := 9025")]
    assert applicability.believed((block_1024,), "scan_multi", other) == (block_1024,)
    assert applicability.believed((block_1024,), "sgm_scan", scan) == (block_1024,)
