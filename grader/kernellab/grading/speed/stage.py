"""The speed stage: time the tasks whose tests all passed against the reference, with the GPU alone."""

from collections.abc import Collection
from dataclasses import dataclass, replace
from pathlib import Path

from kernellab.deadline import StageCost
from kernellab.grading.building import Built
from kernellab.grading.model import GradingError, SpeedResult, TaskGrade
from kernellab.grading.run import GradingRun
from kernellab.grading.speed import timing
from kernellab.grading.targets import SPEED_TARGET, Programs, executable, task_speed_target
from kernellab.manifest import SpeedCase
from kernellab.verdict import Verdict

STAGE = "speed"
# What timing one case at one size takes, both programs' rounds included: pbb's 6 took 21 s for
# the reference in a batch on an H200, 30 repetitions a round (docs/performance.md).
SECONDS_PER_CASE_SIZE = 3.5


@dataclass(frozen=True)
class SpeedPlan:
    """The speed cases to time, and why each of the others is not timed (by task id)."""

    timed: tuple[SpeedCase, ...]
    why_not: dict[str, str]

    def cost(self) -> StageCost:
        points = sum(case.points for case in self.timed)
        return StageCost(STAGE, SECONDS_PER_CASE_SIZE * sum(len(case.sizes) for case in self.timed),
                         f"up to {points:g} speed points", tuple(dict.fromkeys(case.task for case in self.timed)))

    def without_timing(self, why: str) -> "SpeedPlan":
        """This plan with none of its cases timed, for `why`."""
        return SpeedPlan((), {**self.why_not, **{case.task: why for case in self.timed}})


def plan_speed(grading: GradingRun, grades: list[TaskGrade], built: Built, findings: dict[str, tuple[str, ...]]) -> SpeedPlan:
    """The cases to time: on the GPU only, each for a task whose tests all passed, by a program
    that built and has no finding of its own (`findings`: the static checks' by program)."""
    why_not: dict[str, str] = {}
    for grade in grades:
        if not grade.groups or any(group.verdict != Verdict.PASSED for group in grade.groups) or grade.feedback:
            why_not[grade.id] = "speed is scored once the task passes all its tests"
    for case in grading.assignment.speed:
        target = timing_program(grading, case, [target for target, errors in built.items() if errors is None])
        if not grading.backend.times_speed:
            why_not.setdefault(case.task, "the CPU backend gives no speed scores; grade on a GPU for them")
        elif built.get(target) is not None:
            why_not.setdefault(case.task, f"the speed program did not build:\n{built.get(target)}")
        elif findings.get(target):
            why_not.setdefault(case.task, "the speed program is not run: " + "; ".join(findings[target]))
    return SpeedPlan(tuple(case for case in grading.assignment.speed if case.task not in why_not), why_not)


def timing_program(grading: GradingRun, case: SpeedCase, built: Collection[str]) -> str:
    """The program that times the student's code for `case`: the task's own speed program where
    it built (the task's functions, the reference's or the skeleton's for the others), else the
    whole submission's; `built`: the targets that built."""
    own = task_speed_target(next(task.tests for task in grading.assignment.tasks if task.id == case.task))
    return own if own in built else SPEED_TARGET


def add_speed(grading: GradingRun, job: Path, grades: list[TaskGrade], plan: SpeedPlan, programs: Programs) -> list[TaskGrade]:
    """Each task's speed results and points, as `plan` says; `programs`: the build's."""
    if not grading.assignment.speed:
        return grades
    results: list[SpeedResult] = [result for case in grading.assignment.speed if case.task in plan.why_not
                                  for result in timing.not_measured(case, plan.why_not[case.task])]
    if plan.timed:
        try:
            with grading.gpu_alone():
                results += timing.measure(
                    plan.timed,
                    {case.case: programs[timing_program(grading, case, programs)] for case in plan.timed},
                    executable(grading.reference_build, grading.assignment.id, SPEED_TARGET),
                    job / "speed",
                    grading.seed,
                    grading.sandbox,
                )
        except timing.SpeedError as error:
            raise GradingError(str(error)) from None
    by_task: dict[str, list[SpeedResult]] = {}
    for result in results:
        by_task.setdefault(result.task, []).append(result)
    return [
        replace(grade, speed=tuple(by_task.get(grade.id, ())),
                points=round(grade.points + sum(result.points for result in by_task.get(grade.id, ())), 2))
        for grade in grades
    ]
