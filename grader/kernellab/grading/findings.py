"""Which tasks the static findings cost: a forbidden library that a file reaches (static_checks.py)
costs the tasks whose test executables include that file; what a program's symbols show
(binary_checks.py) costs its own task."""

import re
import shutil
import subprocess
from pathlib import Path

from kernellab.grading.targets import target_name
from kernellab.manifest import Assignment

def solution_files_by_target(build_dir: Path, names: set[str]) -> dict[str, set[str]] | None:
    """Per CMake target, which of the files `names` its objects include (by file name: the CPU
    backend compiles rewritten copies), from Ninja's dependency log; None without one."""
    if not names or not (build_dir / "build.ninja").exists() or shutil.which("ninja") is None:
        return None
    log = subprocess.run(["ninja", "-C", str(build_dir), "-t", "deps"], capture_output=True, text=True, errors="replace")
    included: dict[str, set[str]] = {}
    target = None
    for line in log.stdout.splitlines():
        if line and not line[0].isspace():
            match = re.search(r"CMakeFiles/([^/]+)\.dir/", line)
            target = match[1] if match else None
            if target:
                included.setdefault(target, set())  # built, even if it includes none of `names`
        elif target and (name := Path(line.strip()).name) in names:
            included.setdefault(target, set()).add(name)
    return included


def findings_by_task(
    assignment: Assignment, build_dir: Path, sources: dict[str, tuple[str, ...]], symbols: dict[str, tuple[str, ...]]
) -> dict[str, tuple[str, ...]]:
    """Per tested task, the findings that cost its points: a forbidden word in a file its test
    executable includes (any file, without Ninja's dependency log), and its program's symbols."""
    included = solution_files_by_target(build_dir, set(sources))
    by_task = {}
    for task in assignment.tested_tasks:
        files = included.get(target_name(assignment.id, task.tests)) if included else None
        in_sources = tuple(found for name, per_file in sources.items() if files is None or name in files for found in per_file)
        by_task[task.id] = in_sources + symbols.get(task.tests, ())
    return by_task


def all_findings(sources: dict[str, tuple[str, ...]], symbols: dict[str, tuple[str, ...]]) -> tuple[str, ...]:
    """Every finding once, the sources' first: what the grade lists."""
    found = tuple(finding for per_file in sources.values() for finding in per_file)
    found += tuple(finding for per_program in symbols.values() for finding in per_program)
    return tuple(dict.fromkeys(found))
