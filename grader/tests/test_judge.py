"""The record reader and the judge: what a student's records can and cannot make pass."""

import struct
from pathlib import Path

import numpy as np
import pytest

from kernellab.judge import FORGED_RECORDS, by_test_case, judge, own_results, where_is
from kernellab.records import read_records
from helpers import record_bytes


def write(path: Path, *records: bytes) -> Path:
    path.write_bytes(b"".join(records))
    return path


def judged(tmp_path: Path, expected: list[bytes], produced: list[bytes]):
    want = read_records(write(tmp_path / "expected.rec", *expected))
    got = read_records(write(tmp_path / "produced.rec", *produced))
    return judge(want.records, got.records)


EXPECTED = np.array([1, 3, 6, 10, 15], dtype="<i4")


def test_an_equal_result_passes(tmp_path):
    [result] = judged(tmp_path, [record_bytes(EXPECTED, "expected")], [record_bytes(EXPECTED, "device")])
    assert result.passed and result.message == ""


def test_a_mismatch_names_the_first_index_its_thread_and_both_values(tmp_path):
    wrong = EXPECTED.copy()
    wrong[2] = 7
    wrong[4] = 0
    [result] = judged(tmp_path, [record_bytes(EXPECTED, "expected")], [record_bytes(wrong, "device")])
    assert not result.passed
    assert result.message == (
        "first mismatch at index 2 (block 0, warp 0, lane 2 (thread 2)): device 7, expected 6; 2 of 5 elements differ"
    )


def test_a_missing_record_fails_its_check_whatever_the_process_said(tmp_path):
    [result] = judged(tmp_path, [record_bytes(EXPECTED, "expected")], [])
    assert not result.passed and result.message.startswith("no result")


def test_an_expected_record_in_a_students_run_fails_the_run(tmp_path):
    # A student's build never writes expected results: one in its file was written by other code
    # (KERNELLAB_RECORD_EXPECTED set by a static constructor, in the harness of old).
    [result] = judged(
        tmp_path,
        [record_bytes(EXPECTED, "expected")],
        [record_bytes(EXPECTED, "expected"), record_bytes(EXPECTED, "device")],
    )
    assert not result.passed and result.test == FORGED_RECORDS
    assert "of role 'expected'" in result.message


def end_record() -> bytes:
    return record_bytes(np.zeros(0, dtype="<u1"), "end", test="", case="", check="", fmt="bytes", layout=(0, 0, 1))


@pytest.mark.parametrize(
    ("produced", "found"),
    [
        # The last record per check used to count: a wrong result, then the right one appended at exit.
        ([record_bytes(EXPECTED * 0, "device"), record_bytes(EXPECTED, "device")], "two results for one check"),
        ([record_bytes(EXPECTED, "device"), end_record(), record_bytes(EXPECTED, "device", ordinal=1)],
         "1 record(s) after the end of the tests"),
        ([record_bytes(EXPECTED, "device"), end_record(), end_record()], "1 record(s) after the end of the tests"),
        ([record_bytes(EXPECTED, "device"), record_bytes(EXPECTED, "device", case="n := 7, block := 32")],
         "a result for a check the tests do not make (scanInc scans - Add<int> / n := 7, block := 32"),
        ([record_bytes(EXPECTED, "bound"), record_bytes(EXPECTED, "device")], "of role 'bound'"),
    ],
    ids=["duplicate", "after-the-end", "two-ends", "extra-check", "bound-role"],
)
def test_records_the_harness_never_writes_fail_every_check_of_the_run(tmp_path, produced, found):
    results = judged(tmp_path, [record_bytes(EXPECTED, "expected")], produced)
    [result] = results
    assert not result.passed and result.message.startswith("forged records, not the harness's: ")
    assert found in result.message, result.message
    [case] = by_test_case(results)
    assert case.name == FORGED_RECORDS and case.failed == 1


def test_a_run_closed_by_its_end_record_passes(tmp_path):
    [result] = judged(tmp_path, [record_bytes(EXPECTED, "expected")], [record_bytes(EXPECTED, "device"), end_record()])
    assert result.passed


def measurement(check: str = "scanIncWarp: depth") -> bytes:
    return record_bytes(np.array([5], dtype="<i8"), "property", check=check)


def test_a_measurement_the_reference_made_too_is_the_students_own(tmp_path):
    # Property records (properties.py) are the student's run's own, where the reference's run measured the same.
    [result] = judged(tmp_path, [record_bytes(EXPECTED, "expected"), measurement()],
                      [record_bytes(EXPECTED, "device"), measurement(), end_record()])
    assert result.passed


@pytest.mark.parametrize(
    ("produced", "found"),
    [
        ([record_bytes(EXPECTED, "device"), measurement(), measurement()], "two results for one check"),
        ([record_bytes(EXPECTED, "device"), measurement("scanIncWarp: work")], "a result for a check the tests do not make"),
    ],
    ids=["duplicate-measurement", "measurement-the-reference-never-made"],
)
def test_measurements_the_harness_never_writes_fail_the_run(tmp_path, produced, found):
    [result] = judged(tmp_path, [record_bytes(EXPECTED, "expected"), measurement()], produced)
    assert not result.passed and found in result.message, result.message


def test_the_reference_is_judged_on_its_own_results_only(tmp_path):
    recorded = read_records(
        write(tmp_path / "reference.rec", record_bytes(EXPECTED, "device"), record_bytes(EXPECTED, "expected"), end_record())
    )
    [result] = judge(recorded.records, own_results(recorded.records))
    assert result.passed


def test_a_result_of_the_wrong_length_fails(tmp_path):
    [result] = judged(tmp_path, [record_bytes(EXPECTED, "expected")], [record_bytes(EXPECTED[:4], "device")])
    assert result.message == "device result has 4 elements, expected 5"


def test_large_results_are_compared_by_chunk(tmp_path):
    expected = np.arange(10_000, dtype="<i4")
    wrong = expected.copy()
    wrong[5000] = -1
    [result] = judged(
        tmp_path,
        [record_bytes(expected, "expected", whole=False, layout=(256, 256, 1))],
        [record_bytes(wrong, "device", whole=False, layout=(256, 256, 1))],
    )
    assert result.message.startswith("first mismatch among indexes 4096 to 8191 (index 4096: block 16, warp 0, lane 0")
    assert "1 of 3 chunks of 4096 elements differ" in result.message


def test_multi_lane_elements_are_shown_as_tuples(tmp_path):
    expected = np.array([[1, 2, 3, 4], [5, 6, 7, 8]], dtype="<i4")
    wrong = expected.copy()
    wrong[1, 2] = 0
    [result] = judged(
        tmp_path,
        [record_bytes(expected, "expected", fmt="int32x4")],
        [record_bytes(wrong, "device", fmt="int32x4")],
    )
    assert "device (5, 6, 0, 8), expected (5, 6, 7, 8)" in result.message


def test_floats_within_their_bound_pass_and_outside_fail(tmp_path):
    expected = np.array([1.0, 2.0], dtype="<f8")
    bound = np.array([0.5, 0.5], dtype="<f8")
    close = np.array([1.25, 1.75], dtype="<f4")
    far = np.array([1.25, 2.75], dtype="<f4")
    want = [record_bytes(expected, "expected", fmt="float64"), record_bytes(bound, "bound", fmt="float64")]
    [inside] = judged(tmp_path, want, [record_bytes(close, "device", fmt="float32")])
    assert inside.passed
    [outside] = judged(tmp_path, want, [record_bytes(far, "device", fmt="float32")])
    assert outside.message.startswith("first element out of bound at index 1")
    nan = np.array([1.0, np.nan], dtype="<f4")
    [not_a_number] = judged(tmp_path, want, [record_bytes(nan, "device", fmt="float32")])
    assert not not_a_number.passed


def test_checks_are_matched_by_inputs_not_by_position(tmp_path):
    # The run crashed before the first case: the second case's record still meets its own.
    first = record_bytes(EXPECTED, "expected", case="n := 5, block := 32")
    second = record_bytes(EXPECTED * 2, "expected", case="n := 5, block := 64")
    results = judged(tmp_path, [first, second], [record_bytes(EXPECTED * 2, "device", case="n := 5, block := 64")])
    assert [result.passed for result in results] == [False, True]
    [case] = by_test_case(results)
    assert case.checks == 2 and case.failed == 1
    assert case.first_failure.startswith("n := 5, block := 32: no result")


@pytest.mark.parametrize(
    "damage",
    [
        lambda data: data[:-3],  # cut in the payload
        lambda data: data[:10],  # cut in the header
        lambda data: b"XXXX" + data[4:],  # not a record
        lambda data: data[:4] + struct.pack("<I", 1 << 30) + data[8:],  # a header length meant to exhaust memory
        lambda data: data.replace(b'"count": 5', b'"count": 9'),  # a payload that does not match its header
    ],
)
def test_a_damaged_record_file_keeps_the_records_before_the_damage(tmp_path, damage):
    good = record_bytes(EXPECTED, "device", case="first")
    bad = damage(record_bytes(EXPECTED, "device", case="second"))
    recorded = read_records(write(tmp_path / "damaged.rec", good, bad))
    assert [record.case for record in recorded.records] == ["first"]
    assert recorded.problem


def test_where_is_maps_an_index_to_its_block_warp_and_lane(tmp_path):
    [record] = read_records(write(tmp_path / "a.rec", record_bytes(EXPECTED, "device", layout=(64, 2 * 3 * 64, 3)))).records
    assert where_is(3 * 64 + 3 * 40 + 2, record) == "block 0, warp 1, lane 8 (thread 40)"
    [wrapper] = read_records(write(tmp_path / "b.rec", record_bytes(EXPECTED, "device", layout=(0, 0, 1)))).records
    assert where_is(3, wrapper) == "thread chosen by the host wrapper"


def test_reference_records_without_expected_results_fail_every_submission(tmp_path):
    # A run that could reach the reference's records might replace them with its own, which
    # hold device results only: nothing to compare must not read as nothing failed.
    device_only = record_bytes(EXPECTED, "device")
    [result] = judged(tmp_path, [device_only], [device_only])
    assert not result.passed and "hold no expected result" in result.message
    [case] = by_test_case([result])
    assert case.failed == 1
