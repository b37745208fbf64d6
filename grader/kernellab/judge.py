"""The judge: decides pass or fail by comparing a student's records with the reference's.

It runs in the grader's own process and never loads student code. The reference build's records
give the expected results (the test's host models, computed with the reference's operators); the
student's records give what the student's kernels produced for the same inputs. Nothing the
student's process prints or returns can make a check pass: a missing record fails its check.

A student's build records device results only (its role is fixed when the grader builds it), once
per check, and its main closes the file with an end record. A file that breaks that was written by
something else than the harness (a static constructor, an atexit handler): every check of the run
fails, with what was found. A record for a check the reference did not make fails the run too.
"""

import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

import numpy as np

from kernellab.grading.model import TestCaseResult
from kernellab.records import Record, chunk_count

NO_EXPECTED_RESULTS = "the reference's records hold no expected result to compare with: grading must be rerun"
_FORMAT = re.compile(r"(?P<kind>int|uint|float)(?P<bits>8|16|32|64)(?:x(?P<lanes>[1-9][0-9]*))?")


@dataclass(frozen=True)
class CheckResult:
    test: str
    case: str
    check: str
    ordinal: int
    passed: bool
    message: str = ""


# The test name of the one failed result that a forged record file gets.
FORGED_RECORDS = "(the run's records)"
# Roles a test executable's run writes: the student's build records no expected results.
_OWN_ROLES = ("device", "property", "end")


def judge(expected: Sequence[Record], produced: Sequence[Record]) -> list[CheckResult]:
    """One result per check that the reference recorded an expected result for, in its order;
    a single failed result when `produced` is not what the harness of a student build writes."""
    if not any(want.role == "expected" for want in expected):
        # Nothing to compare is never a pass: the reference's records were lost or replaced (by
        # a run that could reach them) after the reference run was checked.
        return [CheckResult("(the reference's records)", "", "", 0, False, NO_EXPECTED_RESULTS)]
    if problem := forgery(expected, produced):
        return [CheckResult(FORGED_RECORDS, "", "", 0, False, f"forged records, not the harness's: {problem}")]
    devices = {record.key: record for record in produced if record.role == "device"}
    bounds = {record.key: record for record in expected if record.role == "bound"}
    results = []
    for want in expected:
        if want.role != "expected":
            continue
        got = devices.get(want.key)
        message = (
            "no result: the run stopped before this check (a crash, a CUDA error or the time limit)"
            if got is None
            else compare(got, want, bounds.get(want.key))
        )
        results.append(CheckResult(want.test, want.case, want.check, want.ordinal, message == "", message))
    return results


def own_results(records: Iterable[Record]) -> list[Record]:
    """What a run records of its own: a reference run's file less the expected results and
    bounds, for judging the reference against itself."""
    return [record for record in records if record.role in _OWN_ROLES]


def forgery(expected: Sequence[Record], produced: Sequence[Record]) -> str:
    """Why `produced` cannot be a student build's own records of the checks in `expected`, or ""."""
    # A device result for each check the reference expects one for; a measurement (properties.py)
    # for each the reference measured too.
    checks = {("device", want.key) for want in expected if want.role == "expected"}
    checks |= {("property", want.key) for want in expected if want.role == "property"}
    seen: set[tuple] = set()
    for index, record in enumerate(produced):
        where = f"{record.test} / {record.case} / {record.check} #{record.ordinal}"
        if record.role not in _OWN_ROLES:
            return f"a record of role {record.role!r} ({where}), which only the reference's build writes"
        if record.role == "end":
            if index != len(produced) - 1:
                return f"{len(produced) - 1 - index} record(s) after the end of the tests (written at exit?)"
            continue
        if (record.role, record.key) in seen:
            return f"two results for one check ({where})"
        seen.add((record.role, record.key))
        if (record.role, record.key) not in checks:
            return f"a result for a check the tests do not make ({where})"
    return ""


def by_test_case(results: Sequence[CheckResult]) -> list[TestCaseResult]:
    """The checks grouped by test case, in the order the test cases first appear."""
    grouped: dict[str, list[CheckResult]] = {}
    for result in results:
        grouped.setdefault(result.test, []).append(result)
    cases = []
    for name, checks in grouped.items():
        failures = [check for check in checks if not check.passed]
        first = ""
        if failures:
            failure = failures[0]
            first = f"{failure.case}: {failure.message}" if failure.case else failure.message
        cases.append(TestCaseResult(name, len(checks), len(failures), first))
    return cases


def compare(got: Record, want: Record, bound: Record | None) -> str:
    """Empty when `got` matches `want` (within `bound` if given); otherwise what differs and where."""
    if got.count != want.count:
        return f"device result has {got.count} elements, expected {want.count}"
    if bound is not None:
        return _compare_within_bound(got, want, bound)
    if got.element_size != want.element_size or got.whole != want.whole:
        return f"device result recorded as {got.format} ({got.element_size} bytes), expected {want.format}"
    if got.payload == want.payload:
        return ""
    if not got.whole:
        return _compare_chunks(got, want)
    rows_got = _rows(got)
    differs = np.nonzero((rows_got != _rows(want)).any(axis=1))[0]
    first = int(differs[0])
    return (
        f"first mismatch at index {first} ({where_is(first, want)}): device {show(got, first)}, "
        f"expected {show(want, first)}; {len(differs)} of {want.count} elements differ"
    )


def _compare_chunks(got: Record, want: Record) -> str:
    hashes_got = np.frombuffer(got.payload, dtype="<u8")
    differs = np.nonzero(hashes_got != np.frombuffer(want.payload, dtype="<u8"))[0]
    first_chunk = int(differs[0])
    first = first_chunk * want.chunk
    last = min(want.count, first + want.chunk)
    return (
        f"first mismatch among indexes {first} to {last - 1} (index {first}: {where_is(first, want)}); "
        f"{len(differs)} of {chunk_count(want)} chunks of {want.chunk} elements differ "
        "(large arrays are compared by chunk: run the public tests with `kernellab test` for exact values)"
    )


def _compare_within_bound(got: Record, want: Record, bound: Record) -> str:
    if not (got.whole and want.whole and bound.whole):
        return "a result compared within bounds must be recorded whole"
    values = _numbers(got)
    expected = _numbers(want)
    limits = _numbers(bound)
    if values is None or expected is None or limits is None or values.ndim != 1:
        return f"device result recorded as {got.format}, expected one number per element"
    with np.errstate(invalid="ignore"):
        # Written so that a NaN is out of bound too.
        outside = np.nonzero(~(np.abs(values.astype(np.float64) - expected) <= limits))[0]
    if len(outside) == 0:
        return ""
    first = int(outside[0])
    return (
        f"first element out of bound at index {first} ({where_is(first, want)}): device {values[first]!r}, "
        f"expected (float64) {expected[first]!r}, |difference| {abs(float(values[first]) - expected[first])!r} "
        f"> bound {limits[first]!r}; {len(outside)} of {want.count} elements out of bound"
    )


def where_is(index: int, record: Record) -> str:
    """'block 3, warp 5, lane 17 (thread 177)' for element `index`, as the harness's whereIs."""
    if record.block_size == 0 or record.elems_per_block == 0:
        return "thread chosen by the host wrapper"
    block, in_block = divmod(index, record.elems_per_block)
    per_pass = record.block_size * max(record.elems_per_thread, 1)
    thread = (in_block % per_pass) // max(record.elems_per_thread, 1)
    return f"block {block}, warp {thread // 32}, lane {thread % 32} (thread {thread})"


def show(record: Record, index: int) -> str:
    """Element `index` of a whole record, as its format says to read it."""
    numbers = _numbers(record)
    if numbers is None:
        start = index * record.element_size
        return "0x" + record.payload[start : start + record.element_size].hex()
    value = numbers[index]
    if numbers.ndim == 2:
        return "(" + ", ".join(repr(item) for item in value.tolist()) + ")"
    return repr(value.item())


def _numbers(record: Record) -> np.ndarray | None:
    """The whole record as numbers (one row per element for multi-lane formats), or None."""
    match = _FORMAT.fullmatch(record.format)
    if match is None:
        return None
    kind = {"int": "i", "uint": "u", "float": "f"}[match["kind"]]
    bits = int(match["bits"])
    lanes = int(match["lanes"] or 1)
    if (kind == "f" and bits not in (32, 64)) or bits // 8 * lanes != record.element_size:
        return None
    numbers = np.frombuffer(record.payload, dtype=f"<{kind}{bits // 8}")
    return numbers.reshape(record.count, lanes) if lanes > 1 else numbers


def _rows(record: Record) -> np.ndarray:
    return np.frombuffer(record.payload, dtype=np.uint8).reshape(record.count, record.element_size)
