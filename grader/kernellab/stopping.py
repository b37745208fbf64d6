"""Stopping the grader cleanly: SIGTERM or SIGINT ends every process it started, and then it.

A grade starts processes in many places: each build and run through runner.run_program (in a
session of its own, often in bubblewrap's namespaces or as a step uid of its own), the speed
clock, and the tools the grader runs itself (CMake's configure step, ninja, nm, nvcc --dryrun,
the libclang helper). SIGTERM (`timeout`, Slurm's time limit, systemd) or SIGINT (Ctrl-C) reaches
the grader, at most its process group, never its runs' sessions; left to Python's default, the
grader dies and its runs go on, or (SIGINT) its threads wait for them. While `stop_on_signals`
holds (`grade`, `batch`, `serve`), either signal makes the grader SIGKILL

- what the code that started a step registered with `ended_on_stop`: a run's session
  (runner.py), a step's cgroup (sandbox/bubblewrap.py); and with `uid_ended_on_stop`, a step
  uid's processes (sandbox/container.py); these also hold what left the grader's tree (an
  orphan of a run);
- every descendant of the grader, found in /proc: the tools it runs itself, and everything
  below its children (bubblewrap's sandboxes); and every process of a session that a descendant
  leads, which holds a run's orphans before the run's ender is registered;

until none of them is left, then exit at once with status 128 + the signal's number (os._exit),
so that no thread goes on to judge a run the stop killed (as a crash), write that grade or start
another run; for the moments the stop takes, the threads that could do so wait in
`hold_if_stopping` (a run's end, a batch's or the service's grade before it is written or sent).
What was written stays: reports are replaced atomically and a batch counts a student finished by
grade.json, written last (batch.py), so a rerun resumes. A SIGKILL reaches no handler: then
runner.py's children die with their parent (`dying_with_grader`), and bubblewrap's sandboxes
with bubblewrap (--die-with-parent).
"""

import ctypes
import functools
import os
import signal
import threading
import time
from collections.abc import Callable, Collection, Iterator
from contextlib import contextmanager
from pathlib import Path

SIGNALS = (signal.SIGTERM, signal.SIGINT)
# How long the stop goes on killing what it finds before the grader exits anyway: a process in
# uninterruptible sleep (a GPU context being torn down) may take a moment to die. Within the
# 10 s a TA or a platform waits (issue 26).
KILL_FOR_S = 5.0
_KILL_ROUND_S = 0.02
# prctl(2): the signal a process gets when the thread that started it ends.
_PR_SET_PDEATHSIG = 1

_enders: set[Callable[[], None]] = set()
_step_uids: set[int] = set()
_stopping = threading.Event()


@contextmanager
def ended_on_stop(end: Callable[[], None]) -> Iterator[None]:
    """While in the context, a stop calls `end` (SIGKILL what a step started; it may raise
    OSError). `end` must not wait for what it killed to go: a stop calls hundreds in turn."""
    _enders.add(end)
    try:
        yield
    finally:
        _enders.discard(end)


@contextmanager
def uid_ended_on_stop(uid: int) -> Iterator[None]:
    """While in the context, a stop SIGKILLs every process whose real uid is `uid` (a container
    sandbox step's own): every such uid in one walk of /proc a round, not one walk per step."""
    _step_uids.add(uid)
    try:
        yield
    finally:
        _step_uids.discard(uid)


def hold_if_stopping() -> None:
    """Never return once the grader is stopping: the stop exits within moments, and a thread
    that went on would start a run, judge one the stop killed as crashed, or publish its grade."""
    if _stopping.is_set():
        threading.Event().wait()


@contextmanager
def stop_on_signals(note: str = "") -> Iterator[None]:
    """While in the context, SIGTERM and SIGINT stop the grader cleanly (see the module's doc),
    saying so with `note` on stderr. Only the main thread may set signal handlers; called in
    another (a test running the command line in a thread), it changes nothing."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    previous = {number: signal.signal(number, functools.partial(_stop, note=note)) for number in SIGNALS}
    try:
        yield
    finally:
        for number, handler in previous.items():
            signal.signal(number, handler)


def dying_with_grader(preexec: Callable[[], None] | None) -> Callable[[], None]:
    """What a child runs between fork and exec: `preexec` (the sandbox's, which may change the
    uid, and that clears the parent-death signal), then SIGKILL once the thread that started it
    ends (the grader's threads end with it); if the grader already ended, the child ends now."""
    grader = os.getpid()
    libc = _libc()  # loaded here: the child between fork and exec only calls it

    def set_up() -> None:
        if preexec:
            preexec()
        if libc.prctl(_PR_SET_PDEATHSIG, signal.SIGKILL, 0, 0, 0) != 0:
            raise OSError(ctypes.get_errno(), "prctl(PR_SET_PDEATHSIG) failed")
        if os.getppid() != grader:
            os._exit(128 + signal.SIGKILL)

    return set_up


def kill_processes_of(uids: Collection[int]) -> None:
    """SIGKILL every process whose real uid is one of `uids` (steps' own, which nothing else runs as)."""
    wanted = {str(uid) for uid in uids}
    if not wanted:
        return
    for pid in _pids():
        try:
            status = Path(f"/proc/{pid}/status").read_text()
        except OSError:
            continue
        real = next((line.split()[1] for line in status.splitlines() if line.startswith("Uid:")), None)
        if real in wanted:
            _kill(pid)


def _stop(number: int, frame: object, note: str) -> None:
    """The handler of SIGTERM and SIGINT: end every process the grader started, then the grader."""
    if _stopping.is_set():
        return  # a second Ctrl-C: the first one's stop goes on
    _stopping.set()
    try:
        deadline = time.monotonic() + KILL_FOR_S
        sessions: set[int] = set()
        while True:
            for end in list(_enders):
                try:
                    end()
                except OSError:
                    pass
            kill_processes_of(set(_step_uids))
            left = _kill_descendants(sessions)
            if not left or time.monotonic() > deadline:
                break
            time.sleep(_KILL_ROUND_S)
        # rich's progress bar hides the terminal's cursor until it is shown again.
        if os.isatty(1):
            os.write(1, b"\x1b[?25h\n")
        ended = f"{left} processes it started were killed but not yet gone" if left else "every process it started has ended"
        os.write(2, f"kernellab: stopped by {signal.Signals(number).name}; {ended}{note}\n".encode())
    finally:
        os._exit(128 + number)


def _kill_descendants(sessions: set[int]) -> int:
    """SIGKILL every live descendant of this process, and every live process of a session that a
    descendant leads (a run's, started in a session of its own: runner.py) or led in an earlier
    round (`sessions`, which this adds to); how many there were. The sessions hold a run's orphans
    (a child it forked and left) even when the stop comes before the thread that started the run
    has registered its ender: CI once saw such an orphan live on past the stop."""
    children: dict[int, list[int]] = {}
    session_of: dict[int, int] = {}
    alive = set()
    for pid in _pids():
        try:
            stat = Path(f"/proc/{pid}/stat").read_text()
        except OSError:
            continue
        # pid (comm) state ppid pgrp session ...: comm may hold spaces and parentheses, so split
        # after its last ')'.
        state, parent, _group, session = stat[stat.rindex(")") + 2 :].split(" ", 4)[:4]
        children.setdefault(int(parent), []).append(pid)
        session_of[pid] = int(session)
        if state not in ("Z", "X"):
            alive.add(pid)
    found, unwalked = [], [os.getpid()]
    while unwalked:
        below = children.get(unwalked.pop(), [])
        found += below
        unwalked += below
    sessions.update(pid for pid in found if session_of[pid] == pid)
    doomed = alive.intersection(found) | {pid for pid in alive if session_of[pid] in sessions}
    for pid in doomed:
        _kill(pid)
    return len(doomed)


def _pids() -> list[int]:
    return [int(name) for name in os.listdir("/proc") if name.isdigit()]


def _kill(pid: int) -> None:
    try:
        os.kill(pid, signal.SIGKILL)
    except OSError:  # gone already, or not the grader's to kill: nothing more a stop can do
        pass


@functools.cache
def _libc() -> ctypes.CDLL:
    return ctypes.CDLL(None, use_errno=True)
