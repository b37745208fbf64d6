"""What a grading build builds, and where its programs are: each task's test executable, by its
manifest `tests` name, the speed program, and the speed program of each task judged on its own
functions (built against the task's isolated folder, so another task's mistake cannot slow it)."""

from pathlib import Path

from kernellab import cmake
from kernellab.manifest import Assignment

SPEED_TARGET = "speed"


def tested(assignment: Assignment) -> list[str]:
    """The test executables of the assignment's tasks (by their manifest `tests` names)."""
    return sorted({task.tests for task in assignment.tested_tasks})


def test_targets(assignment: Assignment, with_speed: bool) -> list[str]:
    """What a grading build builds: the test executables, and the speed program when timed."""
    return tested(assignment) + ([SPEED_TARGET] if with_speed else [])


def task_speed_target(tests: str) -> str:
    """The speed program built against the isolated folder of the task whose tests are `tests`."""
    return f"{SPEED_TARGET}_{tests}"


def is_speed_target(target: str) -> bool:
    return target == SPEED_TARGET or target.startswith(f"{SPEED_TARGET}_")


def target_name(assignment_id: str, target: str) -> str:
    if is_speed_target(target):
        return cmake.speed_target(assignment_id) + target.removeprefix(SPEED_TARGET)
    return cmake.test_target(assignment_id, target)


def executable(build_dir: Path, assignment_id: str, target: str) -> Path:
    return cmake.program(build_dir, assignment_id, target_name(assignment_id, target))
