"""The grader's clock around each repetition of a speed program (harness kernellab/speed.hpp).

A speed program runs student code, so nothing it says about time is believed: it only obeys. For
each repetition it makes itself ready untimed (L2 flushed, device idle) and says `armed`; the
grader reads its clock, sends the repetition's seed, and reads its clock again when the program's
`done DIGEST` arrives. The input is made from that seed inside the window, and the window closes
only on the digest of the output, so the work can happen neither before nor after it; the digest
is checked against the reference's for the same seed (timing.py). The pipes are the program's
only channel to the grader, passed as two descriptors; what the program prints goes to its log.
"""

import json
import os
import select
import subprocess
import sys
import time
from collections.abc import Callable, Sequence
from dataclasses import astuple, dataclass, field
from pathlib import Path

from kernellab import PACKAGE_PARENT, runner
from kernellab.cpus import available_cpus
from kernellab.sandbox.bubblewrap import Sandbox
from kernellab.sandbox.step import run_step

# What the grader may ask in one repetition: the timed call, or the same without the call.
TIME = "time"
OVERHEAD = "overhead"
# Longer replies than this are no reply of the harness's.
MAX_REPLY_BYTES = 4096


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
    """The program's replies, read awake (spinning) or asleep (select()), as `waits_awake` says."""

    def __init__(self, descriptor: int, deadline: float, awake: bool):
        os.set_blocking(descriptor, False)
        self._descriptor = descriptor
        self._deadline = deadline
        self._awake = awake
        self._buffer = b""

    def line(self) -> str:
        while b"\n" not in self._buffer:
            if len(self._buffer) > MAX_REPLY_BYTES:
                raise _Ended("a reply longer than the harness ever writes")
            remaining = self._deadline - time.monotonic()
            if remaining <= 0:
                raise _Ended("no reply before the time limit")
            if not self._awake:
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
    case's repetitions being `orders(case, size)`: (TIME or OVERHEAD, seed) pairs. The clock runs
    in a process of its own (`python -m kernellab.grading.speed.clock`), where no thread of the grader's
    (another grade's, in a batch) can hold it up."""
    awake = waits_awake()
    plan = {"cases": list(cases), "sizes": list(sizes), "timeout_s": timeout_s, "awake": awake,
            "orders": {f"{case} {size}": orders(case, size) for size in sizes for case in cases}}
    commands_read, commands_write = os.pipe()
    replies_read, replies_write = os.pipe()
    try:
        clock = subprocess.Popen(
            [sys.executable, "-m", "kernellab.grading.speed.clock", str(commands_write), str(replies_read)],
            stdin=subprocess.PIPE, stdout=subprocess.PIPE, pass_fds=(commands_write, replies_read),
            env={**os.environ, "PYTHONPATH": str(PACKAGE_PARENT)},
        )
    finally:
        os.close(commands_write)
        os.close(replies_read)
    try:
        clock.stdin.write(json.dumps(plan).encode())
        clock.stdin.close()
        command = [str(program), "--cases", ",".join(cases), "--sizes", ",".join(map(str, sizes)),
                   "--commands", str(commands_read), "--replies", str(replies_write), "--wait", "spin" if awake else "sleep"]
        ran = runner.run_program(command, cwd=log.parent, timeout_s=timeout_s, sandbox=sandbox, step=run_step(program, [], gpu=True),
                         pass_fds=(commands_read, replies_write))
    finally:
        # The program's end is now an end of file for the clock, whatever state it left the pipes in.
        os.close(commands_read)
        os.close(replies_write)
        # The clock stops at its own deadline at the latest.
        answer = clock.stdout.read()
        clock.stdout.close()
        clock.wait()
    log.write_text(ran.output, encoding="utf-8")
    served = _served(answer)
    if served.problem and (ran.exit_code != 0 or ran.timed_out):
        state = "timed out" if ran.timed_out else f"exited with status {ran.exit_code}"
        last = [line for line in ran.output.splitlines() if line.strip()][-3:]
        served.problem = f"{served.problem}; the speed run {state}: " + " / ".join(last)
    return served


def _served(answer: bytes) -> Served:
    try:
        data = json.loads(answer)
        return Served({(case, int(size)): value for case, size, value in data["bytes"]},
                      [Repetition(*fields) for fields in data["repetitions"]], data["problem"])
    except (ValueError, KeyError, TypeError) as error:
        return Served(problem=f"the grader's clock failed: {error}")


def _clock(commands: int, replies_from: int, plan: dict) -> Served:
    """The clock's process: drive the program through `plan`, time each repetition."""
    served = Served()
    replies = _Replies(replies_from, time.monotonic() + plan["timeout_s"], plan["awake"])
    try:
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
    measured = _clock(int(sys.argv[1]), int(sys.argv[2]), json.load(sys.stdin))
    json.dump({"bytes": [[case, size, value] for (case, size), value in measured.bytes.items()],
               "repetitions": [list(astuple(repetition)) for repetition in measured.repetitions],
               "problem": measured.problem}, sys.stdout)
