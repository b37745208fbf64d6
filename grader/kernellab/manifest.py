"""Load and validate `assignments/<id>/assignment.toml` into frozen dataclasses."""

import re
import tomllib
from dataclasses import dataclass
from pathlib import Path, PurePosixPath
from typing import Any

from kernellab.errors import InputError

MANIFEST_NAME = "assignment.toml"
TASK_ID = re.compile(r"[a-z][a-z0-9-]*")
# `tests` becomes part of a CMake target and a file name.
TESTS_NAME = re.compile(r"[A-Za-z0-9_]+")
# A measured property (`[[tasks.requires]]`) and the function it is measured on, as the tests name them.
PROPERTY_NAME = re.compile(r"[a-z][a-z0-9-]*")
FUNCTION_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
WARP_SYNCHRONOUS_POLICIES = ("fail", "warn")

_TYPE_NAMES = {
    str: "a string",
    int: "an integer",
    float: "a number with a decimal point",
    bool: "true or false",
    list: "an array",
    dict: "a table",
}


class ManifestError(InputError):
    pass


@dataclass(frozen=True)
class Requirement:
    """A property of the student's code that a task's tests measure, and the bound it must meet
    (`[[tasks.requires]]`; judged by properties.py): e.g. the depth of scanIncWarp, at most 5."""

    property: str
    function: str
    at_most: int | None = None
    at_least: int | None = None
    # Why the bound is what the task teaches, for whoever reads the manifest.
    why: str = ""


@dataclass(frozen=True)
class Task:
    """A task is checked by a test executable (`tests`) or scored from an answers file (`answers`)."""

    id: str
    title: str
    points: int
    skeleton_fails: bool
    tests: str | None = None
    answers: str | None = None
    warp_synchronous: str | None = None
    # Properties the tests measure: a task whose requirement is not met earns no points.
    requires: tuple[Requirement, ...] = ()


@dataclass(frozen=True)
class Grading:
    """How `kernellab grade` runs and scores the tests (the manifest's optional [grading] table)."""

    # Hidden cases run the public tests again with a secret seed and, in place of the sizes the
    # handout shows, one size drawn from each of these inclusive ranges on every grading run.
    hidden_size_ranges: tuple[tuple[int, int], ...] = ((2, 30), (34, 1022), (1026, 65534), (65538, 2_000_000))
    # The share of a task's points that its public cases give; the hidden cases give the rest.
    public_share: float = 0.5
    # Seconds one run of a test executable may take on a GPU.
    timeout_s: int = 300
    # The same on the CPU backend, where every CUDA thread is a fiber and every launch runs under
    # several thread orders; None: CPU_BACKEND_SLOWDOWN times timeout_s.
    cpu_timeout_s: int | None = None
    # Words that must not appear in a student's files or in the symbols of their build (libraries a
    # task forbids), matched as whole words, case-insensitively.
    forbidden: tuple[str, ...] = ()
    # The share of a task's points that GPU sanitizer errors (compute-sanitizer's memcheck,
    # racecheck, synccheck) cost; 0 reports them as feedback only.
    sanitizer_penalty: float = 0.0


@dataclass(frozen=True)
class SpeedCase:
    """One timed case (the manifest's [[speed]]): its time relative to the reference's gives points."""

    task: str
    # The name the assignment's speed program knows the case by.
    case: str
    # Array sizes timed, each larger than any GPU's L2 so that timings measure memory, not cache.
    sizes: tuple[int, ...]
    points: int
    # The student's time over the reference's at which the speed points are 0, and full.
    zero_at: float
    full_at: float
    # A library's version of the same operation (a case of the speed program, e.g. CUB's),
    # timed alongside for the feedback; no points depend on it.
    baseline: str = ""


@dataclass(frozen=True)
class Files:
    required: tuple[str, ...]
    optional: tuple[str, ...]
    entry: str
    aliases: dict[str, str]


@dataclass(frozen=True)
class Assignment:
    root: Path
    manifest_path: Path
    id: str
    title: str
    course: str | None
    files: Files
    reference: str
    skeleton: str
    tasks: tuple[Task, ...]
    grading: Grading = Grading()
    speed: tuple[SpeedCase, ...] = ()

    @property
    def reference_dir(self) -> Path:
        return self.root / self.reference

    @property
    def skeleton_dir(self) -> Path:
        return self.root / self.skeleton

    @property
    def wrong_dir(self) -> Path:
        return self.manifest_path.parent / "wrong"

    @property
    def task_ids(self) -> tuple[str, ...]:
        return tuple(task.id for task in self.tasks)

    @property
    def tested_tasks(self) -> tuple[Task, ...]:
        """The tasks that a test executable checks (the others are answered in a file)."""
        return tuple(task for task in self.tasks if task.tests is not None)

    @property
    def questions_path(self) -> Path:
        return self.manifest_path.parent / "questions.toml"


def list_assignments(root: Path) -> list[str]:
    """The ids of every assignment under `root/assignments`, sorted."""
    assignments_dir = root / "assignments"
    if not assignments_dir.is_dir():
        return []
    return sorted(entry.name for entry in assignments_dir.iterdir() if (entry / MANIFEST_NAME).is_file())


def load_assignment(root: Path, assignment_id: str) -> Assignment:
    path = root / "assignments" / assignment_id / MANIFEST_NAME
    if not path.is_file():
        known = ", ".join(list_assignments(root)) or "none"
        raise ManifestError(f"no assignment {assignment_id!r} (no {path}); known assignments: {known}")
    return load_manifest(path, root)


def load_manifest(path: Path, root: Path) -> Assignment:
    try:
        table = tomllib.loads(path.read_text(encoding="utf-8"))
    except tomllib.TOMLDecodeError as error:
        line = re.search(r"at line (\d+)", str(error))
        raise ManifestError(f"invalid TOML: {error}", path, int(line[1]) if line else None) from None
    try:
        return _assignment(table, path, root)
    except ManifestError as error:
        error.path = path
        raise


def _fields(table: dict, where: str, required: dict[str, type], optional: dict[str, type]) -> dict:
    """Check that `table` has exactly the allowed keys with the right types; return it."""
    allowed = required | optional
    for key in table:
        if key not in allowed:
            raise _error(_field(where, key), f"unknown key (allowed: {', '.join(allowed)})")
    for key in required:
        if key not in table:
            raise _error(_field(where, key), "missing")
    for key, value in table.items():
        # `type() is` because TOML booleans are Python ints too.
        if type(value) is not allowed[key]:
            raise _error(_field(where, key), f"expected {_TYPE_NAMES[allowed[key]]}, got {value!r}")
    return table


def _string_list(values: list, field: str) -> tuple[str, ...]:
    for value in values:
        if type(value) is not str or not value:
            raise _error(field, f"expected non-empty strings, got {value!r}")
    if len(set(values)) != len(values):
        raise _error(field, "lists a name twice")
    return tuple(values)


def _assignment(table: dict[str, Any], path: Path, root: Path) -> Assignment:
    _fields(
        table,
        "",
        {"id": str, "title": str, "files": dict, "build": dict, "tasks": list},
        {"course": str, "grading": dict, "speed": list},
    )
    directory_name = path.parent.name
    if table["id"] != directory_name:
        raise _error("id", f"{table['id']!r} does not match the assignment's directory name {directory_name!r}")
    reference, skeleton = _build(table["build"])
    tasks = _tasks(table["tasks"])
    return Assignment(
        root=root,
        manifest_path=path,
        id=table["id"],
        title=table["title"],
        course=table.get("course"),
        files=_files(table["files"]),
        reference=reference,
        skeleton=skeleton,
        tasks=tasks,
        grading=_grading(table.get("grading", {})),
        speed=_speed_cases(table.get("speed", []), {task.id for task in tasks}),
    )


def _files(table: dict) -> Files:
    _fields(table, "files", {"required": list, "entry": str}, {"optional": list, "aliases": dict})
    required = _string_list(table["required"], "files.required")
    if not required:
        raise _error("files.required", "must name at least one file")
    optional = _string_list(table.get("optional", []), "files.optional")
    known = required + optional
    if overlap := set(required) & set(optional):
        raise _error("files.optional", f"{sorted(overlap)[0]!r} is also in files.required")
    if table["entry"] not in known:
        raise _error("files.entry", f"{table['entry']!r} is not in files.required or files.optional")
    aliases = table.get("aliases", {})
    for alias, name in aliases.items():
        if type(name) is not str or name not in known:
            raise _error(f"files.aliases.{alias!r}", f"{name!r} is not in files.required or files.optional")
    return Files(required=required, optional=optional, entry=table["entry"], aliases=dict(aliases))


def _build(table: dict) -> tuple[str, str]:
    _fields(table, "build", {"reference": str, "skeleton": str}, {})
    reference, skeleton = PurePosixPath(table["reference"]), PurePosixPath(table["skeleton"])
    for field, directory in (("build.reference", reference), ("build.skeleton", skeleton)):
        if directory.is_absolute() or ".." in directory.parts or not directory.parts:
            raise _error(field, f"{str(directory)!r} must be a relative path inside the repository")
    # `strip` deletes and rewrites the skeleton directory: it must hold nothing else.
    if reference.is_relative_to(skeleton) or skeleton.is_relative_to(reference):
        raise _error("build.skeleton", "must not contain or lie inside build.reference")
    if PurePosixPath("assignments").is_relative_to(skeleton):
        raise _error("build.skeleton", "must not contain the assignments directory")
    return str(reference), str(skeleton)


def _tasks(tables: list) -> tuple[Task, ...]:
    if not tables:
        raise _error("tasks", "an assignment needs at least one [[tasks]] entry")
    tasks = tuple(_task(table, f"tasks[{index}]") for index, table in enumerate(tables))
    seen: set[str] = set()
    for index, task in enumerate(tasks):
        if task.id in seen:
            raise _error(f"tasks[{index}].id", f"duplicate task id {task.id!r}")
        seen.add(task.id)
    return tasks


def _task(table: Any, where: str) -> Task:
    if type(table) is not dict:
        raise _error(where, "expected a [[tasks]] table")
    _fields(
        table,
        where,
        {"id": str, "title": str, "points": int, "skeleton_fails": bool},
        {"tests": str, "answers": str, "warp_synchronous": str, "requires": list},
    )
    if ("tests" in table) == ("answers" in table):
        raise _error(where, "needs exactly one of `tests` (a test executable) and `answers` (an answers file)")
    if not TASK_ID.fullmatch(table["id"]):
        raise _error(f"{where}.id", f"{table['id']!r} does not match {TASK_ID.pattern!r}")
    if table["points"] <= 0:
        raise _error(f"{where}.points", f"expected a positive integer, got {table['points']}")
    if "tests" in table and not TESTS_NAME.fullmatch(table["tests"]):
        raise _error(f"{where}.tests", f"{table['tests']!r} does not match {TESTS_NAME.pattern!r}")
    policy = table.get("warp_synchronous")
    if policy is not None and policy not in WARP_SYNCHRONOUS_POLICIES:
        raise _error(f"{where}.warp_synchronous", f"expected one of {WARP_SYNCHRONOUS_POLICIES}, got {policy!r}")
    if "requires" in table and "tests" not in table:
        raise _error(f"{where}.requires", "only a task with `tests` measures properties")
    return Task(**{**table, "requires": _requirements(table.get("requires", []), f"{where}.requires")})


def _requirements(tables: list, where: str) -> tuple[Requirement, ...]:
    requirements = []
    for index, table in enumerate(tables):
        field = f"{where}[{index}]"
        if type(table) is not dict:
            raise _error(field, "expected a [[tasks.requires]] table")
        _fields(table, field, {"property": str, "function": str}, {"at_most": int, "at_least": int, "why": str})
        if not PROPERTY_NAME.fullmatch(table["property"]):
            raise _error(f"{field}.property", f"{table['property']!r} does not match {PROPERTY_NAME.pattern!r}")
        if not FUNCTION_NAME.fullmatch(table["function"]):
            raise _error(f"{field}.function", f"{table['function']!r} is not a function name")
        if "at_most" not in table and "at_least" not in table:
            raise _error(field, "needs `at_most`, `at_least` or both")
        if table.get("at_least", table.get("at_most")) > table.get("at_most", table.get("at_least")):
            raise _error(field, "expected at_least <= at_most")
        requirements.append(Requirement(**table))
    if len({(r.function, r.property) for r in requirements}) != len(requirements):
        raise _error(where, "requires the same property of the same function twice")
    return tuple(requirements)


def _grading(table: dict) -> Grading:
    defaults = Grading()
    _fields(
        table,
        "grading",
        {},
        {"hidden_size_ranges": list, "public_share": float, "timeout": int, "cpu_timeout": int, "forbidden": list,
         "sanitizer_penalty": float},
    )
    ranges = []
    for index, pair in enumerate(table.get("hidden_size_ranges", defaults.hidden_size_ranges)):
        if not (
            isinstance(pair, (list, tuple)) and len(pair) == 2 and all(type(n) is int for n in pair)
            and 1 <= pair[0] <= pair[1] < 2**32
        ):
            raise _error(f"grading.hidden_size_ranges[{index}]", f"expected [low, high] with 1 <= low <= high, got {pair!r}")
        ranges.append((pair[0], pair[1]))
    share = table.get("public_share", defaults.public_share)
    if not 0 <= share <= 1:
        raise _error("grading.public_share", f"expected a number from 0 to 1, got {share}")
    timeout = table.get("timeout", defaults.timeout_s)
    cpu_timeout = table.get("cpu_timeout", defaults.cpu_timeout_s)
    for key, seconds in (("timeout", timeout), ("cpu_timeout", cpu_timeout)):
        if seconds is not None and seconds <= 0:
            raise _error(f"grading.{key}", f"expected a positive number of seconds, got {seconds}")
    forbidden = _string_list(table.get("forbidden", []), "grading.forbidden")
    penalty = table.get("sanitizer_penalty", defaults.sanitizer_penalty)
    if not 0 <= penalty <= 1:
        raise _error("grading.sanitizer_penalty", f"expected a number from 0 to 1, got {penalty}")
    return Grading(tuple(ranges), share, timeout, cpu_timeout, forbidden, penalty)


def _speed_cases(tables: list, task_ids: set[str]) -> tuple[SpeedCase, ...]:
    cases = []
    for index, table in enumerate(tables):
        where = f"speed[{index}]"
        if type(table) is not dict:
            raise _error(where, "expected a [[speed]] table")
        _fields(
            table,
            where,
            {"task": str, "case": str, "sizes": list, "points": int, "zero_at": float, "full_at": float},
            {"baseline": str},
        )
        if table["task"] not in task_ids:
            raise _error(f"{where}.task", f"{table['task']!r} is not a task id")
        sizes = table["sizes"]
        if not sizes or any(type(size) is not int or not 0 < size < 2**32 for size in sizes):
            raise _error(f"{where}.sizes", f"expected array sizes from 1 to 2^32 - 1, got {sizes!r}")
        if table["points"] <= 0:
            raise _error(f"{where}.points", f"expected a positive integer, got {table['points']}")
        if not 1 <= table["full_at"] < table["zero_at"]:
            raise _error(where, "expected 1 <= full_at < zero_at (times relative to the reference's)")
        cases.append(SpeedCase(**{**table, "sizes": tuple(sizes)}))
    return tuple(cases)


def _error(field: str, message: str) -> ManifestError:
    # The caller, load_manifest, adds the file's path.
    return ManifestError(f"{field}: {message}")


def _field(where: str, key: str) -> str:
    return f"{where}.{key}" if where else key
