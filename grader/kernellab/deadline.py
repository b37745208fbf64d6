"""An overall time budget for one grade (`--deadline SECONDS`), for platforms that kill a run at
a global timeout (Gradescope, PrairieLearn): a stage that will not fit in what is left is
skipped and said so, instead of the platform killing the whole run and keeping nothing.

The grading pipeline asks `fits(estimate)` before each stage it may skip (confirming a run
alone, speed, sanitizers), records what it skips with `skip()`, cuts each run's time limit with
`timeout_for()`, and writes the platform results after each stage
(reports.write_platform_results), so a platform that kills the run keeps what was earned; the
notes go into the grade's message.
"""

import time
from collections.abc import Callable
from dataclasses import dataclass, field


@dataclass
class Deadline:
    """`seconds` from its creation (None: no deadline, everything fits)."""

    seconds: float | None
    clock: Callable[[], float] = time.monotonic
    # One line per stage skipped for want of time, in the order skipped: shown to the student.
    notes: list[str] = field(default_factory=list)
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

    def skip(self, stage: str, estimate_s: float) -> None:
        """Record that `stage` was skipped: it needed about `estimate_s` seconds, fewer were left."""
        self.notes.append(
            f"{stage}: skipped, the grading deadline was near (it needs about {estimate_s:.0f} s, "
            f"{self.remaining():.0f} s were left of {self.seconds:g} s)"
        )

    def timeout_for(self, limit_s: float) -> float:
        """A step's own time limit, cut to what is left (at least 1 s, so the step still starts)."""
        return max(1.0, min(limit_s, self.remaining()))
