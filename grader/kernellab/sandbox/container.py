"""The sandbox for grading inside a platform's container (Gradescope, PrairieLearn), where
bubblewrap cannot run: those containers refuse the user namespaces it needs under Docker's
default seccomp profile. It is weaker than bubblewrap and stronger than `--unsandboxed`:

- each step (a build, a test run) runs as a uid of its own (limits.STEP_UIDS), never root, with
  no_new_privs (no setuid program can raise it again) and no supplementary groups;
- rlimits: memory per process (RLIMIT_DATA), processes of the uid (RLIMIT_NPROC), file size, no
  core files; the wall clock is runner.py's; when the step ends, every process left with its uid
  is killed, so nothing it started outlives it;
- a path that a step alone may read (a task's folder, which holds the reference's code of other
  tasks) is its uid's group's for the step's time and no one else's, before and after;
- file permissions: the grader creates its files for itself alone (umask 077), so nothing it
  writes (the reference's build and records above all) is ever readable by a step, whenever it
  is written; before every step it seals what student code must not read of the repository (the
  reference, known-wrong versions, the questions' answers) and of older work folders to root,
  and opens to others exactly the step's own paths in the work folder.

What it cannot do without namespaces: take the network away, give the step a private /tmp, or
hide the system's libraries. The grade's report names the sandbox, so a reader knows.
"""

import contextlib
import ctypes
import functools
import os
import shutil
import stat
import subprocess
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from kernellab import stopping
from kernellab.sandbox.limits import StepUids, hand_over, limit_process, reachable_by_others
from kernellab.sandbox.step import Confined, SandboxFailure, SandboxUnavailable, Step

# prctl(2)'s option that makes execve never grant privileges (setuid bits, file capabilities).
PR_SET_NO_NEW_PRIVS = 38
# What a repository holds that student code must never read, relative to its root.
PRIVATE_IN_ROOT = ("reference", "assignments/*/wrong", "assignments/*/hidden", "assignments/*/questions.toml")
# In the grader's work folder of an assignment: the job folders (each open to its own steps)...
JOBS_FOLDER = "jobs"
# ...and the reference builds ("reference-<id>-<backend>"), whose harness objects a student's
# build may link against; their assignments/ holds the reference's own executables and objects.
REFERENCE_BUILD_PREFIX = "reference-"
REFERENCE_BUILD_PRIVATE = "assignments"


class ContainerSandbox:
    """Runs steps as unprivileged uids of their own; `find(root, work)` proves it works here."""

    def __init__(self, root: Path, work: Path, bash: str):
        self._root = root
        self._work = work
        self._bash = bash
        self._uids = StepUids()
        # One step at a time holds a path it reads alone: it is that step's uid's group's for the
        # step's time, and two steps at once (a task's GPU build and its race-check build run
        # side by side) would take it from each other.
        self._alone_locks: dict[Path, threading.Lock] = {}
        self._alone_locks_lock = threading.Lock()

    @classmethod
    def find(cls, root: Path, work: Path) -> "ContainerSandbox":
        """The container sandbox for a grader whose repository is `root` and whose work folder
        (of all assignments) is `work`; SandboxUnavailable where it cannot hold."""
        if os.geteuid() != 0:
            raise SandboxUnavailable(
                "the container sandbox runs each step as a uid of its own and needs root for that "
                "(an autograder container runs its script as root)"
            )
        bash = shutil.which("bash")
        if bash is None:
            raise SandboxUnavailable("the container sandbox starts programs through bash, and there is none")
        work.mkdir(parents=True, exist_ok=True)
        _add_mode(work, stat.S_IXOTH)  # steps reach their job folders through it (it stays unlisted)
        os.umask(0o077)  # everything the grader writes from now on is its own (see the module's doc)
        if not reachable_by_others(work / "probe"):
            raise SandboxUnavailable(f"the work folder {work} lies in a folder other users cannot enter; choose one that they can (--work)")
        sandbox = cls(root.resolve(), work.resolve(), bash)
        true = shutil.which("true") or "/bin/true"
        with sandbox.confine([true], Step(readable=()), Path("/")) as confined:
            completed = subprocess.run(confined.argv, preexec_fn=confined.preexec, capture_output=True, text=True, timeout=60)
        if completed.returncode != 0:
            raise SandboxUnavailable(f"a step cannot start as an unprivileged uid here: {completed.stderr.strip()[:300]}")
        return sandbox

    def describe(self) -> str:
        return (
            "container (no bubblewrap): each step as an unprivileged uid of its own with no_new_privs; memory limited "
            "by RLIMIT_DATA per process, processes by RLIMIT_NPROC per uid; the reference and the grader's records "
            "unreadable by file permissions; the network and /tmp are not isolated"
        )

    @contextmanager
    def confine(self, command: list[str], step: Step, cwd: Path) -> Iterator[Confined]:
        """`command` as a step of its own uid; cwd is `cwd` when the step's paths hold it, else /tmp."""
        self.seal()
        paths = (*step.readable, *step.writable)
        for path in paths:
            self._open_in_work(path, writable=path in step.writable)
            if not reachable_by_others(path) or not _open_to_others(path, writable=path in step.writable):
                raise SandboxFailure(
                    f"{path} is not open to the step's unprivileged uid: every folder above it must be searchable "
                    "by others, and the path readable by them; grade from a folder that every user can reach "
                    "(one under /tmp or /srv, say, not under /root)"
                )
        _libc()  # loaded here: the child between fork and exec only calls it
        with contextlib.ExitStack() as held_alone:
            for path in sorted(step.readable_alone):  # in one order, so that no two steps wait on each other
                held_alone.enter_context(self._alone_lock(path))
            with self._as_uid(command, step, cwd, paths) as confined:
                yield confined

    def _alone_lock(self, path: Path) -> threading.Lock:
        with self._alone_locks_lock:
            return self._alone_locks.setdefault(path, threading.Lock())

    @contextmanager
    def _as_uid(self, command: list[str], step: Step, cwd: Path, paths: tuple[Path, ...]) -> Iterator[Confined]:
        """The step's uid, its paths handed over, while the step runs."""
        uid = self._uids.acquire()
        try:
            for path in step.writable:
                hand_over(path, uid)
            for path in step.readable_alone:
                self._open_in_work(path, writable=True)  # the folders on the way searchable, not the path itself
                _readable_by_group(path, uid)
            paths += step.readable_alone
            inside = cwd if any(cwd == path or path in cwd.parents for path in paths) else Path("/tmp")
            # bash stays as the step's first process: once the program ends, it kills every other
            # process of the uid (children that left the session too) before the step's output
            # is read, and exits with the program's status (128 + N for signal N, as bubblewrap).
            supervised = [self._bash, "-c", '"$@"; status=$?; kill -KILL -1 2>/dev/null; exit $status', "bash", *command]
            with stopping.uid_ended_on_stop(uid):
                yield Confined(
                    argv=supervised,
                    cwd=inside,
                    preexec=functools.partial(_become_step, step, uid),
                    limit_hit=lambda: "",
                )
        finally:
            self._kill_everything_of(uid)
            for path in step.readable_alone:
                _readable_by_group(path, 0)
            self._uids.release(uid)

    def seal(self) -> None:
        """Close what student code must not read to everyone but its owner, and the work
        folder's listings to everyone: each step then reaches only the paths it is given."""
        for pattern in PRIVATE_IN_ROOT:
            for path in self._root.glob(pattern):
                path.chmod(0o700 if path.is_dir() else 0o600)
        for assignment_work in self._work.iterdir() if self._work.is_dir() else ():
            if not assignment_work.is_dir():
                continue
            assignment_work.chmod(0o711)
            for entry in assignment_work.iterdir():
                if entry.name == JOBS_FOLDER:
                    entry.chmod(0o711)
                    for job in entry.iterdir():
                        job.chmod(0o711)
                elif entry.name.startswith(REFERENCE_BUILD_PREFIX) and (entry / "CMakeCache.txt").is_file():
                    entry.chmod(0o711)
                    if (entry / REFERENCE_BUILD_PRIVATE).exists():
                        (entry / REFERENCE_BUILD_PRIVATE).chmod(0o700)
                else:
                    entry.chmod(0o700 if entry.is_dir() else 0o600)

    def _open_in_work(self, path: Path, writable: bool) -> None:
        """A path of the step in the work folder, opened to the step's uid: searchable folders on
        the way to it, and what it reads readable (a folder with all it holds). What it writes is
        handed over to its uid instead. Paths elsewhere keep their modes (checked, not changed)."""
        if not path.is_relative_to(self._work) or not path.exists():
            return
        for folder in reversed(path.parents):
            if folder.is_relative_to(self._work):
                _add_mode(folder, stat.S_IXOTH)
        if writable:
            return
        _add_mode(path, stat.S_IROTH | (stat.S_IXOTH if path.is_dir() else 0))
        if path.is_dir():
            for folder, folders, files in os.walk(path):
                for name in folders:
                    _add_mode(Path(folder, name), stat.S_IROTH | stat.S_IXOTH)
                for name in files:
                    _add_mode(Path(folder, name), stat.S_IROTH)

    def _kill_everything_of(self, uid: int) -> None:
        """SIGKILL every process of `uid` (a child that left the step's session lives on as it):
        kill(-1) as that uid reaches exactly its processes, but the caller itself."""
        subprocess.run([self._bash, "-c", "kill -KILL -1 2>/dev/null; true"], user=uid, group=uid, extra_groups=[], check=False)


def _add_mode(path: Path, bits: int) -> None:
    mode = path.lstat().st_mode
    if not stat.S_ISLNK(mode) and mode & bits != bits:
        path.chmod(stat.S_IMODE(mode) | bits)


def _readable_by_group(path: Path, gid: int) -> None:
    """`path` (a folder with all it holds) readable by the group `gid` alone besides its owner, the
    grader: a step's own uid is its group (limits.py). Group 0 closes it again after the step."""
    for entry in [path, *(Path(folder, name) for folder, folders, files in os.walk(path) for name in (*folders, *files))]:
        os.chown(entry, -1, gid, follow_symlinks=False)
        if not entry.is_symlink():
            granted = (stat.S_IRGRP | (stat.S_IXGRP if entry.is_dir() else 0)) if gid else 0
            entry.chmod(stat.S_IMODE(entry.lstat().st_mode) & ~stat.S_IRWXO & ~stat.S_IRWXG | granted)


def _open_to_others(path: Path, writable: bool) -> bool:
    """Whether a path the step reads is readable by others (a folder: readable and searchable);
    one it writes is handed over to the step's uid, so only needs to exist."""
    if writable:
        return path.exists()
    mode = path.stat().st_mode
    needed = stat.S_IROTH | (stat.S_IXOTH if stat.S_ISDIR(mode) else 0)
    return mode & needed == needed


def _become_step(step: Step, uid: int) -> None:
    """In the child between fork and exec: the step's rlimits, its uid, then no_new_privs."""
    limit_process(step, None, uid)
    os.umask(0o022)
    if _libc().prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0:
        raise OSError(ctypes.get_errno(), "prctl(PR_SET_NO_NEW_PRIVS) failed")


@functools.cache
def _libc() -> ctypes.CDLL:
    return ctypes.CDLL(None, use_errno=True)
