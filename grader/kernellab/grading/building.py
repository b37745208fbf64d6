"""Build a solution's test executables and speed program: CMake's configure step (the grader's own
code, trusted), then the compilation of the solution, in the sandbox when one is given."""

import os
import re
from pathlib import Path

from kernellab import applicability, cmake, runner
from kernellab.applicability import Condition
from kernellab.backend import Backend
from kernellab.cpus import available_cpus
from kernellab.grading.targets import executable, target_name
from kernellab.manifest import Assignment
from kernellab.sandbox.bubblewrap import Sandbox, toolchain_paths
from kernellab.sandbox.step import Step, build_step

# Compiling a submission: wall clock for the whole build.
BUILD_TIMEOUT_S = 900
# What a build of the assignment reads besides the solution: the frozen sources, relative to the
# repository root (the assignment's own folder is added). Not reference/, not the grader's work.
FROZEN_SOURCES = ("CMakeLists.txt", "grader/harness", "grader/cpu")
# The programs a build runs, as the configure step recorded them in CMakeCache.txt: the build's
# sandbox must see their installation folders (a compiler in /opt, a Python virtual environment).
BUILD_TOOL_ENTRIES = re.compile(
    r"^(CMAKE_\w+_COMPILER|CMAKE_CUDA_HOST_COMPILER|CMAKE_MAKE_PROGRAM|CMAKE_COMMAND|_?Python3_EXECUTABLE):\w+=(/.+)$",
    re.MULTILINE,
)

# The role each grading build's test executables are compiled for (harness kernellab/record.hpp):
# a student's records device results only, the reference's the expected results too.
STUDENT_ROLE = "-DKERNELLAB_RECORD_ROLE=student"
REFERENCE_ROLE = "-DKERNELLAB_RECORD_ROLE=reference"
# The CPU backend's own default number of thread orders per launch (grader/cpu/src/runtime.cpp).
CPU_ORDERS = 3

# Per target: None when it built, else its first compiler errors.
Built = dict[str, str | None]


def student_role_args(backend: Backend) -> tuple[str, ...]:
    """What a build of student code fixes at compile time: its role, and on the CPU backend the
    thread orders of the race check (as the TA's KERNELLAB_CPU_ORDERS says), which the student's
    process could otherwise change in its own environment."""
    if backend.on_gpu:
        return (STUDENT_ROLE,)
    return (STUDENT_ROLE, cpu_fixed_orders_arg())


def cpu_fixed_orders_arg() -> str:
    """The CPU runtime's thread orders per launch, fixed at compile time: the TA's
    KERNELLAB_CPU_ORDERS, else the backend's default."""
    chosen = os.environ.get("KERNELLAB_CPU_ORDERS", "")
    orders = int(chosen) if chosen.isdigit() and int(chosen) > 0 else CPU_ORDERS
    return f"-DKERNELLAB_CPU_FIXED_ORDERS={orders}"


def build(
    assignment: Assignment,
    solution: Path,
    build_dir: Path,
    targets: list[str],
    cmake_args: tuple[str, ...],
    sandbox: Sandbox | None,
    readable: tuple[Path, ...] = (),
) -> Built:
    """Build each target (test executables by `tests` name, or SPEED_TARGET); None for those that
    built, else their first compiler errors. CMake's configure step runs the grader's own
    CMake code and is trusted; the build compiles the solution, in `sandbox` when given, which
    also sees `readable` (the reference build's harness mains, and nothing else of it)."""
    log_dir = build_dir / "logs"
    cmake.configure(assignment.root, build_dir, assignment.id, solution, log_dir / "configure.log", cmake_args)
    command = ["cmake", "--build", str(build_dir), "-j", str(available_cpus()), "--target"]
    command += [target_name(assignment.id, target) for target in targets]
    command += ["--", "-k", "0"] if (build_dir / "build.ninja").exists() else ["--", "-k"]
    step = _build_step(assignment, solution, build_dir, readable)
    outcome = runner.run_program(command, build_dir, BUILD_TIMEOUT_S, sandbox=sandbox, step=step)
    output = outcome.output
    if outcome.timed_out:
        output += f"\nerror: the build took longer than {BUILD_TIMEOUT_S} s and was stopped"
    elif outcome.limit_hit:
        output += f"\nerror: the build was stopped by its {runner.limit_words(outcome.limit_hit, step)}"
    log_dir.mkdir(parents=True, exist_ok=True)
    (log_dir / "build.log").write_text(output, encoding="utf-8")
    built: Built = {}
    for target in targets:
        if executable(build_dir, assignment.id, target).is_file():
            built[target] = None
        else:
            errors = cmake.first_error_lines(_failures_of(output, target_name(assignment.id, target)) or output)
            built[target] = "\n".join(errors)
    return built


def unmet_conditions(assignment: Assignment, solution: Path, build_dir: Path, sandbox: Sandbox | None,
                     readable: tuple[Path, ...] = ()) -> tuple[Condition, ...]:
    """What the submission's code does not promise (applicability.py): the probes that the
    configured `build_dir` defines, built from the whole submission in the sandbox; a probe that
    fails to compile marks its cases not applicable. None for an assignment without probes."""
    targets = applicability.probe_targets(build_dir, assignment.id)
    if not targets:
        return ()
    command = ["cmake", "--build", str(build_dir), "-j", str(available_cpus()), "--target", *targets]
    command += ["--", "-k", "0"] if (build_dir / "build.ninja").exists() else ["--", "-k"]
    outcome = runner.run_program(command, build_dir, BUILD_TIMEOUT_S, sandbox=sandbox,
                                 step=_build_step(assignment, solution, build_dir, readable))
    return applicability.unmet(build_dir, assignment.id, outcome.output)


def _build_step(assignment: Assignment, solution: Path, build_dir: Path, extra: tuple[Path, ...]) -> Step:
    """What a build sees: the system, the toolchain, the frozen sources and the solution; it
    writes only into its build folder."""
    root = assignment.root
    frozen = [root / path for path in FROZEN_SOURCES if (root / path).exists()]
    cache = (build_dir / "CMakeCache.txt").read_text(encoding="utf-8", errors="replace")
    tools = [match[2] for match in BUILD_TOOL_ENTRIES.finditer(cache)]
    readable = [*toolchain_paths(tools), *frozen, root / "assignments" / assignment.id, *_configure_inputs(build_dir, root),
                solution, *extra]
    return build_step(readable, build_dir)


def _configure_inputs(build_dir: Path, root: Path) -> list[Path]:
    """The folders of the repository's files that the configure step read (Ninja re-runs it when
    one is missing, as in a sandbox that hides it): an assignment that shares another's tests
    reads them. Never the reference's."""
    ninja = build_dir / "build.ninja"
    if not ninja.is_file():
        return []
    # "build build.ninja: RERUN_CMAKE | <inputs>"; newer CMake names the file twice before the colon.
    rule = re.search(r"^build build\.ninja[^:\n]*: RERUN_CMAKE[^\n]*(?:\$\n[^\n]*)*", ninja.read_text(errors="replace"), re.MULTILINE)
    if rule is None:
        return []
    hidden = (root / "reference").resolve()
    folders = {Path(path).parent for path in re.findall(r"(/\S+)", rule.group().replace("$\n", " "))}
    # Not a folder that holds the reference either (the repository's root, whose CMakeLists.txt
    # the configure step read, is among the frozen sources already).
    return sorted(folder for folder in folders
                  if folder.resolve().is_relative_to(root.resolve()) and not folder.resolve().is_relative_to(hidden)
                  and not hidden.is_relative_to(folder.resolve()))


def _failures_of(output: str, target: str) -> str:
    """The build tool's output for the failed steps of one target (Ninja and Make mark them)."""
    blocks = re.split(r"(?m)^(?=FAILED: |\[\s*\d+%\]|\[\d+/\d+\] )", output)
    return "\n".join(block for block in blocks if f"/{target}.dir/" in block and block.startswith("FAILED: "))
