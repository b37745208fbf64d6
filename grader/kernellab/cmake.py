"""The build interface of the C++ side: configure, build and run one assignment's test executables."""

import os
import re
import shutil
import subprocess
import threading
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


# Where a seed (below) holds its folder's path, to be replaced by the new folder's.
_FOLDER_MARK = b"@KERNELLAB_BUILD_FOLDER@"


class _Seeds:
    """The compiler detection of a configure step, its slowest part (about 4 of 4.4 s on two
    cores; a grade configures eleven build folders), is the same for every new build folder
    configured with the same arguments and environment (PATH, CUDAARCHS, CXX...). The first such
    folder's cache and detection results are
    read right after its configure step, before any build step (of student code) writes there,
    and a later new folder starts from them: CMake then configures it as it reconfigures an
    existing folder (the same build files, in 0.4 to 0.9 s)."""

    def __init__(self):
        self._seeds: dict[tuple, dict[str, bytes]] = {}
        self._lock = threading.Lock()

    def plant(self, key: tuple, build_dir: Path) -> bool:
        """The seed of `key` written into the new folder `build_dir`; whether there was one."""
        with self._lock:
            seed = self._seeds.get(key)
        if seed is None:
            return False
        for name, content in seed.items():
            (build_dir / name).parent.mkdir(parents=True, exist_ok=True)
            (build_dir / name).write_bytes(content.replace(_FOLDER_MARK, bytes(build_dir.resolve())))
        return True

    def harvest(self, key: tuple, build_dir: Path) -> None:
        """The cache and the detection results (`CMakeFiles/<CMake version>/`, its files alone)
        of a folder that `key`'s arguments have just configured from nothing."""
        files = [build_dir / "CMakeCache.txt", *(path for version in (build_dir / "CMakeFiles").glob("[0-9]*")
                                                 for path in version.iterdir() if path.is_file())]
        folder = bytes(build_dir.resolve())
        seed = {str(path.relative_to(build_dir)): path.read_bytes().replace(folder, _FOLDER_MARK) for path in files}
        with self._lock:
            self._seeds.setdefault(key, seed)

    @staticmethod
    def remove(build_dir: Path) -> None:
        (build_dir / "CMakeCache.txt").unlink(missing_ok=True)
        shutil.rmtree(build_dir / "CMakeFiles", ignore_errors=True)


_SEEDS = _Seeds()


def configure(
    root: Path, build_dir: Path, assignment_id: str, solution_dir: Path, log: Path, extra_args: Sequence[str] = ()
) -> None:
    """Configure `build_dir` (new or existing) for one assignment and solution; an InputError with
    CMake's first error lines when cmake is missing or the configure step fails. A new folder
    starts from the detection of the first one configured with the same arguments (_Seeds); a
    seeded configure step that fails is run again from nothing."""
    if shutil.which("cmake") is None:
        raise InputError("cmake is not on PATH")
    key = (str(root), assignment_id, tuple(extra_args), tuple(sorted(os.environ.items())))
    new = not (build_dir / "CMakeCache.txt").exists()
    seeded = new and _SEEDS.plant(key, build_dir)
    result = run_logged(configure_command(root, build_dir, assignment_id, solution_dir, extra_args), log)
    if seeded and result.exit_code != 0:
        _Seeds.remove(build_dir)
        result = run_logged(configure_command(root, build_dir, assignment_id, solution_dir, extra_args), log)
        seeded = False
    if new and not seeded and result.exit_code == 0:
        _SEEDS.harvest(key, build_dir)
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
