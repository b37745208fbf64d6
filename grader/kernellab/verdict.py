"""The words every verb gives a test executable's run, a known-wrong version or a submission, and
the one decision from how a run ended to its verdict.

`grade` judges a run by its records, `test` and `wrong` by its JUnit report: both reduce what they
read to a `RunEnd`, and `decide` words it. The words are strings (StrEnum), so that reports and
JSON written before read the same.
"""

import re
import signal
from dataclasses import dataclass
from enum import StrEnum

# The exit status of a test executable that found no GPU and so ran no test; on the CPU backend,
# also of one whose cases failed beside a warning of warp-synchronous code (for CTest and `test`;
# a grade reads that from the run's end record).
NO_GPU_EXIT_CODE = 77


class Verdict(StrEnum):
    """What one test executable, or one known-wrong version, got."""

    PASSED = "passed"
    FAILED = "FAILED"
    NO_GPU = "not run: no GPU"
    # The CPU backend's verdict on warp-synchronous code a manifest only warns about: no points, no fail.
    NEEDS_GPU = "not run: needs a GPU to confirm"
    BUILD_FAILED = "build failed"
    TIMED_OUT = "timed out"
    # A crash's verdict names its signal: "crashed (SIGSEGV)"; see crashed().
    CRASHED = "crashed"
    # `wrong`: what the tests did to a known-wrong version.
    REJECTED = "rejected"
    NOT_REJECTED = "NOT rejected"
    PATCH_FAILED = "patch failed"


# Verdicts that give no verdict on the code: it could not run here.
NOT_RUN = (Verdict.NO_GPU, Verdict.NEEDS_GPU)

# What NEEDS_GPU means, with right and with wrong results, and beside what the run measured. The
# CPU backend keeps a warp's lanes in step at each application of the tests' operators only
# (kernellab/lockstep.hpp): code that needs lockstep elsewhere computes wrong values there.
LOCKSTEP_RIGHT = "warp-synchronous code: right on the CPU backend; only a GPU can confirm it"
LOCKSTEP_WRONG = ("warp-synchronous code: its results depend on a warp's lanes running in lockstep, and the CPU "
                  "backend keeps them in step only at each application of the tests' operators; only a GPU can "
                  "give this verdict. What the CPU backend's lanes computed:")
LOCKSTEP_MEASUREMENT = ("measured on the CPU backend, which keeps a warp's lanes in step only at each operator "
                        "application: a GPU gives the verdict")
# How the CPU backend's runtime prints each warp-synchronous race that it only warns of.
_LOCKSTEP_WARNING = re.compile(r": warning: (warp-synchronous race in .*)$", re.MULTILINE)


def lockstep_warning(output: str) -> str:
    """The first warp-synchronous race that a run's output warns of, or "" (`test`, which reads no
    records; a grade reads the run's end record). The student's process prints it: it can add a
    warning to the feedback, never a point."""
    found = _LOCKSTEP_WARNING.search(output)
    return found[1] if found else ""


class Status(StrEnum):
    """What became of one submission."""

    GRADED = "graded"
    # Intake refused the submission: 0 points, the student's to fix.
    REJECTED = "rejected"
    # Grading could not run: a problem of the grader's, never a zero.
    NOT_GRADED = "not graded"


# A submission with one of these has its grade; the others are graded again on the next run.
FINAL_STATUSES = (Status.GRADED, Status.REJECTED)


def signal_name(number: int) -> str:
    """'SIGSEGV' for signal 11; 'signal 99' for a number no signal has."""
    try:
        return signal.Signals(number).name
    except ValueError:
        return f"signal {number}"


def crashed(how: str) -> str:
    """The verdict on a run a signal ended, 'crashed (SIGSEGV)'."""
    return f"{Verdict.CRASHED} ({how})"


@dataclass(frozen=True)
class RunEnd:
    """How one run of a test executable ended, and what its results showed."""

    # None when it was stopped at its time limit; minus the signal's number when a signal ended it.
    exit_code: int | None
    timed_out: bool = False
    # A test case failed, or the results end early.
    failed: bool = False
    # Results of its own: records (grade), or failed test cases in its report (test, wrong).
    has_results: bool = False
    # The sandbox limit that stopped it ("memory", "processes"), if one did.
    limit_hit: str = ""
    # Whether the CPU backend warned of warp-synchronous code in a way that leaves the verdict to a
    # GPU: a grade's run whose end record says so, or whose records the judge found wrong beside
    # its warning; in `test` and `wrong` (no records), exit status NO_GPU_EXIT_CODE with results.
    needs_gpu: bool = False
    # Whether failed cases beside that warning are left to a GPU too: the CPU backend runs a warp's
    # lanes one after another between barriers, so code written for lanes in lockstep computes
    # wrong values there. Never where an exit status alone would waive a cost (a GPU grade's race
    # check): a failed case then counts.
    failures_left_to_gpu: bool = False


def decide(end: RunEnd) -> str:
    """The verdict on one run; a run passes only on exit status 0 with nothing failed."""
    if end.limit_hit:  # first: a fork bomb also runs out of time
        return Verdict.FAILED
    if end.timed_out:
        return Verdict.TIMED_OUT
    if end.exit_code == NO_GPU_EXIT_CODE and not end.has_results:
        return Verdict.NO_GPU
    if end.exit_code is not None and end.exit_code < 0:
        return crashed(signal_name(-end.exit_code))
    if end.needs_gpu and (not end.failed or end.failures_left_to_gpu):
        # Lockstep execution is what only a GPU can confirm (or refute).
        return Verdict.NEEDS_GPU
    if end.failed:
        return Verdict.FAILED
    if end.exit_code != 0:
        return Verdict.FAILED
    return Verdict.PASSED


def is_crash(verdict: str) -> bool:
    return verdict.startswith(f"{Verdict.CRASHED} (")
