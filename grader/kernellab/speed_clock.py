"""The grader's clock around each repetition of a speed program (harness kernellab/speed.hpp).

A speed program runs student code, so nothing it says about time is believed: it only obeys. For
each repetition it makes itself ready untimed (L2 flushed, device idle) and says `armed`; the
grader reads its clock, sends the repetition's seed, and reads its clock again when the program's
`done DIGEST` arrives. The input is made from that seed inside the window, and the window closes
only on the digest of the output, so the work can happen neither before nor after it; the digest
is checked against the reference's for the same seed (speed.py). The pipes are the program's
only channel to the grader, passed as two descriptors; what the program prints goes to its log.
"""

import os
import select
import threading
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from kernellab import runner
from kernellab.sandbox import Sandbox, run_step

# What the grader may ask in one repetition: the timed call, or the same without the call.
TIME = "time"
OVERHEAD = "overhead"
# Longer replies than this are no reply of the harness's.
MAX_REPLY_BYTES = 4096
# How often a wait for a reply looks whether the program still runs.
POLL_S = 0.5


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


class _Replies:
    def __init__(self, descriptor: int, running: Callable[[], bool], deadline: float):
        self._descriptor = descriptor
        self._running = running
        self._deadline = deadline
        self._buffer = b""

    def line(self) -> str:
        while b"\n" not in self._buffer:
            if len(self._buffer) > MAX_REPLY_BYTES:
                raise _Ended("a reply longer than the harness ever writes")
            remaining = self._deadline - time.monotonic()
            if remaining <= 0:
                raise _Ended("no reply before the time limit")
            ready, _, _ = select.select([self._descriptor], [], [], min(remaining, POLL_S))
            if not ready:
                if not self._running():
                    raise _Ended("the program ended")
                continue
            block = os.read(self._descriptor, MAX_REPLY_BYTES)
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


def serve(
    program: Path,
    cases: Sequence[str],
    sizes: Sequence[int],
    orders: Callable[[str, int], list[tuple[str, int]]],
    log: Path,
    timeout_s: float,
    sandbox: Sandbox | None,
) -> Served:
    """Run `program` on every case at every size (sizes outer, as the harness serves them), each
    case's repetitions being `orders(case, size)`: (TIME or OVERHEAD, seed) pairs."""
    served = Served()
    commands_read, commands_write = os.pipe()
    replies_read, replies_write = os.pipe()
    outcome: list[runner.RunOutcome] = []
    command = [str(program), "--cases", ",".join(cases), "--sizes", ",".join(map(str, sizes)),
               "--commands", str(commands_read), "--replies", str(replies_write)]
    running = threading.Thread(target=lambda: outcome.append(runner.run(
        command, cwd=log.parent, timeout_s=timeout_s, sandbox=sandbox, step=run_step(program, [], gpu=True),
        pass_fds=(commands_read, replies_write),
    )))
    running.start()
    replies = _Replies(replies_read, running.is_alive, time.monotonic() + timeout_s)
    theirs_open = True
    try:
        for size in sizes:
            for case in cases:
                said = replies.expect("ready")
                if said[:2] != [case, str(size)] or len(said) != 3:
                    raise _Ended(f"ready for {' '.join(said)[:80]!r}, not for {case} at size {size}")
                if theirs_open:  # the program has its own copies now: its end is then an end of file here
                    os.close(commands_read)
                    os.close(replies_write)
                    theirs_open = False
                served.bytes[(case, size)] = float(said[2])
                for kind, seed in orders(case, size):
                    replies.expect("armed")
                    started = time.perf_counter()
                    os.write(commands_write, f"{kind} {seed}\n".encode())
                    digest = replies.expect("done")
                    micros = (time.perf_counter() - started) * 1e6
                    served.repetitions.append(Repetition(case, size, kind, seed, micros, digest[0] if digest else ""))
                replies.expect("armed")
                os.write(commands_write, b"next\n")
        replies.expect("finished")
    except (_Ended, OSError, ValueError) as error:
        served.problem = str(error)
    finally:
        os.close(commands_write)
        running.join()
        os.close(replies_read)
        if theirs_open:
            os.close(commands_read)
            os.close(replies_write)
    ran = outcome[0] if outcome else None
    if ran is not None:
        log.write_text(ran.output, encoding="utf-8")
        if served.problem and (ran.exit_code != 0 or ran.timed_out):
            state = "timed out" if ran.timed_out else f"exited with status {ran.exit_code}"
            last = [line for line in ran.output.splitlines() if line.strip()][-3:]
            served.problem = f"{served.problem}; the speed run {state}: " + " / ".join(last)
    return served
