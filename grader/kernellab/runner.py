"""Run one untrusted program: in the sandbox, its own session, a wall-clock limit, bounded output.

A program built from student code may hang, fork, or print without end. Each run gets a fresh
process (a CUDA error poisons a context for every later call) inside the sandbox (sandbox/)
when one is given, its whole process tree is killed at the time limit, and only the head and
tail of its output are kept.
"""

import functools
import os
import re
import resource
import signal
import socket
import subprocess
import threading
import time
from collections.abc import Callable, Iterator, Mapping, Sequence
from contextlib import contextmanager, nullcontext
from dataclasses import dataclass
from pathlib import Path

from kernellab import gpu_memory, stopping
from kernellab.cpus import available_cpus
from kernellab.sandbox.bubblewrap import Sandbox
from kernellab.sandbox.limits import limit_process
from kernellab.sandbox.step import Confined, SandboxFailure, Step
from kernellab.verdict import RunEnd, signal_name

# Output kept from each end of a run's output; the middle is dropped and counted.
OUTPUT_KEPT_BYTES = 32 << 10
# bubblewrap exits with 128 + N when the sandboxed program was killed by signal N.
SANDBOX_SIGNAL_BASE = 128
# Variables of the grader's environment a test executable may see; nothing else leaks into it.
# KERNELLAB_CPU_*: how the CPU backend runs (thread orders, OS threads), as the TA chose.
PASSED_ENVIRONMENT = (
    "PATH", "LANG", "LC_ALL", "CUDA_VISIBLE_DEVICES", "LD_LIBRARY_PATH", "TMPDIR",
    "KERNELLAB_CPU_ORDERS", "KERNELLAB_CPU_WORKERS",
)
# How often a run that may be ended early (run_program's `until`) looks whether it is to be.
UNTIL_POLL_S = 0.02
# How CUDA reports that the GPU had no memory left for a run (its context or an allocation).
_OUT_OF_GPU_MEMORY = re.compile(r"cudaErrorMemoryAllocation|CUDA_ERROR_OUT_OF_MEMORY|out of memory")


def cpu_workers(step: Step) -> int:
    """The CPU backend's OS threads for a run in `step`: one per CPU it may use (in a container,
    its quota, not the machine's count of cores), but at most a quarter of the step's processes,
    so that on a machine of hundreds of cores the threads alone cannot reach the process limit
    and pass for a fork bomb; and at least two, also on one CPU, so that blocks that wait for
    each other (scan-lookback's look-back) can run at once."""
    return max(2, min(available_cpus(), step.processes // 4))


@dataclass(frozen=True)
class RunOutcome:
    exit_code: int | None  # None when it was killed at the time limit
    timed_out: bool
    seconds: float
    output: str
    # The sandbox limit that stopped the run ("memory", "processes"), if one did.
    limit_hit: str = ""
    # time.monotonic() when the run ended: with `seconds`, when the GPU's memory mattered.
    ended: float = 0.0

    @property
    def signal_name(self) -> str:
        """'SIGSEGV' for a run a signal ended, '' otherwise."""
        if self.exit_code is None or self.exit_code >= 0:
            return ""
        return signal_name(-self.exit_code)

    def end(self, failed: bool, has_results: bool, needs_gpu: bool, failures_left_to_gpu: bool = False) -> RunEnd:
        """How the run ended, with what its results showed, for verdict.decide."""
        return RunEnd(self.exit_code, self.timed_out, failed, has_results, self.limit_hit, needs_gpu, failures_left_to_gpu)

    def may_owe_to_neighbours(self) -> bool:
        """Whether the run may have failed through the runs beside it: out of time, or out of GPU
        memory while the grader saw the device nearly full (what the run printed decides nothing
        where the grader watches the device), but not at its own sandbox limit (a crash or a
        wrong result is the run's own)."""
        if self.limit_hit:
            return False
        if self.timed_out:
            return True
        if not _OUT_OF_GPU_MEMORY.search(self.output):
            return False
        use = gpu_memory.machine_use()
        return use is None or use.nearly_full(self.ended - self.seconds, self.ended) is not False

    def summary(self) -> str:
        """'timed out', or 'exit status 1', 'exit status -11 (SIGSEGV)'."""
        if self.timed_out:
            return "timed out"
        return f"exit status {self.exit_code}" + (f" ({self.signal_name})" if self.signal_name else "")


def limit_words(limit: str, step: Step) -> str:
    """'memory limit (8 GiB)', 'GPU memory limit (16 GiB)' or 'process limit (256 processes and threads)'."""
    if limit == "memory":
        return f"memory limit ({step.memory_bytes / (1 << 30):g} GiB)"
    if limit == "GPU memory":
        return f"GPU memory limit ({step.gpu_memory_bytes / (1 << 30):g} GiB)"
    return f"process limit ({step.processes} processes and threads)"


class _BoundedOutput:
    def __init__(self) -> None:
        self.head = bytearray()
        self.tail = bytearray()
        self.dropped = 0

    def add(self, block: bytes) -> None:
        room = OUTPUT_KEPT_BYTES - len(self.head)
        if room > 0:
            self.head += block[:room]
            block = block[room:]
        self.tail += block
        if len(self.tail) > OUTPUT_KEPT_BYTES:
            cut = len(self.tail) - OUTPUT_KEPT_BYTES
            self.dropped += cut
            del self.tail[:cut]

    def text(self) -> str:
        middle = f"\n[... {self.dropped} bytes of output left out ...]\n".encode() if self.dropped else b""
        return bytes(self.head + middle + self.tail).decode("utf-8", errors="replace")


# Where a student build's harness writes its records (kernellab/record.hpp, kRecordDescriptor): a
# socket the grader reads while the run goes on, above the run's descriptor limit. The run can
# neither reopen a socket by /proc/self/fd nor, below the limit, put a descriptor of its own at this
# number (open, dup2 and fcntl all stay under it), so what the harness wrote reaches the grader as
# it was written; records that the run adds beside them are checks made twice, which the judge
# refuses. (A file would not do: the run could rewrite it at exit, its end record included.)
RECORD_DESCRIPTOR = 1000
_record_descriptor_lock = threading.Lock()


def run_program(
    command: Sequence[str],
    cwd: Path,
    timeout_s: float,
    environment: Mapping[str, str] = {},
    sandbox: Sandbox | None = None,
    step: Step | None = None,
    pass_fds: Sequence[int] = (),
    records_to: Path | None = None,
    until: threading.Event | None = None,
) -> RunOutcome:
    """Run `command` in `cwd` with only the passed-through and the given environment variables;
    inside `sandbox` as `step` when given (then `cwd` counts only if the step sees it). The
    descriptors `pass_fds` stay open in the program (the speed program's pipes to the grader).
    With `records_to`, what the program writes to RECORD_DESCRIPTOR goes to that file (at most the
    step's file size), read by the grader while the program runs. With `until`, the run is killed
    as soon as that is set (a speed program that failed a pass, from the thread that drives it)."""
    channel = _RecordChannel(records_to, step.file_bytes if step else 1 << 30) if records_to else None
    try:
        return _run(command, cwd, timeout_s, environment, sandbox, step, pass_fds, channel, until)
    finally:
        if channel:
            channel.close()


def _run(command: Sequence[str], cwd: Path, timeout_s: float, environment: Mapping[str, str], sandbox: Sandbox | None,
         step: Step | None, pass_fds: Sequence[int], channel: "_RecordChannel | None",
         until: threading.Event | None) -> RunOutcome:
    env = {name: os.environ[name] for name in PASSED_ENVIRONMENT if name in os.environ}
    if step is not None:
        env.setdefault("KERNELLAB_CPU_WORKERS", str(cpu_workers(step)))
    env.update(HOME=str(cwd), **environment)
    with sandbox.confine(list(command), step, cwd) if sandbox and step else _unconfined(command, cwd, step) as confined:
        stopping.hold_if_stopping()
        started = time.monotonic()
        with channel.placed() if channel else nullcontext():
            process = subprocess.Popen(
                confined.argv,
                cwd=confined.cwd,
                env=env,
                stdin=subprocess.DEVNULL,
                stdout=subprocess.PIPE,
                stderr=subprocess.STDOUT,
                start_new_session=True,
                preexec_fn=stopping.dying_with_grader(_below_record_descriptor(confined.preexec) if channel else confined.preexec),
                pass_fds=(*confined.pass_fds, *pass_fds, *((RECORD_DESCRIPTOR,) if channel else ())),
            )
        if channel:
            channel.reading()
        output = _BoundedOutput()
        reader = threading.Thread(target=_drain, args=(process.stdout, output), daemon=True)
        reader.start()
        timed_out = False
        with stopping.ended_on_stop(functools.partial(_kill_group, process.pid)):
            try:
                _wait(process, timeout_s, until)
            except subprocess.TimeoutExpired:
                timed_out = True
            finally:
                # Whatever it left behind goes too (a forked child, a spinning kernel's host): its
                # session's group here; in the sandbox, bubblewrap's death ends its pid namespace.
                _kill_group(process.pid)
                process.wait()
        # A run that a stop of the grader killed has no outcome to judge.
        stopping.hold_if_stopping()
        reader.join(timeout=5)
        if channel:
            channel.drained()
        exit_code = None if timed_out else process.returncode
        if not timed_out and not confined.started():
            raise SandboxFailure(f"the sandbox could not start {command[0]}: {output.text().strip()[:500]}")
        if sandbox and step and exit_code is not None and SANDBOX_SIGNAL_BASE < exit_code <= SANDBOX_SIGNAL_BASE + 64:
            exit_code = SANDBOX_SIGNAL_BASE - exit_code  # bubblewrap's "killed by signal N", as Popen words it
        ended = time.monotonic()
        return RunOutcome(exit_code, timed_out, ended - started, output.text(), confined.limit_hit(), ended)


class _RecordChannel:
    """The socket between a run's RECORD_DESCRIPTOR and its records file, drained by a thread."""

    def __init__(self, records: Path, most_bytes: int):
        self._records, self._most_bytes = records, most_bytes
        self._grader_end, self._run_end = socket.socketpair()
        self._thread = threading.Thread(target=self._drain, daemon=True)

    @contextmanager
    def placed(self) -> Iterator[None]:
        """The run's end at RECORD_DESCRIPTOR in this process, inheritable, while the program starts
        (one start at a time: the number is one for the whole process)."""
        with _record_descriptor_lock:
            try:
                os.fstat(RECORD_DESCRIPTOR)
            except OSError:
                pass
            else:
                raise SandboxFailure(f"the grader's descriptor {RECORD_DESCRIPTOR}, the records' channel, is taken")
            os.dup2(self._run_end.fileno(), RECORD_DESCRIPTOR, inheritable=True)
            try:
                yield
            finally:
                os.close(RECORD_DESCRIPTOR)

    def reading(self) -> None:
        """Only the program holds the run's end now: its end of file is the program's end."""
        self._run_end.close()
        self._thread.start()

    def _drain(self) -> None:
        written = 0
        with open(self._records, "wb") as records:
            while block := self._grader_end.recv(1 << 20):
                # Past the limit the rest is read and dropped: the records lack their end record.
                kept = block[:max(0, self._most_bytes - written)]
                records.write(kept)
                written += len(kept)

    def drained(self) -> None:
        """Wait for the records (a process the run left behind outside any sandbox could hold the
        socket open: its last bytes are not waited for)."""
        self._thread.join(timeout=5)
        if self._thread.is_alive():
            self._grader_end.shutdown(socket.SHUT_RDWR)
            self._thread.join()

    def close(self) -> None:
        if self._thread.ident is not None:
            self.drained()
        self._run_end.close()
        self._grader_end.close()


def _below_record_descriptor(preexec: Callable[[], None] | None) -> Callable[[], None]:
    """`preexec`, then a descriptor limit that RECORD_DESCRIPTOR is at: the program can open, dup2 or
    fcntl no descriptor of its own there."""
    def limited() -> None:
        if preexec:
            preexec()
        resource.setrlimit(resource.RLIMIT_NOFILE, (RECORD_DESCRIPTOR, RECORD_DESCRIPTOR))
    return limited


@contextmanager
def _unconfined(command: Sequence[str], cwd: Path, step: Step | None) -> Iterator[Confined]:
    """Without a sandbox (trusted code, or the TA's explicit choice): the step's rlimits only."""
    preexec = functools.partial(limit_process, step) if step else None
    yield Confined(list(command), cwd, preexec=preexec, limit_hit=lambda: "")


def _wait(process: subprocess.Popen, timeout_s: float, until: threading.Event | None) -> None:
    """Wait for `process` to end, at most `timeout_s` (subprocess.TimeoutExpired), or until `until`
    is set, looking every UNTIL_POLL_S."""
    if until is None:
        process.wait(timeout=timeout_s)
        return
    deadline = time.monotonic() + timeout_s
    while not until.is_set():
        try:
            process.wait(timeout=min(UNTIL_POLL_S, max(0.0, deadline - time.monotonic())))
            return
        except subprocess.TimeoutExpired:
            if time.monotonic() >= deadline:
                raise


def _drain(stream, output: _BoundedOutput) -> None:
    while block := stream.read1(1 << 16):
        output.add(block)


def _kill_group(pid: int) -> None:
    try:
        os.killpg(pid, signal.SIGKILL)
    except ProcessLookupError:
        pass
