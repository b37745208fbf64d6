"""Read the failed test cases and the first failure message from a Catch2 JUnit report, even a cut-off one."""

import xml.etree.ElementTree as ElementTree
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

FAILURE_TAGS = ("failure", "error")
UNNAMED = "(unnamed test case)"


@dataclass(frozen=True)
class Failure:
    test_case: str
    # The lines Catch2 wrote for the failed assertion: the expression and its expansion or the
    # FAIL message, the captured inputs (`n := 40`), and `at file:line`.
    message: str


def failed_test_cases(report: Path) -> list[str]:
    """Names of the `<testcase>`s with a `<failure>` or `<error>`, in report order, without repeats.

    A crashed test run can leave the report missing, empty or truncated: the test cases that
    were written out completely before the cut are still read.
    """
    return list(dict.fromkeys(testcase.get("name", UNNAMED) for testcase in _failed_testcases(report)))


def first_failure(report: Path) -> Failure | None:
    """The first failed test case of the report and the message of its first failure or error."""
    for testcase in _failed_testcases(report):
        failure = next(child for child in testcase if child.tag in FAILURE_TAGS)
        return Failure(testcase.get("name", UNNAMED), failure_message(failure))
    return None


def failure_message(failure: ElementTree.Element) -> str:
    """The element's text without Catch2's `FAILED:` header, else its message attribute.

    Catch2 (v2 and v3) puts the expression in the `message` attribute, or leaves it out for
    FAIL and exceptions, and everything the student needs in the text.
    """
    lines = [line.rstrip() for line in (failure.text or "").strip("\n").splitlines()]
    if lines and lines[0].strip() == "FAILED:":
        lines = lines[1:]
    text = "\n".join(lines).strip("\n")
    return text or failure.get("message") or f"{failure.get('type', failure.tag)} failed"


def _failed_testcases(report: Path) -> Iterator[ElementTree.Element]:
    try:
        data = report.read_bytes()
    except FileNotFoundError:
        return
    parser = ElementTree.XMLPullParser(events=("end",))
    parser.feed(data)
    try:
        for _, element in parser.read_events():
            if element.tag == "testcase" and _has_failure(element):
                yield element
    except ElementTree.ParseError:
        pass  # the events before the malformed part have been read


def _has_failure(testcase: ElementTree.Element) -> bool:
    return any(child.tag in FAILURE_TAGS for child in testcase)
