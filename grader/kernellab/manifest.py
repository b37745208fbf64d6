"""Load and validate `assignments/<id>/assignment.toml` into frozen dataclasses."""

import math
import re
import tomllib
from dataclasses import dataclass
from pathlib import Path, PurePosixPath
from typing import Any

from kernellab.manifest_fields import ManifestError, check_fields, field_error, string_list
# Requirement and Task are the manifest's types for every reader (properties.py, the commands).
from kernellab.manifest_tasks import Requirement, Task, parse_tasks

MANIFEST_NAME = "assignment.toml"
# Seconds one run of a test executable may take on a GPU, unless a manifest says (grading.timeout);
# also `kernellab test`'s default.
DEFAULT_TIMEOUT_S = 300
# When Gradescope shows a test to the student (its autograder specification's values).
VISIBILITIES = ("visible", "hidden", "after_due_date", "after_published")

@dataclass(frozen=True)
class Grading:
    """How `kernellab grade` runs and scores the tests (the manifest's optional [grading] table)."""

    # Hidden cases run the public tests again with a secret seed and, in place of the sizes the
    # handout shows, one size drawn from each of these inclusive ranges on every grading run.
    hidden_size_ranges: tuple[tuple[int, int], ...] = ((2, 30), (34, 1022), (1026, 65534), (65538, 2_000_000))
    # On a GPU, the hidden cases also run each test's [large] cases, at one size drawn from this
    # inclusive range on every grading run (a course's own sizes, past what the ranges above
    # reach, are too slow for the CPU backend); none: no [large] cases are graded.
    large_size_range: tuple[int, int] | None = None
    # The share of a task's points that its public cases give; the hidden cases give the rest.
    public_share: float = 0.5
    # Seconds one run of a test executable may take on a GPU.
    timeout_s: int = DEFAULT_TIMEOUT_S
    # The same on the CPU backend, where every CUDA thread is a fiber and every launch runs under
    # several thread orders; None: the CPU backend's time factor (backend.py) times timeout_s.
    cpu_timeout_s: int | None = None
    # GiB of memory one run of a test executable may hold on the CPU backend, all its processes
    # together, device memory included (it is host memory there): how soon a run that takes memory
    # without end is stopped. On a GPU a run keeps the sandbox's 8 GiB of host memory
    # (sandbox/step.py): the driver holds host memory for what it maps, and under 2 GiB a GPU
    # run's device allocations failed early. Not the builds': their compilers share their own limit.
    cpu_run_memory_gib: int = 8
    # Words that must not appear in a student's files or in the symbols of their build (libraries a
    # task forbids), matched as whole words, case-insensitively.
    forbidden: tuple[str, ...] = ()
    # The share of a task's points that GPU sanitizer errors (compute-sanitizer's memcheck,
    # racecheck, synccheck) cost; 0 reports them as feedback only.
    sanitizer_penalty: float = 0.0
    # The sizes (KERNELLAB_SIZES) and block sizes (KERNELLAB_BLOCK_SIZES, where a test takes them
    # from the harness) of the test runs under a sanitizer, which slows a program down 10-100x:
    # by default just over a block of 1024, so that the last block holds a single element and
    # tails, partial warps and barriers are all exercised, in blocks of one warp and of 1024.
    sanitizer_sizes: tuple[int, ...] = (1025,)
    sanitizer_block_sizes: tuple[int, ...] = (32, 1024)
    # The sizes of the race check (grading/race/check.py: the CPU backend's thread orders on a GPU grade's
    # code), with the tests' block sizes: by default one partial warp and just over a block of
    # 1024. A kernel whose blocks loop over tiles races between iterations only when they make
    # two: an assignment with such kernels adds sizes where every block does, on the CPU
    # backend's device (2 SMs of 2048 threads), for its smallest and largest block and element size.
    race_sizes: tuple[int, ...] = (33, 1025)
    # When Gradescope shows the hidden cases' results to the student (VISIBILITIES).
    hidden_visibility: str = "visible"


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
    # How the points fall between full_at and zero_at (SPEED_SCALES): "log", a log scale of the
    # ratio from full to none; "inverse", the share 1/ratio (the reference's time over the
    # student's), as CS149's checker scores it.
    scale: str = "log"


# The ways a [[speed]] entry's points fall between its `full_at` and `zero_at` (speed.speed_points).
SPEED_SCALES = ("log", "inverse")


@dataclass(frozen=True)
class Files:
    required: tuple[str, ...]
    optional: tuple[str, ...]
    entry: str
    # Another name a student may give a file (a course's earlier file names) -> its manifest name.
    aliases: dict[str, str]

    def names_of(self, name: str) -> list[str]:
        """A file's manifest name, then each of its aliases."""
        return [name, *(alias for alias, canonical in self.aliases.items() if canonical == name)]


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
    # The folder of the test sources (test_<tests>.cu), relative to the root: the assignment's
    # own `tests`, or another assignment's that it shares (`build.tests`).
    tests: str = ""

    @property
    def tests_dir(self) -> Path:
        return self.root / self.tests if self.tests else self.manifest_path.parent / "tests"

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
    def written_task_ids(self) -> tuple[str, ...]:
        """The tasks the student writes, each with its solution region in the reference: every
        task but given code that is tested for no points."""
        return tuple(task.id for task in self.tasks if task.points > 0)

    @property
    def tested_tasks(self) -> tuple[Task, ...]:
        """The tasks that a test executable checks (the others are answered in a file)."""
        return tuple(task for task in self.tasks if task.tests is not None)

    @property
    def large_tests(self) -> frozenset[str]:
        """The test executables that hold hidden [large] cases (tasks with large_cases = true)."""
        return frozenset(task.tests for task in self.tested_tasks if task.large_cases)

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


def _assignment(table: dict[str, Any], path: Path, root: Path) -> Assignment:
    check_fields(
        table,
        "",
        {"id": str, "title": str, "files": dict, "build": dict, "tasks": list},
        {"course": str, "grading": dict, "speed": list},
    )
    directory_name = path.parent.name
    if table["id"] != directory_name:
        raise field_error("id", f"{table['id']!r} does not match the assignment's directory name {directory_name!r}")
    reference, skeleton, tests = _build(table["build"])
    tasks = parse_tasks(table["tasks"])
    grading = _grading(table.get("grading", {}))
    if (grading.large_size_range is None) == any(task.large_cases for task in tasks):
        raise field_error("grading.large_size_range", "is needed exactly when a task has large_cases = true"
                          if grading.large_size_range is None else "is set, but no task has large_cases = true")
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
        grading=grading,
        speed=_speed_cases(table.get("speed", []), {task.id for task in tasks}),
        tests=tests,
    )


def _files(table: dict) -> Files:
    check_fields(table, "files", {"required": list, "entry": str}, {"optional": list, "aliases": dict})
    required = string_list(table["required"], "files.required")
    if not required:
        raise field_error("files.required", "must name at least one file")
    optional = string_list(table.get("optional", []), "files.optional")
    known = required + optional
    if overlap := set(required) & set(optional):
        raise field_error("files.optional", f"{sorted(overlap)[0]!r} is also in files.required")
    if table["entry"] not in known:
        raise field_error("files.entry", f"{table['entry']!r} is not in files.required or files.optional")
    aliases = table.get("aliases", {})
    for alias, name in aliases.items():
        if type(name) is not str or name not in known:
            raise field_error(f"files.aliases.{alias!r}", f"{name!r} is not in files.required or files.optional")
    return Files(required=required, optional=optional, entry=table["entry"], aliases=dict(aliases))


def _build(table: dict) -> tuple[str, str, str]:
    check_fields(table, "build", {"reference": str, "skeleton": str}, {"tests": str})
    reference, skeleton = PurePosixPath(table["reference"]), PurePosixPath(table["skeleton"])
    folders = {"build.reference": reference, "build.skeleton": skeleton}
    if "tests" in table:  # another assignment's test sources, shared
        folders["build.tests"] = PurePosixPath(table["tests"])
    for field, directory in folders.items():
        if directory.is_absolute() or ".." in directory.parts or not directory.parts:
            raise field_error(field, f"{str(directory)!r} must be a relative path inside the repository")
    # `strip` deletes and rewrites the skeleton directory: it must hold nothing else.
    if reference.is_relative_to(skeleton) or skeleton.is_relative_to(reference):
        raise field_error("build.skeleton", "must not contain or lie inside build.reference")
    if PurePosixPath("assignments").is_relative_to(skeleton):
        raise field_error("build.skeleton", "must not contain the assignments directory")
    return str(reference), str(skeleton), table.get("tests", "")


def _grading(table: dict) -> Grading:
    defaults = Grading()
    check_fields(
        table,
        "grading",
        {},
        {"hidden_size_ranges": list, "large_size_range": list, "public_share": float, "timeout": int,
         "cpu_timeout": int, "forbidden": list, "sanitizer_penalty": float, "sanitizer_sizes": list,
         "sanitizer_block_sizes": list, "race_sizes": list, "hidden_visibility": str, "cpu_run_memory": int},
    )
    ranges = tuple(_size_range(pair, f"grading.hidden_size_ranges[{index}]")
                   for index, pair in enumerate(table.get("hidden_size_ranges", defaults.hidden_size_ranges)))
    large = _size_range(table["large_size_range"], "grading.large_size_range") if "large_size_range" in table else None
    share = table.get("public_share", defaults.public_share)
    if not 0 <= share <= 1:
        raise field_error("grading.public_share", f"expected a number from 0 to 1, got {share}")
    timeout = table.get("timeout", defaults.timeout_s)
    cpu_timeout = table.get("cpu_timeout", defaults.cpu_timeout_s)
    for key, seconds in (("timeout", timeout), ("cpu_timeout", cpu_timeout)):
        if seconds is not None and seconds <= 0:
            raise field_error(f"grading.{key}", f"expected a positive number of seconds, got {seconds}")
    run_memory = table.get("cpu_run_memory", defaults.cpu_run_memory_gib)
    if run_memory <= 0:
        raise field_error("grading.cpu_run_memory", f"expected a positive number of GiB, got {run_memory}")
    forbidden = string_list(table.get("forbidden", []), "grading.forbidden")
    penalty = table.get("sanitizer_penalty", defaults.sanitizer_penalty)
    if not 0 <= penalty <= 1:
        raise field_error("grading.sanitizer_penalty", f"expected a number from 0 to 1, got {penalty}")
    sizes = {key: _positive_ints(table.get(key, getattr(defaults, key)), f"grading.{key}")
             for key in ("sanitizer_sizes", "sanitizer_block_sizes", "race_sizes")}
    visibility = table.get("hidden_visibility", defaults.hidden_visibility)
    if visibility not in VISIBILITIES:
        raise field_error("grading.hidden_visibility", f"expected one of {', '.join(VISIBILITIES)}, got {visibility!r}")
    return Grading(ranges, large, share, timeout, cpu_timeout, run_memory, forbidden, penalty, **sizes,
                   hidden_visibility=visibility)


def _size_range(pair: object, field: str) -> tuple[int, int]:
    if not (
        isinstance(pair, (list, tuple)) and len(pair) == 2 and all(type(n) is int for n in pair)
        and 1 <= pair[0] <= pair[1] < 2**32
    ):
        raise field_error(field, f"expected [low, high] with 1 <= low <= high < 2^32, got {pair!r}")
    return pair[0], pair[1]


def _positive_ints(values: list | tuple, field: str) -> tuple[int, ...]:
    if not values or any(type(value) is not int or not 0 < value < 2**32 for value in values):
        raise field_error(field, f"expected a non-empty array of integers from 1 to 2^32 - 1, got {list(values)!r}")
    return tuple(values)


def _speed_cases(tables: list, task_ids: set[str]) -> tuple[SpeedCase, ...]:
    cases = []
    for index, table in enumerate(tables):
        where = f"speed[{index}]"
        if type(table) is not dict:
            raise field_error(where, "expected a [[speed]] table")
        check_fields(
            table,
            where,
            {"task": str, "case": str, "sizes": list, "points": int, "full_at": float},
            {"baseline": str, "scale": str, "zero_at": float},
        )
        scale = table.get("scale", "log")
        if scale not in SPEED_SCALES:
            raise field_error(f"{where}.scale", f"expected one of {', '.join(SPEED_SCALES)}, got {scale!r}")
        if "zero_at" not in table:
            if scale == "log":
                raise field_error(where, 'needs zero_at: the ratio at which a "log" scale reaches no points')
            # "inverse" without a bound: every ratio keeps its share 1/ratio, as CS149's checker gives it.
            table = {**table, "zero_at": math.inf}
        if table["task"] not in task_ids:
            raise field_error(f"{where}.task", f"{table['task']!r} is not a task id")
        sizes = table["sizes"]
        if not sizes or any(type(size) is not int or not 0 < size < 2**32 for size in sizes):
            raise field_error(f"{where}.sizes", f"expected array sizes from 1 to 2^32 - 1, got {sizes!r}")
        if table["points"] <= 0:
            raise field_error(f"{where}.points", f"expected a positive integer, got {table['points']}")
        if not 1 <= table["full_at"] < table["zero_at"]:
            raise field_error(where, "expected 1 <= full_at < zero_at (times relative to the reference's)")
        cases.append(SpeedCase(**{**table, "sizes": tuple(sizes)}))
    return tuple(cases)
