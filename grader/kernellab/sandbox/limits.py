"""The limits a step's processes carry from fork to exec: rlimits, and where the grader runs as
root, a uid of the step's own (both sandboxes use them; runner.py without a sandbox, the rlimits)."""

import fcntl
import os
import resource
import stat
import threading
from pathlib import Path

from kernellab.sandbox.cgroups import StepCgroup
from kernellab.sandbox.step import SandboxFailure, Step

# Where a grader running as root has no cgroup to count a step's processes, each step runs as a
# uid of its own from this range (outside the sandbox too), so that RLIMIT_NPROC, which exempts
# root, bounds it and no other step: a fork bomb then starves neither the grader nor the other
# students of a batch. Files a step writes are handed to its uid first.
STEP_UIDS = range(2_000_000_000, 2_000_000_000 + 4096)


def limit_process(step: Step, group: StepCgroup | None = None, uid: int | None = None) -> None:
    """In the child between fork and exec: join the step's cgroup, lower its priority, set the rlimits (memory and
    processes only where no cgroup bounds them), then become the step's own uid if it has one."""
    if group:
        group.join()
    if step.niceness:
        os.nice(step.niceness)
    for limit, value in ((resource.RLIMIT_FSIZE, step.file_bytes), (resource.RLIMIT_CORE, 0)):
        resource.setrlimit(limit, (value, value))
    bounded = group.controllers if group else frozenset()
    if "memory" not in bounded:
        resource.setrlimit(resource.RLIMIT_DATA, (step.memory_bytes, step.memory_bytes))
    if "pids" not in bounded and os.geteuid() != 0 or uid is not None:  # root is exempt from RLIMIT_NPROC
        resource.setrlimit(resource.RLIMIT_NPROC, (step.processes, step.processes))
    if uid is not None:
        os.setgroups([])
        os.setgid(uid)
        os.setuid(uid)


def reachable_by_others(path: Path) -> bool:
    """Whether any user may walk to `path` (every folder above it searchable by others)."""
    return all(os.stat(folder).st_mode & stat.S_IXOTH for folder in path.parents)


def hand_over(path: Path, uid: int) -> None:
    """Make `path` (a file, or a folder with all it holds) the step uid's to write."""
    os.chown(path, uid, uid)
    if path.is_dir() and not path.is_symlink():
        for folder, folders, files in os.walk(path):
            for name in folders + files:
                os.chown(os.path.join(folder, name), uid, uid, follow_symlinks=False)


class StepUids:
    """The uids of STEP_UIDS not in use by a step, in this grader process or another one (each
    held through an exclusive lock on a file of its own).

    Taken in turn, not lowest first: a step's processes leave its cgroup when they exit but count
    against its uid's RLIMIT_NPROC until they are reaped, so the next step given a fork bomb's
    uid at once could not even start."""

    def __init__(self, lock_folder: Path = Path("/tmp")):
        self._lock_folder = lock_folder
        self._held: dict[int, int] = {}  # uid -> its lock file's descriptor
        self._lock = threading.Lock()
        self._next = 0  # the index in STEP_UIDS to try first

    def acquire(self) -> int:
        with self._lock:
            for turn in range(len(STEP_UIDS)):
                uid = STEP_UIDS[(self._next + turn) % len(STEP_UIDS)]
                if uid in self._held:
                    continue
                descriptor = os.open(self._lock_folder / f"kernellab-step-uid-{uid}.lock", os.O_RDWR | os.O_CREAT, 0o600)
                try:
                    fcntl.flock(descriptor, fcntl.LOCK_EX | fcntl.LOCK_NB)
                except BlockingIOError:
                    os.close(descriptor)
                    continue
                self._held[uid] = descriptor
                self._next = (self._next + turn + 1) % len(STEP_UIDS)
                return uid
        raise SandboxFailure(f"all {len(STEP_UIDS)} step uids are in use")

    def release(self, uid: int) -> None:
        with self._lock:
            os.close(self._held.pop(uid))  # closing the descriptor drops its lock
