"""The reference's speed per GPU model, which `kernellab calibrate` records in
assignments/<id>/speed/reference-speed.toml, and `kernellab test`'s preview of speed points from it.

A grade scores the student's time over the reference's, timing the reference itself in the same
run (timing.py). A student has no reference and gets none of its code, not even a binary: the
handout ships its speed instead. Not its microseconds but, per [[speed]] case and size, its time
over the copy kernel's (COPY_BASELINE, which every speed program has), both measured in one run.
The cases are bound by memory bandwidth, as the copy is, so the ratio carries over from the
instructor's card to a student's card of the same model that runs at other clocks, with other
memory, another power limit or temperature, or beside other work: the copy kernel timed in the
student's own run, times the ratio, predicts the reference's time on that card. Another model
would not carry it (another cache, another balance of compute and memory), so the entries are
per model, named as nvidia-smi names it. Standard library only: the handout runs this.
"""

import json
import math
import re
import tomllib
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path

from kernellab.errors import InputError, display_path
from kernellab.grading.model import SpeedResult
from kernellab.grading.speed.timing import COPY_BASELINE, points_per_size, speed_points
from kernellab.manifest import Assignment, SpeedCase
from kernellab.manifest_fields import ManifestError, check_fields, field_error

CALIBRATION_FILE = "reference-speed.toml"
# What the file says of itself, above its entries.
HEADER = """\
# The reference's speed per GPU model, for the preview of speed points that `kernellab test`
# prints, written by `kernellab calibrate`: per [[speed]] case and size, the reference's time
# over the copy kernel's, both measured in the same run. Times only, no code: it ships in the handout.
"""
# Digits of a ratio kept in the file: far finer than the noise of a timing.
RATIO_DIGITS = 4
NOT_CALIBRATED = "the calibration has no ratio for this case and size"
_SIZE = re.compile(r"[1-9][0-9]*")


@dataclass(frozen=True)
class Calibration:
    """One GPU model's entry: the reference's time over the copy kernel's per (case, size), and
    when, with which driver, CUDA and kernellab commit it was measured."""

    gpu: str
    measured: datetime
    driver: str
    cuda: str
    kernellab_commit: str
    reference_over_copy: dict[tuple[str, int], float]


class NoPreview(Exception):
    """Why no speed points can be previewed on this GPU, in one line."""


def calibration_path(assignment: Assignment) -> Path:
    return assignment.manifest_path.parent / "speed" / CALIBRATION_FILE


def read_calibrations(path: Path) -> dict[str, Calibration]:
    """The file's entries by GPU model; an InputError naming the file where it is not one that
    `kernellab calibrate` writes."""
    try:
        table = check_fields(tomllib.loads(path.read_text(encoding="utf-8")), "", {"gpu": dict}, {})
        return {gpu: _entry(gpu, fields) for gpu, fields in table["gpu"].items()}
    except (OSError, UnicodeDecodeError, tomllib.TOMLDecodeError) as error:
        raise InputError(f"not a speed calibration file: {error}", path) from None
    except ManifestError as error:
        error.path = path
        raise


def _entry(gpu: str, fields: object) -> Calibration:
    where = f"gpu.{_toml_string(gpu)}"
    if type(fields) is not dict:
        raise field_error(where, "expected a table")
    check_fields(fields, where, {"measured": datetime, "driver": str, "cuda": str, "kernellab_commit": str,
                                 "reference_over_copy": dict}, {})
    ratios = {}
    for case, sizes in fields["reference_over_copy"].items():
        at = f"{where}.reference_over_copy.{_toml_string(case)}"
        if type(sizes) is not dict:
            raise field_error(at, "expected a table of size = ratio")
        for size, ratio in sizes.items():
            if not _SIZE.fullmatch(size) or type(ratio) is not float or not 0 < ratio < math.inf:
                raise field_error(f"{at}.{size}", f"expected size = a positive ratio (16777216 = 1.25), got {ratio!r}")
            ratios[(case, int(size))] = ratio
    return Calibration(gpu, fields["measured"], fields["driver"], fields["cuda"], fields["kernellab_commit"], ratios)


def format_calibrations(calibrations: Mapping[str, Calibration]) -> str:
    """The file's text: HEADER, then each GPU model's entry, in the order of their names."""
    return HEADER + "".join(_format_entry(calibrations[gpu]) for gpu in sorted(calibrations))


def _format_entry(entry: Calibration) -> str:
    table = f"gpu.{_toml_string(entry.gpu)}"
    by_case: dict[str, list[str]] = {}
    for (case, size), ratio in sorted(entry.reference_over_copy.items()):
        by_case.setdefault(case, []).append(f"{size} = {round(ratio, RATIO_DIGITS)!r}")
    return "\n".join([
        "", f"[{table}]", f"measured = {entry.measured.isoformat()}", f"driver = {_toml_string(entry.driver)}",
        f"cuda = {_toml_string(entry.cuda)}", f"kernellab_commit = {_toml_string(entry.kernellab_commit)}",
        "", f"[{table}.reference_over_copy]",
        *(f"{_toml_string(case)} = {{ {', '.join(sizes)} }}" for case, sizes in by_case.items()),
    ]) + "\n"


def _toml_string(text: str) -> str:
    """`text` as a TOML basic string: JSON escapes a name's quotes, backslashes and control
    characters as TOML does."""
    return json.dumps(text, ensure_ascii=False)


def stale_entries(assignment: Assignment, calibrations: Mapping[str, Calibration]) -> list[str]:
    """Per GPU model, what its entry lacks of the manifest's [[speed]] cases and sizes, or has
    that the manifest no longer times: a preview of such a case would be wrong or empty."""
    timed = {(case.case, size) for case in assignment.speed for size in case.sizes}
    problems = []
    for gpu, entry in sorted(calibrations.items()):
        recorded = set(entry.reference_over_copy)
        problems += [f"{gpu} has no ratio for {case} at size {size}" for case, size in sorted(timed - recorded)]
        problems += [f"{gpu} has a ratio for {case} at size {size}, which the manifest does not time"
                     for case, size in sorted(recorded - timed)]
    return problems


def calibration_for(assignment: Assignment, gpu: str | None) -> Calibration:
    """The entry of `gpu` (this machine's model; None where nvidia-smi names none) in the
    assignment's calibration file: NoPreview saying why there is none, an InputError naming the
    file where it is malformed."""
    path = calibration_path(assignment)
    if not path.is_file():
        raise NoPreview(f"the assignment has no calibration of the reference's speed ({display_path(path)})")
    calibrations = read_calibrations(path)
    if gpu is None:
        raise NoPreview("nvidia-smi does not name this GPU")
    if gpu not in calibrations:
        has = ", ".join(sorted(calibrations)) or "none"
        raise NoPreview(f"{display_path(path)} has no calibration for {gpu} (it has: {has})")
    return calibrations[gpu]


def preview(cases: Sequence[SpeedCase], times: Mapping[tuple[str, int], float], calibration: Calibration
            ) -> list[SpeedResult]:
    """Each case at each size that `times` ((kernel, size) -> microseconds measured here, the copy
    kernel's too) has, scored as the grade scores it, with the reference's time predicted: the copy
    kernel's here times the calibration's ratio. A size the calibration lacks earns nothing here."""
    results = []
    for case in cases:
        for size in case.sizes:
            student_us, copy_us = times.get((case.case, size)), times.get((COPY_BASELINE, size))
            if student_us is None or copy_us is None:
                continue
            measured = dict(task=case.task, case=case.case, size=size, max_points=points_per_size(case),
                            student_us=student_us, copy_us=copy_us)
            ratio = calibration.reference_over_copy.get((case.case, size))
            if ratio is None:
                results.append(SpeedResult(points=0.0, problem=NOT_CALIBRATED, **measured))
                continue
            reference_us = copy_us * ratio
            results.append(SpeedResult(points=speed_points(case, student_us / reference_us), reference_us=reference_us,
                                       **measured))
    return results
