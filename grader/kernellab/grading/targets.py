"""What a grading build builds, and where its programs are: each task's test executable, by its
manifest `tests` name, and the speed program."""

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


def target_name(assignment_id: str, target: str) -> str:
    return cmake.speed_target(assignment_id) if target == SPEED_TARGET else cmake.test_target(assignment_id, target)


def executable(build_dir: Path, assignment_id: str, target: str) -> Path:
    return cmake.program(build_dir, assignment_id, target_name(assignment_id, target))
