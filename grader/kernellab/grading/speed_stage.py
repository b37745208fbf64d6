"""The speed stage: time the tasks whose tests all passed against the reference, with the GPU alone."""

from dataclasses import replace
from pathlib import Path

from kernellab import speed
from kernellab.grading.model import GradingError, TaskGrade
from kernellab.grading.run import GradingRun
from kernellab.grading.targets import SPEED_TARGET, executable
from kernellab.speed import SpeedResult
from kernellab.verdict import Verdict


def add_speed(
    grading: GradingRun, job: Path, grades: list[TaskGrade], speed_build_errors: str | None, speed_findings: tuple[str, ...]
) -> list[TaskGrade]:
    """Each task's speed results and points: timed on the GPU only for a task whose tests all passed."""
    if not grading.assignment.speed:
        return grades
    why_not: dict[str, str] = {}
    for grade in grades:
        if not grade.groups or any(group.verdict != Verdict.PASSED for group in grade.groups) or grade.feedback:
            why_not[grade.id] = "speed is scored once the task passes all its tests"
    for case in grading.assignment.speed:
        if not grading.backend.times_speed:
            why_not.setdefault(case.task, "the CPU backend gives no speed scores; grade on a GPU for them")
        elif speed_build_errors is not None:
            why_not.setdefault(case.task, f"the speed program did not build:\n{speed_build_errors}")
        elif speed_findings:
            why_not.setdefault(case.task, "the speed program is not run: " + "; ".join(speed_findings))
    timed = [case for case in grading.assignment.speed if case.task not in why_not]
    results: list[SpeedResult] = [result for case in grading.assignment.speed if case.task in why_not
                                  for result in speed.not_measured(case, why_not[case.task])]
    if timed:
        try:
            with grading.gpu_lock.exclusive():
                results += speed.measure(
                    timed,
                    executable(job / "build", grading.assignment.id, SPEED_TARGET),
                    executable(grading.reference_build, grading.assignment.id, SPEED_TARGET),
                    job / "speed",
                    grading.seed,
                    grading.sandbox,
                )
        except speed.SpeedError as error:
            raise GradingError(str(error)) from None
    by_task: dict[str, list[SpeedResult]] = {}
    for result in results:
        by_task.setdefault(result.task, []).append(result)
    return [
        replace(grade, speed=tuple(by_task.get(grade.id, ())),
                points=round(grade.points + sum(result.points for result in by_task.get(grade.id, ())), 2))
        for grade in grades
    ]
