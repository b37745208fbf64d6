"""A cgroup per step, where the grader may create one (cgroup v2 delegated to it, or v1's memory
and pids hierarchies): the step's memory and process limits, what it hit (the cgroup's events,
and the limits no event records: RLIMIT_NPROC's hold, GPU memory), and the watch that kills the
whole step once it hits one."""

import errno
import os
import threading
import time
import uuid
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from kernellab import gpu_memory
from kernellab.sandbox.step import Step

# How often the cgroup of a step that ends at its limits is checked for a limit it hit.
LIMIT_POLL_S = 0.05
# The cgroup v2 leaf the grader's own processes move to, so that its cgroup may hold one child
# cgroup per step (v2 lets only cgroups without processes of their own delegate controllers).
GRADER_CGROUP = "kernellab-grader"


class Cgroups:
    """Where the grader may create a cgroup per step: cgroup v2 (its own cgroup, delegated) or
    v1's memory and pids hierarchies. `find()` is None where neither is writable."""

    def __init__(self, parents: dict[str, Path], version: int):
        # controller ("memory", "pids") -> the folder step cgroups are created in
        self._parents = parents
        self._version = version

    @classmethod
    def find(cls) -> "Cgroups | None":
        try:
            return cls._find_v2() or cls._find_v1()
        except OSError:
            return None

    @classmethod
    def _find_v2(cls) -> "Cgroups | None":
        own = _own_cgroup("")
        if own is None or not Path("/sys/fs/cgroup/cgroup.controllers").exists():
            return None
        base = Path("/sys/fs/cgroup") / own.lstrip("/")
        if base.name == GRADER_CGROUP:
            base = base.parent  # this process already moved itself (an earlier find)
        controllers = [name for name in ("memory", "pids") if name in (base / "cgroup.controllers").read_text().split()]
        if not controllers:
            return None
        leaf = base / GRADER_CGROUP
        leaf.mkdir(exist_ok=True)
        # Every process of our cgroup (this grader, the shell that started it) moves to the leaf.
        for _ in range(10):
            pids = (base / "cgroup.procs").read_text().split()
            if not pids:
                break
            for pid in pids:
                try:
                    (leaf / "cgroup.procs").write_text(pid)
                except OSError as error:
                    if error.errno != errno.ESRCH:
                        raise
        (base / "cgroup.subtree_control").write_text(" ".join(f"+{name}" for name in controllers))
        return cls({name: base for name in controllers}, 2)

    @classmethod
    def _find_v1(cls) -> "Cgroups | None":
        parents = {}
        for controller in ("memory", "pids"):
            own = _own_cgroup(controller)
            hierarchy = Path("/sys/fs/cgroup") / controller
            if own is None or not (hierarchy / "cgroup.procs").exists():
                continue
            parent = hierarchy / own.lstrip("/")
            probe = parent / f"kernellab-probe-{uuid.uuid4().hex[:8]}"
            try:
                probe.mkdir()
                probe.rmdir()
            except OSError:
                continue
            parents[controller] = parent
        return cls(parents, 1) if parents else None

    @property
    def controllers(self) -> frozenset[str]:
        return frozenset(self._parents)

    def describe(self) -> str:
        return f"cgroup v{self._version} ({', '.join(sorted(self._parents))})"

    def step(self, step: Step) -> "StepCgroup":
        name = f"kernellab-step-{uuid.uuid4().hex[:12]}"
        folders = {controller: parent / name for controller, parent in self._parents.items()}
        for folder in dict.fromkeys(folders.values()):
            folder.mkdir()
        group = StepCgroup(folders, self._version, step)
        group.set_limits(step)
        return group


class StepCgroup:
    """The cgroup(s) of one step: its limits, joining it, what it hit, removing it."""

    def __init__(self, folders: dict[str, Path], version: int, step: Step):
        self._folders = folders
        self._version = version
        self._processes_allowed = step.processes
        self._gpu_memory_bytes = step.gpu_memory_bytes if step.gpu else None
        # A limit no cgroup event records (RLIMIT_NPROC, GPU memory), once a check saw it hit.
        self._seen_hit = ""

    @property
    def controllers(self) -> frozenset[str]:
        return frozenset(self._folders)

    def set_limits(self, step: Step) -> None:
        memory, pids = self._folders.get("memory"), self._folders.get("pids")
        if memory and self._version == 2:
            (memory / "memory.max").write_text(str(step.memory_bytes))
            if (memory / "memory.swap.max").exists():
                (memory / "memory.swap.max").write_text("0")
        elif memory:
            (memory / "memory.limit_in_bytes").write_text(str(step.memory_bytes))
            if (memory / "memory.memsw.limit_in_bytes").exists():
                (memory / "memory.memsw.limit_in_bytes").write_text(str(step.memory_bytes))
        if pids:
            (pids / "pids.max").write_text(str(step.processes))

    def join(self) -> None:
        """Move the calling process into the step's cgroup(s) (in the child, before exec)."""
        for folder in dict.fromkeys(self._folders.values()):
            with open(folder / "cgroup.procs", "w") as procs:
                procs.write("0")

    def limit_hit(self) -> str:
        """'memory', 'processes' or 'GPU memory' when the step ran into that limit, else ''."""
        memory, pids = self._folders.get("memory"), self._folders.get("pids")
        if memory and self._version == 2 and _event_count(memory / "memory.events", "oom_kill"):
            return "memory"
        if memory and self._version == 1 and (
            _event_count(memory / "memory.oom_control", "oom_kill") or _event_count(memory / "memory.oom_control", "under_oom")
        ):
            return "memory"
        if pids and _event_count(pids / "pids.events", "max"):
            return "processes"
        threads = "cgroup.threads" if self._version == 2 else "tasks"
        if not self._seen_hit and not pids and len(self._members(threads)) >= self._processes_allowed:
            self._seen_hit = "processes"  # RLIMIT_NPROC holds the step there
        if not self._seen_hit and self._gpu_memory_bytes is not None:
            use = gpu_memory.machine_use()
            if use is not None and use.held_by(self._members("cgroup.procs")) > self._gpu_memory_bytes:
                self._seen_hit = "GPU memory"
        return self._seen_hit

    def _members(self, listing: str) -> set[int]:
        """The pids (cgroup.procs) or thread ids (cgroup.threads, v1's tasks) in the step's cgroup(s)."""
        members: set[int] = set()
        for folder in dict.fromkeys(self._folders.values()):
            try:
                members.update(int(line) for line in (folder / listing).read_text().split())
            except OSError:
                continue  # removed with the step
        return members

    @contextmanager
    def killed_at_limit(self) -> Iterator[None]:
        """While in the context: every process of the cgroup(s) is killed once limit_hit() says so
        (checked every LIMIT_POLL_S; again at each check, for a child forked meanwhile)."""
        done = threading.Event()

        def watch() -> None:
            while not done.wait(LIMIT_POLL_S):
                if self.limit_hit():
                    for folder in dict.fromkeys(self._folders.values()):
                        _kill_all(folder)

        watcher = threading.Thread(target=watch, daemon=True)
        watcher.start()
        try:
            yield
        finally:
            done.set()
            watcher.join()

    def kill(self) -> None:
        """SIGKILL every process of the cgroup(s), without waiting for them to go (a stop of the
        grader, stopping.py: waiting there for each of a batch's steps in turn took minutes)."""
        for folder in dict.fromkeys(self._folders.values()):
            try:
                _kill_all(folder)
            except OSError:  # removed already
                pass

    def remove(self) -> None:
        """Kill whatever is left in the cgroup(s) and remove them."""
        for folder in dict.fromkeys(self._folders.values()):
            deadline = time.monotonic() + 10
            while folder.exists():
                _kill_all(folder)
                try:
                    folder.rmdir()
                except OSError as error:
                    if error.errno != errno.EBUSY or time.monotonic() > deadline:
                        raise
                    time.sleep(0.02)


def _kill_all(folder: Path) -> None:
    """SIGKILL every process of the cgroup `folder` (at once where the kernel can: v2's cgroup.kill)."""
    if (folder / "cgroup.kill").exists():
        (folder / "cgroup.kill").write_text("1")
        return
    for pid in (folder / "cgroup.procs").read_text().split():
        try:
            os.kill(int(pid), 9)
        except ProcessLookupError:
            pass


def _own_cgroup(controller: str) -> str | None:
    """This process's cgroup path in the v2 hierarchy (controller '') or a v1 controller's."""
    for line in Path("/proc/self/cgroup").read_text().splitlines():
        _, controllers, path = line.split(":", 2)
        if controllers.split(",") == [controller] or (controller == "" and controllers == ""):
            return path
    return None


def _event_count(path: Path, event: str) -> int:
    try:
        for line in path.read_text().splitlines():
            name, _, count = line.partition(" ")
            if name == event:
                return int(count)
    except (OSError, ValueError):
        pass
    return 0
