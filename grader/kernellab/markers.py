"""The solution-marker parser: turns reference sources into skeleton sources.

A region in a C/C++/CUDA source, each marker alone on its line:

    // BEGIN SOLUTION <task-id>
    ...solution lines: kept in the reference, dropped from the skeleton...
    // STUB
    // ...stub lines, commented out: uncommented in the skeleton...
    // END SOLUTION

A TOML file (the answers to an assignment's questions) takes the same markers with `#` comments:
`# BEGIN SOLUTION <task-id>`, `# STUB`, `# END SOLUTION`, and stub lines written `# <line>`.
"""

import re
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from kernellab.errors import InputError
from kernellab.text import encode_text, read_text, split_ending, split_lines

# ".cu.h" ends in ".h" already; it is listed because it is the suffix the labs use.
SOURCE_SUFFIXES = (".h", ".hpp", ".cuh", ".cu", ".cpp", ".cc", ".c", ".cu.h")
TOML_SUFFIXES = (".toml",)

# Near misses of the markers: a typo must not leak a solution into the skeleton.
_MENTIONS_REGION = re.compile(r"(begin|end)\s*solution", re.IGNORECASE)


@dataclass(frozen=True)
class _CommentSyntax:
    """The markers of one kind of file, written with its line comment (`//` or `#`)."""

    comment: str
    begin: re.Pattern
    end: re.Pattern
    stub: re.Pattern
    # A comment holding the word STUB and nothing but punctuation, unlike a commented-out `// stub();`.
    lone_stub_comment: re.Pattern
    commented_stub_line: re.Pattern

    @classmethod
    def of(cls, comment: str, block_comment: str = "") -> "_CommentSyntax":
        token = re.escape(comment)
        punctuation = r"[\s:;.,!#*=/-]*"
        opener = f"{token}+" + (f"|{block_comment}" if block_comment else "")
        return cls(
            comment=comment,
            begin=re.compile(rf"[ \t]*{token} BEGIN SOLUTION(?: (?P<task>\S+))?[ \t]*"),
            end=re.compile(rf"[ \t]*{token} END SOLUTION[ \t]*"),
            stub=re.compile(rf"[ \t]*{token} STUB[ \t]*"),
            lone_stub_comment=re.compile(rf"[ \t]*({opener}){punctuation}stub{punctuation}", re.IGNORECASE),
            commented_stub_line=re.compile(rf"(?P<indent>[ \t]*){token} ?(?P<code>.*)"),
        )


_C_COMMENTS = _CommentSyntax.of("//", block_comment=r"/\*+")
_TOML_COMMENTS = _CommentSyntax.of("#")


class MarkerError(InputError):
    pass


@dataclass(frozen=True)
class Region:
    task: str
    begin_line: int
    end_line: int


@dataclass(frozen=True)
class StrippedSource:
    text: str
    regions: tuple[Region, ...]


@dataclass
class _OpenRegion:
    task: str
    begin_line: int
    stub_line: int | None = None


def is_marked_source(path: Path) -> bool:
    return path.name.endswith(SOURCE_SUFFIXES + TOML_SUFFIXES)


def _syntax_of(path: Path | str) -> _CommentSyntax:
    return _TOML_COMMENTS if str(path).endswith(TOML_SUFFIXES) else _C_COMMENTS


def strip_source(text: str, path: Path | str, task_ids: Sequence[str]) -> StrippedSource:
    """The skeleton version of one reference source; raises MarkerError on any marker problem.

    The markers are `//` comments, or `#` comments when `path` names a TOML file.
    """
    syntax = _syntax_of(path)
    output: list[str] = []
    regions: list[Region] = []
    region: _OpenRegion | None = None
    for number, line in enumerate(split_lines(text), start=1):
        body, ending = split_ending(line)
        if begin := syntax.begin.fullmatch(body):
            if region is not None:
                raise MarkerError(
                    f"BEGIN SOLUTION inside the region opened at line {region.begin_line}; regions do not nest",
                    path,
                    number,
                )
            region = _OpenRegion(_known_task(begin["task"], task_ids, syntax, path, number), number)
        elif syntax.end.fullmatch(body):
            if region is None:
                raise MarkerError("END SOLUTION with no open region", path, number)
            regions.append(Region(region.task, region.begin_line, number))
            region = None
        elif syntax.stub.fullmatch(body):
            if region is None:
                raise MarkerError("STUB outside a region", path, number)
            if region.stub_line is not None:
                raise MarkerError(
                    f"second STUB in the region opened at line {region.begin_line} "
                    f"(the first is at line {region.stub_line})",
                    path,
                    number,
                )
            region.stub_line = number
        elif _MENTIONS_REGION.search(body) or syntax.lone_stub_comment.fullmatch(body):
            raise MarkerError(
                f"malformed marker {body.strip()!r}: the markers are exactly "
                f"'{syntax.comment} BEGIN SOLUTION <task-id>', '{syntax.comment} STUB' and "
                f"'{syntax.comment} END SOLUTION', each alone on its line",
                path,
                number,
            )
        elif region is None:
            output.append(line)
        elif region.stub_line is not None:
            output.append(_uncommented(body, syntax, path, number) + ending)
    if region is not None:
        raise MarkerError(f"region of task {region.task!r} is never closed by END SOLUTION", path, region.begin_line)
    return StrippedSource(_with_trailing_newline_of(text, "".join(output)), tuple(regions))


def strip_tree(reference_dir: Path, task_ids: Sequence[str]) -> dict[str, bytes]:
    """The skeleton tree, as relative POSIX path -> content, of every file under `reference_dir`.

    Sources are stripped, other files copied; every task must have a region somewhere.
    """
    if not reference_dir.is_dir():
        raise MarkerError("reference directory not found", reference_dir)
    skeleton: dict[str, bytes] = {}
    tasks_with_region: set[str] = set()
    for path in sorted(path for path in reference_dir.rglob("*") if path.is_file()):
        name = path.relative_to(reference_dir).as_posix()
        if not is_marked_source(path):
            skeleton[name] = path.read_bytes()
            continue
        stripped = strip_source(read_text(path), path, task_ids)
        skeleton[name] = encode_text(stripped.text)
        tasks_with_region.update(region.task for region in stripped.regions)
    if missing := [task for task in task_ids if task not in tasks_with_region]:
        raise MarkerError(f"no solution region in any file here for task(s): {', '.join(missing)}", reference_dir)
    return skeleton


def _known_task(task: str | None, task_ids: Sequence[str], syntax: _CommentSyntax, path: Path | str, line: int) -> str:
    if task is None:
        raise MarkerError(
            f"BEGIN SOLUTION without a task id: write '{syntax.comment} BEGIN SOLUTION <task-id>'", path, line
        )
    if task not in task_ids:
        raise MarkerError(f"unknown task id {task!r}; the manifest's tasks are: {', '.join(task_ids)}", path, line)
    return task


def _uncommented(body: str, syntax: _CommentSyntax, path: Path | str, line: int) -> str:
    """A stub line without its first comment token and one space after it; blank lines stay blank."""
    if not body.strip():
        return ""
    match = syntax.commented_stub_line.fullmatch(body)
    if match is None:
        raise MarkerError(
            f"stub line is not commented out: every line after '{syntax.comment} STUB' "
            f"starts with '{syntax.comment}'",
            path,
            line,
        )
    # A bare comment token becomes an empty line, not one of trailing indentation.
    return match["indent"] + match["code"] if match["code"] else ""


def _with_trailing_newline_of(source: str, output: str) -> str:
    """Drop the output's final line ending when the source has none (its last line was a marker)."""
    if source.endswith("\n") or not output.endswith("\n"):
        return output
    # Every output line ends like its source line, so "\r" before the final "\n" is part of a CRLF ending.
    return output.removesuffix("\n").removesuffix("\r")
