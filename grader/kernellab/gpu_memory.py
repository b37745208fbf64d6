"""The GPU memory each process holds, as the driver reports it, for the sandbox's GPU memory limit.

No cgroup or rlimit bounds device memory: a run that takes all of it starves every other run on
the GPU (and passes its own tests with what it left). The sandbox therefore watches the device
memory of each GPU step's processes (its cgroup's) and ends the step once they hold more than the
step's limit. nvidia-smi answers in some 30 ms (measured on an H100 machine); one answer, at most POLL_S
old, serves every step's watcher.
"""

import functools
import shutil
import subprocess
import threading
import time
from collections.abc import Iterable

POLL_S = 0.1
MIB = 1 << 20
_QUERY = ["--query-compute-apps=pid,used_memory", "--format=csv,noheader,nounits"]


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
        self._command = [nvidia_smi, *_QUERY]
        self._lock = threading.Lock()
        self._polled_at = float("-inf")
        self._used: dict[int, int] = {}

    def held_by(self, pids: Iterable[int]) -> int:
        """Bytes of device memory the processes `pids` hold."""
        with self._lock:
            if time.monotonic() - self._polled_at >= POLL_S:
                self._used = self._poll()
                self._polled_at = time.monotonic()
            return sum(self._used.get(pid, 0) for pid in pids)

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
