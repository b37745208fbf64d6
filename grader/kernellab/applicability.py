"""Applicability: the test cases a submission's own code does not promise to support.

The PMPH course's code promises less than kernellab's: its Mssp cannot be lifted to flag-value
pairs (LiftOP<Mssp> does not compile: the course's segmented scan is for Add only), and its host
wrappers ask for ELEMS_PER_THREAD words of shared memory per thread, so with large blocks a launch
needs more than the 48 KB it gets by default. Such cases are "not applicable to this submission":
neither run nor failed, and said so with the reason.

What is applicable is decided at compile time, from the submission's code, never by what its test
runs report: the grading build compiles a probe per condition (assignments/pbb/tests/probe_*.cu,
target `<id>_probe_<name>`) from the submission's headers, and a probe that compiled says
"applicable". A probe is only "not met" when its build failed: its library is missing and the
build log names its failed compile, so a probe that was not built excludes nothing. The tests
skip the same cases with the same compile-time traits (pbb_applicability.cuh); the judge leaves
the reference's records of excluded cases out (`without_not_applicable`). A run can only overrule
a probe, never exclude a case: where a test executable's build holds the student's own
definitions of what the trait reads, a case the run recorded is one its tests found applicable,
and a probe that failed there was told apart from the tests (`believed`).
"""

import re
from collections.abc import Collection, Iterable, Mapping, Sequence
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Protocol, TypeVar

PREFIX = "not applicable to this submission: "
# The block sizes the host-wrapper probes cover (probes.cmake): every size the tests use.
PROBED_BLOCK_SIZES = (32, 64, 128, 256, 512, 1024)


@dataclass(frozen=True)
class Condition:
    """A promise of the submission's code, the probe that checks it, and the cases that need it."""

    probe: str
    # Per test executable (the manifest's `tests` name): the names of the Catch2 test cases that
    # need the promise (a full match).
    test_cases: tuple[tuple[str, str], ...]
    # The captured inputs of those cases that need it (a search in the record's case; "" for all).
    case: str
    reason: str
    # The definitions the tests' own trait reads to decide the same question. In a test
    # executable whose build holds the student's own of each (the whole submission's, or a task's
    # isolated folder that took none of them from the reference or the skeleton), the tests decide
    # it from the probe's code: a case the run recorded is one they found applicable, and a probe
    # that says otherwise was told apart from them (its include depth, its file): not believed.
    reads: tuple[str, ...]
    # The test executables whose build took one of `reads` from the reference or the skeleton
    # (`in_builds`): their tests may run a case the submission's own code does not promise (the
    # reference's chunk choice beside the course's host wrappers), so their records overrule nothing.
    not_students_in: frozenset[str] = frozenset()

    def covers(self, tests: str, test_case: str, case: str) -> bool:
        return any(
            executable == tests and re.fullmatch(pattern, test_case) for executable, pattern in self.test_cases
        ) and (not self.case or re.search(self.case, case) is not None)

    def note(self) -> str:
        return PREFIX + self.reason


_LIFTED_MSSP = Condition(
    probe="lifted_mssp",
    test_cases=(
        ("sgm_scan", r".* - (Mssp|Jitter<Mssp>)"),
        ("operators", r"LiftOP of each operator is associative - Mssp"),
    ),
    case="",
    reason=(
        "LiftOP<Mssp> does not compile with this submission's Mssp (its apply and equals take non-const "
        "references, as in the course's code), so its segmented scan is for Add only: the segmented scans "
        "of Mssp are not tested"
    ),
    reads=("Mssp",),
)


def _host_block(block: int) -> Condition:
    return Condition(
        probe=f"host_block_{block}",
        test_cases=(
            ("reduce_block", r"mapReduce .* - Mssp"),  # a non-commutative operator: the chunked redAssocKernel
            ("scan_multi", r"scanInc .*"),
            ("sgm_scan", r"sgmScanInc scans .*"),
        ),
        case=rf"(^|, )block := {block}(,|$)",
        reason=(
            f"blocks of {block} threads: this submission's host wrappers (mapReduce of Mssp, scanInc, sgmScanInc) "
            f"ask for ELEMS_PER_THREAD 4-byte words of shared memory per thread, more than the 48 KB a launch "
            f"gets without opting in"
        ),
        reads=("withChunk", "ELEMS_PER_THREAD"),  # ChoosesChunkPerBlock, courseChunkBytes
    )


CONDITIONS = (_LIFTED_MSSP, *(_host_block(block) for block in PROBED_BLOCK_SIZES))


class _Named(Protocol):
    test: str
    case: str


NamedRecord = TypeVar("NamedRecord", bound=_Named)


def probe_target(assignment_id: str, condition: Condition) -> str:
    return f"{assignment_id}_probe_{condition.probe}"


def probe_targets(build_dir: Path, assignment_id: str) -> list[str]:
    """The probe targets the configured `build_dir` defines for the assignment: build them with the
    tests (none for an assignment without probes)."""
    targets_dir = build_dir / "assignments" / assignment_id / "CMakeFiles"
    return [
        probe_target(assignment_id, condition)
        for condition in CONDITIONS
        if (targets_dir / f"{probe_target(assignment_id, condition)}.dir").is_dir()
    ]


def probe_library(build_dir: Path, assignment_id: str, condition: Condition) -> Path:
    """What a probe that compiled leaves (kernellab_add_applicability_probe)."""
    return build_dir / "assignments" / assignment_id / "probes" / f"lib{condition.probe}.a"


def unmet(build_dir: Path, assignment_id: str, build_output: str) -> tuple[Condition, ...]:
    """The conditions whose probe failed to compile in the build that printed `build_output`.
    A probe counts as failed only when its library is missing and the build names its failed
    compile: one that was not built, or whose build was stopped, excludes nothing."""
    failed_targets = set(re.findall(r"^FAILED: .*?/CMakeFiles/([^/\s]+)\.dir/", build_output, re.MULTILINE))
    return tuple(
        condition
        for condition in CONDITIONS
        if probe_target(assignment_id, condition) in failed_targets
        and not probe_library(build_dir, assignment_id, condition).exists()
    )


def covering(conditions: Iterable[Condition], tests: str, test_case: str, case: str) -> Condition | None:
    """The first of `conditions` that the case needs, or None when it is applicable."""
    return next((condition for condition in conditions if condition.covers(tests, test_case, case)), None)


def without_not_applicable(
    records: Sequence[NamedRecord], tests: str, conditions: Sequence[Condition]
) -> tuple[tuple[NamedRecord, ...], tuple[str, ...]]:
    """The records of the applicable cases of test executable `tests`, and one line per test case
    with excluded cases: '<test case> (<how many> cases): not applicable to this submission: why'.
    Filter the reference's expected records with it before judging a submission's."""
    kept: list[NamedRecord] = []
    excluded: dict[tuple[str, Condition], set[str]] = {}
    for record in records:
        condition = covering(conditions, tests, record.test, record.case)
        if condition is None:
            kept.append(record)
        else:
            excluded.setdefault((record.test, condition), set()).add(record.case)
    notes = tuple(
        f"{test_case} ({len(cases)} case{'s' if len(cases) != 1 else ''}): {condition.note()}"
        for (test_case, condition), cases in excluded.items()
    )
    return tuple(kept), notes


def in_builds(conditions: Sequence[Condition], not_students: Mapping[str, Collection[str]]) -> tuple[Condition, ...]:
    """`conditions`, each knowing the test executables whose build took a definition its tests'
    trait reads from elsewhere (`not_students`: per test executable, the names its build took from
    the reference or the skeleton; one not named there is built from the student's code alone)."""
    return tuple(
        replace(condition, not_students_in=frozenset(
            tests for tests, names in not_students.items() if set(condition.reads) & set(names)))
        for condition in conditions
    )


def believed(conditions: Sequence[Condition], tests: str, produced: Iterable[_Named]) -> tuple[Condition, ...]:
    """The unmet `conditions` that the run of test executable `tests` does not contradict: where
    its build holds the student's own definitions of what a condition's trait reads, a record of a
    case the condition covers contradicts it (the tests, deciding from the same code, ran it)."""
    produced = list(produced)
    return tuple(condition for condition in conditions
                 if tests in condition.not_students_in
                 or not any(condition.covers(tests, r.test, r.case) for r in produced))


def describe(conditions: Sequence[Condition]) -> list[str]:
    """One line per unmet condition, for `kernellab test` and the feedback."""
    return [condition.note() for condition in conditions]
