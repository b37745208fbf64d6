"""The libclang side of per-task isolation (splice.py): each folder's translation unit parsed,
in a child process, into its top-level definitions with their byte extents and the names they use.
"""
import importlib.util
import json
import os
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path, PurePosixPath

from kernellab import PACKAGE_PARENT
from kernellab.errors import InputError
from kernellab.grading.model import GradingError

# A parse takes well under a second; a student's `#include "/dev/zero"` would take forever.
PARSE_TIMEOUT_S = 120

# CUDA's keywords are macros of the CUDA headers, which the parse does without (`-nocudainc`).
_PRELUDE = """\
#define __global__ __attribute__((global))
#define __device__ __attribute__((device))
#define __host__ __attribute__((host))
#define __shared__ __attribute__((shared))
#define __constant__ __attribute__((constant))
#define __managed__ __attribute__((managed))
#define __forceinline__ __inline__ __attribute__((always_inline))
#define __noinline__ __attribute__((noinline))
#define __launch_bounds__(...) __attribute__((launch_bounds(__VA_ARGS__)))
#define __restrict__ __restrict
typedef signed char int8_t; typedef short int16_t; typedef int int32_t; typedef long int64_t;
typedef unsigned char uint8_t; typedef unsigned short uint16_t; typedef unsigned int uint32_t;
typedef unsigned long uint64_t; typedef unsigned long size_t; typedef unsigned long uintptr_t;
"""
_CLANG_ARGS = ["-x", "cuda", "--cuda-host-only", "-nocudainc", "-nocudalib", "-std=c++17", "-nostdinc",
               "-nostdinc++", "-ferror-limit=0", "-Wno-unknown-cuda-version"]
_KINDS = {
    "FUNCTION_DECL": "function", "FUNCTION_TEMPLATE": "function", "VAR_DECL": "variable", "MACRO_DEFINITION": "macro",
    "CLASS_DECL": "type", "STRUCT_DECL": "type", "UNION_DECL": "type", "ENUM_DECL": "type", "CLASS_TEMPLATE": "type",
    "CLASS_TEMPLATE_PARTIAL_SPECIALIZATION": "type", "TYPEDEF_DECL": "type", "TYPE_ALIAS_DECL": "type",
    "TYPE_ALIAS_TEMPLATE_DECL": "type",
}


# The parsing child's exit status where libclang itself is missing or does not load.
_NO_LIBCLANG_EXIT = 3
NO_LIBCLANG = ("libclang's Python bindings are not installed where the grader runs (pip install libclang): "
               "without them no task can be graded on its own functions, and the grades would differ")


class IsolationError(InputError):
    """No isolated folders: a task owns a function the reference lacks, or the student's files
    could not be parsed. The pipeline then judges every task on the whole submission, and the
    grade says so."""


class LibclangMissing(GradingError):
    """The grader's machine cannot parse at all: no grade is made. Falling back to the whole
    submission would make the grade depend on the machine (a batch on a GPU host whose libclang
    was not on Python's path cost known-wrong versions tasks they had right)."""


def libclang_problem() -> str:
    """Why this Python cannot load libclang's bindings, or "" (a check for a run's start; the
    parsing child checks the library itself)."""
    return "" if importlib.util.find_spec("clang") is not None else NO_LIBCLANG


@dataclass(frozen=True)
class Definition:
    """One top-level declaration of a translation unit, as libclang found it."""

    name: str
    kind: str  # "function", "type", "variable" or "macro"
    is_definition: bool
    # The file in the solution folder, "" for one the build takes from elsewhere (the skeleton's
    # copy of an optional file); byte offsets of its text there and the lines where it starts and ends.
    file: str
    start: int
    end: int
    start_line: int
    end_line: int
    # The identifiers its text uses.
    uses: frozenset[str]


@dataclass(frozen=True)
class Parsed:
    definitions: tuple[Definition, ...]  # in the order the translation unit has them
    system_includes: tuple[str, ...]  # the `#include <...>` of the folder's files


def parse_folders(folders: list[tuple[Path, str, Path | None]], scratch: Path) -> list[Parsed]:
    """Each folder's translation unit, parsed in a child process: libclang reads what the
    student's includes name and may crash on hostile input; neither may take the grader down."""
    request = json.dumps({"folders": [[str(f), entry, str(fb) if fb else None] for f, entry, fb in folders],
                          "scratch": str(scratch)})
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(filter(None, [str(PACKAGE_PARENT), os.environ.get("PYTHONPATH")]))}
    try:
        completed = subprocess.run([sys.executable, "-c", "import kernellab.grading.isolation.parse as i; i._serve()"], input=request,
                                   capture_output=True, text=True, timeout=PARSE_TIMEOUT_S, env=env)
    except subprocess.TimeoutExpired:
        raise IsolationError(f"parsing the solution took more than {PARSE_TIMEOUT_S} s") from None
    if completed.returncode == _NO_LIBCLANG_EXIT:
        raise LibclangMissing(completed.stderr.strip() or NO_LIBCLANG)
    if completed.returncode != 0:
        last = (completed.stderr.strip().splitlines() or ["no message"])[-1]
        raise IsolationError(f"libclang could not parse the solution (exit status {completed.returncode}): {last}")
    return [Parsed(tuple(Definition(**{**d, "uses": frozenset(d["uses"])}) for d in item["definitions"]),
                   tuple(item["system_includes"])) for item in json.loads(completed.stdout)]


def _serve() -> None:
    """The child process of parse_folders: the request on stdin, the parses on stdout."""
    request = json.load(sys.stdin)
    try:
        from clang import cindex
    except ImportError as error:
        _exit_without_libclang(error)
    try:
        cindex.Index.create()
    except cindex.LibclangError as error:  # the bindings without their shared library
        _exit_without_libclang(error)
    scratch = Path(request["scratch"])
    parsed = [_parse(Path(folder), entry, Path(fallback) if fallback else None, scratch / f"stubs{index}")
              for index, (folder, entry, fallback) in enumerate(request["folders"])]
    json.dump([{"definitions": [{**d.__dict__, "uses": sorted(d.uses)} for d in item.definitions],
                "system_includes": list(item.system_includes)} for item in parsed], sys.stdout)


def _exit_without_libclang(error: Exception) -> None:
    print(f"{NO_LIBCLANG} ({error})", file=sys.stderr)
    sys.exit(_NO_LIBCLANG_EXIT)


def _parse(folder: Path, entry: str, fallback: Path | None, stubs: Path) -> Parsed:
    from clang import cindex  # only in the child process

    folder = folder.resolve()
    stubs.mkdir(parents=True)
    (stubs / "kernellab_prelude.h").write_text(_PRELUDE)
    args = [*_CLANG_ARGS, f"-I{folder}", *([f"-I{fallback.resolve()}"] if fallback else []),
            "-isystem", str(stubs), "-include", str(stubs / "kernellab_prelude.h")]
    options = cindex.TranslationUnit.PARSE_DETAILED_PROCESSING_RECORD
    index = cindex.Index.create()
    # A solution without the entry file (an optional one the build takes from the skeleton) is
    # read through the fallback's copy, as the build reads it.
    entry_path = folder / entry if (folder / entry).is_file() or fallback is None else fallback.resolve() / entry
    unit = index.parse(str(entry_path), args, options=options)
    # An include that cannot be found is a fatal error, after which clang reports nothing; each
    # becomes an empty header, and the second parse reports every error.
    missing = {_missing_include(cursor) for cursor in unit.cursor.get_children()
               if cursor.kind == cindex.CursorKind.INCLUSION_DIRECTIVE} - {None}
    for name in missing:
        (stubs / name).parent.mkdir(parents=True, exist_ok=True)
        (stubs / name).touch()
    if missing:
        unit = index.parse(str(entry_path), args, options=options)
    definitions, system_includes = [], []
    contents: dict[str, bytes] = {}
    for cursor in _top_level(unit.cursor, cindex):
        start, end = cursor.extent.start, cursor.extent.end
        if start.file is None or end.file is None or start.file.name != end.file.name:
            continue
        path = Path(start.file.name).resolve()
        if path.parent == folder:
            file = path.name
        elif fallback is not None and path.parent == fallback.resolve():
            file = ""
        else:
            continue
        if cursor.kind == cindex.CursorKind.INCLUSION_DIRECTIVE:
            text = contents.setdefault(str(path), path.read_bytes())[start.offset:end.offset]
            if b"<" in text:
                system_includes.append(cursor.spelling)
            continue
        kind = _KINDS.get(cursor.kind.name)
        if kind is None or not cursor.spelling:
            continue
        # The tokens of the text between the extent's offsets: an extent that starts at a macro
        # (`__device__ inline T f(...)`) gives libclang's get_tokens none at all.
        source = unit.get_file(start.file.name)
        text_range = cindex.SourceRange.from_locations(cindex.SourceLocation.from_offset(unit, source, start.offset),
                                                       cindex.SourceLocation.from_offset(unit, source, end.offset))
        uses = frozenset(token.spelling for token in unit.get_tokens(extent=text_range)
                         if token.kind == cindex.TokenKind.IDENTIFIER)
        end_offset = end.offset
        if kind in ("type", "variable"):  # clang's extent stops before the `;` that ends the declaration
            end_offset = _past_semicolon(contents.setdefault(str(path), path.read_bytes()), end_offset)
        definitions.append(Definition(cursor.spelling, kind, kind == "macro" or cursor.is_definition(), file,
                                      start.offset, end_offset, start.line, end.line, uses - {cursor.spelling}))
    return Parsed(tuple(definitions), tuple(dict.fromkeys(system_includes)))


def _past_semicolon(text: bytes, offset: int) -> int:
    """`offset`, moved past the `;` that follows it on its line, if one does."""
    after = offset + len(text[offset:]) - len(text[offset:].lstrip(b" \t"))
    return after + 1 if text[after:after + 1] == b";" else offset


def _top_level(cursor, cindex):
    for child in cursor.get_children():
        if child.kind in (cindex.CursorKind.NAMESPACE, cindex.CursorKind.LINKAGE_SPEC):
            yield from _top_level(child, cindex)
        else:
            yield child


def _missing_include(cursor) -> str | None:
    """The name of an include that no file answers, as a path below the stubs folder; None for one
    that a file answers, or that would leave the stubs folder."""
    try:
        if cursor.get_included_file() is not None:
            return None
    except AssertionError:  # the bindings' way of saying that no file was found
        pass
    name = PurePosixPath(cursor.spelling)
    return None if name.is_absolute() or ".." in name.parts or not name.parts else str(name)
