"""Static checks that read a student's code the way the compiler does, never as text.

Each student file is run through the preprocessor (`g++ -E -dD`, bounded in time, memory and
output like any run of student code): comments, string literals, line splices, computed
`#include`s and token pasting are then the compiler's business, and what is left is structural:
- the include graph, from the preprocessor's line markers: which headers the student's file
  reaches, itself or through the headers it includes;
- the macro directives in the student's file, from `-dD`: which names it defines or undefines;
- the tokens of the student's lines after macro expansion.
The checks are: reaching into the grader's test harness (its record and check machinery, the
names the tests and the harness use), which refuses the submission; and using a forbidden
library (an included header of it, or one of its names in the expanded code), which costs the
task. The built programs are checked too: their include graph (Ninja's log of the compiler's
dependency output) and their symbols (binary_checks.py).
"""

import functools
import hashlib
import re
import shutil
import tempfile
from dataclasses import dataclass, field, replace
from pathlib import Path

from kernellab import runner
from kernellab.binary_checks import include_name, library_pattern
from kernellab.manifest import Assignment
from kernellab.sandbox.step import Step

GRADER = Path(__file__).resolve().parents[1]
HARNESS_INCLUDE = GRADER / "harness" / "include"
# The CPU backend's cuda_runtime.h: g++ can preprocess what includes it, with or without a toolkit.
CPU_INCLUDE = GRADER / "cpu" / "include"
PREPROCESS_TIMEOUT_S = 20
# Student code preprocessed as a student build of the CPU backend compiles it.
DEFINES = ("-DKERNELLAB_RECORD_ROLE=1", "-DKERNELLAB_CPU_BACKEND=1", "-DKERNELLAB_CATCH2_MAJOR=2")

# What a solution never needs and a forgery of results does: the headers of the harness's record
# and check machinery and of Catch2, its internal names (the measurements' probes included), and
# the calls that rewrite code in memory.
# The harness's CUDA helpers (kernellab/cuda_check.hpp, device_buffer.hpp) stay allowed.
HARNESS_HEADERS = re.compile(r"(^|/)(kernellab/(record|compare|catch|property)\.hpp|catch2/.*|catch\.hpp)$")
HARNESS_NAMES = re.compile(
    r"\b(Recorder|recordDevice|recordEqual|recordClose|recordArray|recordProperty|graderRecords|CaseScope|Catch|DepthMeasure"
    r"|kl_probes|Probes|ProbeSession|ApplyCounter|AccessTrace|BarrierCounter|countApply|countBarrier|barriersPassed|noteCopy"
    r"|mprotect|pkey_mprotect|process_vm_writev|ptrace)\b|/proc/self/mem"
)
# Macro names a student file may never define or undefine, besides every name the tests and the
# harness use (protected_names).
RESERVED_MACROS = re.compile(r"^(KL_|KERNELLAB_|CATCH_|INTERNAL_CATCH|kernellab)")
_IDENTIFIER = re.compile(r"\b[A-Za-z_]\w*\b")
# The preprocessor's line markers, each a line of its own: # line "file" flags.
_LINE_MARKERS = re.compile(r'^# (\d+) "((?:\\.|[^"\\])*)"((?: \d)*)$', re.MULTILINE)
_DIRECTIVE = re.compile(r"^#(define|undef) ([A-Za-z_]\w*)")
# The files read as code (as their own translation units); others (answers.toml) only when code includes them.
SOURCE_SUFFIXES = (".cu", ".cuh", ".h", ".hpp", ".hh", ".hxx", ".inl", ".cpp", ".cc", ".cxx", ".c")
_LITERAL = re.compile(r'R"([^()\\\s]{0,16})\(.*?\)\1"|"(?:\\.|[^"\\])*"|\'(?:\\.|[^\'\\])*\'')
# What is left of a raw string literal once the whole literals of a line are blanked: one that ends
# on a later line.
_RAW_STRING_OPENING = re.compile(r'R"([^()\\\s]{0,16})\(')


@dataclass
class Preprocessed:
    """What the preprocessor made of one student file (a translation unit of its own)."""

    # (student file, line, header path, whether the student file itself includes it) for each
    # header entered while a student file was being read; the line is the student file's #include.
    includes: list[tuple[str, int, str, bool]] = field(default_factory=list)
    # (student file, line, "define" or "undef", name) for each directive in a student file.
    directives: list[tuple[str, int, str, str]] = field(default_factory=list)
    # (student file, line, text with literals blanked) after macro expansion.
    lines: list[tuple[str, int, str]] = field(default_factory=list)
    # Why the preprocessor stopped (a missing header, a time limit), or "".
    problem: str = ""


def include_dirs(solution: Path, tests: Path | None = None) -> list[str]:
    """The include path of a build of `solution`: its own folder first, the tests, the harness, the
    CPU backend's CUDA runtime, then the CUDA toolkit's headers (CUB, Thrust) where installed."""
    dirs = ["-I", str(solution)] + (["-I", str(tests)] if tests else []) + ["-I", str(HARNESS_INCLUDE), "-I", str(CPU_INCLUDE)]
    for toolkit in _cuda_includes():
        dirs += ["-isystem", str(toolkit)]
    return dirs


@functools.cache
def _cuda_includes() -> tuple[Path, ...]:
    nvcc = shutil.which("nvcc")
    roots = [Path(nvcc).resolve().parent.parent] if nvcc else []
    roots.append(Path("/usr/local/cuda"))
    for root in roots:
        include = root / "include"
        if (include / "cuda_runtime_api.h").is_file():
            return tuple(path for path in (include / "cccl", include) if path.is_dir())
    return ()


def preprocess(source: Path, solution: Path, tests: Path | None = None) -> Preprocessed:
    """`source` (a file of `solution`) preprocessed as its own translation unit."""
    content = source.read_bytes()
    return _preprocess(source.resolve(), solution.resolve(), tests.resolve() if tests else None,
                       hashlib.sha256(content).hexdigest())


@functools.lru_cache(maxsize=64)
def _preprocess(source: Path, solution: Path, tests: Path | None, _content: str) -> Preprocessed:
    compiler = shutil.which("g++") or shutil.which("c++")
    if compiler is None:
        return Preprocessed(problem="no C++ compiler to read the code with")
    with tempfile.TemporaryDirectory(prefix="kernellab-pp-") as work:
        flags = ["-x", "c++", "-std=c++17", *DEFINES, *include_dirs(solution, tests), str(source)]
        result, outcome = _expand(compiler, flags, source, solution, Path(work))
        if outcome.exit_code != 0 and not outcome.timed_out:
            # A header missing here (CUB without a CUDA toolkit, a file the build generates) stops
            # the preprocessor: the headers the file names, with an empty stand-in for each missing
            # one, let it read the whole file.
            deps = Path(work) / "deps"
            _run_limited([compiler, "-M", "-MG", *flags, "-MF", str(deps)], source, deps)
            named = deps.read_text(encoding="utf-8", errors="replace").replace("\\\n", " ").split()[2:] if deps.exists() else []
            stand_ins = Path(work) / "missing" / "include"
            for header in named:
                if not Path(header).is_absolute() and not Path(header).exists():
                    (stand_ins / header).parent.mkdir(parents=True, exist_ok=True)
                    (stand_ins / header).touch()
            result, outcome = _expand(compiler, [*flags, "-idirafter", str(stand_ins)], source, solution, Path(work))
        if outcome.timed_out or outcome.exit_code != 0:
            errors = [line for line in outcome.output.splitlines() if "error" in line][:2]
            result.problem = "timed out" if outcome.timed_out else "; ".join(errors) or f"exit status {outcome.exit_code}"
    return result


def _expand(compiler: str, flags: list[str], source: Path, solution: Path, work: Path) -> tuple[Preprocessed, runner.RunOutcome]:
    output = work / "out.i"
    outcome = _run_limited([compiler, "-E", "-dD", *flags, "-o", str(output)], source, output)
    # The compiler removes its output when it fails: what it read up to a fatal error is lost.
    text = output.read_text(encoding="utf-8", errors="replace") if output.exists() else ""
    return parse_preprocessed(text, (solution,)), outcome


def _run_limited(command: list[str], source: Path, output: Path) -> runner.RunOutcome:
    """The compiler on student code: bounded in time, memory and what it writes, like any run of it."""
    output.touch()
    step = Step((source,), (output,), memory_bytes=2 << 30, processes=16, file_bytes=64 << 20)
    return runner.run_program(command, output.parent, PREPROCESS_TIMEOUT_S, step=step)


def parse_preprocessed(text: str, student_dirs: tuple[Path, ...]) -> Preprocessed:
    """The include graph, directives and expanded lines of the student's files (those in
    `student_dirs`) in the preprocessor's output `text`.

    What a student file is follows the include stack, not the names that line markers give: a
    `#line` directive in a student file renames it in the markers that follow, and a raw string
    literal can hold lines shaped like markers; neither makes the student's code another file's.
    Only the student's lines are read one by one: the rest (a test's translation unit is some
    100,000 lines of headers) is skipped from marker to marker, since the grader's process reads
    the units of every build of a batch."""
    return _PreprocessedReader(tuple(str(folder.resolve()) for folder in student_dirs)).read(text)


class _PreprocessedReader:
    def __init__(self, students: tuple[str, ...]):
        self._students = students
        self._result = Preprocessed()
        # The file being read: the name the markers give it (a #line directive changes that), the
        # line, whether it is a student's, and its own name, for the findings.
        self._file = _File("", 0, False, "")
        # The files being read, innermost last.
        self._stack: list[_File] = []
        # Until the main file's name comes back after the compiler's own <built-in> and
        # <command-line> preamble, markers may rename the file being read.
        self._main: str | None = None
        self._in_preamble = True

    def read(self, text: str) -> Preprocessed:
        position = 0
        while position < len(text):
            if not self._file.students:
                marker = _LINE_MARKERS.search(text, position)
                if marker is None:
                    break
                self._marker(marker)
                position = marker.end() + 1
            elif marker := _LINE_MARKERS.match(text, position, _line_end(text, position)):
                self._marker(marker)
                position = marker.end() + 1
            else:
                position = self._student_line(text, position)
        return self._result

    def _is_students(self, path: str) -> bool:
        return any(path == student or path.startswith(student + "/") for student in self._students)

    def _marker(self, marker: re.Match) -> None:
        number, path, flags = int(marker[1]), _resolved(marker[2]), marker[3].split()
        if "1" in flags:  # entering a header from the current file
            self._stack.append(self._file)
            includer = next((file for file in reversed(self._stack) if file.students), None)
            if includer:
                self._result.includes.append((Path(includer.shown).name, includer.line, path, self._file.students))
            self._file = _File(path, number, self._is_students(path), path)
        elif "2" in flags:  # back in an including file, by the name the markers gave it
            while self._stack and self._stack[-1].named != path:
                self._stack.pop()
            back = self._stack.pop() if self._stack else _File(path, number, self._is_students(path), path)
            self._file = replace(back, line=number)
        elif self._file.students and not self._in_preamble:
            # A #line directive of the student's: still the student's file, by whatever name.
            self._file = replace(self._file, named=path, line=number)
        else:
            if self._main is None:
                self._main = path
            elif path == self._main:
                self._in_preamble = False
            self._file = _File(path, number, self._is_students(path), path)

    def _student_line(self, text: str, position: int) -> int:
        """Read the student's line at `position`, with the lines of a raw string literal that it
        opens; where the next line starts."""
        name = Path(self._file.shown).name
        raw = text[position:_line_end(text, position)]
        if directive := _DIRECTIVE.match(raw):
            self._result.directives.append((name, self._file.line, directive[1], directive[2]))
            self._file.line += 1
            return position + len(raw) + 1
        while True:
            code = _LITERAL.sub('""', raw)
            unclosed = _RAW_STRING_OPENING.search(code)
            if unclosed:
                code = code[:unclosed.start()]
            if code.strip():
                self._result.lines.append((name, self._file.line, code))
            if unclosed is None:
                self._file.line += 1
                return position + len(raw) + 1
            # A raw string literal that goes on past this line: its lines are text, however they
            # look; what follows it on its last line is code of that line.
            opened_at = position + raw.rfind(unclosed[0]) + len(unclosed[0])
            closing = text.find(f"){unclosed[1]}\"", opened_at)
            if closing < 0:
                return len(text)
            self._file.line += text.count("\n", opened_at, closing)
            position = closing + len(unclosed[1]) + 2
            raw = text[position:_line_end(text, position)]


@dataclass
class _File:
    named: str  # by the line markers
    line: int
    students: bool
    shown: str  # in the findings: the file's own name


def _line_end(text: str, position: int) -> int:
    end = text.find("\n", position)
    return len(text) if end < 0 else end


@functools.lru_cache(maxsize=4096)
def _resolved(path: str) -> str:
    if path.startswith("<"):
        return path  # <built-in>, <command-line>
    return str(Path(path.encode().decode("unicode_escape")).resolve())


def protected_names(*folders: Path, allowed: set[str] = frozenset()) -> frozenset[str]:
    """Every identifier of the C++ sources in `folders` (the tests and the harness: trusted
    files), less `allowed` (the macros the reference's own files define)."""
    names: set[str] = set()
    for folder in folders:
        for path in sorted(folder.rglob("*")):
            if path.is_file() and path.suffix in SOURCE_SUFFIXES:
                names |= set(_IDENTIFIER.findall(path.read_text(encoding="utf-8", errors="replace")))
    return frozenset(names - allowed)


def assignment_protected_names(assignment: Assignment) -> frozenset[str]:
    """The names a student file of `assignment` may not define: its tests' and the harness's, less
    the macros its given code defines (the reference's, or in a handout the skeleton's)."""
    given = assignment.reference_dir if assignment.reference_dir.is_dir() else assignment.skeleton_dir
    return protected_names(assignment.tests_dir, HARNESS_INCLUDE, allowed=defined_macros(given) if given.is_dir() else set())


def defined_macros(folder: Path) -> set[str]:
    """The names the files of `folder` (a reference: trusted) #define."""
    pattern = re.compile(r"^\s*#\s*define\s+([A-Za-z_]\w*)", re.MULTILINE)
    return {name for path in folder.iterdir() if path.is_file() for name in pattern.findall(path.read_text(errors="replace"))}


def harness_tampering(source: Path, solution: Path, tests: Path | None, protected: frozenset[str]) -> tuple[str, str] | None:
    """Where and how `source`, read as a translation unit of its own, reaches into the grader's
    test harness, e.g. ('map.cuh:3', 'defines KL_REQUIRE_EQUAL, a name of the grader's tests or
    harness'), or None. A first look, before any build: what holds is the check of every
    translation unit a build compiles (compiled_checks.py), which sees what this cannot."""
    return harness_tampering_in(preprocess(source, solution, tests), protected)


def harness_tampering_in(found: Preprocessed, protected: frozenset[str]) -> tuple[str, str] | None:
    """Where and how the student's lines of one preprocessed translation unit reach into the
    grader's test harness, or None."""
    for name, line, header, direct in found.includes:
        if direct and HARNESS_HEADERS.search(header):
            return f"{name}:{line}", f"includes {include_name(header)}"
    for name, line, kind, macro in found.directives:
        if RESERVED_MACROS.match(macro) or macro in protected:
            return f"{name}:{line}", f"{kind}s {macro}, a name of the grader's tests or harness"
    for name, line, text in found.lines:
        if match := HARNESS_NAMES.search(text):
            return f"{name}:{line}", f"uses {match[0]}"
    return None


def forbidden_in_sources(solution: Path, forbidden: tuple[str, ...], given: Path | None = None) -> dict[str, tuple[str, ...]]:
    """Per file name, 'map.cuh:3 reaches cub (cub/cub.cuh), which this assignment forbids' for each
    header of a forbidden library that the file includes (itself or through other headers), and
    'map.cuh:9 uses cub, ...' for each forbidden name left in its code after macro expansion.

    `given` is the skeleton's folder: what its file of the same name holds is the course's given
    code (CS149's starter includes Thrust and times it in cudaScanThrust), no use of the
    student's. Each include of a forbidden header and each line of code naming a forbidden
    library counts against the student's file only as often as it is there beyond the skeleton's
    (the same header, the same line of code wherever it sits): a given line copied into the
    student's own code while the given function keeps its own is a finding; the given lines moved
    out of the given function into the student's are not told apart (docs/threat-model.md)."""
    if not forbidden:
        return {}
    findings: dict[str, tuple[str, ...]] = {}
    for path in sorted(solution.iterdir()):
        if path.suffix not in SOURCE_SUFFIXES:
            continue
        found = _forbidden_uses(path, solution, forbidden)
        given_file = given / path.name if given is not None else None
        if given_file is not None and given_file.is_file():
            for kind_and_text, _line in _forbidden_uses(given_file, given, forbidden):
                found = _without_first(found, kind_and_text)
        lines = [_forbidden_message(path.name, line, kind_and_text) for kind_and_text, line in found]
        if lines:
            findings[path.name] = tuple(dict.fromkeys(lines))
    return findings


def _forbidden_uses(path: Path, folder: Path, forbidden: tuple[str, ...]) -> list[tuple[tuple[str, str, str], int]]:
    """The forbidden uses of one file, each as ((kind, library, what), line): ("reaches", "thrust",
    "thrust/scan.h") for an #include line that reaches a forbidden header, ("uses", "thrust", the
    line's code) for a line of code that names one."""
    headers = library_pattern(forbidden)
    words = re.compile(r"\b(" + "|".join(map(re.escape, forbidden)) + r")\b", re.IGNORECASE)
    found = preprocess(path, folder)
    # One finding per #include line of the file: the first forbidden header it reaches (a header
    # of CUB's reaches Thrust's too).
    reached: dict[int, tuple[str, str]] = {}
    for name, line, header, _direct in found.includes:
        if name == path.name and (match := headers.search(include_name(header))):
            reached.setdefault(line, (match[1].lower(), include_name(header)))
    uses = [(("reaches", word, header), line) for line, (word, header) in reached.items()]
    uses += [(("uses", match[1], " ".join(text.split())), line)
             for name, line, text in found.lines if name == path.name and (match := words.search(text))]
    return uses


def _without_first(uses: list[tuple[tuple[str, str, str], int]], kind_and_text: tuple[str, str, str]) -> list:
    """`uses` less its first use of `kind_and_text` (if any)."""
    for index, (kind, _line) in enumerate(uses):
        if kind == kind_and_text:
            return uses[:index] + uses[index + 1:]
    return uses


def _forbidden_message(name: str, line: int, kind_and_text: tuple[str, str, str]) -> str:
    kind, word, what = kind_and_text
    if kind == "reaches":
        return f"{name}{f':{line}' if line else ''} reaches {word} ({what}), which this assignment forbids"
    return f"{name}:{line} uses {word}, which this assignment forbids"
