"""The build interface of the C++ side: configure, build and run one assignment's test executables."""

import re
import shutil
import subprocess
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from kernellab.cpus import available_cpus
from kernellab.errors import InputError

# Linker errors name their cause on the line before "ld returned 1": keep those lines too.
_ERROR_LINE = re.compile(r"\berror\b|multiple definition of|undefined reference to", re.IGNORECASE)
_COMPILATION_SUMMARY = re.compile(r"\d+ errors? detected in the compilation of")


@dataclass(frozen=True)
class Completed:
    exit_code: int
    output: str
    timed_out: bool = False


def configure_command(
    root: Path, build_dir: Path, assignment_id: str, solution_dir: Path, extra_args: Sequence[str] = ()
) -> list[str]:
    """The CMake configure command; `extra_args` (e.g. -DCMAKE_CUDA_ARCHITECTURES=90) come last."""
    command = [
        "cmake",
        "-S",
        str(root),
        "-B",
        str(build_dir),
        f"-DKERNELLAB_ASSIGNMENTS={assignment_id}",
        f"-DKERNELLAB_SOLUTION={solution_dir}",
        "-DCMAKE_BUILD_TYPE=Release",
    ]
    # The generator of an existing build directory cannot change.
    if shutil.which("ninja") and not (build_dir / "CMakeCache.txt").exists():
        command += ["-G", "Ninja"]
    return command + list(extra_args)


def configure(
    root: Path, build_dir: Path, assignment_id: str, solution_dir: Path, log: Path, extra_args: Sequence[str] = ()
) -> None:
    """Configure `build_dir` (new or existing) for one assignment and solution; an InputError with
    CMake's first error lines when cmake is missing or the configure step fails."""
    if shutil.which("cmake") is None:
        raise InputError("cmake is not on PATH")
    result = run_logged(configure_command(root, build_dir, assignment_id, solution_dir, extra_args), log)
    if result.exit_code != 0:
        errors = "\n  ".join(first_error_lines(result.output))
        raise InputError(f"configuring {assignment_id} with CMake failed; nothing was built or tested:\n  {errors}")


def test_target(assignment_id: str, tests: str) -> str:
    return f"{assignment_id}_test_{tests}"


def build_command(build_dir: Path, target: str) -> list[str]:
    return ["cmake", "--build", str(build_dir), "--target", target, "-j", str(available_cpus())]


def speed_target(assignment_id: str) -> str:
    return f"{assignment_id}_speed"


def program(build_dir: Path, assignment_id: str, target: str) -> Path:
    """Where the build puts the assignment's program `target` (a test executable, the speed program)."""
    return build_dir / "assignments" / assignment_id / target


def test_executable(build_dir: Path, assignment_id: str, tests: str) -> Path:
    return program(build_dir, assignment_id, test_target(assignment_id, tests))


def test_command(executable: Path, report: Path, stop_at_first_failure: bool = False) -> list[str]:
    # Catch2's --abort (v2 and v3) ends the failing test case at its first failed assertion and
    # skips the rest; the JUnit report is still written, and the exit code is 1.
    abort = ["--abort"] if stop_at_first_failure else []
    return [str(executable), "--reporter", "junit", "--out", str(report), *abort]


def run_tests(
    build_dir: Path,
    assignment_id: str,
    tests: str,
    report: Path,
    log: Path,
    timeout_s: float,
    stop_at_first_failure: bool = False,
) -> Completed:
    """Run a built test executable, its JUnit report written afresh to `report`."""
    report.parent.mkdir(parents=True, exist_ok=True)
    report.unlink(missing_ok=True)
    executable = test_executable(build_dir, assignment_id, tests)
    return run_logged(test_command(executable, report, stop_at_first_failure), log, timeout_s=timeout_s)


def run_logged(command: list[str], log: Path, timeout_s: float | None = None) -> Completed:
    """Run `command` with stdout and stderr together, also saved to `log`."""
    log.parent.mkdir(parents=True, exist_ok=True)
    try:
        result = subprocess.run(
            command, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, errors="replace", timeout=timeout_s
        )
        completed = Completed(result.returncode, result.stdout)
    except subprocess.TimeoutExpired as expired:
        output = expired.output.decode(errors="replace") if isinstance(expired.output, bytes) else expired.output
        completed = Completed(-1, output or "", timed_out=True)
    log.write_text(completed.output, encoding="utf-8")
    return completed


def first_error_lines(output: str, limit: int = 8) -> list[str]:
    """The error lines of a build or configure log from the first one on, each with the indented
    lines after it, which carry its source line and caret or its explanation; the log's last
    lines when no line says `error` but nvcc's closing count. The build tool's other lines are left
    out, and so is that count, which names the file compiled: the same error reads the same from
    any target.
    """
    lines = [line.rstrip() for line in output.splitlines() if line.strip()]
    if not any(_ERROR_LINE.search(line) and not _COMPILATION_SUMMARY.match(line) for line in lines):
        return lines[-limit:]
    shown: list[str] = []
    in_error = False
    for line in lines:
        if _ERROR_LINE.search(line) and not _COMPILATION_SUMMARY.match(line):
            in_error = True
        elif not line[0].isspace():
            in_error = False
        if in_error:
            shown.append(line)
    return shown[:limit]
