"""What the runs of student and reference code share on one machine: the GPU, the run slots, and
a batch's grade slots."""

import fcntl
import heapq
import itertools
import threading
import time
from collections.abc import Iterator
from contextlib import ExitStack, contextmanager
from pathlib import Path

from kernellab.cpus import available_cpus

# Test executables of one submission run at once on the GPU (correctness only; speed runs alone).
# Not more: one grade's 18 sanitizer runs all at once took 14.3 s on an H100 host, against 12.8 s
# in waves of eight (docs/performance.md).
PARALLEL_RUNS = 8
# Runs of student or reference code (test groups, sanitizers) at once on the machine, however
# many submissions are graded together: two per CPU it may use (cpus.py: a container's quota). Past the slots a run waits before it
# starts, its time limit with it, instead of slowing the runs already going past their limits:
# each run that times out beside others is run again with the GPU to itself, which holds up
# every other grade.
RUN_SLOTS = 2 * available_cpus()
# How long a shared holder may take to pass the GPU lock's turnstile, which it holds for a moment:
# longer, an exclusive holder keeps it.
TURNSTILE_PASSING_S = 0.1


class GpuLock:
    """Who may use the GPU: correctness runs share it (they are not timed: tests and the
    sanitizers of every grade), a speed measurement and a run confirmed alone have it alone. Each holder locks its own
    open file description of a lock file (flock), so the rule holds between the threads of a
    batch and between grader processes on the machine. flock lets new shared holders in while an
    exclusive one waits, so in a busy batch the exclusive one could wait for ever: every holder
    first passes a turnstile (a second lock file), which an exclusive holder keeps until it is done.

    Taking the GPU alone drains it: no new run starts, and the runs in flight end first. Runs hold
    it run by run (GradingRun.run_slot), so that the drain waits for the runs going on, not for
    whole stages. And the threads of this process that wait for the GPU alone while one has it get
    it in turn, in the order they asked, without its being let go between them: one drain serves
    every grade queued behind it. (In a batch of sixteen on an H200, nine speed stages waited 139 s
    in all for their drains and held the GPU alone 169 s; docs/performance.md, issue 26.) The
    shared runs wait meanwhile, as the GPU alone bounds a batch's rate: a drain is time in which
    neither kind of run has the GPU."""

    def __init__(self, path: Path = Path("/tmp/kernellab-gpu.lock")):
        self._path = path
        self._turnstile = path.with_name(f"{path.name}.turnstile")
        self._alone = threading.local()
        self._turns = threading.Condition()
        self._waiting: list[int] = []  # the tickets of this process's threads waiting for the GPU alone
        self._tickets = itertools.count()
        self._taken = False  # whether one of them has it (or is taking the locks for it)
        self._locks: ExitStack | None = None  # the lock files while this process has the GPU alone

    def held_alone(self) -> bool:
        """Whether this thread has the GPU alone."""
        return getattr(self._alone, "held", False)

    @contextmanager
    def shared(self) -> Iterator[None]:
        with self._held(self._turnstile, fcntl.LOCK_EX):
            pass
        with self._held(self._path, fcntl.LOCK_SH):
            yield

    @contextmanager
    def shared_if_free(self) -> Iterator[bool]:
        """The GPU shared for the block if no one has it alone or waits for it (True), else False
        within TURNSTILE_PASSING_S, holding nothing."""
        held = ExitStack()
        try:
            self._pass_turnstile_if_free()
            held.enter_context(self._held(self._path, fcntl.LOCK_SH | fcntl.LOCK_NB))
            free = True
        except BlockingIOError:
            free = False
        with held:
            yield free

    def _pass_turnstile_if_free(self) -> None:
        """Through the turnstile, or BlockingIOError if an exclusive holder keeps it: a shared
        holder passing through holds it for a moment only."""
        deadline = time.monotonic() + TURNSTILE_PASSING_S
        while True:
            try:
                with self._held(self._turnstile, fcntl.LOCK_EX | fcntl.LOCK_NB):
                    return
            except BlockingIOError:
                if time.monotonic() > deadline:
                    raise
                time.sleep(TURNSTILE_PASSING_S / 20)

    @contextmanager
    def exclusive(self) -> Iterator[None]:
        self._take_alone()
        self._alone.held = True
        try:
            yield
        finally:
            self._alone.held = False
            self._give_alone()

    def _take_alone(self) -> None:
        with self._turns:
            ticket = next(self._tickets)
            heapq.heappush(self._waiting, ticket)
            self._turns.wait_for(lambda: not self._taken and self._waiting[0] == ticket)
            heapq.heappop(self._waiting)
            self._taken = True
            if self._locks is not None:
                return  # handed on by the last holder: the GPU was never let go
        locks = ExitStack()
        try:
            locks.enter_context(self._held(self._turnstile, fcntl.LOCK_EX))
            locks.enter_context(self._held(self._path, fcntl.LOCK_EX))
        except BaseException:
            locks.close()
            self._give_alone()
            raise
        with self._turns:
            self._locks = locks

    def _give_alone(self) -> None:
        with self._turns:
            self._taken = False
            if not self._waiting and self._locks is not None:
                self._locks.close()
                self._locks = None
            self._turns.notify_all()

    @staticmethod
    @contextmanager
    def _held(path: Path, mode: int) -> Iterator[None]:
        with open(path, "a") as lock_file:
            fcntl.flock(lock_file, mode)
            try:
                yield
            finally:
                fcntl.flock(lock_file, fcntl.LOCK_UN)


def run_slots() -> threading.BoundedSemaphore:
    """The slots of one grading run's runs of student or reference code (RUN_SLOTS)."""
    return threading.BoundedSemaphore(RUN_SLOTS)


class OrderedSlots:
    """A number of slots, taken one at a time in the order of their tickets, oldest first: a
    grade coming back for a slot goes before the grades that started after it."""

    def __init__(self, slots: int):
        self._free = slots
        self._condition = threading.Condition()
        self._waiting: list[int] = []  # the tickets of the takers waiting, oldest first
        self._tickets = itertools.count()

    def ticket(self) -> int:
        return next(self._tickets)

    def take(self, ticket: int) -> None:
        with self._condition:
            heapq.heappush(self._waiting, ticket)
            self._condition.wait_for(lambda: self._waiting[0] == ticket and self._free > 0)
            heapq.heappop(self._waiting)
            self._free -= 1
            self._condition.notify_all()

    def give(self) -> None:
        with self._condition:
            self._free += 1
            self._condition.notify_all()

    @contextmanager
    def held(self, ticket: int) -> Iterator[None]:
        """One slot for the block, taken in `ticket`'s turn."""
        self.take(ticket)
        try:
            yield
        finally:
            self.give()


class GradeSlots:
    """The grades of a batch whose runs use the machine's cores at once (`kernellab batch --jobs`).
    A grade holds its slot from intake to its last stage, but for its build and for the time it
    waits for or holds the GPU alone (a speed measurement, a run confirmed alone), which take their
    own turns (GradingRun.build_turn and gpu_alone): then another grade tests on the cores it
    leaves. On an H100 host, ten of sixteen grades in flight stood in the GPU's queue while the
    cores idled (docs/performance.md, issue 26). A grade coming back goes before grades that
    started later (its ticket is its first), so the grades in flight end instead of piling up.
    Without a limit (a grade alone) a slot is always free."""

    def __init__(self, slots: int | None = None):
        self._slots = OrderedSlots(slots) if slots is not None else None
        self._held = threading.local()

    @contextmanager
    def held(self) -> Iterator[None]:
        """A slot for this thread's grade, from now until the block ends."""
        if self._slots is None:
            yield
            return
        ticket = self._slots.ticket()
        self._slots.take(ticket)
        self._held.ticket = ticket
        try:
            yield
        finally:
            self._held.ticket = None
            self._slots.give()

    @contextmanager
    def left(self) -> Iterator[None]:
        """This thread's grade without its slot for the block, and with it again after, before any
        grade that started later (nothing to leave in a thread that holds none)."""
        ticket = getattr(self._held, "ticket", None)
        if ticket is None:
            yield
            return
        self._slots.give()
        try:
            yield
        finally:
            self._slots.take(ticket)
