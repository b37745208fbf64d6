"""The harness check on what the compiler compiled, never on a file read alone.

The student's code shares its translation units with the grader's tests and harness, so it could
reach into them: redefine a macro the tests use, name the record machinery. Each translation unit
of a build of student code is preprocessed as the compiler preprocessed it: nvcc's own
preprocessing passes (the host's and one per device architecture, from its `--dryrun`), or the
C++ compiler's command, each with `-dD` so that the macro directives stay. Code hidden from a file
read alone (`#if __INCLUDE_LEVEL__ > 0`, `#ifdef __CUDA_ARCH__`, `#ifndef KERNELLAB_CPU_BACKEND`)
is seen in the context the compiler saw it in. The lines of the student's files (the solution
folder, or the CPU backend's rewritten copy of it) are checked as static_checks.harness_tampering
checks them. A pass that cannot run (a time or output limit, a compiler that stops) is a finding
too: a check that cannot run fails closed.
"""

import json
import shlex
import shutil
import subprocess
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from kernellab import compile_cache, static_checks
from kernellab.intake import SubmissionRejected

# Flags of a compile command that write files besides its output: dropped from its preprocessing.
_DEPENDENCY_FLAGS = {"-MD", "-MMD"}
_DEPENDENCY_OPTIONS = {"-MF", "-MT", "-MQ"}


@dataclass(frozen=True)
class Pass:
    """One preprocessing pass of one translation unit: its command, with `-dD`, writing to stdout."""

    source: str
    label: str  # "host", "device (sm_90)", "C++"
    command: tuple[str, ...]
    directory: str


def compiled_units(build_dir: Path, targets: list[str]) -> dict[str, list[tuple[str, str, str]]]:
    """Per CMake target of `targets`, (directory, command, source) of each of its compile commands
    (its helper targets', such as the CPU backend's nvcc check, included), from Ninja's database."""
    listing = subprocess.run(["ninja", "-C", str(build_dir), "-t", "compdb"], capture_output=True, text=True, check=True)
    units: dict[str, list[tuple[str, str, str]]] = {target: [] for target in targets}
    for entry in json.loads(listing.stdout):
        output = f"/{entry.get('output', '')}"
        for target in targets:
            if output.endswith(".o") and (f"/{target}.dir/" in output or f"/{target}_nvcc_check.dir/" in output):
                units[target].append((entry["directory"], entry["command"], entry["file"]))
    return units


def preprocessing_passes(directory: str, command: str, source: str) -> list[Pass]:
    """The compiler's own preprocessing of one compile command, pass by pass; a command that
    starts with launchers (compile_cache.py) is read as the compiler's after them."""
    arguments = shlex.split(command)
    while arguments and compile_cache.is_launcher(arguments[0]):
        arguments = arguments[1:]
    if Path(arguments[0]).name == "nvcc":
        dry = subprocess.run([*arguments, "--dryrun"], cwd=directory, capture_output=True, text=True, check=True)
        passes = []
        for line in dry.stderr.splitlines() + dry.stdout.splitlines():
            if not line.startswith("#$ ") or " -E " not in line:
                continue
            step = _without_output(shlex.split(line[3:]))
            arch = next((word.split("=", 1)[1] for word in step if word.startswith("-D__CUDA_ARCH__=")), None)
            passes.append(Pass(source, f"device (compute_{arch[:-1]})" if arch else "host", (*step, "-dD"), directory))
        return passes
    step = [word for word in _without_output(arguments) if word != "-c"]
    return [Pass(source, "C++", (*step, "-E", "-dD"), directory)]


def _without_output(arguments: list[str]) -> list[str]:
    """`arguments` less its output file and the dependency files it writes (-MD, -MF x...)."""
    kept, skip = [], False
    for word in arguments:
        if skip:
            skip = False
        elif word in ("-o", *_DEPENDENCY_OPTIONS):
            skip = True
        elif word not in _DEPENDENCY_FLAGS and not word.startswith(("-MF", "-MT")):
            kept.append(word)
    return kept


def tampering(build_dir: Path, targets: list[str], student_dirs: tuple[Path, ...], protected: frozenset[str],
              preprocess: Callable[[Pass], tuple[str, str]]) -> tuple[str, str] | None:
    """Where and how the student's code in the translation units of `targets` reaches into the
    harness, e.g. ('map.cuh:3', 'defines KL_REQUIRE_EQUAL, ...'), or ('test_map.cu', 'could not be
    checked: ...'); None when it does not. `preprocess` runs a pass (sandboxed) and gives its
    output and, when it failed, why."""
    if shutil.which("ninja") is None:
        return "the build", "could not be checked: ninja is not installed"
    units = compiled_units(build_dir, targets)
    if unlisted := [target for target, compiled in units.items() if not compiled]:
        return unlisted[0], "could not be checked: Ninja lists no compile command of it"
    for directory, command, source in (unit for compiled in units.values() for unit in compiled):
        try:
            passes = preprocessing_passes(directory, command, source)
        except (subprocess.CalledProcessError, OSError, ValueError) as error:
            return Path(source).name, f"could not be checked: the compiler's passes could not be listed ({error})"
        if not passes:
            return Path(source).name, "could not be checked: the compiler listed no preprocessing pass"
        for preprocessing in passes:
            text, problem = preprocess(preprocessing)
            if problem:
                return Path(source).name, f"could not be checked: its {preprocessing.label} preprocessing {problem}"
            found = static_checks.harness_tampering_in(static_checks.parse_preprocessed(text, student_dirs), protected)
            if found:
                return found[0], f"{found[1]}, in the {preprocessing.label} pass"
    return None


class HarnessTampering(SubmissionRejected):
    """A build's translation unit in which the student's code reaches into the harness, or that
    could not be checked: the submission is refused, as at intake."""

    def __init__(self, where: str, what: str):
        if what.startswith("could not be checked"):
            super().__init__(f"{where}: the check that the code leaves the grader's test harness alone {what}; "
                             "a submission that cannot be checked is refused, never graded as one that passed")
        else:
            super().__init__(f"{where} reaches into the grader's test harness ({what}); "
                             "a solution may not touch the code that records test results")
