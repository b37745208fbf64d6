"""The race-check stage of a GPU grade: the CPU backend's thread orders (check.py) on small
cases of the tasks whose manifest asks for it (`race_check`), built beside the GPU build and run
beside the GPU's runs (it uses CPU cores, not the GPU); a race found there is a finding on the
task, and the manifest says what it costs: "fail" all its points, "warn" a warning only. Where
the check cannot run on the grading machine, a "warn" task is told so and a "fail" task's grade
is "not graded".

A task's warp_synchronous policy holds here as on the CPU backend: the check's build compiles
it into the test executables from the manifest (grader/harness/CMakeLists.txt), so a
warp-synchronous race in a "warn" task whose results are right with the lanes kept in step
(kernellab/lockstep.hpp) passes the check with a warning, never a finding. Failed cases beside
such a race count here (only the run itself says that it warned). On the CPU backend the
grade's own runs find races: no stage there.
"""

from dataclasses import replace
from pathlib import Path

from kernellab.applicability import Condition
from kernellab.grading.building import Built
from kernellab.grading.isolation.splice import Isolation
from kernellab.grading.model import GradingError, TaskGrade
from kernellab.grading.race.check import (UNAVAILABLE, RaceBuild, RaceCheck, RaceCheckRun, build_for_races,
                                         run_race_checks)
from kernellab.grading.run import GradingRun
from kernellab.manifest import Assignment
from kernellab.verdict import Verdict

def checked_tests(assignment: Assignment) -> list[str]:
    """The test executables of the tasks whose manifest asks for the race check, once each."""
    return list(dict.fromkeys(task.tests for task in assignment.tested_tasks if task.race_check is not None))


def race_run(grading: GradingRun) -> RaceCheckRun:
    """The race check's run of `grading`, under its deadline: every stage fits in it. One per
    grading run: a batch builds and records the reference's CPU build once."""
    return grading.shared("race check", lambda: RaceCheckRun(grading.assignment, grading.work, grading.sandbox,
                                                             grading.seed, grading.deadline))


def build_race_check(grading: GradingRun, solution: Path, job: Path,
                     isolations: dict[str, Isolation]) -> RaceBuild | None:
    """The check's programs, built under <job>/race-check beside the GPU build (it needs only the
    sources); None where no stage runs (the CPU backend, whose own runs check every launch) or no
    task asks for the check."""
    tests = checked_tests(grading.assignment)
    if not grading.backend.on_gpu or not tests:
        return None
    return build_for_races(race_run(grading), solution, job / "race-check", tests, isolations)


def run_race_check(grading: GradingRun, solution: Path, job: Path, built: Built, not_applicable: tuple[Condition, ...] = (),
                   isolations: dict[str, Isolation] | None = None, race_build: RaceBuild | None = None) -> dict[str, RaceCheck]:
    """What the check found per test executable that needs it and built on the GPU (`built`), on a
    GPU backend only. `race_build`: the check's programs (build_race_check), built here where not
    given; a task whose isolated GPU build failed, and so was graded on the whole submission (it
    is not in `isolations`), is checked on a whole build too."""
    if not grading.backend.on_gpu:
        return {}
    tests = [name for name in checked_tests(grading.assignment) if built.get(name, "") is None]
    if not tests:
        return {}
    run, isolations = race_run(grading), isolations or {}
    if race_build is None:
        race_build = build_for_races(run, solution, job / "race-check", tests, isolations)
    elif fell_back := [name for name in tests if name in race_build.isolated and name not in isolations]:
        whole = build_for_races(run, solution, job / "race-check" / "whole", fell_back)
        race_build = replace(race_build, built={**race_build.built, **whole.built},
                             programs={**race_build.programs, **whole.programs})
    checks = run_race_checks(run, job / "race-check", race_build, tests, not_applicable)
    _require_deciding_checks(grading.assignment, checks)
    return checks


def _require_deciding_checks(assignment: Assignment, checks: dict[str, RaceCheck]) -> None:
    """A check that decides points ("fail") and could not run here leaves the grade "not graded":
    the machine's shortcoming costs the student nothing, and passes nobody a race."""
    for task in assignment.tested_tasks:
        check = checks.get(task.tests) if task.race_check == "fail" else None
        if check is not None and check.verdict == UNAVAILABLE:
            raise GradingError(f"{task.id}'s race check, which decides its points, could not run on this machine's "
                               f"CPU backend: {check.finding}")


def race_line(check: RaceCheck) -> str:
    """What the student reads of a check that found something."""
    if check.verdict == UNAVAILABLE:
        return f"the CPU backend's race check did not run (no points lost): {check.finding}"
    found = check.finding.splitlines()[0] if check.finding else check.verdict
    sizes = f" (sizes {' and '.join(map(str, check.sizes))})" if check.sizes else ""
    return f"the CPU backend's race check{sizes} found: {found}"


def race_findings(assignment: Assignment, checks: dict[str, RaceCheck],
                  task_findings: dict[str, tuple[str, ...]]) -> dict[str, tuple[str, ...]]:
    """`task_findings` with each "fail" task's race as one more finding: it costs the task its points."""
    return {task: found + _costly(assignment, task, checks) for task, found in task_findings.items()}


def _costly(assignment: Assignment, task_id: str, checks: dict[str, RaceCheck]) -> tuple[str, ...]:
    task = next(task for task in assignment.tasks if task.id == task_id)
    check = checks.get(task.tests) if task.race_check == "fail" else None
    return (race_line(check),) if check is not None and _is_finding(check) else ()


def add_race_warnings(assignment: Assignment, grades: list[TaskGrade], checks: dict[str, RaceCheck]) -> list[TaskGrade]:
    """The check's lines that cost nothing, as feedback: a "warn" task's race, and a
    warp-synchronous race that the task's policy only warns of."""
    policy = {task.id: (task.race_check, task.tests) for task in assignment.tasks}
    updated = []
    for grade in grades:
        race_check, tests = policy[grade.id]
        check = checks.get(tests) if race_check is not None else None
        if line := _costless_line(race_check, check) if check is not None else "":
            grade = replace(grade, feedback="\n".join(filter(None, (grade.feedback, line))))
        updated.append(grade)
    return updated


def _costless_line(race_check: str, check: RaceCheck) -> str:
    """The feedback line of a check that costs the task nothing, or ""."""
    if check.verdict == UNAVAILABLE:
        return "note: " + race_line(check)
    warned = check.verdict == Verdict.NEEDS_GPU or (check.verdict == Verdict.PASSED and check.finding)
    if warned or (race_check == "warn" and _is_finding(check)):
        return "warning: " + race_line(check)
    return ""


def _is_finding(check: RaceCheck) -> bool:
    """A check whose verdict is not a pass, nor a warp-synchronous warning (the task's policy)."""
    return check.verdict not in (Verdict.PASSED, Verdict.NEEDS_GPU, UNAVAILABLE)
