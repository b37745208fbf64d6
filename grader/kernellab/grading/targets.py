"""What a grading build builds, and where its programs are: each task's test executable, by its
manifest `tests` name, the speed program, and the speed program of each task judged on its own
functions (built against the task's isolated folder, so another task's mistake cannot slow it)."""

import json
from collections.abc import Mapping
from pathlib import Path

from kernellab import cmake
from kernellab.manifest import Assignment

SPEED_TARGET = "speed"

# The build's result that the stages run: the program of each target that built.
Programs = dict[str, Path]


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


def programs_of(build_dir: Path, assignment_id: str, built: Mapping[str, str | None]) -> Programs:
    """The program of each target of `built` that built (no compiler errors), as the build left it
    in `build_dir`."""
    return {target: executable(build_dir, assignment_id, target) for target, errors in built.items() if errors is None}


def view_dir(build_dir: Path, tests: str) -> Path:
    """The build folder of the task whose tests are `tests`, built against its own folder alone
    (grading/building.py), beside `build_dir`, where its programs are copied."""
    return build_dir.with_name(f"{build_dir.name}-task-{tests}")


# In a build folder: where each of its programs that was compiled elsewhere (a task's own build
# folder, the whole submission's after an isolated build failed) was compiled, and as which target.
COMPILED_ELSEWHERE = "kernellab-compiled-in.json"


def record_compiled_in(build_dir: Path, target: str, directory: Path, cmake_target: str) -> None:
    """Note that `build_dir`'s program `target` was compiled in `directory` as `cmake_target`."""
    path = build_dir / COMPILED_ELSEWHERE
    known = json.loads(path.read_text()) if path.is_file() else {}
    known[target] = [str(directory), cmake_target]
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(known, indent=1, sort_keys=True))


def compiled_in(build_dir: Path, assignment_id: str, target: str) -> tuple[Path, str]:
    """The build folder whose objects and dependency log hold `build_dir`'s program `target`, and
    its CMake target there."""
    path = build_dir / COMPILED_ELSEWHERE
    directory, cmake_target = json.loads(path.read_text()).get(target, (None, None)) if path.is_file() else (None, None)
    return (Path(directory), cmake_target) if directory else (build_dir, target_name(assignment_id, target))
