"""Property requirements: a task is graded on what it teaches, not only on its results (issue 15).

A task's manifest entry may require properties of the student's code (`[[tasks.requires]]`,
manifest.Requirement): the dependency depth of a warp scan, the memory sectors a warp's copy
touches, ... The tests measure them with instrumented element types and write each measurement
as a record of role "property" (harness `kernellab/property.hpp`), named "<function>: <property>"
and holding one int64. This module reads those records and decides, per requirement, whether the
student's code meets it: every measurement must lie within the bound, and a requirement that was
never measured is not met. The judgement is deterministic: counts, never timings.

The same measurements appear in a plain run's output as lines `kernellab property: <measured>,
required <bound>` (property.hpp prints them), which `measured_lines` summarizes for `kernellab test`.
"""

import re
import struct
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path

from kernellab.manifest import Requirement
from kernellab.records import Record, read_records

PROPERTY_ROLE = "property"
OUTPUT_PREFIX = "kernellab property: "

_OUTPUT_LINE = re.compile(
    r"^(?P<function>[A-Za-z_]\w*): (?P<property>[a-z][a-z0-9-]*) (?P<value>-?\d+), required (?P<bound>.+)$"
)
_BOUND = re.compile(r"^(?:at most (?P<most>-?\d+)|at least (?P<least>-?\d+)|exactly (?P<exactly>-?\d+)|"
                    r"from (?P<low>-?\d+) to (?P<high>-?\d+))$")


@dataclass(frozen=True)
class Measurement:
    function: str
    property: str
    value: int
    # The inputs of the measurement (KL_CAPTURE's), as the record names them.
    where: str


@dataclass(frozen=True)
class PropertyVerdict:
    requirement: Requirement
    met: bool
    # What the student reads: "scanIncWarp: depth 31, required at most 5 (block := 32, n := 64)".
    line: str


def measurements(records: Iterable[Record]) -> list[Measurement]:
    """The property records among `records`; a malformed one (a student's process wrote it) is skipped,
    which leaves its requirement unmeasured unless another record measures it."""
    found = []
    for record in records:
        if record.role != PROPERTY_ROLE or record.format != "int64" or record.count != 1 or len(record.payload) != 8:
            continue
        function, separator, name = record.check.partition(": ")
        if not separator:
            continue
        (value,) = struct.unpack("<q", record.payload)
        # The inputs name the measurement; the test case only where it names none.
        where = record.case or record.test
        found.append(Measurement(function, name, value, where))
    return found


def describe_bound(requirement: Requirement) -> str:
    """"at most 5", "at least 1", "exactly 1" or "from 1 to 4", as property.hpp writes it."""
    most, least = requirement.at_most, requirement.at_least
    if most is not None and least is not None:
        return f"exactly {most}" if most == least else f"from {least} to {most}"
    return f"at most {most}" if most is not None else f"at least {least}"


def within(requirement: Requirement, value: int) -> bool:
    return (requirement.at_most is None or value <= requirement.at_most) and (
        requirement.at_least is None or value >= requirement.at_least
    )


def judge_requirement(requirement: Requirement, found: Iterable[Measurement]) -> PropertyVerdict:
    """Met when the property was measured and every measurement lies within the bound; the line
    shows the worst measurement (the first one outside the bound, else the one nearest to it)."""
    mine = [m for m in found if (m.function, m.property) == (requirement.function, requirement.property)]
    label = f"{requirement.function}: {requirement.property}"
    bound = describe_bound(requirement)
    if not mine:
        return PropertyVerdict(requirement, False, f"{label} not measured (the run stopped before it?), required {bound}")
    outside = [m for m in mine if not within(requirement, m.value)]
    if outside:
        worst = outside[0]
        return PropertyVerdict(requirement, False, f"{label} {worst.value}, required {bound} ({worst.where})")
    nearest = max(mine, key=lambda m: m.value) if requirement.at_most is not None else min(mine, key=lambda m: m.value)
    return PropertyVerdict(requirement, True, f"{label} {nearest.value}, required {bound}")


def judge_requirements(requirements: Iterable[Requirement], records: Iterable[Record]) -> list[PropertyVerdict]:
    found = measurements(records)
    return [judge_requirement(requirement, found) for requirement in requirements]


def unmet_requirements(requirements: tuple[Requirement, ...], record_files: Iterable[Path]) -> tuple[str, ...]:
    """The lines of the requirements that the records of a task's runs (one file per test group) do
    not meet: grading gives such a task no points, like a finding. Nothing when no run left any
    record at all: the task's groups fail on their missing results already."""
    records = [record for path in record_files for record in read_records(path).records]
    if not requirements or not records:
        return ()
    return tuple(verdict.line for verdict in judge_requirements(requirements, records) if not verdict.met)


def measured_lines(output: str) -> list[str]:
    """One line per measured property in a plain run's output: the first measurement outside its
    bound, else the one nearest to it, in the order the properties first appear."""
    chosen: dict[str, tuple[bool, int, str]] = {}
    for raw in output.splitlines():
        text = raw.strip()
        if not text.startswith(OUTPUT_PREFIX):
            continue
        line = text[len(OUTPUT_PREFIX):]
        match = _OUTPUT_LINE.match(line)
        bound = _BOUND.match(match["bound"]) if match else None
        if match is None or bound is None:
            continue
        requirement = _requirement_of(match["function"], match["property"], bound)
        value = int(match["value"])
        key = f"{requirement.function}: {requirement.property}"
        failing = not within(requirement, value)
        # Nearness to the bound: larger is nearer (or past it) for at_most, smaller for at_least.
        nearness = value if requirement.at_most is not None else -value
        previous = chosen.get(key)
        if previous is None or (not previous[0] and (failing or nearness > previous[1])):
            chosen[key] = (failing, nearness, line)
    return [line for _, _, line in chosen.values()]


def _requirement_of(function: str, name: str, bound: re.Match) -> Requirement:
    if bound["exactly"] is not None:
        return Requirement(name, function, at_most=int(bound["exactly"]), at_least=int(bound["exactly"]))
    if bound["low"] is not None:
        return Requirement(name, function, at_most=int(bound["high"]), at_least=int(bound["low"]))
    if bound["most"] is not None:
        return Requirement(name, function, at_most=int(bound["most"]))
    return Requirement(name, function, at_least=int(bound["least"]))
