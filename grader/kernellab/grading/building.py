"""Build a solution's test executables and speed program: CMake's configure step (the grader's own
code, trusted), then the compilation of the solution, in the sandbox when one is given.

A task judged on its own functions is built against its own folder (grading/isolation/stage.py), which
holds the reference's code of other tasks' functions. Its build is a step of its own, in a build
folder of its own, that reads that folder alone: no compiler of one task's code can read another
task's folder (where the reference's versions of the first task's functions sit), nor the build
folder of another (the CPU backend's rewritten copies of those folders)."""

import os
import queue
import re
import shutil
from collections.abc import Iterator, Mapping
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

from kernellab import applicability, cmake, compile_cache, compiled_checks, compiler_slots, runner, static_checks
from kernellab.applicability import Condition
from kernellab.backend import Backend
from kernellab.compile_cache import CompileCache
from kernellab.cpus import available_cpus
from kernellab.grading.model import GradingError
from kernellab.grading.targets import (SPEED_TARGET, executable, record_compiled_in, target_name, task_speed_target,
                                       view_dir)
from kernellab.manifest import Assignment
from kernellab.sandbox.bubblewrap import Sandbox, toolchain_paths
from kernellab.sandbox.step import Step, build_step, fresh_output

# Compiling a submission: wall clock for the whole build.
BUILD_TIMEOUT_S = 900
# One preprocessing pass of the harness check (compiled_checks.py): a test's translation unit with
# the CUDA and Catch2 headers takes about a second and 10 MiB; past these it cannot be checked.
PREPROCESS_TIMEOUT_S = 120
PREPROCESSED_BYTES = 64 << 20
# What a build of the assignment reads besides the solution: the frozen sources, relative to the
# repository root (the assignment's own folder is added). Not reference/, not the grader's work.
FROZEN_SOURCES = ("CMakeLists.txt", "grader/harness", "grader/cpu")
# The programs a build runs, as the configure step recorded them in CMakeCache.txt: the build's
# sandbox must see their installation folders (a compiler in /opt, ccache in a private prefix, a
# Python virtual environment).
BUILD_TOOL_ENTRIES = re.compile(
    r"^(CMAKE_\w+_COMPILER(?:_LAUNCHER)?|CMAKE_CUDA_HOST_COMPILER|CMAKE_MAKE_PROGRAM|CMAKE_COMMAND|_?Python3_EXECUTABLE):\w+=(/.+)$",
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


class BuiltSoFar:
    """The programs of a build as each of its folders ends, checked (the harness check passed),
    for a stage beside the build that runs them meanwhile; closed when the build ends, built or not."""

    def __init__(self):
        self._programs: queue.SimpleQueue[dict[str, Path] | None] = queue.SimpleQueue()

    def add(self, programs: dict[str, Path]) -> None:
        """Programs (by target) that one build folder made."""
        self._programs.put(programs)

    def close(self) -> None:
        self._programs.put(None)

    def __iter__(self) -> Iterator[dict[str, Path]]:
        """Each folder's programs as it ends, until the build ends."""
        while (programs := self._programs.get()) is not None:
            yield programs


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
    views: Mapping[str, Path] = {},
    cache: CompileCache | None = None,
    so_far: BuiltSoFar | None = None,
) -> Built:
    """Build each target (test executables by `tests` name, SPEED_TARGET, or a task's speed program
    `speed_<tests>`); None for those that built, else their first compiler errors. CMake's
    configure step runs the grader's own CMake code and is trusted; the build compiles the
    solution, in `sandbox` when given, which also sees `readable` (the reference build's harness
    mains, and nothing else of it). A task in `views` (its `tests` name: its own folder) is built
    in `view_dir(build_dir, tests)` by a step that sees that folder and none of the others, and
    its programs are copied to where `executable(build_dir, ...)` finds them. Each compiler goes
    through the compile `cache` when given: a build of the reference writes its own private one,
    any other build only reads the harness's (compile_cache.py). `so_far` is given each folder's
    programs as the folder ends, by target and where they lie in that folder."""
    if cache and cache.private != (REFERENCE_ROLE in cmake_args):
        raise ValueError("the reference's compile cache is for the reference's builds alone, and only they write one")
    parts = [(solution, build_dir, [t for t in targets if t not in _view_targets(views)], {})]
    for tests, folder in sorted(views.items()):
        renamed = {t: t if t == tests else SPEED_TARGET for t in targets if t in (tests, task_speed_target(tests))}
        if renamed:
            parts.append((folder, view_dir(build_dir, tests), sorted(set(renamed.values())), renamed))
    parts = [part for part in parts if part[2]]

    def build_part(part: tuple[Path, Path, list[str], dict[str, str]]) -> Built:
        folder, directory, names, renamed = part
        part_built = _build_folder(assignment, folder, directory, names, cmake_args, sandbox, readable, len(parts),
                                   alone=bool(renamed), cache=cache)
        if so_far is not None:
            as_named = renamed or {name: name for name in names}
            so_far.add({target: executable(directory, assignment.id, name)
                        for target, name in as_named.items() if part_built[name] is None})
        return part_built

    with ThreadPoolExecutor(len(parts) or 1) as pool:
        results = list(pool.map(build_part, parts))
    built: Built = {}
    for (_, directory, _, renamed), part_built in zip(parts, results):
        if not renamed:
            built |= part_built
        for target, name in renamed.items():
            built[target] = part_built[name]
            if part_built[name] is None:  # one thread copies and records: the record is one file
                copy = executable(build_dir, assignment.id, target)
                copy.parent.mkdir(parents=True, exist_ok=True)
                shutil.copy2(executable(directory, assignment.id, name), copy)
                record_compiled_in(build_dir, target, directory, target_name(assignment.id, name))
    return built


def _view_targets(views: Mapping[str, Path]) -> set[str]:
    return {target for tests in views for target in (tests, task_speed_target(tests))}


def _build_folder(assignment: Assignment, solution: Path, build_dir: Path, targets: list[str], cmake_args: tuple[str, ...],
                  sandbox: Sandbox | None, readable: tuple[Path, ...], builds_at_once: int, alone: bool,
                  cache: CompileCache | None) -> Built:
    """`targets` of one build folder configured for `solution`, compiled in one step that reads
    `solution` (`alone`: no other step may read it meanwhile) and `readable`; its compilers
    share the cores with the `builds_at_once` builds."""
    log_dir = build_dir / "logs"
    cmake.configure(assignment.root, build_dir, assignment.id, solution, log_dir / "configure.log",
                    (*cmake_args, *compile_cache.configure_args(cache)))
    step = _build_step(assignment, solution, build_dir, readable, alone, cache)
    outcome = _compile(build_dir, [target_name(assignment.id, target) for target in targets],
                       max(1, available_cpus() // builds_at_once), sandbox, step,
                       cache_environment(cache, build_dir, writes=REFERENCE_ROLE in cmake_args))
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
    if STUDENT_ROLE in cmake_args:  # a build of student code
        _check_what_was_compiled(assignment, solution, build_dir, [t for t in targets if built[t] is None], sandbox, step)
    return built


def _check_what_was_compiled(assignment: Assignment, solution: Path, build_dir: Path, targets: list[str],
                             sandbox: Sandbox | None, build: Step) -> None:
    """compiled_checks.py on the translation units of the programs that built: HarnessTampering
    where the student's code reaches into the harness or cannot be checked. Each preprocessing
    pass runs in the sandbox, reading what the build read, writing one bounded output file."""
    if not targets:
        return
    check_dir = build_dir / "kernellab-check"
    check_dir.mkdir(exist_ok=True)
    # The CPU backend compiles a rewritten copy of the solution folder: the first folder that
    # kernellab_cpu_rewrite writes for the assignment's tests (grader/harness/CMakeLists.txt).
    student_dirs = (solution, build_dir / "assignments" / assignment.id / "kernellab_cpu" / assignment.id / "0")

    def preprocess(preprocessing: compiled_checks.Pass) -> tuple[str, str]:
        output = fresh_output(check_dir / "unit.i")
        step = Step((*build.readable, build_dir), (output,), build.readable_alone, memory_bytes=2 << 30, processes=16,
                    file_bytes=PREPROCESSED_BYTES)
        outcome = runner.run_program([*preprocessing.command, "-o", str(output)], Path(preprocessing.directory),
                                     PREPROCESS_TIMEOUT_S, sandbox=sandbox, step=step)
        if outcome.timed_out:
            return "", f"took longer than {PREPROCESS_TIMEOUT_S} s"
        if outcome.exit_code != 0 or outcome.limit_hit:
            limit = f" ({runner.limit_words(outcome.limit_hit, step)})" if outcome.limit_hit else ""
            errors = "; ".join(cmake.first_error_lines(outcome.output)[:2])
            return "", f"stopped{limit}: {errors or f'exit status {outcome.exit_code}'}"
        return output.read_text(encoding="utf-8", errors="replace"), ""

    found = compiled_checks.tampering(build_dir, [target_name(assignment.id, target) for target in targets], student_dirs,
                                      static_checks.assignment_protected_names(assignment), preprocess)
    if found:
        raise compiled_checks.HarnessTampering(*found)


def unmet_conditions(assignment: Assignment, solution: Path, build_dir: Path, cmake_args: tuple[str, ...],
                     sandbox: Sandbox | None, readable: tuple[Path, ...] = (),
                     cache: CompileCache | None = None) -> tuple[Condition, ...]:
    """What the submission's code does not promise (applicability.py): the probes that
    `build_dir` defines, configured for the whole submission unless it is already, built from it
    in the sandbox through the compile `cache`, read-only; a probe that fails to compile marks its
    cases not applicable. None for an assignment without probes."""
    if not (build_dir / "CMakeCache.txt").is_file():
        cmake.configure(assignment.root, build_dir, assignment.id, solution, build_dir / "logs" / "configure.log",
                        (*cmake_args, *compile_cache.configure_args(cache)))
    targets = applicability.probe_targets(build_dir, assignment.id)
    if not targets:
        return ()
    outcome = _compile(build_dir, targets, available_cpus(), sandbox, _build_step(assignment, solution, build_dir, readable, cache=cache),
                       cache_environment(cache, build_dir, writes=False))
    return applicability.unmet(build_dir, assignment.id, outcome.output)


# What a compiler driver or the shell says of a compiler ended by SIGKILL: nvcc of cicc, ptxas or
# its host compiler; g++ of cc1plus; the shell of a launcher or compiler.
_KILLED_COMPILER = re.compile(r"^.*(?:died due to signal 9\b|Killed signal terminated program).*$|^Killed$", re.MULTILINE)


def killed_by_the_machine(outcome: runner.RunOutcome) -> bool:
    """Whether a build lost a compiler to SIGKILL from neither its time limit nor its step's own
    limits: the kernel's OOM killer, when a batch's builds take the machine's memory. Such a
    failure says nothing of the code, yet it failed the target: a task's isolated build then fell
    back to the whole submission, a test executable's to "build failed"."""
    return not outcome.timed_out and not outcome.limit_hit and bool(_KILLED_COMPILER.search(outcome.output))


def _compile(build_dir: Path, cmake_targets: list[str], jobs: int, sandbox: Sandbox | None, step: Step,
             environment: dict[str, str]) -> runner.RunOutcome:
    """CMake's build of `cmake_targets` in `step`, `jobs` steps at once, each target as far as it
    compiles; its compilers take the machine's compiler slots with every other build's
    (compiler_slots.py). A compiler the machine killed is compiled again once, one step at a time
    (Ninja compiles only what did not build); killed again, grading cannot go on."""
    def compile_with(jobs: int) -> runner.RunOutcome:
        keep_going = ["--", "-k", "0"] if (build_dir / "build.ninja").exists() else ["--", "-k"]
        command = ["cmake", "--build", str(build_dir), "-j", str(jobs), "--target", *cmake_targets, *keep_going]
        return runner.run_program(command, build_dir, BUILD_TIMEOUT_S, sandbox=sandbox, step=step, environment=environment)

    outcome = compile_with(jobs)
    if killed_by_the_machine(outcome):
        outcome = compile_with(1)
        if killed_by_the_machine(outcome):
            raise GradingError(f"a compiler of the build in {build_dir.name} was killed twice, neither by its time limit "
                               f"nor by its own memory or process limit (the machine out of memory?): "
                               f"{_KILLED_COMPILER.search(outcome.output)[0].strip()}; grade it again")
    return outcome


def cache_environment(cache: CompileCache | None, build_dir: Path, writes: bool) -> dict[str, str]:
    return cache.environment(build_dir, writes) if cache else {}


def _build_step(assignment: Assignment, solution: Path, build_dir: Path, extra: tuple[Path, ...], alone: bool = False,
                cache: CompileCache | None = None) -> Step:
    """What a build sees: the system, the toolchain, the frozen sources and the solution (the
    step's `alone` where it holds the reference's code of other tasks), and the compile cache,
    read-only; it writes only into its build folder."""
    root = assignment.root
    frozen = [root / path for path in FROZEN_SOURCES if (root / path).exists()]
    configured = (build_dir / "CMakeCache.txt").read_text(encoding="utf-8", errors="replace")
    # A launcher entry may be a list ("a;b"); the compiler slots' folder is bound by itself
    # (compile_cache.readable), never the folder above it as a tool's installation.
    tools = [tool for match in BUILD_TOOL_ENTRIES.finditer(configured) for tool in match[2].split(";")
             if Path(tool).name != compiler_slots.LAUNCHER]
    readable = [*toolchain_paths(tools), *frozen, root / "assignments" / assignment.id, *_configure_inputs(build_dir, root), *extra,
                *compile_cache.readable(cache)]
    return build_step(readable, build_dir, alone=(solution,)) if alone else build_step([*readable, solution], build_dir)


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
