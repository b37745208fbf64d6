"""The grader's clock around each repetition of a speed program (harness kernellab/speed.hpp).

A speed program runs student code, so nothing it says about time is believed: it only obeys. For
each repetition it makes itself ready untimed (L2 flushed, device idle) and says `armed`; the
grader reads its clock, sends the repetition's seed, and reads its clock again when the program's
`done DIGEST` arrives. The input is made from that seed inside the window, and the window closes
only on the digest of the output, so the work can happen neither before nor after it; the digest
is checked against the reference's for the same seed (timing.py). The pipes are the program's
only channel to the grader, passed as two descriptors; what the program prints goes to its log.

One run of a program (SpeedProgram) serves several passes over its cases: a start, with its
sandbox and its CUDA context, took longer than a pass of pbb's small sizes. Its clock is a process
of its own, where no thread of the grader's (another grade's, in a batch) can hold it up, and
lives as long as the program.
"""

import json
import math
import os
import select
import subprocess
import sys
import threading
import time
from collections.abc import Callable, Sequence
from dataclasses import astuple, dataclass, field
from pathlib import Path
from typing import TextIO

from kernellab import PACKAGE_PARENT, runner
from kernellab.cpus import available_cpus
from kernellab.sandbox.bubblewrap import Sandbox
from kernellab.sandbox.step import run_step

# What the grader may ask in one repetition: the timed call, or the same without the call.
TIME = "time"
OVERHEAD = "overhead"
# Longer replies than this are no reply of the harness's.
MAX_REPLY_BYTES = 4096
# How long a program told to end may take before it is killed: its end frees its GPU context.
CLOSE_GRACE_S = 5.0


@dataclass(frozen=True)
class Repetition:
    case: str
    size: int
    kind: str  # TIME or OVERHEAD
    seed: int
    micros: float
    digest: str


@dataclass
class Served:
    """One run of a speed program: each case's bytes (for GB/s) and every timed repetition."""

    bytes: dict[tuple[str, int], float] = field(default_factory=dict)
    repetitions: list[Repetition] = field(default_factory=list)
    # Why the run stopped before its last repetition, or "".
    problem: str = ""


class _Ended(Exception):
    """The program stopped obeying: it ended, said something else, or took too long."""


def waits_awake() -> bool:
    """Whether the clock and the program wait for each other awake, each spinning on a core of its
    own: asleep in select(), the clock woke some time after each reply, and that time fell inside
    the window. On an H100, waiting awake made pbb's overhead windows 20 to 50 us shorter and halved
    their spread between a grade's runs (docs/performance.md). With one CPU the two would spin in
    turns of the scheduler's time slices, milliseconds each, so there they wait asleep."""
    return available_cpus() >= 2


class _Replies:
    """The program's replies, read awake (spinning) or asleep (select()), as `waits_awake` says,
    each before the deadline of the pass that waits for it."""

    def __init__(self, descriptor: int):
        os.set_blocking(descriptor, False)
        self._descriptor = descriptor
        self._buffer = b""
        self.deadline = math.inf
        self.awake = False

    def line(self) -> str:
        while b"\n" not in self._buffer:
            if len(self._buffer) > MAX_REPLY_BYTES:
                raise _Ended("a reply longer than the harness ever writes")
            remaining = self.deadline - time.monotonic()
            if remaining <= 0:
                raise _Ended("no reply before the time limit")
            if not self.awake:
                select.select([self._descriptor], [], [], remaining)
            try:
                block = os.read(self._descriptor, MAX_REPLY_BYTES)
            except BlockingIOError:
                continue
            if not block:
                raise _Ended("the program ended")
            self._buffer += block
        line, _, self._buffer = self._buffer.partition(b"\n")
        return line.decode("utf-8", errors="replace")

    def expect(self, word: str) -> list[str]:
        fields = self.line().split(" ")
        if fields[0] != word:
            raise _Ended(f"it said {' '.join(fields)[:80]!r} where the harness says {word!r}")
        return fields[1:]


class SpeedProgram:
    """One run of `program` (sandboxed in `sandbox` when given), serving the passes that `serve`
    asks for over its `cases` at every one of `sizes` until it is closed; what it printed goes to
    `log`. It starts at once: start several, then `wait_started` for each, so that their starts
    overlap and none overlaps a pass. Every pass must end within `pass_timeout_s`, the run within
    `life_timeout_s`. A pass that fails ends the run: the passes after it get its problem."""

    def __init__(self, program: Path, cases: Sequence[str], sizes: Sequence[int], log: Path,
                 pass_timeout_s: float, life_timeout_s: float, sandbox: Sandbox | None):
        self._log = log
        self._sizes = list(sizes)
        self._awake = waits_awake()
        self._problem = ""
        self._until = threading.Event()
        self._ran: runner.RunOutcome | None = None
        self._error: BaseException | None = None  # from the run's thread, raised in the grader's
        commands_read, commands_write = os.pipe()
        replies_read, replies_write = os.pipe()
        try:
            self._clock = subprocess.Popen(
                [sys.executable, "-m", "kernellab.grading.speed.clock", str(commands_write), str(replies_read), str(pass_timeout_s)],
                stdin=subprocess.PIPE, stdout=subprocess.PIPE, pass_fds=(commands_write, replies_read),
                env={**os.environ, "PYTHONPATH": str(PACKAGE_PARENT)},
            )
        finally:
            os.close(commands_write)
            os.close(replies_read)
        command = [str(program), "--cases", ",".join(cases), "--sizes", ",".join(map(str, sizes)),
                   "--commands", str(commands_read), "--replies", str(replies_write), "--wait", "spin" if self._awake else "sleep"]
        self._thread = threading.Thread(target=self._run, args=(command, program, commands_read, replies_write, life_timeout_s, sandbox),
                                        daemon=True)
        self._thread.start()

    def _run(self, command: list[str], program: Path, commands_read: int, replies_write: int, life_timeout_s: float,
             sandbox: Sandbox | None) -> None:
        try:
            self._ran = runner.run_program(command, cwd=self._log.parent, timeout_s=life_timeout_s, sandbox=sandbox,
                                           step=run_step(program, [], gpu=True), pass_fds=(commands_read, replies_write),
                                           until=self._until)
        except BaseException as error:  # the sandbox's failure is the grader's, not the program's
            self._error = error
        finally:
            # The program's end is now an end of file for the clock, whatever state it left the pipes in.
            os.close(commands_read)
            os.close(replies_write)

    def __enter__(self) -> "SpeedProgram":
        return self

    def __exit__(self, *exc_info) -> None:
        self.close()

    def wait_started(self) -> None:
        """Wait until the program is ready for its first pass, or has failed to be."""
        if not self._problem:
            self._check(self._answer())

    def serve(self, cases: Sequence[str], orders: Callable[[str, int], list[tuple[str, int]]]) -> Served:
        """One pass over `cases` (of the program's) at every size, each case's repetitions being
        `orders(case, size)`: (TIME or OVERHEAD, seed) pairs."""
        if self._problem:
            return Served(problem=self._problem)
        plan = {"cases": list(cases), "sizes": self._sizes, "awake": self._awake,
                "orders": {f"{case} {size}": orders(case, size) for size in self._sizes for case in cases}}
        try:
            self._clock.stdin.write(json.dumps(plan).encode() + b"\n")
            self._clock.stdin.flush()
        except OSError:
            pass  # the clock has gone: its answer is missing
        served = self._answer()
        self._check(served)
        return served

    def _answer(self) -> Served:
        """The clock's answer to the last request (the start, or a pass)."""
        try:
            data = json.loads(self._clock.stdout.readline())
            return Served({(case, int(size)): value for case, size, value in data["bytes"]},
                          [Repetition(*fields) for fields in data["repetitions"]], data["problem"])
        except (ValueError, KeyError, TypeError) as error:
            return Served(problem=f"the grader's clock failed: {error}")

    def _check(self, served: Served) -> None:
        """A problem ends the run: `served` then says how the run ended too."""
        if served.problem:
            self._fail(served.problem)
            served.problem = self._problem

    def _fail(self, problem: str) -> None:
        """Stop the program after `problem`, adding how it ended where it ended of itself."""
        ran = self._ran
        self._end()
        if ran is not None and (ran.exit_code != 0 or ran.timed_out):
            state = "timed out" if ran.timed_out else f"exited with status {ran.exit_code}"
            last = [line for line in ran.output.splitlines() if line.strip()][-3:]
            problem = f"{problem}; the speed run {state}: " + " / ".join(last)
        self._problem = problem

    def _end(self) -> None:
        """Kill the program unless it has ended, and wait until it has."""
        self._until.set()
        self._thread.join()
        if self._error:
            raise self._error

    def close(self) -> None:
        """End the program (its clock's end is the end of its commands) and wait until it has
        ended, killing it after CLOSE_GRACE_S; then write its log."""
        try:
            self._clock.stdin.close()
        except OSError:
            pass
        self._thread.join(timeout=CLOSE_GRACE_S)
        try:
            self._end()
        finally:
            # The program's end ends a pass cut short (an error in the grader's thread): its
            # answer, unread, could fill the pipe the clock writes it to.
            self._clock.stdout.read()
            self._clock.wait()
            self._clock.stdout.close()
            self._log.write_text(self._ran.output if self._ran else "", encoding="utf-8")


def _answer(answers: TextIO, served: Served) -> None:
    json.dump({"bytes": [[case, size, value] for (case, size), value in served.bytes.items()],
               "repetitions": [list(astuple(repetition)) for repetition in served.repetitions],
               "problem": served.problem}, answers)
    answers.write("\n")
    answers.flush()


def _clock(commands: int, replies_from: int, pass_timeout_s: float, plans: TextIO, answers: TextIO) -> None:
    """The clock's process: answer once the program has started, then drive it through each pass
    that `plans` asks for (a line each), timing each repetition, until the grader's end of plans."""
    replies = _Replies(replies_from)
    replies.deadline = time.monotonic() + pass_timeout_s
    started = Served()
    try:
        replies.expect("started")
    except (_Ended, OSError, ValueError) as error:
        started.problem = str(error)
    _answer(answers, started)
    for line in plans:
        plan = json.loads(line)
        replies.deadline, replies.awake = time.monotonic() + pass_timeout_s, plan["awake"]
        _answer(answers, _pass(commands, replies, plan))


def _pass(commands: int, replies: _Replies, plan: dict) -> Served:
    """One pass of the program over the plan's cases at each of its sizes."""
    served = Served()
    try:
        os.write(commands, f"serve {','.join(plan['cases'])}\n".encode())
        for size in plan["sizes"]:
            for case in plan["cases"]:
                said = replies.expect("ready")
                if said[:2] != [case, str(size)] or len(said) != 3:
                    raise _Ended(f"ready for {' '.join(said)[:80]!r}, not for {case} at size {size}")
                served.bytes[(case, size)] = float(said[2])
                for kind, seed in plan["orders"][f"{case} {size}"]:
                    replies.expect("armed")
                    started = time.perf_counter()
                    os.write(commands, f"{kind} {seed}\n".encode())
                    digest = replies.expect("done")
                    micros = (time.perf_counter() - started) * 1e6
                    served.repetitions.append(Repetition(case, size, kind, seed, micros, digest[0] if digest else ""))
                replies.expect("armed")
                os.write(commands, b"next\n")
        replies.expect("finished")
    except (_Ended, OSError, ValueError) as error:
        served.problem = str(error)
    return served


if __name__ == "__main__":
    _clock(int(sys.argv[1]), int(sys.argv[2]), float(sys.argv[3]), sys.stdin, sys.stdout)
