"""A small, strict unified-diff applier for the known-wrong versions of a solution.

A patch file starts with free text whose first non-empty line describes the planted bug,
followed by file diffs (`--- a/<path>`, `+++ b/<path>`, `@@ -l,s +l,s @@` hunks) against
files of the solution directory. Context must match exactly; a hunk may float a few lines
from its stated position, as with GNU patch at fuzz 0.
"""

import re
from dataclasses import dataclass
from pathlib import Path, PurePosixPath

from kernellab.errors import InputError
from kernellab.text import encode_text, read_text, split_lines

MAX_FLOAT_LINES = 10
NO_NEWLINE_MARK = "\\"

_HUNK_HEADER = re.compile(r"@@ -(\d+)(?:,(\d+))? \+(\d+)(?:,(\d+))? @@")


class PatchError(InputError):
    pass


@dataclass(frozen=True)
class Hunk:
    header: str
    patch_line: int
    old_start: int
    old_lines: tuple[str, ...]
    new_lines: tuple[str, ...]


@dataclass(frozen=True)
class FileDiff:
    path: str
    hunks: tuple[Hunk, ...]


@dataclass(frozen=True)
class Patch:
    path: Path
    description: str
    files: tuple[FileDiff, ...]


def parse_patch(path: Path) -> Patch:
    lines = split_lines(read_text(path))
    first_header = next((index for index, line in enumerate(lines) if line.startswith("--- ")), None)
    if first_header is None:
        raise PatchError("no file diff: expected a '--- a/<path>' line", path)
    description = next((line.strip() for line in lines[:first_header] if line.strip()), "")
    if not description:
        raise PatchError("a patch starts with a one-line description of the planted bug", path, 1)
    files: list[FileDiff] = []
    index = first_header
    while index < len(lines):
        line = lines[index]
        if line.startswith("--- "):
            file_diff, index = _parse_file_diff(lines, index, path)
            files.append(file_diff)
        elif not line.strip() or line.startswith(("diff ", "index ")):
            # Blank lines and the headers `git diff` puts between file diffs.
            index += 1
        else:
            raise PatchError(f"unexpected line between file diffs: {line.rstrip()!r}", path, index + 1)
    return Patch(path, description, tuple(files))


def apply_patch(patch: Patch, directory: Path) -> None:
    """Apply every file diff to the files under `directory`; nothing is written unless all apply."""
    patched: dict[Path, str] = {}
    for file_diff in patch.files:
        target = directory / file_diff.path
        if not target.is_file():
            raise PatchError(f"{file_diff.path}: no such file in {directory}", patch.path)
        text = patched[target] if target in patched else read_text(target)
        patched[target] = _apply_hunks(text, file_diff, patch.path)
    for target, text in patched.items():
        target.write_bytes(encode_text(text))


def _parse_file_diff(lines: list[str], index: int, patch_path: Path) -> tuple[FileDiff, int]:
    old_path = _header_path(lines[index], "--- ", "a/", patch_path, index + 1)
    if index + 1 >= len(lines) or not lines[index + 1].startswith("+++ "):
        raise PatchError("'--- ' line not followed by a '+++ ' line", patch_path, index + 1)
    new_path = _header_path(lines[index + 1], "+++ ", "b/", patch_path, index + 2)
    if old_path != new_path:
        raise PatchError(f"renames are not supported ({old_path} -> {new_path})", patch_path, index + 1)
    hunks: list[Hunk] = []
    index += 2
    while index < len(lines) and lines[index].startswith("@@"):
        hunk, index = _parse_hunk(lines, index, patch_path)
        hunks.append(hunk)
    if not hunks:
        raise PatchError(f"no hunks for {old_path}", patch_path, index + 1)
    return FileDiff(old_path, tuple(hunks)), index


def _header_path(line: str, marker: str, prefix: str, patch_path: Path, line_number: int) -> str:
    # Drop the line ending and the tab-separated timestamp that diff -u adds.
    name = line[len(marker) :].rstrip("\r\n").split("\t")[0].removeprefix(prefix)
    if name == "/dev/null":
        raise PatchError("creating or deleting files is not supported", patch_path, line_number)
    relative = PurePosixPath(name)
    if not name or relative.is_absolute() or ".." in relative.parts:
        raise PatchError(f"{name!r} is not a path inside the solution directory", patch_path, line_number)
    return relative.as_posix()


def _parse_hunk(lines: list[str], index: int, patch_path: Path) -> tuple[Hunk, int]:
    header_line = index + 1
    match = _HUNK_HEADER.match(lines[index])
    if match is None:
        raise PatchError(f"malformed hunk header {lines[index].rstrip()!r}", patch_path, header_line)
    old_start, old_count, new_count = int(match[1]), _count(match[2]), _count(match[4])
    old_lines: list[str] = []
    new_lines: list[str] = []
    sides_of_previous_line: tuple[list[str], ...] = ()
    index += 1
    while len(old_lines) < old_count or len(new_lines) < new_count or _is_no_newline_mark(lines, index):
        if index >= len(lines):
            raise PatchError(
                f"hunk {match[0]} ends early: {old_count - len(old_lines)} old and "
                f"{new_count - len(new_lines)} new lines missing",
                patch_path,
                header_line,
            )
        line = lines[index]
        # Editors strip the single space that marks an empty context line.
        tag, text = (" ", line) if line in ("\n", "\r\n") else (line[:1], line[1:])
        if tag == NO_NEWLINE_MARK and sides_of_previous_line:
            for side in sides_of_previous_line:
                side[-1] = side[-1].removesuffix("\n").removesuffix("\r")
            sides_of_previous_line = ()
        elif tag in (" ", "-", "+"):
            sides_of_previous_line = {" ": (old_lines, new_lines), "-": (old_lines,), "+": (new_lines,)}[tag]
            for side in sides_of_previous_line:
                side.append(text)
        else:
            raise PatchError(f"unexpected line in hunk {match[0]}: {line.rstrip()!r}", patch_path, index + 1)
        if len(old_lines) > old_count or len(new_lines) > new_count:
            raise PatchError(f"hunk {match[0]} has more lines than its header counts", patch_path, index + 1)
        index += 1
    return Hunk(match[0], header_line, old_start, tuple(old_lines), tuple(new_lines)), index


def _count(group: str | None) -> int:
    # "@@ -5 +5 @@" is short for a count of 1.
    return 1 if group is None else int(group)


def _is_no_newline_mark(lines: list[str], index: int) -> bool:
    return index < len(lines) and lines[index].startswith(NO_NEWLINE_MARK)


def _apply_hunks(text: str, file_diff: FileDiff, patch_path: Path) -> str:
    lines = split_lines(text)
    # How far the file has moved from the line numbers in the hunk headers: earlier hunks
    # changed its length, and a hunk found away from its stated line shifts the ones after it.
    offset = 0
    earliest = 0
    for number, hunk in enumerate(file_diff.hunks, start=1):
        # A hunk that removes nothing names the line it inserts after.
        stated = hunk.old_start if not hunk.old_lines else hunk.old_start - 1
        expected = stated + offset
        position = _find_hunk(lines, hunk.old_lines, expected, earliest)
        if position is None:
            raise PatchError(_mismatch(lines, hunk, number, expected, file_diff.path), patch_path, hunk.patch_line)
        lines[position : position + len(hunk.old_lines)] = hunk.new_lines
        offset = position - stated + len(hunk.new_lines) - len(hunk.old_lines)
        earliest = position + len(hunk.new_lines)
    return "".join(lines)


def _find_hunk(lines: list[str], old_lines: tuple[str, ...], expected: int, earliest: int) -> int | None:
    """The position nearest to `expected` where `old_lines` occur, within MAX_FLOAT_LINES."""
    for distance in range(MAX_FLOAT_LINES + 1):
        for position in dict.fromkeys((expected - distance, expected + distance)):
            fits = earliest <= position <= len(lines) - len(old_lines)
            if fits and tuple(lines[position : position + len(old_lines)]) == old_lines:
                return position
    return None


def _mismatch(lines: list[str], hunk: Hunk, number: int, expected: int, target: str) -> str:
    prefix = f"hunk #{number} {hunk.header} does not apply to {target}"
    if expected > len(lines):
        return f"{prefix}: it starts at line {expected + 1} but the file has {len(lines)} lines"
    for index, wanted in enumerate(hunk.old_lines, start=max(expected, 0)):
        if index >= len(lines):
            return f"{prefix}: the file ends at line {len(lines)}, the hunk expects line {index + 1}: {wanted!r}"
        if lines[index] != wanted:
            return (
                f"{prefix}: line {index + 1} is {lines[index]!r}, the hunk expects {wanted!r} "
                f"(no exact match within {MAX_FLOAT_LINES} lines either)"
            )
    return f"{prefix}: its context occurs only where it would overlap the hunk before it"
