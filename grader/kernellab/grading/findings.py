"""Static findings: forbidden words in a solution's code (not its comments), and what its programs'
symbols show (forbidden libraries linked, clocks defined) beyond what the reference's show."""

import re
import shutil
import subprocess
from pathlib import Path

from kernellab.grading.targets import executable, target_name
from kernellab.manifest import Assignment
from kernellab.sources import blank_comments, word_pattern

# Functions a program must not define: libc's clocks, which the harness and the speed timer
# read. Defined in the executable, one replaces libc's for the whole process (the CUDA runtime's
# own functions need no entry: linked statically, a second definition fails to link). Not
# libstdc++'s clocks: some toolchains link libstdc++ statically, so its definitions are there.
DENIED_DEFINITIONS = frozenset({
    "clock_gettime", "__clock_gettime", "__clock_gettime64", "gettimeofday", "time", "clock", "times", "timespec_get",
})


def forbidden_in_sources(solution: Path, forbidden: tuple[str, ...]) -> dict[str, tuple[str, ...]]:
    """Per file name, 'file:line uses cub' for each forbidden word in its code (not comments)."""
    if not forbidden:
        return {}
    pattern = word_pattern(forbidden)
    findings: dict[str, tuple[str, ...]] = {}
    for path in sorted(solution.iterdir()):
        code = blank_comments(path.read_text(encoding="utf-8", errors="replace"))
        found = tuple(
            f"{path.name}:{number} uses {match[1]}, which this assignment forbids"
            for number, line in enumerate(code.splitlines(), start=1)
            if (match := pattern.search(line))
        )
        if found:
            findings[path.name] = found
    return findings


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


def symbols_in_binaries(
    build_dir: Path, assignment_id: str, targets: list[str], forbidden: tuple[str, ...], baseline: Path
) -> dict[str, tuple[str, ...]]:
    """Per built program (test executable or SPEED_TARGET), what its symbols show, from `nm -C`,
    beyond what the same program built from the reference (in `baseline`) shows: the forbidden
    libraries it links (what a macro trick cannot hide from the linker; the CUDA runtime's own
    dlopen is no finding) and the clocks it defines itself. Nothing when nm is missing."""
    if shutil.which("nm") is None:
        return {}
    pattern = word_pattern(forbidden) if forbidden else None

    def shown(program: Path) -> tuple[set[str], set[str]]:
        """The forbidden names among the program's symbols, and the denied functions it defines."""
        if not program.is_file():
            return set(), set()
        listing = subprocess.run(["nm", "-C", str(program)], capture_output=True, text=True, errors="replace").stdout
        names = {match[1].lower() for match in pattern.finditer(listing)} if pattern else set()
        defined = {line.split(" ", 2)[2] for line in listing.splitlines() if re.match(r"\S+ [TWDBRV] ", line)}
        return names, DENIED_DEFINITIONS & defined

    found: dict[str, tuple[str, ...]] = {}
    for target in targets:
        names, defined = shown(executable(build_dir, assignment_id, target))
        reference_names, reference_defined = shown(executable(baseline, assignment_id, target))
        findings = [f"the {target} build links {name}, which this assignment forbids" for name in sorted(names - reference_names)]
        findings += [
            f"the {target} build defines {name} itself, which would replace the clock the grader times with"
            for name in sorted(defined - reference_defined)
        ]
        if findings:
            found[target] = tuple(findings)
    return found


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
