"""The GPU memory each process holds, as the driver reports it, for the sandbox's GPU memory limit.

No cgroup or rlimit bounds device memory: a run that takes all of it starves every other run on
the GPU (and passes its own tests with what it left). The sandbox therefore watches the device
memory of each GPU step's processes (its cgroup's) and ends the step once they hold more than the
step's limit. nvidia-smi answers in some 30 ms (measured on an H100 machine); one answer, at most POLL_S
old, serves every step's watcher.

The same answers, kept for a while, tell the grader whether the device was nearly full while a
run went on: only then may a run's failure for lack of GPU memory be the fault of the runs beside
it (and be run again alone). What the run itself printed decides nothing.
"""

import collections
import functools
import shutil
import subprocess
import threading
import time
from collections.abc import Iterable

POLL_S = 0.1
MIB = 1 << 20
# The device counts as full from this share of its memory on: CUDA contexts and allocators round
# up, so an allocation fails before every byte is taken.
FULL_SHARE = 0.9
# Answers kept: at POLL_S, the last half hour, longer than any run of a test executable.
HISTORY = 18_000
_QUERY = ["--query-compute-apps=pid,used_memory", "--format=csv,noheader,nounits"]
_CAPACITY_QUERY = ["--query-gpu=memory.total", "--format=csv,noheader,nounits"]


def parse_compute_apps(text: str) -> dict[int, int]:
    """Bytes of device memory by pid from nvidia-smi's `pid, used_memory` (MiB) lines; a process
    whose use the driver does not report ("[N/A]") is left out."""
    used: dict[int, int] = {}
    for line in text.splitlines():
        pid, _, mib = (field.strip() for field in line.partition(","))
        if pid.isdigit() and mib.isdigit():
            used[int(pid)] = used.get(int(pid), 0) + int(mib) * MIB
    return used


class DeviceMemoryUse:
    """The device memory of the machine's processes, polled at most every POLL_S seconds."""

    def __init__(self, nvidia_smi: str):
        self._nvidia_smi = nvidia_smi
        self._command = [nvidia_smi, *_QUERY]
        self._lock = threading.Lock()
        self._polled_at = float("-inf")
        self._used: dict[int, int] = {}
        # (time.monotonic(), bytes all processes held) of each answer.
        self._history: collections.deque[tuple[float, int]] = collections.deque(maxlen=HISTORY)

    def held_by(self, pids: Iterable[int]) -> int:
        """Bytes of device memory the processes `pids` hold."""
        with self._lock:
            if time.monotonic() - self._polled_at >= POLL_S:
                self._used = self._poll()
                self._polled_at = time.monotonic()
                self._history.append((self._polled_at, sum(self._used.values())))
            return sum(self._used.get(pid, 0) for pid in pids)

    def nearly_full(self, start: float, end: float) -> bool | None:
        """Whether the processes of the machine held FULL_SHARE of the device memory at some
        answer between the monotonic times `start` and `end`; None without an answer then."""
        with self._lock:
            seen = [used for at, used in self._history if start <= at <= end]
        capacity = self._capacity()
        if not seen or capacity is None:
            return None
        return max(seen) >= FULL_SHARE * capacity

    @functools.cache
    def _capacity(self) -> int | None:
        """Bytes of device memory of the machine's GPUs together."""
        try:
            answer = subprocess.run([self._nvidia_smi, *_CAPACITY_QUERY], capture_output=True, text=True, timeout=5,
                                    check=True)
        except (OSError, subprocess.SubprocessError):
            return None
        sizes = [int(line.strip()) for line in answer.stdout.splitlines() if line.strip().isdigit()]
        return sum(sizes) * MIB if sizes else None

    def _poll(self) -> dict[int, int]:
        try:
            answer = subprocess.run(self._command, capture_output=True, text=True, timeout=5, check=True)
        except (OSError, subprocess.SubprocessError):
            return {}  # no answer this time: the next poll asks again
        return parse_compute_apps(answer.stdout)


@functools.cache
def machine_use() -> DeviceMemoryUse | None:
    """This machine's DeviceMemoryUse, or None without nvidia-smi (no GPU to limit)."""
    found = shutil.which("nvidia-smi")
    return DeviceMemoryUse(found) if found else None
