"""The sandbox around student code (bubblewrap), and the limits put on it from outside.

Student code runs in two kinds of steps: the build (compilers on the student's sources) and each
run of a test, speed or sanitizer program. Each step runs in a fresh bubblewrap sandbox: new
user, mount, pid, network, IPC and UTS namespaces (so no network, and every process it starts
dies with it), uid 65534 inside, a read-only view of the system directories and of only the
paths the step needs, a fresh size-limited tmpfs as /tmp, and the step's own outputs as the only
writable places. The reference, its records, the hidden seed's records, other students' jobs and
the grader's state are simply not in the view, at compile time (`#include "/abs/path"`,
`.incbin`) as at run time.

Limits come from outside the sandbox, where student code cannot lift them: the wall clock
(runner.py kills the whole process tree), memory and process count through a cgroup per step
(cgroup v2, or v1's memory and pids controllers) where the grader may create one, otherwise
RLIMIT_DATA and RLIMIT_NPROC; the size of any file written (RLIMIT_FSIZE), no core files, and
the output kept (runner.py). Not RLIMIT_AS: an address-space limit of 8 GiB or less makes CUDA
fail on the H100 machines, whose driver reserves address space it never touches. A run of a test
or speed program ends as soon as its cgroup hits a limit: that decides its verdict, and a fork
bomb left at its process limit until the wall clock stops it keeps every core busy failing
forks, starving the runs beside it.
"""

import errno
import fcntl
import functools
import glob
import os
import resource
import shutil
import stat
import subprocess
import tempfile
import threading
import time
import uuid
from collections.abc import Callable, Iterable, Iterator
from contextlib import contextmanager, nullcontext
from dataclasses import dataclass
from pathlib import Path

from kernellab import gpu_memory

# Read-only inside every sandbox: the system's programs and libraries (CUDA and Catch2 live
# under /usr/local on most machines), and the few files of /etc that programs read to start.
SYSTEM_PATHS = ("/usr", "/bin", "/sbin", "/lib", "/lib32", "/lib64", "/libx32")
SYSTEM_ETC_FILES = (
    "ld.so.cache", "ld.so.conf", "ld.so.conf.d", "alternatives", "passwd", "group", "nsswitch.conf", "localtime",
)
# The GPU's device nodes: bound with device access (a read-only bind forbids it), and they must
# exist outside first. /dev/nvidia-caps is not needed by CUDA programs.
GPU_DEVICE_PATTERNS = ("/dev/nvidiactl", "/dev/nvidia-uvm", "/dev/nvidia-uvm-tools", "/dev/nvidia[0-9]*")
# Who student code is inside the sandbox.
SANDBOX_UID = 65534
# Where a grader running as root has no cgroup to count a step's processes, each step runs as a
# uid of its own from this range (outside the sandbox too), so that RLIMIT_NPROC, which exempts
# root, bounds it and no other step: a fork bomb then starves neither the grader nor the other
# students of a batch. Files a step writes are handed to its uid first; bubblewrap, run as that
# uid, must reach the step's paths: a run whose files lie in a private folder (a TA's home, a
# 0700 temporary folder) reads and writes copies in STEP_STAGING instead.
STEP_UIDS = range(2_000_000_000, 2_000_000_000 + 4096)
STEP_STAGING = Path("/tmp/kernellab-steps")
# How often the cgroup of a step that ends at its limits is checked for a limit it hit.
LIMIT_POLL_S = 0.05
# The cgroup v2 leaf the grader's own processes move to, so that its cgroup may hold one child
# cgroup per step (v2 lets only cgroups without processes of their own delegate controllers).
GRADER_CGROUP = "kernellab-grader"


class SandboxUnavailable(Exception):
    """Student code cannot be sandboxed here; the message says why and what to do."""


class SandboxFailure(Exception):
    """bubblewrap could not set up a step's sandbox, so the program never ran: a problem of the
    grading machine (a bind source it cannot reach...), never the student's."""


@dataclass(frozen=True)
class Step:
    """What one sandboxed step sees and may use."""

    readable: tuple[Path, ...]
    writable: tuple[Path, ...] = ()
    gpu: bool = False
    # Memory of the whole step (all its processes) and its processes and threads together.
    memory_bytes: int = 8 << 30
    processes: int = 256
    # Device memory of the step's processes together (a GPU step, where a cgroup tells which
    # processes are the step's): a CUDA context takes about 0.5 GiB, a pbb speed case about 4.
    gpu_memory_bytes: int = 16 << 30
    # The tmpfs /tmp, and the largest file the step may write anywhere.
    tmp_bytes: int = 1 << 30
    file_bytes: int = 1 << 30
    # Folders of the system the step must not see, covered by an empty tmpfs.
    hidden: tuple[Path, ...] = ()
    # Whether all of the step ends once it hits its memory or process limit (a run, whose verdict
    # that decides) or goes on (a build: ninja -k 0 still builds the targets whose compilers did
    # not hit it). Only where a cgroup bounds the step: a per-process rlimit hit is no event.
    ends_at_limit: bool = False


def build_step(readable: Iterable[Path], build_dir: Path) -> Step:
    """A build: compilers with their temporaries, writing only into `build_dir`. Memory is
    counted per compiler where no cgroup bounds the whole build (RLIMIT_DATA is per process)."""
    return Step(tuple(readable), (build_dir,), processes=1024, tmp_bytes=4 << 30, file_bytes=2 << 30)


def fresh_output(path: Path) -> Path:
    """`path` as a new empty file: what a sandboxed run may write is created by the grader first,
    and it is the only file the run may write."""
    path.parent.mkdir(parents=True, exist_ok=True)
    path.unlink(missing_ok=True)
    path.touch()
    return path


def run_step(program: Path, outputs: Iterable[Path], gpu: bool) -> Step:
    """One run of a built program: it sees itself and writes only its `outputs` (files the
    grader created beforehand), and not the CUDA toolkit's libraries: a program linked with the
    static CUDA runtime needs only the driver, so a `dlopen` of cuBLAS finds nothing."""
    return Step((program,), tuple(outputs), gpu=gpu, hidden=toolkit_libraries(), ends_at_limit=True)


@functools.cache
def toolkit_libraries() -> tuple[Path, ...]:
    """The library folders of the CUDA toolkit whose nvcc is on PATH (none without one)."""
    nvcc = shutil.which("nvcc")
    if nvcc is None:
        return ()
    toolkit = Path(nvcc).resolve().parent.parent
    candidates = [toolkit / "lib64", toolkit / "lib", *sorted((toolkit / "targets").glob("*/lib"))]
    return tuple(dict.fromkeys(path.resolve() for path in candidates if path.is_dir()))


@dataclass
class Confined:
    """One step, ready to start: the command line, the function the child runs before exec,
    and after the run, which limit (if any) stopped it."""

    argv: list[str]
    cwd: Path
    preexec: Callable[[], None] | None
    limit_hit: Callable[[], str]
    # File descriptors the child keeps, and after the run, whether the program ever started.
    pass_fds: tuple[int, ...] = ()
    started: Callable[[], bool] = lambda: True


class Sandbox:
    """Runs steps inside bubblewrap with limits; `find()` makes sure it works on this machine."""

    def __init__(self, bwrap: str, bash: str, cgroups: "Cgroups | None"):
        self._bwrap = bwrap
        self._bash = bash
        self._cgroups = cgroups
        self._step_uids = StepUids() if os.geteuid() == 0 and not (cgroups and "pids" in cgroups.controllers) else None
        self._system = tuple(path for path in SYSTEM_PATHS if os.path.lexists(path))
        self._etc = tuple(f"/etc/{name}" for name in SYSTEM_ETC_FILES if os.path.exists(f"/etc/{name}"))

    @classmethod
    def find(cls) -> "Sandbox":
        """The sandbox of this machine, proven by running a program in it; SandboxUnavailable if
        bubblewrap is missing or cannot create its namespaces here."""
        bwrap = shutil.which("bwrap")
        if bwrap is None:
            raise SandboxUnavailable(
                "bubblewrap (bwrap) is not installed, so student code cannot be sandboxed here; "
                "install it (Debian/Ubuntu: apt-get install bubblewrap)"
            )
        bash = shutil.which("bash")
        if bash is None or not any(_within(Path(bash), Path(system)) for system in SYSTEM_PATHS):
            raise SandboxUnavailable("the sandbox starts programs through bash, and there is none in /usr or /bin")
        sandbox = cls(bwrap, bash, Cgroups.find())
        true = shutil.which("true") or "/bin/true"
        with sandbox.confine([true], Step(readable=()), Path("/")) as confined:
            completed = subprocess.run(
                confined.argv, preexec_fn=confined.preexec, pass_fds=confined.pass_fds, capture_output=True, text=True,
                errors="replace", timeout=60,
            )
        if completed.returncode != 0:
            raise SandboxUnavailable(
                f"bubblewrap cannot create a sandbox here ({completed.stderr.strip() or f'exit {completed.returncode}'}); "
                "it needs user namespaces (sysctl kernel.unprivileged_userns_clone=1, or on Ubuntu an AppArmor "
                "profile for bwrap)"
            )
        return sandbox

    def describe(self) -> str:
        bounded = self._cgroups.controllers if self._cgroups else frozenset()
        memory = self._cgroups.describe() if "memory" in bounded else "RLIMIT_DATA per process"
        if "pids" in bounded:
            processes = self._cgroups.describe()
        elif self._step_uids:
            processes = ("RLIMIT_NPROC, each step as a uid of its own (a build only where its folders lie in "
                         "folders others may enter; elsewhere not limited)")
        else:
            processes = "RLIMIT_NPROC"
        gpu = "; GPU memory by nvidia-smi's count of each step's processes" if self._cgroups and gpu_memory.machine_use() else ""
        return f"bubblewrap ({self._bwrap}); memory limited by {memory}; processes by {processes}{gpu}"

    @contextmanager
    def confine(self, command: list[str], step: Step, cwd: Path) -> Iterator[Confined]:
        """`command` as a sandboxed step; cwd is `cwd` when the step sees it, else /tmp."""
        group = self._cgroups.step(step) if self._cgroups else None
        # bubblewrap, run as the step's uid, must reach the step's paths through their folders.
        paths = (*step.readable, *step.writable)
        reachable = all(_reachable_by_others(path) for path in paths)
        staged = self._step_uids is not None and not reachable and all(path.is_file() for path in paths)
        uid = self._step_uids.acquire() if self._step_uids and (reachable or staged) else None
        staging = Path(tempfile.mkdtemp(dir=_staging_folder())) if staged else None
        sources = _staged_copies(step, staging) if staging else {path: path for path in paths}
        if uid is not None:
            for path in step.writable:
                _hand_over(sources[path], uid)
        # Inside the sandbox, once it is set up, bash writes a byte to this pipe and closes it
        # before it becomes the program: no byte means bubblewrap failed, not the program.
        started_read, started_write = os.pipe()
        os.set_blocking(started_read, False)
        try:
            inside_cwd = cwd if any(_within(cwd, path) for path in (*step.readable, *step.writable)) else Path("/tmp")
            announce = [self._bash, "-c", f'printf started >&{started_write}; exec {started_write}>&-; exec "$@"', "bash"]
            with group.killed_at_limit() if group and step.ends_at_limit else nullcontext():
                yield Confined(
                    argv=[self._bwrap, *self._arguments(step, inside_cwd, sources), "--", *announce, *command],
                    cwd=Path("/"),
                    preexec=functools.partial(limit_process, step, group, uid),
                    limit_hit=group.limit_hit if group else (lambda: ""),
                    pass_fds=(started_write,),
                    started=lambda: _read_available(started_read) == b"started",
                )
        finally:
            os.close(started_read)
            os.close(started_write)
            if group:
                group.remove()
            if uid is not None:
                self._step_uids.release(uid)
            if staging:
                for path in step.writable:
                    shutil.move(sources[path], path)
                shutil.rmtree(staging)

    def _arguments(self, step: Step, cwd: Path, sources: dict[Path, Path]) -> list[str]:
        """bubblewrap's options for `step`; each of its paths is bound from `sources[path]`."""
        arguments = [
            "--unshare-all", "--unshare-user", "--disable-userns", "--die-with-parent", "--new-session",
            "--uid", str(SANDBOX_UID), "--gid", str(SANDBOX_UID),
            "--hostname", "sandbox",
        ]
        for path in self._system:
            if os.path.islink(path):
                arguments += ["--symlink", os.readlink(path), path]
            else:
                arguments += ["--ro-bind", path, path]
        for path in self._etc:
            arguments += ["--ro-bind", path, path]
        arguments += ["--proc", "/proc", "--dev", "/dev"]
        if step.gpu:
            for device in sorted({found for pattern in GPU_DEVICE_PATTERNS for found in glob.glob(pattern)}):
                arguments += ["--dev-bind", device, device]
        for path in step.hidden:
            arguments += ["--tmpfs", str(path)]
        # The tmpfs comes before the binds: a job folder under /tmp is then mounted on top of it.
        arguments += ["--size", str(step.tmp_bytes), "--tmpfs", "/tmp"]
        for path in step.readable:
            arguments += ["--ro-bind", str(sources[path]), str(path)]
        for path in step.writable:
            arguments += ["--bind", str(sources[path]), str(path)]
        return arguments + ["--chdir", str(cwd), "--setenv", "TMPDIR", "/tmp", "--setenv", "HOME", "/tmp"]


def toolchain_paths(tools: Iterable[str]) -> tuple[Path, ...]:
    """The installation folders of `tools` (names on PATH or paths of compilers, cmake, ninja,
    python) that lie outside the system paths every sandbox sees, e.g. a compiler in /opt/gcc."""
    found = set()
    for tool in tools:
        located = shutil.which(tool)
        if located is None:
            continue
        for executable in {Path(located), Path(located).resolve()}:
            prefix = executable.parent.parent
            if not any(_within(prefix, Path(system)) for system in SYSTEM_PATHS) and prefix != Path("/"):
                found.add(prefix)
    return tuple(sorted(found))


def _read_available(descriptor: int) -> bytes:
    try:
        return os.read(descriptor, 1 << 16)
    except BlockingIOError:
        return b""


def _within(path: Path, folder: Path) -> bool:
    return path == folder or folder in path.parents


def limit_process(step: Step, group: "StepCgroup | None" = None, uid: int | None = None) -> None:
    """In the child between fork and exec: join the step's cgroup, set the rlimits (memory and
    processes only where no cgroup bounds them), then become the step's own uid if it has one."""
    if group:
        group.join()
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


def _reachable_by_others(path: Path) -> bool:
    """Whether any user may walk to `path` (every folder above it searchable by others)."""
    return all(os.stat(folder).st_mode & stat.S_IXOTH for folder in path.parents)


def _staging_folder() -> Path:
    """STEP_STAGING, made searchable by any user (its entries stay unlisted)."""
    STEP_STAGING.mkdir(exist_ok=True)
    STEP_STAGING.chmod(0o711)
    return STEP_STAGING


def _staged_copies(step: Step, folder: Path) -> dict[Path, Path]:
    """Copies of a step's files in `folder`, made searchable by any user: the programs it runs,
    readable by all, and empty files for what it writes (moved back after the step)."""
    folder.chmod(0o711)
    copies = {}
    for index, path in enumerate((*step.readable, *step.writable)):
        copy = folder / f"{index}-{path.name}"
        if path in step.readable:
            shutil.copy(path, copy)
            copy.chmod(copy.stat().st_mode | stat.S_IRUSR | stat.S_IRGRP | stat.S_IROTH)
        else:
            copy.touch()
        copies[path] = copy
    return copies


def _hand_over(path: Path, uid: int) -> None:
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


@functools.cache
def machine_sandbox() -> Sandbox:
    """The sandbox of this machine, found once per grader process."""
    return Sandbox.find()
