"""Per-task isolation (issue 15): one mistake costs its own task, not every task built on it.

A task's tests call other tasks' functions (scanIncBlock calls scanIncWarp), so one broken
function would fail every task above it. Each task gets a solution folder of its own: the
student's files, with every function that ANOTHER task owns (the manifest's `functions`) replaced:
by the reference's where the reference's code of the task calls it, directly or through other
functions (its dependencies: what the task is given), else by the skeleton's. So the reference's
code in a task's folder is only what the task builds on, never another task's solution that the
student's code could call instead of writing its own. The student's types, operators, constants,
given code and the task's own functions stay. The grader builds the task's tests against the
folder alone (grading/building.py).

Definitions are found by name with libclang (templates included) in the translation unit of the
entry file, as the tests include it, and spliced by their byte extents. The parse needs neither
the CUDA headers nor a compiler's: a prelude spells CUDA's keywords as clang's attributes, and a
header that cannot be found is an empty one (clang recovers from the errors this causes inside
function bodies, and from the student's own). A definition (function, type, macro, variable) that
a spliced function uses and the student's build lacks comes along, placed before its first use,
as do the reference's system headers.

Limits: a definition the student HAS under the same name but with another contract (a course
helper with other parameters, an operator taking volatile references) stays, and the spliced code
may not compile against it where the tests instantiate it; unbalanced braces can hide the
functions after them (reported as not found). So the pipeline judges a task by its isolated build
where that builds, else by the whole submission. An isolated build's compiler messages may quote
the reference's code: they must not reach the student.
"""
import re
import shutil
import tempfile
from dataclasses import dataclass
from pathlib import Path

from kernellab.grading.isolation.parse import Definition, IsolationError, Parsed, parse_folders
from kernellab.manifest import Assignment, Task
from kernellab.markers import SOURCE_SUFFIXES, strip_source
from kernellab.text import read_text


_COMMENT = re.compile(r"//[^\n]*|/\*.*?\*/", re.DOTALL)


@dataclass(frozen=True)
class Isolation:
    """The solution folder of one task, and what in it is not the student's."""

    task: str
    tests: str
    folder: Path
    own: tuple[str, ...]  # the task's functions: the student's
    from_reference: tuple[str, ...]  # other tasks' functions the task's code calls, replaced by the reference's
    from_skeleton: tuple[str, ...]  # the other tasks' functions, replaced by the skeleton's
    added: tuple[str, ...]  # of those two, the ones the student's code lacks
    helpers: tuple[str, ...]  # definitions they need that the student's code lacks
    own_missing: tuple[str, ...]  # the task's own functions not found in the student's code


def isolated_solutions(
    assignment: Assignment, solution_dir: Path, reference_dir: Path, out_dir: Path
) -> dict[str, Isolation]:
    """One folder per tested task under `out_dir/<tests>`, by the task's `tests` name; `solution_dir`
    holds the student's files after intake (the manifest's names or aliases). A task that owns no
    functions tests given code, for no points: its folder takes every task's functions from the
    reference."""
    tasks = assignment.tested_tasks
    if not any(task.functions for task in tasks) or all(
            not other.functions for task in tasks for other in assignment.tasks if other is not task):
        return {}  # nothing to replace: each task's folder would be the student's
    skeleton_dir = assignment.skeleton_dir
    with tempfile.TemporaryDirectory(prefix="kernellab-isolate-") as scratch:
        fallback = _fallback_folder(assignment, solution_dir, Path(scratch) / "fallback")
        student, reference, skeleton = parse_folders([(solution_dir, _entry_name(assignment, solution_dir), fallback),
                                                      (reference_dir, assignment.files.entry, None),
                                                      (skeleton_dir, assignment.files.entry, None)], Path(scratch))
    texts = {path.name: path.read_bytes() for path in sorted(solution_dir.iterdir()) if path.is_file()}
    sources = {"reference": _Source(reference, _texts(reference_dir)), "skeleton": _Source(skeleton, _texts(skeleton_dir))}
    owned = {name for task in assignment.tasks for name in task.functions}
    isolations = {}
    for task in tasks:
        called = _called_by(reference, set(task.functions) | _used_by_tests(assignment, task)) if task.functions else owned
        others = {name: "reference" if name in called else "skeleton"
                  for other in assignment.tasks if other is not task for name in other.functions}
        if not others:  # a task alone: its folder would be the student's
            continue
        files, isolation = _splice(task, others, student, sources, texts, out_dir / task.tests)
        isolation.folder.mkdir(parents=True, exist_ok=True)
        for name, content in files.items():
            (isolation.folder / name).write_bytes(content)
        isolations[task.tests] = isolation
    return isolations


def feedback_lines(isolation: Isolation) -> list[str]:
    """What the student reads about how this task was built."""
    replaced = [f"the ones it calls ({', '.join(isolation.from_reference)}) are the reference's"] if isolation.from_reference else []
    replaced += [f"the others ({', '.join(isolation.from_skeleton)}) the skeleton's"] if isolation.from_skeleton else []
    if isolation.own:
        lines = [f"Task {isolation.task} is judged on your {', '.join(isolation.own)} alone: in the build of its tests, "
                 f"of other tasks' functions {' and '.join(replaced)}, so a mistake in one of those costs only its own task."]
    else:
        lines = [f"Task {isolation.task} tests the code you were given: in the build of its tests, of the tasks' "
                 f"functions {' and '.join(replaced)}, so a mistake in one of those costs only its own task."]
    if isolation.added:
        lines.append(f"Not found in your code (renamed or missing?): {', '.join(isolation.added)}; "
                     f"task {isolation.task} used the reference's or the skeleton's.")
    if isolation.own_missing:
        lines.append(f"Task {isolation.task}: your {', '.join(isolation.own_missing)} not found (renamed or missing?).")
    return lines


def function_definitions(folder: Path, entry: str) -> dict[str, list[bytes]]:
    """The text of every function definition in the files of `folder`, by name, as the
    translation unit of its file `entry` has them."""
    with tempfile.TemporaryDirectory(prefix="kernellab-isolate-") as scratch:
        (parsed,) = parse_folders([(folder, entry, None)], Path(scratch))
    found: dict[str, list[bytes]] = {}
    for d in parsed.definitions:
        if d.kind == "function" and d.is_definition:
            found.setdefault(d.name, []).append((folder / d.file).read_bytes()[d.start:d.end])
    return found


def check_functions(assignment: Assignment) -> list[str]:
    """Problems of the manifest's `functions`: each must hold a solution region of its task, and
    every region in a source of the reference must lie in a function its task lists."""
    reference_dir = assignment.reference_dir
    with tempfile.TemporaryDirectory(prefix="kernellab-isolate-") as scratch:
        (parsed,) = parse_folders([(reference_dir, assignment.files.entry, None)], Path(scratch))
    owner = {name: task.id for task in assignment.tasks for name in task.functions}
    marked: set[tuple[str, str]] = set()
    problems = []
    for path in sorted(reference_dir.iterdir()):
        if not path.name.endswith(SOURCE_SUFFIXES):
            continue
        functions = [d for d in parsed.definitions if d.file == path.name and d.kind == "function" and d.is_definition]
        for region in strip_source(read_text(path), path, assignment.task_ids).regions:
            around = [d for d in functions if d.start_line <= region.begin_line <= d.end_line]
            if not around:
                continue
            marked.add((region.task, around[0].name))
            if owner.get(around[0].name) != region.task:
                problems.append(f"{path.name}:{region.begin_line}: the region of task {region.task!r} lies in "
                                f"{around[0].name}, which that task's `functions` does not list")
    for task in assignment.tasks:
        problems += [f"task {task.id!r} lists {name!r}, which holds none of its solution regions"
                     for name in task.functions if (task.id, name) not in marked]
    return problems


def _entry_name(assignment: Assignment, folder: Path) -> str:
    entry = assignment.files.entry
    names = [entry] + [alias for alias, canonical in assignment.files.aliases.items() if canonical == entry]
    return next((name for name in names if (folder / name).is_file()), entry)


def _fallback_folder(assignment: Assignment, solution_dir: Path, folder: Path) -> Path:
    """The skeleton's copies of the optional files the student lacks, as the build takes them."""
    folder.mkdir(parents=True)
    for canonical in assignment.files.optional:
        names = [canonical] + [a for a, name in assignment.files.aliases.items() if name == canonical]
        source = assignment.skeleton_dir / canonical
        if any((solution_dir / name).exists() for name in names) or not source.is_file():
            continue
        shutil.copy(source, folder / canonical)
        for alias in names[1:]:
            (folder / alias).write_text(f'#include "{canonical}"\n')
    return folder


@dataclass(frozen=True)
class _Source:
    """Where replaced functions come from (the reference, the skeleton): its parse and its files."""

    parsed: Parsed
    texts: dict[str, bytes]

    def by_name(self) -> dict[str, list[Definition]]:
        found: dict[str, list[Definition]] = {}
        for d in self.parsed.definitions:
            found.setdefault(d.name, []).append(d)
        return found


def _texts(folder: Path) -> dict[str, bytes]:
    return {path.name: path.read_bytes() for path in sorted(folder.iterdir()) if path.is_file()}


def _used_by_tests(assignment: Assignment, task: Task) -> set[str]:
    """The names the code of the task's test source uses: the given code its tests call reaches
    other tasks' functions too (a given kernel that copies with copyFromGlb2ShrMem). Not the
    shared headers of the tests folder, which name every host function to probe its signature."""
    path = assignment.tests_dir / f"test_{task.tests}.cu"
    code = _COMMENT.sub(" ", read_text(path)) if path.is_file() else ""
    return set(re.findall(r"\b[A-Za-z_]\w*\b", code))


def _called_by(reference: Parsed, roots: set[str]) -> set[str]:
    """The functions the reference's `roots` use, directly or through other functions."""
    uses: dict[str, set[str]] = {}
    for d in reference.definitions:
        if d.kind == "function" and d.file:
            uses.setdefault(d.name, set()).update(d.uses)
    called, waiting = set(), [*roots]
    while waiting:
        for name in uses.get(waiting.pop(), ()):
            if name in uses and name not in called | roots:
                called.add(name)
                waiting.append(name)
    return called


def _splice(task: Task, others: dict[str, str], student: Parsed, sources: dict[str, _Source], texts: dict[str, bytes],
            folder: Path) -> tuple[dict[str, bytes], Isolation]:
    """The task's files: `texts` with every function in `others` taken from the source it names."""
    reference = sources["reference"].parsed
    own = {d.name for d in student.definitions if d.file and d.kind == "function" and d.is_definition}
    present = {d.name for d in student.definitions} | set(others)
    ref_order = {d.name: index for index, d in reversed(list(enumerate(reference.definitions)))}
    by_source = {label: source.by_name() for label, source in sources.items()}

    def source_text(label: str, d: Definition) -> bytes:
        text = sources[label].texts[d.file][d.start:d.end]
        return b"#define " + text if d.kind == "macro" else text

    # Each splice: (position in the student's translation unit, in the reference's, file, start and end
    # of the text it replaces, the line of the text at its end, name).
    splices, edits, added = [], [], []
    for name, label in others.items():
        if not any(d.kind == "function" and d.is_definition and d.file for d in by_source[label].get(name, [])):
            raise IsolationError(f"a task owns {name!r}, which the {label} does not define")
        mine = [(i, d) for i, d in enumerate(student.definitions)
                if d.name == name and d.file and d.kind == "function" and d.is_definition]
        if mine:
            (position, first), rest = mine[0], mine[1:]
            splices.append((position, ref_order[name], first.file, first.start, first.end, first.end_line, name))
            edits += [(d.file, d.start, d.end, b"\n#line %d\n" % d.end_line) for _, d in rest]
        elif anchor := _anchor(name, student, ref_order):
            splices.append((anchor[0], ref_order[name], *anchor[1:], name))
            added.append(name)
    helpers: list[str] = []
    for _, _, file, start, end, end_line, name in sorted(splices):
        label, by_name = others[name], by_source[others[name]]
        needed = _needed(name, by_name, ref_order, present | {name} | set(task.functions))
        present |= set(needed)
        helpers += needed
        parts = [source_text(label, d) for h in needed for d in by_name[h] if d.file]
        parts.append(b"\n\n".join(source_text(label, d) for d in by_name[name] if d.kind == "function" and d.is_definition))
        comment = b"// kernellab: the %s's %s, so that task %s is judged on its own code\n" % (
            label.encode(), name.encode(), task.id.encode())
        lead = b"\n\n" if start == end else b""
        edits.append((file, start, end, lead + comment + b"\n\n".join(parts) + b"\n#line %d\n" % end_line))
    files = dict(texts)
    used = {others[name] for name in others}
    includes = [name for label in sorted(used) for name in sources[label].parsed.system_includes
                if name not in student.system_includes]
    includes = list(dict.fromkeys(includes))
    for file in sorted({edit[0] for edit in edits}):
        ordered = sorted((e for e in edits if e[0] == file), key=lambda e: (e[1], e[2]))
        content, cursor, pieces = texts[file], 0, []
        for _, start, end, replacement in ordered:
            pieces += [content[cursor:start], replacement]
            cursor = end
        header = b"".join(b"#include <%s>\n" % name.encode() for name in includes)
        files[file] = (header + b"#line 1\n" if header else b"") + b"".join(pieces) + content[cursor:]
    own_missing = tuple(name for name in task.functions if name not in own)
    from_reference = tuple(name for name, label in others.items() if label == "reference")
    from_skeleton = tuple(name for name, label in others.items() if label == "skeleton")
    return files, Isolation(task.id, task.tests or "", folder, task.functions, from_reference, from_skeleton,
                            tuple(added), tuple(helpers), own_missing)


def _anchor(name: str, student: Parsed, ref_order: dict[str, int]) -> tuple[float, str, int, int, int] | None:
    """Where a function the student lacks goes, as a splice: after the student's definition of the
    last name before it in the reference (what it uses is there by then), else before the first
    after it; None when the student defines nothing the reference does."""
    placed = [(ref_order[d.name], i, d) for i, d in enumerate(student.definitions)
              if d.file and d.kind != "macro" and d.is_definition and d.name in ref_order and d.name != name]
    if before := [entry for entry in placed if entry[0] < ref_order[name]]:
        _, index, d = max(before, key=lambda entry: entry[:2])
        return index + 0.5, d.file, d.end, d.end, d.end_line
    if after := [entry for entry in placed if entry[0] > ref_order[name]]:
        _, index, d = min(after, key=lambda entry: entry[:2])
        return index - 0.5, d.file, d.start, d.start, d.start_line
    return None


def _needed(name: str, by_name: dict[str, list[Definition]], ref_order: dict[str, int], present: set[str]) -> list[str]:
    """The reference definitions that `name`'s uses, directly or not, which the student's build
    lacks: each after those it uses."""
    order: list[str] = []
    seen = present | {name}

    def visit(current: str) -> None:
        used = {use for d in by_name[current] if d.file for use in d.uses} & by_name.keys()
        for use in sorted(used, key=ref_order.__getitem__):
            if use not in seen:
                seen.add(use)
                visit(use)
                order.append(use)

    visit(name)
    return order
