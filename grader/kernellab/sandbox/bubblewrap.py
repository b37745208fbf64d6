"""The bubblewrap sandbox: each step in fresh namespaces (docs in __init__.py), its command line,
the copies of a step's files that a step uid cannot reach in place, and the machine's sandbox."""

import functools
import glob
import os
import shutil
import stat
import subprocess
import tempfile
from collections.abc import Iterable, Iterator
from contextlib import contextmanager, nullcontext
from pathlib import Path

from kernellab import gpu_memory, stopping
from kernellab.sandbox.cgroups import Cgroups
from kernellab.sandbox.limits import StepUids, hand_over, limit_process, reachable_by_others
from kernellab.sandbox.step import Confined, SandboxUnavailable, Step

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
# bubblewrap, run as a step's own uid (limits.STEP_UIDS), must reach the step's paths: a run whose
# files lie in a private folder (a TA's home, a 0700 temporary folder) reads and writes copies in
# STEP_STAGING instead.
STEP_STAGING = Path("/tmp/kernellab-steps")


class Sandbox:
    """Runs steps inside bubblewrap with limits; `find()` makes sure it works on this machine."""

    def __init__(self, bwrap: str, bash: str, cgroups: Cgroups | None):
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
        paths = (*step.reads, *step.writable)
        reachable = all(reachable_by_others(path) for path in paths)
        staged = self._step_uids is not None and not reachable and all(path.is_file() for path in paths)
        uid = self._step_uids.acquire() if self._step_uids and (reachable or staged) else None
        staging = Path(tempfile.mkdtemp(dir=_staging_folder())) if staged else None
        sources = _staged_copies(step, staging) if staging else {path: path for path in paths}
        if uid is not None:
            for path in step.writable:
                hand_over(sources[path], uid)
        # Inside the sandbox, once it is set up, bash writes a byte to this pipe and closes it
        # before it becomes the program: no byte means bubblewrap failed, not the program.
        started_read, started_write = os.pipe()
        os.set_blocking(started_read, False)
        try:
            inside_cwd = cwd if any(_within(cwd, path) for path in (*step.reads, *step.writable)) else Path("/tmp")
            announce = [self._bash, "-c", f'printf started >&{started_write}; exec {started_write}>&-; exec "$@"', "bash"]
            # A stop of the grader (stopping.py) kills the step's processes, without waiting for
            # them: the grader then exits without running the end of this function.
            with (stopping.ended_on_stop(group.kill) if group else nullcontext(),
                  group.killed_at_limit() if group and step.ends_at_limit else nullcontext()):
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
        for path in step.reads:
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
    for index, path in enumerate((*step.reads, *step.writable)):
        copy = folder / f"{index}-{path.name}"
        if path in step.reads:
            shutil.copy(path, copy)
            copy.chmod(copy.stat().st_mode | stat.S_IRUSR | stat.S_IRGRP | stat.S_IROTH)
        else:
            copy.touch()
        copies[path] = copy
    return copies


@functools.cache
def machine_sandbox() -> Sandbox:
    """The sandbox of this machine, found once per grader process."""
    return Sandbox.find()
