"""The manifest as the build reads it: `python3 -S -P -m kernellab.manifest_cmake MANIFEST OUTPUT`
loads `assignments/<id>/assignment.toml` with the grader's own reader (kernellab.manifest) and
writes a CMake file that sets what the harness's CMake needs of it, so that CMake never parses
TOML itself. The harness runs it at configure time (grader/harness/CMakeLists.txt); the standard
library alone, since the student handout runs it with `python3 -S`.

The file it writes sets, in the scope that includes it:
  manifest_entry_names        the entry file, then each alias of it
  manifest_files              the required, then the optional files, by their canonical names
  manifest_file_aliases_<i>   the aliases of the i-th of manifest_files (from 0)
  manifest_optional_files     the optional files, by their canonical names
  manifest_task_tests         each tested task's `tests` name, in manifest order
  manifest_warn_tests         the `tests` of the tasks with warp_synchronous = "warn"
  manifest_large_tests        the `tests` of the tasks with large_cases = true
  manifest_tests_dir          the folder of the test sources, relative to the repository root
"""

import sys
from collections.abc import Iterable
from pathlib import Path

from kernellab.manifest import Assignment, ManifestError, load_manifest

# What a value must not hold to reach CMake intact: `;` separates list items and unbalanced
# square brackets stop CMake splitting a list, and a file name also lands in a C `#include "..."`.
_UNSAFE_CHARACTERS = frozenset(';[]"\\\n\r\t\0')


def cmake_text(assignment: Assignment) -> str:
    """The CMake file for `assignment`: data only, every value a bracket argument."""
    files = assignment.files
    aliases_of: dict[str, list[str]] = {}
    for alias, canonical in files.aliases.items():
        aliases_of.setdefault(canonical, []).append(alias)
    lines = [
        f"# Generated from {assignment.manifest_path} by kernellab.manifest_cmake: do not edit.",
        _set("manifest_entry_names", [files.entry, *aliases_of.get(files.entry, [])], "files.entry"),
        _set("manifest_optional_files", files.optional, "files.optional"),
        # Checked as optional above already: an unsafe name here is a required one.
        _set("manifest_files", [*files.required, *files.optional], "files.required"),
    ]
    for index, name in enumerate([*files.required, *files.optional]):
        lines.append(_set(f"manifest_file_aliases_{index}", aliases_of.get(name, []), "files.aliases"))
    tested = assignment.tested_tasks
    lines.append(_set("manifest_task_tests", [task.tests for task in tested], "tasks.tests"))
    warn = [task.tests for task in tested if task.warp_synchronous == "warn"]
    lines.append(_set("manifest_warn_tests", warn, "tasks.warp_synchronous"))
    lines.append(_set("manifest_large_tests", [task.tests for task in tested if task.large_cases], "tasks.large_cases"))
    lines.append(_set("manifest_tests_dir", [assignment.tests_dir.relative_to(assignment.root).as_posix()], "build.tests"))
    return "\n".join(lines) + "\n"


def _set(variable: str, values: Iterable[str], field: str) -> str:
    return " ".join([f"set({variable}", *(_bracket(value, field) for value in values)]) + ")"


def _bracket(value: str, field: str) -> str:
    """`value` as a CMake bracket argument ([=[...]=]: no `]` inside), which CMake takes literally."""
    if unsafe := sorted(set(value) & _UNSAFE_CHARACTERS):
        raise ManifestError(f"{field}: {value!r} holds {unsafe[0]!r}, which a CMake list or an #include cannot carry")
    return f"[=[{value}]=]"


def write_cmake_file(manifest: Path, output: Path) -> None:
    """Write `output` for `manifest` (assignments/<id>/assignment.toml), only when it changes."""
    manifest = manifest.resolve()
    assignment = load_manifest(manifest, manifest.parents[2])
    try:
        text = cmake_text(assignment)
    except ManifestError as error:
        error.path = manifest
        raise
    if not output.is_file() or output.read_text(encoding="utf-8") != text:
        output.parent.mkdir(parents=True, exist_ok=True)
        output.write_text(text, encoding="utf-8")


def main(argv: list[str]) -> int:
    if len(argv) != 2:
        print("usage: python3 -m kernellab.manifest_cmake MANIFEST OUTPUT", file=sys.stderr)
        return 2
    try:
        write_cmake_file(Path(argv[0]), Path(argv[1]))
    except ManifestError as error:
        print(error, file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
