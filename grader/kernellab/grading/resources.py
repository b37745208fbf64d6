"""What the runs of student and reference code share on one machine: the GPU, and the run slots."""

import fcntl
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from kernellab.cpus import available_cpus

# Test executables of one submission run at once on the GPU (correctness only; speed runs alone).
PARALLEL_RUNS = 8
# Runs of student or reference code (test groups, sanitizers) at once on the machine, however
# many submissions are graded together: two per CPU it may use (cpus.py: a container's quota). Past the slots a run waits before it
# starts, its time limit with it, instead of slowing the runs already going past their limits:
# each run that times out beside others is run again with the GPU to itself, which holds up
# every other grade.
RUN_SLOTS = 2 * available_cpus()


class GpuLock:
    """Who may use the GPU: correctness runs share it (they are not timed: tests and the
    sanitizers of every grade), a speed measurement and a run confirmed alone have it alone. Each holder locks its own
    open file description of a lock file (flock), so the rule holds between the threads of a
    batch and between grader processes on the machine. flock lets new shared holders in while an
    exclusive one waits, so in a busy batch the exclusive one could wait for ever: every holder
    first passes a turnstile (a second lock file), which an exclusive holder keeps until it is done."""

    def __init__(self, path: Path = Path("/tmp/kernellab-gpu.lock")):
        self._path = path
        self._turnstile = path.with_name(f"{path.name}.turnstile")

    @contextmanager
    def shared(self) -> Iterator[None]:
        with self._held(self._turnstile, fcntl.LOCK_EX):
            pass
        with self._held(self._path, fcntl.LOCK_SH):
            yield

    @contextmanager
    def exclusive(self) -> Iterator[None]:
        with self._held(self._turnstile, fcntl.LOCK_EX), self._held(self._path, fcntl.LOCK_EX):
            yield

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
