"""Which tasks the static findings cost: a forbidden library that a file reaches (static_checks.py)
costs the tasks whose test executables include that file; what a program's symbols show
(binary_checks.py) costs its own task."""

from pathlib import Path

from kernellab.binary_checks import headers_of
from kernellab.manifest import Assignment


def solution_files_by_target(build_dir: Path, assignment_id: str, targets: list[str], names: set[str]) -> dict[str, set[str] | None]:
    """Per program of `targets`, which of the files `names` its compilers read (by file name: the
    CPU backend compiles rewritten copies), from Ninja's dependency log; None without one."""
    included: dict[str, set[str] | None] = {}
    for target in targets:
        headers = headers_of(build_dir, assignment_id, target)
        included[target] = None if headers is None else {Path(header).name for header in headers} & names
    return included


def findings_by_task(
    assignment: Assignment, build_dir: Path, sources: dict[str, tuple[str, ...]], symbols: dict[str, tuple[str, ...]]
) -> dict[str, tuple[str, ...]]:
    """Per tested task, the findings that cost its points: a forbidden word in a file its test
    executable includes (any file, without Ninja's dependency log), and its program's symbols."""
    included = solution_files_by_target(build_dir, assignment.id, [task.tests for task in assignment.tested_tasks], set(sources))
    by_task = {}
    for task in assignment.tested_tasks:
        files = included[task.tests]
        in_sources = tuple(found for name, per_file in sources.items() if files is None or name in files for found in per_file)
        by_task[task.id] = in_sources + symbols.get(task.tests, ())
    return by_task


def all_findings(sources: dict[str, tuple[str, ...]], symbols: dict[str, tuple[str, ...]]) -> tuple[str, ...]:
    """Every finding once, the sources' first: what the grade lists."""
    found = tuple(finding for per_file in sources.values() for finding in per_file)
    found += tuple(finding for per_program in symbols.values() for finding in per_program)
    return tuple(dict.fromkeys(found))
