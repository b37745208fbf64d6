"""Speed: time the student's cases against the reference's and the baselines on the same GPU.

The speed program (`<id>_speed`, harness kernellab/speed.hpp) is built twice, against the
student's files and against the reference (only the reference's build has the baselines: a copy
kernel moving the same bytes, CUB). The grader has each serve ROUNDS passes over the cases (and up
to EXTRA_ROUNDS more for a case short of its full points), and times every repetition with its own
clock (clock.py): the program only obeys, and a repetition's input comes from a seed drawn from the
grading run's secret seed and sent when the clock starts.
A case's time is the least over passes of each pass's least repetition, less the least overhead
for the same case (the same repetition without the call: input fill, digest, the pipes): the
reference's own, and for the student the less of its own and the reference's. Under load a whole
pass's windows can lengthen together (on an H200 beside 24 busy threads, by 50 to 100 us for one
pass of three); subtracting only the reference's overhead then made an honest student's pass that was
spared "faster than a copy kernel". A student's overhead may be forged longer (its process runs
the harness), never shorter than the work it skips, so the less of the two never favours it.
The least, not the median: what disturbs a window (another grade's build taking the clock's core,
a late wake-up) only ever adds time, while no window can be shorter than its work, since the input
exists only once the clock runs and the clock stops only on the output's digest. On an H100 the
median of such windows moved a 60-microsecond kernel by up to 80% between runs of one batch.
A case earns speed points only if every timed output's digest equals the reference's for the
same seed, and never when it claims more bandwidth than a copy of its bytes could have.

Every reference window that a grade's score uses is timed in that grade's own speed stage, its
passes on both sides of the student's, so that the reference's overhead that bounds the student's
comes from the same minutes. A batch's grades once shared the reference's rounds (each grade timed
one anew and took two from the grades before it, saving two reference runs of 1.6 s on an H100):
a grade's windows were then set against overheads timed while the host was in another state, and
a host that got busy between two grades cost the second its speed points (test_speed_clock).
"""

import hashlib
import math
from collections.abc import Mapping, Sequence
from contextlib import ExitStack
from dataclasses import dataclass
from pathlib import Path

from kernellab.grading.model import SpeedResult
from kernellab.grading.speed.clock import OVERHEAD, TIME, Served, SpeedProgram
from kernellab.manifest import SpeedCase
from kernellab.sandbox.bubblewrap import Sandbox

ROUNDS = 3
# Rounds more, for the cases that have not earned their full points after ROUNDS: noise only ever
# lengthens a window, so a round more can only bring a time nearer its work, never below it. (The
# adversarial fixture's reference, graded alone on an H200, lost 10 of its 20 speed points to its
# own three runs against itself.) An honestly slow case costs these rounds and keeps its points.
EXTRA_ROUNDS = 2
# Per case and pass. Under load the least of 15 windows did not always reach the undisturbed time
# (H100, 24 busy threads on 16 cores); a window costs a fill, the call and a digest.
REPETITIONS = 30
# Per pass of a program over its cases.
RUN_TIMEOUT_S = 300
# Every speed program has this case: a copy kernel moving the same bytes, timed in the reference's
# runs with the cases' own baselines (manifest), bounds what any case can plausibly reach.
COPY_BASELINE = "copy"
# A case whose bandwidth beats the copy kernel's by more than this is not plausible (a reduction,
# which only reads, runs a few per cent above a copy's read-and-write bandwidth on an H100).
IMPLAUSIBLE_OVER_COPY = 1.25
# Speed points move in steps of this share of a case's points, so noise cannot move them often.
POINT_STEPS = 10
# A time at or below the overhead is no time at all: this many microseconds stand for it, which
# the copy-bandwidth check then flags.
LEAST_MICROS = 1e-3


class SpeedError(Exception):
    """The reference's own speed runs failed: grading cannot score speed (not the student's fault)."""


@dataclass
class _Timing:
    micros: dict[tuple[str, int], list[float]]  # (case, size) -> each pass's least time
    overhead: dict[tuple[str, int], list[float]]  # (case, size) -> each pass's least overhead
    digests: dict[tuple[str, int], dict[int, str]]  # (case, size) -> seed -> digest
    bytes: dict[tuple[str, int], float]
    problems: list[str]

    @classmethod
    def empty(cls) -> "_Timing":
        return cls({}, {}, {}, {}, [])

    def add(self, served: Served) -> None:
        if served.problem:
            self.problems.append(served.problem)
        self.bytes |= served.bytes
        for kind, into in ((TIME, self.micros), (OVERHEAD, self.overhead)):
            per_case: dict[tuple[str, int], list[float]] = {}
            for repetition in served.repetitions:
                if repetition.kind == kind:
                    per_case.setdefault((repetition.case, repetition.size), []).append(repetition.micros)
            for key, times in per_case.items():
                into.setdefault(key, []).append(min(times))
        for repetition in served.repetitions:
            if repetition.kind == TIME:
                self.digests.setdefault((repetition.case, repetition.size), {})[repetition.seed] = repetition.digest

    def least_pass_net(self, key: tuple[str, int]) -> float | None:
        """The least over passes of each pass's least time less the same pass's least overhead."""
        nets = [micros - overhead for micros, overhead in zip(self.micros.get(key, []), self.overhead.get(key, []))]
        return max(min(nets), LEAST_MICROS) if nets else None

    def net_micros(self, key: tuple[str, int], overhead: float | None) -> float | None:
        """The least over passes less `overhead`; None without a pass."""
        measured = _least(self.micros.get(key))
        if measured is None or overhead is None:
            return None
        return max(measured - overhead, LEAST_MICROS)

    def own_net_micros(self, key: tuple[str, int]) -> float | None:
        """The least over passes less the least overhead of the same case; None without a pass."""
        return self.net_micros(key, _least(self.overhead.get(key)))


def repetition_seed(run_seed: int, round_number: int, case: str, size: int, repetition: int) -> int:
    """The seed of one repetition's input: secret with the run's seed, new for every repetition."""
    text = f"{run_seed}/{round_number}/{case}/{size}/{repetition}".encode()
    return int.from_bytes(hashlib.sha256(text).digest()[:8], "little") >> 1


def _orders(run_seed: int, round_number: int):
    """What the grader asks of a pass in one round: each repetition timed, and its overhead (the
    same seed without the call), interleaved."""
    def orders(case: str, size: int) -> list[tuple[str, int]]:
        seeds = [repetition_seed(run_seed, round_number, case, size, repetition) for repetition in range(REPETITIONS)]
        return [(kind, seed) for seed in seeds for kind in (TIME, OVERHEAD)]
    return orders


def points_per_size(case: SpeedCase) -> float:
    """A [[speed]] entry's points are shared evenly by its sizes."""
    return case.points / len(case.sizes)


def speed_points(case: SpeedCase, ratio: float) -> float:
    """Full points at or below `full_at`, none at or above `zero_at`, the case's scale between
    ("log": a log scale from full to none; "inverse": the share 1/ratio), in steps."""
    if ratio <= case.full_at:
        share = 1.0
    elif ratio >= case.zero_at:
        share = 0.0
    elif case.scale == "inverse":
        share = 1.0 / ratio
    else:
        share = math.log(case.zero_at / ratio) / math.log(case.zero_at / case.full_at)
    share = min(1.0, max(0.0, share))
    return round(math.floor(share * POINT_STEPS + 1e-9) * points_per_size(case) / POINT_STEPS, 2)


def not_measured(case: SpeedCase, why: str) -> list[SpeedResult]:
    """The case's results at each size when it is not timed at all, with the reason."""
    return [SpeedResult(case.task, case.case, size, 0.0, points_per_size(case), problem=why) for size in case.sizes]


def measure(
    cases: Sequence[SpeedCase], student_programs: Mapping[str, Path], reference_program: Path, work: Path, seed: int,
    sandbox: Sandbox | None,
) -> list[SpeedResult]:
    """Each of `cases` at each of its sizes, timed and scored; both sides run in `sandbox` (when
    given), so that neither side's timing has a cost the other has not. `student_programs`: per
    case name, the student's program that times it (a task judged on its own functions has its own).

    The reference's program serves all its passes in one run. The student's programs are started
    together after its first pass, serve ROUNDS passes each, and have ended before its other
    passes: no student code is alive while the reference is timed (a program that waits for its
    next pass could keep a kernel running meanwhile), and the reference's windows lie on both
    sides of the student's, so that a drift in clocks favours neither."""
    work.mkdir(parents=True, exist_ok=True)
    student = _Timing.empty()
    reference = _Timing.empty()
    sizes, names, baselines = _sizes(cases), _names(cases), _baselines(cases)
    life_s = RUN_TIMEOUT_S * (ROUNDS + EXTRA_ROUNDS) * (1 + len(set(student_programs.values())))

    def time_students(round_numbers: Sequence[int], timed: set[str]) -> None:
        """The cases named `timed`, a pass per round, each program started once."""
        runs: dict[Path, list[str]] = {}
        for name in sorted(timed):
            runs.setdefault(student_programs[name], []).append(name)
        with ExitStack() as started:  # every one ended, whatever one's end raised
            lives = [started.enter_context(SpeedProgram(program, run_names, sizes, work / f"student-{round_numbers[0]}-{index}.log",
                                                        RUN_TIMEOUT_S, life_s, sandbox))
                     for index, (program, run_names) in enumerate(runs.items())]
            for life in lives:
                life.wait_started()
            for round_number in round_numbers:
                for life, run_names in zip(lives, runs.values()):
                    student.add(life.serve(run_names, _orders(seed, round_number)))

    def scores() -> list[SpeedResult]:
        return [_score(case, size, student, reference) for case in cases for size in case.sizes]

    with SpeedProgram(reference_program, [*names, *baselines], sizes, work / "reference.log", RUN_TIMEOUT_S, life_s,
                      sandbox) as reference_run:
        reference_run.wait_started()

        def time_reference(round_number: int, timed: set[str]) -> None:
            """The cases named `timed` and the baselines."""
            reference.add(reference_run.serve([*sorted(timed), *baselines], _orders(seed, round_number)))

        time_reference(0, set(names))
        time_students(range(ROUNDS), set(names))
        for round_number in range(1, ROUNDS):
            time_reference(round_number, set(names))
        results = scores()
        for round_number in range(ROUNDS, ROUNDS + EXTRA_ROUNDS):
            short = {result.case for result in results if not result.problem and result.points < result.max_points}
            if not short:
                break
            time_students([round_number], short)
            time_reference(round_number, short)
            results = scores()
    return results


def _score(case: SpeedCase, size: int, student: _Timing, reference: _Timing) -> SpeedResult:
    key = (case.case, size)
    base = dict(task=case.task, case=case.case, size=size, max_points=points_per_size(case), bytes=reference.bytes.get(key, 0.0))
    if len(reference.micros.get(key, [])) < ROUNDS or len(reference.overhead.get(key, [])) < ROUNDS:
        problem = "; ".join(reference.problems) or "the reference's timings are incomplete"
        raise SpeedError(f"the reference's speed run of {case.case} at size {size} failed: {problem}")
    overhead = min(reference.overhead[key])
    reference_us = reference.net_micros(key, overhead)
    copy_key = (COPY_BASELINE, size)
    # The least of each pass's own net time: a copy that looks fast makes the flag below no freer.
    copy_us = reference.least_pass_net(copy_key)
    base["baseline"] = case.baseline
    base["baseline_us"] = reference.own_net_micros((case.baseline, size))
    want = reference.digests.get(key, {})
    got = student.digests.get(key, {})
    # A wrong output says more than the pass it may have crashed later (work left running after
    # the window wrote into freed memory, say), so it is told first.
    wrong = [seed for seed, digest in got.items() if want.get(seed, digest) != digest]
    if not wrong and (len(student.micros.get(key, [])) < ROUNDS or set(got) != set(want)):
        problem = "; ".join(student.problems) or "no timing for every repetition"
        return SpeedResult(points=0.0, reference_us=reference_us, copy_us=copy_us, problem=problem, **base)
    own_overhead = _least(student.overhead.get(key))
    student_us = student.net_micros(key, overhead if own_overhead is None else min(overhead, own_overhead))
    measured = dict(student_us=student_us, reference_us=reference_us, copy_us=copy_us)
    if wrong:
        problem = (
            f"the output of {len(wrong)} of {len(got)} timed repetitions differs from the reference's for the same "
            "input: results kept between calls, or a race that timing exposes?"
        )
        return SpeedResult(points=0.0, problem=problem, **measured, **base)
    copy_bytes = reference.bytes.get(copy_key)
    if copy_us and copy_bytes and base["bytes"] / student_us > IMPLAUSIBLE_OVER_COPY * copy_bytes / copy_us:
        problem = "implausible: faster than a copy kernel moving the same bytes; a TA should look at this submission"
        return SpeedResult(points=0.0, problem=problem, **measured, **base)
    return SpeedResult(points=speed_points(case, student_us / reference_us), **measured, **base)


def _sizes(cases: Sequence[SpeedCase]) -> list[int]:
    return sorted({size for case in cases for size in case.sizes})


def _names(cases: Sequence[SpeedCase]) -> list[str]:
    return sorted({case.case for case in cases})


def _baselines(cases: Sequence[SpeedCase]) -> list[str]:
    """The copy kernel, and each case's baseline of the manifest."""
    return sorted({COPY_BASELINE} | {case.baseline for case in cases if case.baseline})


def _least(values: list[float] | None) -> float | None:
    return min(values) if values else None


def local_table(cases: Sequence[SpeedCase], program: Path, work: Path) -> list[tuple[str, int, str, float, float]]:
    """(case, size, kernel, microseconds, GB/s) of each case and its baselines, the least of ROUNDS
    passes on this machine's GPU, as a grade takes them: the student's own speed table, and the times
    that the preview of speed points divides (one run's copy kernel varied twofold at 2^24 on an H100)."""
    timing = _timed_here(cases, program, work, passes=ROUNDS)
    rows = []
    for case in cases:
        for size in case.sizes:
            for kernel in (case.case, case.baseline, COPY_BASELINE):
                micros = timing.own_net_micros((kernel, size)) if kernel else None
                if micros:
                    rows.append((case.case, size, kernel, micros, timing.bytes[(kernel, size)] / (micros * 1e3)))
    return rows


def reference_and_copy_times(cases: Sequence[SpeedCase], program: Path, work: Path
                             ) -> dict[tuple[str, int], tuple[float, float]]:
    """(case, size) -> the case's and the copy kernel's microseconds at that size, both from the same
    ROUNDS passes of `program` (the reference's, for `kernellab calibrate`), as a grade times the reference."""
    timing = _timed_here(cases, program, work, passes=ROUNDS)
    times = {}
    for case in cases:
        for size in case.sizes:
            case_us, copy_us = timing.own_net_micros((case.case, size)), timing.own_net_micros((COPY_BASELINE, size))
            if case_us is None or copy_us is None:
                raise SpeedError(f"no time for {case.case} or {COPY_BASELINE} at size {size}")
            times[(case.case, size)] = (case_us, copy_us)
    return times


def _timed_here(cases: Sequence[SpeedCase], program: Path, work: Path, passes: int) -> _Timing:
    """`passes` passes of `program` on this machine's GPU, each timing every case and its baselines
    at every size; no sandbox: the verbs that time here run the user's own code, or the reference."""
    work.mkdir(parents=True, exist_ok=True)
    timing = _Timing.empty()
    served = [*_names(cases), *_baselines(cases)]
    with SpeedProgram(program, served, _sizes(cases), work / "speed.log", RUN_TIMEOUT_S, RUN_TIMEOUT_S * passes, None) as run:
        run.wait_started()
        for pass_number in range(passes):
            timing.add(run.serve(served, _orders(1, pass_number)))
    if timing.problems:
        raise SpeedError("; ".join(timing.problems))
    return timing
