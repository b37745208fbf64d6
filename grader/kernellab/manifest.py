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
WARP_SYNCHRONOUS_POLICIES = ("fail", "warn")

_TYPE_NAMES = {str: "a string", int: "an integer", bool: "true or false", list: "an array", dict: "a table"}


class ManifestError(InputError):
    pass


@dataclass(frozen=True)
class Task:
    id: str
    title: str
    points: int
    tests: str
    skeleton_fails: bool
    warp_synchronous: str | None = None


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
    _fields(table, "", {"id": str, "title": str, "files": dict, "build": dict, "tasks": list}, {"course": str})
    directory_name = path.parent.name
    if table["id"] != directory_name:
        raise _error("id", f"{table['id']!r} does not match the assignment's directory name {directory_name!r}")
    reference, skeleton = _build(table["build"])
    return Assignment(
        root=root,
        manifest_path=path,
        id=table["id"],
        title=table["title"],
        course=table.get("course"),
        files=_files(table["files"]),
        reference=reference,
        skeleton=skeleton,
        tasks=_tasks(table["tasks"]),
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
        {"id": str, "title": str, "points": int, "tests": str, "skeleton_fails": bool},
        {"warp_synchronous": str},
    )
    if not TASK_ID.fullmatch(table["id"]):
        raise _error(f"{where}.id", f"{table['id']!r} does not match {TASK_ID.pattern!r}")
    if table["points"] <= 0:
        raise _error(f"{where}.points", f"expected a positive integer, got {table['points']}")
    if not TESTS_NAME.fullmatch(table["tests"]):
        raise _error(f"{where}.tests", f"{table['tests']!r} does not match {TESTS_NAME.pattern!r}")
    policy = table.get("warp_synchronous")
    if policy is not None and policy not in WARP_SYNCHRONOUS_POLICIES:
        raise _error(f"{where}.warp_synchronous", f"expected one of {WARP_SYNCHRONOUS_POLICIES}, got {policy!r}")
    return Task(**table)


def _error(field: str, message: str) -> ManifestError:
    # The caller, load_manifest, adds the file's path.
    return ManifestError(f"{field}: {message}")


def _field(where: str, key: str) -> str:
    return f"{where}.{key}" if where else key
