"""Speed: time the student's cases against the reference's and the baselines on the same GPU.

The speed program (`<id>_speed`, harness kernellab/speed.hpp) is built twice, against the
student's files and against the reference. The grader runs the two alternately, ROUNDS times per
array size, each run timing every repetition with fresh inputs and a flushed L2, and takes the
median. The reference's runs also time the baselines (a copy kernel moving the same bytes, CUB).
A case earns speed points only if every timed output's digest equals the reference's for the
same input, and never when it claims more bandwidth than a copy of its bytes could have.
"""

import json
import math
import statistics
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from kernellab import runner
from kernellab.manifest import SpeedCase
from kernellab.sandbox import Sandbox, fresh_output, run_step

ROUNDS = 3
REPETITIONS = 15
RUN_TIMEOUT_S = 300
# Every speed program has this case: a copy kernel moving the same bytes, timed in the reference's
# runs with the cases' own baselines (manifest), bounds what any case can plausibly reach.
COPY_BASELINE = "copy"
# A case whose bandwidth beats the copy kernel's by more than this is not plausible (a reduction,
# which only reads, runs a few per cent above a copy's read-and-write bandwidth on an H100).
IMPLAUSIBLE_OVER_COPY = 1.25
# Speed points move in steps of this share of a case's points, so noise cannot move them often.
POINT_STEPS = 10
MAX_LINE_COUNT = 100_000


class SpeedError(Exception):
    """The reference's own speed runs failed: grading cannot score speed (not the student's fault)."""


@dataclass(frozen=True)
class SpeedResult:
    """One [[speed]] case at one size."""

    task: str
    case: str
    size: int
    points: float
    max_points: float
    student_us: float | None = None
    reference_us: float | None = None
    copy_us: float | None = None
    # The manifest's library baseline for this case (CUB's, say) and its time, for the feedback.
    baseline: str = ""
    baseline_us: float | None = None
    bytes: float = 0.0
    problem: str = ""

    @property
    def ratio(self) -> float | None:
        """The student's time over the reference's: 1.0 is as fast, 2.0 twice as slow."""
        if self.student_us is None or not self.reference_us:
            return None
        return self.student_us / self.reference_us

    def gbps(self, micros: float | None) -> float | None:
        return self.bytes / (micros * 1e3) if micros else None


@dataclass(frozen=True)
class _Timing:
    micros: dict[tuple[str, int], list[float]]  # (case, size) -> the median of each run
    digests: dict[tuple[str, int], dict[int, set[str]]]  # (case, size) -> repetition -> digests seen
    bytes: dict[tuple[str, int], float]
    problems: list[str]


def points_per_size(case: SpeedCase) -> float:
    """A [[speed]] entry's points are shared evenly by its sizes."""
    return case.points / len(case.sizes)


def speed_points(case: SpeedCase, ratio: float) -> float:
    """Full points at or below `full_at`, none at or above `zero_at`, a log scale between, in steps."""
    share = math.log(case.zero_at / ratio) / math.log(case.zero_at / case.full_at)
    share = min(1.0, max(0.0, share))
    return round(math.floor(share * POINT_STEPS + 1e-9) * points_per_size(case) / POINT_STEPS, 2)


def not_measured(case: SpeedCase, why: str) -> list[SpeedResult]:
    """The case's results at each size when it is not timed at all, with the reason."""
    return [SpeedResult(case.task, case.case, size, 0.0, points_per_size(case), problem=why) for size in case.sizes]


def measure(
    cases: Sequence[SpeedCase], student_program: Path, reference_program: Path, work: Path, seed: int,
    sandbox: Sandbox | None,
) -> list[SpeedResult]:
    """Each of `cases` at each of its sizes, timed and scored; both programs run in `sandbox`
    (when given), so that neither side's timing has a cost the other has not."""
    work.mkdir(parents=True, exist_ok=True)
    student = _Timing({}, {}, {}, [])
    reference = _Timing({}, {}, {}, [])
    sizes = sorted({size for case in cases for size in case.sizes})
    names = sorted({case.case for case in cases})
    for round_number in range(ROUNDS):
        # Alternate which side goes first, so a drift in clocks favours neither.
        baselines = sorted({COPY_BASELINE} | {case.baseline for case in cases if case.baseline})
        sides = [(reference_program, reference, [*names, *baselines]), (student_program, student, names)]
        for program, timing, run_names in sides if round_number % 2 == 0 else reversed(sides):
            out = work / f"{'reference' if timing is reference else 'student'}-{round_number}.jsonl"
            _run(program, run_names, sizes, seed, out, timing, sandbox)
    return [_score(case, size, student, reference) for case in cases for size in case.sizes]


def _run(
    program: Path, cases: Sequence[str], sizes: Sequence[int], seed: int, out: Path, timing: _Timing, sandbox: Sandbox | None
) -> None:
    fresh_output(out)
    outcome = runner.run_program(
        [str(program), "--cases", ",".join(cases), "--sizes", ",".join(map(str, sizes)),
         "--repetitions", str(REPETITIONS), "--seed", str(seed), "--out", str(out)],
        cwd=out.parent,
        timeout_s=RUN_TIMEOUT_S,
        sandbox=sandbox,
        step=run_step(program, [out], gpu=True),
    )
    if outcome.exit_code != 0:
        last = [line for line in outcome.output.splitlines() if line.strip()][-3:]
        state = "timed out" if outcome.timed_out else f"exited with status {outcome.exit_code}"
        timing.problems.append(f"a speed run {state}: " + " / ".join(last))
    per_run: dict[tuple[str, int], list[float]] = {}
    lines = out.read_text(encoding="utf-8", errors="replace").splitlines()[:MAX_LINE_COUNT] if out.is_file() else []
    for line in lines:
        try:
            row = json.loads(line)
            key = (str(row["case"]), int(row["size"]))
            micros, repetition, digest = float(row["host_us"]), int(row["repetition"]), str(row["digest"])
            timing.bytes[key] = float(row["bytes"])
        except (ValueError, KeyError, TypeError):
            continue
        if not (key[0] in cases and key[1] in sizes and micros > 0 and 0 <= repetition < REPETITIONS):
            continue
        per_run.setdefault(key, []).append(micros)
        timing.digests.setdefault(key, {}).setdefault(repetition, set()).add(digest)
    for key, times in per_run.items():
        timing.micros.setdefault(key, []).append(statistics.median(times))


def _score(case: SpeedCase, size: int, student: _Timing, reference: _Timing) -> SpeedResult:
    key = (case.case, size)
    base = dict(task=case.task, case=case.case, size=size, max_points=points_per_size(case), bytes=reference.bytes.get(key, 0.0))
    copy_us = _median(reference.micros.get((COPY_BASELINE, size)))
    base["baseline"] = case.baseline
    base["baseline_us"] = _median(reference.micros.get((case.baseline, size)))
    want = reference.digests.get(key, {})
    if len(reference.micros.get(key, [])) < ROUNDS or any(len(digests) != 1 for digests in want.values()):
        problem = "; ".join(reference.problems) or "the reference's timings are incomplete or inconsistent"
        raise SpeedError(f"the reference's speed run of {case.case} at size {size} failed: {problem}")
    reference_us = statistics.median(reference.micros[key])
    got = student.digests.get(key, {})
    student_runs = student.micros.get(key, [])
    if len(student_runs) < ROUNDS or len(got) < REPETITIONS:
        problem = "; ".join(student.problems) or "no timing for every repetition"
        return SpeedResult(points=0.0, reference_us=reference_us, copy_us=copy_us, problem=problem, **base)
    student_us = statistics.median(student_runs)
    wrong = sorted(repetition for repetition, digests in got.items() if digests != want.get(repetition))
    measured = dict(student_us=student_us, reference_us=reference_us, copy_us=copy_us)
    if wrong:
        problem = (
            f"the output of timed repetition {wrong[0]} differs from the reference's for the same input "
            f"({len(wrong)} of {REPETITIONS} wrong): results kept between calls, or a race that timing exposes?"
        )
        return SpeedResult(points=0.0, problem=problem, **measured, **base)
    copy_bytes = reference.bytes.get((COPY_BASELINE, size))
    if copy_us and copy_bytes and base["bytes"] / student_us > IMPLAUSIBLE_OVER_COPY * copy_bytes / copy_us:
        problem = "implausible: faster than a copy kernel moving the same bytes; a TA should look at this submission"
        return SpeedResult(points=0.0, problem=problem, **measured, **base)
    return SpeedResult(points=speed_points(case, student_us / reference_us), **measured, **base)


def _median(values: list[float] | None) -> float | None:
    return statistics.median(values) if values else None


def local_table(cases: Sequence[SpeedCase], program: Path, work: Path) -> list[tuple[str, int, str, float, float]]:
    """(case, size, kernel, microseconds, GB/s) of each case and its baselines, timed once on this
    machine's GPU: the student's own speed table (the grader's scores compare with the reference)."""
    work.mkdir(parents=True, exist_ok=True)
    timing = _Timing({}, {}, {}, [])
    names = sorted({case.case for case in cases})
    baselines = sorted({COPY_BASELINE} | {case.baseline for case in cases if case.baseline})
    _run(program, [*names, *baselines], sorted({size for case in cases for size in case.sizes}), 1,
         work / "speed.jsonl", timing)
    rows = []
    for case in cases:
        for size in case.sizes:
            for kernel in (case.case, case.baseline, COPY_BASELINE):
                micros = _median(timing.micros.get((kernel, size)))
                if kernel and micros:
                    rows.append((case.case, size, kernel, micros, timing.bytes[(kernel, size)] / (micros * 1e3)))
    if timing.problems:
        raise SpeedError("; ".join(timing.problems))
    return rows
