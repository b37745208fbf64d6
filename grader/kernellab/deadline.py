"""An overall time budget for one grade (`--deadline SECONDS`), for platforms that kill a run at
a global timeout (Gradescope, PrairieLearn): a stage that will not fit in what is left is
skipped and said so, instead of the platform killing the whole run and keeping nothing.

The grading pipeline asks `fits(estimate)` before each stage it may skip (confirming a run
alone, speed, sanitizers), describes what it skips with `skip_note()`, cuts each run's time limit with
`timeout_for()`, and writes the platform results after each stage (grading/progress.py), so a
platform that kills the run keeps what was earned. The tests may not be skipped: a test run that
the deadline left no time to start, or whose cut limit ran out, gives no verdict, and the grade
is "not graded" (grading/groups.py, `out_of_time`), never a zero. The Deadline belongs to the
grading run and holds no submission's state: a batch grades several submissions under one
Deadline at once.
"""

import time
from collections.abc import Callable
from dataclasses import dataclass, field


@dataclass
class Deadline:
    """`seconds` from its creation (None: no deadline, everything fits)."""

    seconds: float | None
    clock: Callable[[], float] = time.monotonic
    _start: float = field(init=False)

    def __post_init__(self) -> None:
        if self.seconds is not None and self.seconds <= 0:
            raise ValueError(f"a deadline must be a positive number of seconds, got {self.seconds:g}")
        self._start = self.clock()

    def remaining(self) -> float:
        """Seconds left (infinity without a deadline; never below 0)."""
        if self.seconds is None:
            return float("inf")
        return max(0.0, self.seconds - (self.clock() - self._start))

    def fits(self, estimate_s: float) -> bool:
        """Whether a stage expected to take `estimate_s` seconds ends before the deadline."""
        return estimate_s <= self.remaining()

    def skip_note(self, cost: "StageCost") -> str:
        """What the student reads of a stage skipped for want of time: what it needed, what was
        left, and what it would have given."""
        return (f"{cost.stage}: skipped, the grading deadline was near (it needs about {duration(cost.estimate_s)}, "
                f"{duration(self.remaining())} were left of {self.seconds:g} s); it would have given {cost.would_give}")

    def timeout_for(self, limit_s: float) -> float:
        """A step's own time limit, cut to what is left (at least 1 s, so a step started with a
        moment left still runs)."""
        return max(1.0, min(limit_s, self.remaining()))

    def over(self) -> bool:
        """Whether nothing is left: a step started now could not run at all."""
        return self.remaining() == 0


def duration(seconds: float) -> str:
    """'45 s', or '6.0 h' from an hour on (what a stage of many full time limits would take)."""
    return f"{seconds:.0f} s" if seconds < 3600 else f"{seconds / 3600:.1f} h"


@dataclass(frozen=True)
class StageCost:
    """What a stage that may be skipped would take and give, for one submission."""

    stage: str
    estimate_s: float
    # What the student would have had of it, in words ("up to 12 speed points").
    would_give: str
    # The ids of the tasks it concerns: their feedback says when it was skipped.
    tasks: tuple[str, ...] = ()


def cut_limits_warning(limit_s: float, deadline_s: float) -> str:
    """What an instructor reads when one test run's own limit on the CPU backend does not fit in a
    platform's grading deadline ('' when it does): every run's limit is then cut, and a kernel
    that never ends shows only at a full limit, so its grade is "not graded" instead of a timed-out
    task (grading/groups.py, `out_of_time`)."""
    if limit_s < deadline_s:
        return ""
    return (f"warning: one test run may take {limit_s:g} s on the CPU backend (the manifest's [grading] cpu_timeout), "
            f"no less than the {deadline_s:g} s grading gets there: every run's limit is cut, so a submission whose "
            f"kernel never ends is not graded (no score) instead of timing out; a cpu_timeout well under "
            f"{deadline_s:g} s lets such a hang cost its task")
