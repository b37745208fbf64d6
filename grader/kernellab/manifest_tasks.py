"""The [[tasks]] of a manifest: what each task is, which of the student's functions it owns, and
the properties its tests must measure within bounds ([[tasks.requires]])."""

import re
from dataclasses import dataclass
from typing import Any

from kernellab.manifest_fields import check_fields, field_error, string_list

TASK_ID = re.compile(r"[a-z][a-z0-9-]*")
# `tests` becomes part of a CMake target and a file name.
TESTS_NAME = re.compile(r"[A-Za-z0-9_]+")
# A measured property (`[[tasks.requires]]`), as the tests name it.
PROPERTY_NAME = re.compile(r"[a-z][a-z0-9-]*")
FUNCTION_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
WARP_SYNCHRONOUS_POLICIES = ("fail", "warn")
# What a race that the CPU backend's race check finds in a GPU grade costs the task
# (grading/race/stage.py): all its points, or a warning only.
RACE_CHECK_POLICIES = ("fail", "warn")

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
    # A GPU grade also runs the CPU backend's race check on the task's tests (RACE_CHECK_POLICIES):
    # None, not at all.
    race_check: str | None = None
    # The functions of the student's code that this task owns (grading/isolation/splice.py): the task's
    # tests are built with every function another task owns taken from the reference.
    functions: tuple[str, ...] = ()
    # Properties the tests measure: a task whose requirement is not met earns no points.
    requires: tuple[Requirement, ...] = ()
    # Whether its tests also hold hidden Catch2 cases tagged [.large] (a course's own size): on a
    # GPU the hidden group runs them at the size drawn from grading.large_size_range.
    large_cases: bool = False


def parse_tasks(tables: list) -> tuple[Task, ...]:
    if not tables:
        raise field_error("tasks", "an assignment needs at least one [[tasks]] entry")
    tasks = tuple(_task(table, f"tasks[{index}]") for index, table in enumerate(tables))
    seen: set[str] = set()
    for index, task in enumerate(tasks):
        if task.id in seen:
            raise field_error(f"tasks[{index}].id", f"duplicate task id {task.id!r}")
        seen.add(task.id)
    owner: dict[str, str] = {}
    for index, task in enumerate(tasks):
        for function in task.functions:
            if function in owner:
                raise field_error(f"tasks[{index}].functions", f"{function!r} is owned by task {owner[function]!r} already")
            owner[function] = task.id
    return tasks


def _task(table: Any, where: str) -> Task:
    if type(table) is not dict:
        raise field_error(where, "expected a [[tasks]] table")
    check_fields(
        table,
        where,
        {"id": str, "title": str, "points": int, "skeleton_fails": bool},
        {"tests": str, "answers": str, "warp_synchronous": str, "race_check": str, "functions": list, "requires": list,
         "large_cases": bool},
    )
    if ("tests" in table) == ("answers" in table):
        raise field_error(where, "needs exactly one of `tests` (a test executable) and `answers` (an answers file)")
    if not TASK_ID.fullmatch(table["id"]):
        raise field_error(f"{where}.id", f"{table['id']!r} does not match {TASK_ID.pattern!r}")
    # 0: given code that is tested (it must keep working) for no points.
    if table["points"] < 0:
        raise field_error(f"{where}.points", f"expected a non-negative integer, got {table['points']}")
    if "tests" in table and not TESTS_NAME.fullmatch(table["tests"]):
        raise field_error(f"{where}.tests", f"{table['tests']!r} does not match {TESTS_NAME.pattern!r}")
    policy = table.get("warp_synchronous")
    if policy is not None and policy not in WARP_SYNCHRONOUS_POLICIES:
        raise field_error(f"{where}.warp_synchronous", f"expected one of {WARP_SYNCHRONOUS_POLICIES}, got {policy!r}")
    race_check = table.get("race_check")
    if race_check is not None and race_check not in RACE_CHECK_POLICIES:
        raise field_error(f"{where}.race_check", f"expected one of {RACE_CHECK_POLICIES}, got {race_check!r}")
    if race_check is not None and "tests" not in table:
        raise field_error(f"{where}.race_check", "only a task checked by `tests` has its races checked")
    functions = string_list(table.get("functions", []), f"{where}.functions")
    if functions and "tests" not in table:
        raise field_error(f"{where}.functions", "only a task checked by `tests` owns functions")
    for function in functions:
        if not FUNCTION_NAME.fullmatch(function):
            raise field_error(f"{where}.functions", f"{function!r} is not a C++ function name")
    if "large_cases" in table and "tests" not in table:
        raise field_error(f"{where}.large_cases", "only a task checked by `tests` has test cases")
    if "requires" in table and "tests" not in table:
        raise field_error(f"{where}.requires", "only a task with `tests` measures properties")
    requires = _requirements(table.get("requires", []), f"{where}.requires")
    return Task(**{**table, "functions": functions, "requires": requires})


def _requirements(tables: list, where: str) -> tuple[Requirement, ...]:
    requirements = []
    for index, table in enumerate(tables):
        field = f"{where}[{index}]"
        if type(table) is not dict:
            raise field_error(field, "expected a [[tasks.requires]] table")
        check_fields(table, field, {"property": str, "function": str}, {"at_most": int, "at_least": int, "why": str})
        if not PROPERTY_NAME.fullmatch(table["property"]):
            raise field_error(f"{field}.property", f"{table['property']!r} does not match {PROPERTY_NAME.pattern!r}")
        if not FUNCTION_NAME.fullmatch(table["function"]):
            raise field_error(f"{field}.function", f"{table['function']!r} is not a function name")
        if "at_most" not in table and "at_least" not in table:
            raise field_error(field, "needs `at_most`, `at_least` or both")
        if table.get("at_least", table.get("at_most")) > table.get("at_most", table.get("at_least")):
            raise field_error(field, "expected at_least <= at_most")
        requirements.append(Requirement(**table))
    if len({(r.function, r.property) for r in requirements}) != len(requirements):
        raise field_error(where, "requires the same property of the same function twice")
    return tuple(requirements)
