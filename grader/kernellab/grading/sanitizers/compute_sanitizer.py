"""GPU sanitizers as feedback: compute-sanitizer's memcheck, racecheck and synccheck on each test
executable of a submission, at a few small sizes so that they finish in seconds.

A race or an out-of-bounds read can pass every test when the data happens to hide it; the
sanitizers report it anyway, with the kernel and the source line. They run inside the sandbox
like every other run of student code, and write their report to a file of their own (not the
program's output, which the student controls). The manifest's `sanitizer_penalty` decides what a
report costs; a hostile program that tampers with the report can only avoid that penalty, never
gain points.
"""

import re
import shutil
from dataclasses import dataclass
from pathlib import Path

from kernellab import runner
from kernellab.sandbox.bubblewrap import Sandbox
from kernellab.sandbox.step import CORRECTNESS_NICENESS, Step, fresh_output

TOOLS = ("memcheck", "racecheck", "synccheck")
# Test cases tagged so exist to make races show on a plain run, by delaying threads at random,
# at fixed (large) sizes; the sanitizers find those races without the delays, at the small sizes
# the manifest gives them (grading.sanitizer_sizes).
SKIPPED_TESTS = "~[random-delays]"
# The sanitizers slow a program down by 10-100x on the GPU; the sizes they run at are small.
TIMEOUT_FACTOR = 4
# compute-sanitizer's own lines start with this.
_PREFIX = "========= "
# Racecheck's summary counts the hazards it displayed, its warnings (possible hazards) among
# them: only its errors are races ("2 hazards displayed (5 errors, 0 warnings)").
_SUMMARY = re.compile(r"^========= (?:ERROR SUMMARY: (\d+) errors?|RACECHECK SUMMARY: \d+ hazards? displayed \((\d+) errors?)")
_NOT_FINDINGS = re.compile(r"^========= (COMPUTE-SANITIZER|ERROR SUMMARY|RACECHECK SUMMARY|Target application returned|\s*$)")


@dataclass(frozen=True)
class SanitizerReport:
    tests: str
    tool: str
    # None when the tool gave no summary (timed out, or the program crashed under it).
    errors: int | None
    # The first error's lines, as compute-sanitizer wrote them.
    first_error: str = ""

    def describe(self) -> str:
        if self.errors is None:
            return f"{self.tool}: no report ({self.first_error})"
        if self.errors == 0:
            return f"{self.tool}: no errors"
        return f"{self.tool}: {self.errors} error(s), the first:\n{self.first_error}"


def find_tool() -> str | None:
    """compute-sanitizer, on PATH or next to the CUDA toolkit's nvcc."""
    found = shutil.which("compute-sanitizer")
    if found:
        return found
    nvcc = shutil.which("nvcc")
    candidate = Path(nvcc).resolve().parent / "compute-sanitizer" if nvcc else None
    return str(candidate) if candidate and candidate.is_file() else None


def sanitize(
    tool_path: str,
    tool: str,
    program: Path,
    tests: str,
    log: Path,
    timeout_s: float,
    sandbox: Sandbox | None,
    sizes: tuple[int, ...],
    block_sizes: tuple[int, ...],
) -> SanitizerReport:
    """Run one test executable under one sanitizer tool, at `sizes` in blocks of `block_sizes`
    threads; its report goes to `log`."""
    fresh_output(log)
    step = Step(readable=(program,), writable=(log,), gpu=True, niceness=CORRECTNESS_NICENESS)
    outcome = runner.run_program(
        [tool_path, "--tool", tool, "--log-file", str(log), "--print-limit", "3", str(program), SKIPPED_TESTS, "--order", "decl"],
        cwd=log.parent,
        timeout_s=timeout_s,
        environment={"KERNELLAB_SIZES": ",".join(map(str, sizes)), "KERNELLAB_BLOCK_SIZES": ",".join(map(str, block_sizes))},
        sandbox=sandbox,
        step=step,
    )
    return parse_report(tests, tool, log.read_text(encoding="utf-8", errors="replace"), outcome)


def parse_report(tests: str, tool: str, text: str, outcome: runner.RunOutcome) -> SanitizerReport:
    lines = [line for line in text.splitlines() if line.startswith(_PREFIX)]
    counts = [int(match[1] or match[2]) for line in lines if (match := _SUMMARY.match(line))]
    if not counts:
        why = "timed out" if outcome.timed_out else f"the program ended with {outcome.exit_code} before the tool's summary"
        return SanitizerReport(tests, tool, None, why)
    findings = [line[len(_PREFIX):].rstrip() for line in lines if not _NOT_FINDINGS.match(line)]
    return SanitizerReport(tests, tool, max(counts), "\n".join(findings[:4]))
