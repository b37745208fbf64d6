"""Each task judged on its own functions (splice.py): the task's test executable is
built with every function another task owns taken from the reference, so one mistake costs only
its own task (scanIncBlock calls scanIncWarp: a broken scanIncWarp fails scan-warp alone)."""

import shutil
from dataclasses import replace
from pathlib import Path

from kernellab.grading.building import Built
from kernellab.grading.isolation import splice
from kernellab.grading.isolation.splice import Isolation, IsolationError
from kernellab.grading.model import GroupResult
from kernellab.grading.targets import executable, record_compiled_in, target_name, task_speed_target
from kernellab.manifest import Assignment
from kernellab.verdict import Verdict

ISOLATED_FOLDER = "isolated"
# How a grade whose tasks could not be isolated says so (a batch counts them for the TA).
WHOLE_SUBMISSION_NOTE = "note: every task was graded on your whole submission"
# Where the tasks whose isolated build failed are built from the whole submission.
WHOLE_BUILD_FOLDER = "build-whole"


def isolate_tasks(assignment: Assignment, solution: Path, job: Path) -> tuple[dict[str, Isolation], str]:
    """Per test executable, the folder its task's build uses, and "". Where the files cannot be
    parsed into functions, no folders, and the note that says so: the whole submission is then
    graded as it is, and a mistake can cost more than its own task. Without libclang on the
    grader's machine, LibclangMissing: no grade (parse.py)."""
    try:
        return splice.isolated_solutions(assignment, solution, assignment.reference_dir, job / ISOLATED_FOLDER), ""
    except IsolationError as error:
        return {}, (f"{WHOLE_SUBMISSION_NOTE}, not on its own functions ({error.message}): "
                    "a mistake in one function may cost the tasks that call it too")


def views(isolations: dict[str, Isolation]) -> dict[str, Path]:
    """Per test executable, the folder its build reads (grading/building.py: and no other)."""
    return {tests: isolation.folder for tests, isolation in isolations.items()}


def not_students(isolations: dict[str, Isolation]) -> dict[str, tuple[str, ...]]:
    """Per test executable built in its task's folder, the definitions there that are not the
    student's: the other tasks' functions and what they brought that the student's code lacks
    (applicability.in_builds: where its tests may decide applicability from other code)."""
    return {tests: (*isolation.from_reference, *isolation.from_skeleton, *isolation.helpers)
            for tests, isolation in isolations.items()}


def speed_targets(assignment: Assignment, isolations: dict[str, Isolation], times_speed: bool) -> list[str]:
    """The speed programs of the isolated tasks that have speed cases: each task is timed on its
    own functions too, so a slow or wrong function of another task cannot cost it speed points."""
    if not times_speed:
        return []
    timed = {task.tests for task in assignment.tested_tasks if any(case.task == task.id for case in assignment.speed)}
    return [task_speed_target(tests) for tests in sorted(timed & set(isolations))]


def whole_where_isolated_failed(built: Built, isolations: dict[str, Isolation], build_whole, job: Path,
                                assignment_id: str) -> tuple[Built, dict[str, Isolation]]:
    """The tasks whose isolated build failed, built from the whole submission instead: the
    reference's functions cannot always compile against a student's own types (the course's
    Mssp takes volatile references). Their executables take the isolated ones' place; their
    errors, if the whole submission fails too, are the whole submission's, never the isolated
    build's, which could quote the reference. Also the isolations that stand: the later stages
    (the race check, the feedback) treat the others' tasks as whole-submission ones."""
    failed = [tests for tests in isolations if built.get(tests) is not None]
    if not failed:
        return built, isolations
    whole_dir = job / WHOLE_BUILD_FOLDER
    whole = build_whole(whole_dir, failed)
    for tests in failed:
        if whole[tests] is None:
            target = executable(job / "build", assignment_id, tests)
            target.parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(executable(whole_dir, assignment_id, tests), target)
            record_compiled_in(job / "build", tests, whole_dir, target_name(assignment_id, tests))
    return {**built, **whole}, {tests: isolation for tests, isolation in isolations.items() if tests not in failed}


def whole_build_note(assignment: Assignment, isolated: dict[str, Isolation], standing: dict[str, Isolation]) -> tuple[tuple[str, ...], str]:
    """The tasks whose isolated build failed (graded on the whole submission instead), and what
    their feedback says; no tasks and "" when every isolated build stood."""
    fell_back = set(isolated) - set(standing)
    tasks = tuple(task.id for task in assignment.tested_tasks if task.tests in fell_back)
    if not tasks:
        return (), ""
    return tasks, (f"note: {', '.join(tasks)} graded on your whole submission, not on its own functions: the "
                   "reference's versions of the other tasks' functions did not compile against your code, so a "
                   "mistake in one function may cost the tasks that call it too")


def noted(results: dict[tuple[str, str], GroupResult], isolations: dict[str, Isolation]) -> dict[tuple[str, str], GroupResult]:
    """A failed group of an isolated task says whose code its tests ran: the failure is in the
    task's own functions."""
    return {
        (tests, group): replace(result, detail="\n".join(filter(None, (result.detail, splice.feedback_lines(isolations[tests])[0]))))
        if tests in isolations and result.verdict not in (Verdict.PASSED, Verdict.NO_GPU) else result
        for (tests, group), result in results.items()
    }
