"""What share of its points a grade could give where it ran. A backend that times no speed (the
CPU backend) cannot give the speed points, and a test group left to a GPU ("not run: needs a GPU
to confirm", "not run: no GPU") cannot give its share either: every report says so in one line,
"This grade covers 83 of 100 points; the other 17 (12 for speed, 5 for scan-warp's tests) need a
GPU", so that 83/100 does not read as 17 points lost. The numbers come from the grade, whose
points are the manifest's.

A course platform without a GPU grades out of the points its backend can give (`platform_max`):
the speed points, the same for every submission, are no test there, so a submission with every
other point reads as full marks; `platform_note` tells the instructor what total to set."""

from dataclasses import dataclass

from kernellab.backend import Backend
from kernellab.grading.model import Grade, TaskGrade
from kernellab.manifest import Assignment
from kernellab.verdict import NOT_RUN, Status


@dataclass(frozen=True)
class LeftToGpu:
    """The points of a grade that only a GPU could give."""

    speed: float
    # Task id -> the points of its test groups that did not run here, in the tasks' order.
    tests: dict[str, float]

    @property
    def total(self) -> float:
        return round(self.speed + sum(self.tests.values()), 2)


def left_to_gpu(grade: Grade) -> LeftToGpu:
    """What `grade` could not give without a GPU: the tests' points of its groups that did not run
    here, and the speed points of every task where its backend times no speed or whose tests did
    not run here (speed is timed only after passed tests)."""
    if grade.status != Status.GRADED:
        return LeftToGpu(0.0, {})
    tests = {task.id: round(_tests_points(task), 2) for task in grade.tasks if _tests_points(task)}
    speed = sum(_speed_points(task) for task in grade.tasks if speed_needs_gpu(grade, task))
    return LeftToGpu(round(speed, 2), tests)


def speed_needs_gpu(grade: Grade, task: TaskGrade) -> bool:
    """Whether the speed of `task` was left to a GPU: the backend times no speed, or the task's
    tests did not run here (speed is timed only after passed tests)."""
    return not Backend(grade.backend).times_speed or any(group.verdict in NOT_RUN for group in task.groups)


def platform_max(grade: Grade) -> float:
    """The most `grade` could give where it ran: its maximum less the speed points when its backend
    times no speed (the same for every submission of the run). The points of test groups that a
    submission's own code left to a GPU stay in it: the student's process can print the warning
    that leaves a run to a GPU, and leaving their points out would hand it their share."""
    if Backend(grade.backend).times_speed:
        return grade.max_score
    return round(grade.max_score - sum(_speed_points(task) for task in grade.tasks), 2)


def _speed_points(task: TaskGrade) -> float:
    return sum(result.max_points for result in task.speed)


def _tests_points(task: TaskGrade) -> float:
    return sum(group.max_points for group in task.groups if group.verdict in NOT_RUN)


def line(grade: Grade) -> str:
    """The sentence every report of `grade` carries; '' when it could give every point."""
    left = left_to_gpu(grade)
    if not left.total:
        return ""
    parts = {"speed": left.speed} if left.speed else {}
    parts |= {f"{task}'s tests": points for task, points in left.tests.items()}
    # One part needs no number of its own: "the other 12 (speed)".
    named = ", ".join(parts) if len(parts) == 1 else ", ".join(f"{points:g} for {what}" for what, points in parts.items())
    return (f"This grade covers {grade.max_score - left.total:g} of {grade.max_score:g} points; "
            f"the other {left.total:g} ({named}) need a GPU.")


def class_line(grades: list[Grade]) -> str:
    """The same for a batch's grades (one backend, one assignment): the speed points they left to
    a GPU, and how many also left tests to one; '' when none left anything."""
    graded = [grade for grade in grades if grade.status == Status.GRADED]
    if not graded:
        return ""
    left = [left_to_gpu(grade) for grade in graded]
    speed = max(each.speed for each in left)
    max_score = graded[0].max_score
    sentences = []
    if speed:
        sentences.append(f"These grades cover {max_score - speed:g} of {max_score:g} points; the other {speed:g} (speed) need a GPU.")
    with_tests = [each for each in left if each.tests]
    if with_tests:
        tasks = ", ".join(dict.fromkeys(task for each in with_tests for task in each.tests))
        sentences.append(f"{len(with_tests)} of {len(graded)} grades also left tests of {tasks} to a GPU "
                         "(their feedback says why).")
    return " ".join(sentences)


def platform_note(assignment: Assignment, platform: str, remote: bool) -> str:
    """What an instructor sets on a course platform whose containers grade on the CPU backend
    (`remote`: or on a GPU host first), so that full marks read as full marks there."""
    total = sum(task.points for task in assignment.tasks)
    speed = sum(case.points for case in assignment.speed)
    gradable = total - speed
    if platform == "gradescope":
        if not speed:
            return f"Gradescope: set the assignment's total points to {total:g}."
        if remote:
            return (f"Gradescope: set the assignment's total points to {total:g}; a grade that falls back to the CPU "
                    f"backend (the GPU host gave none) covers {gradable:g} of them and says so.")
        return (f"Gradescope: set the assignment's total points to {gradable:g}, what the CPU backend grades: the other "
                f"{speed:g} (speed) need a GPU (export with --remote URL, a GPU host running `kernellab serve`, for them).")
    if not speed:
        return f"PrairieLearn: a submission's score is its share of the {total:g} points."
    if remote:
        return (f"PrairieLearn: a submission's score is its share of the {total:g} points; one graded on the CPU backend "
                f"instead (the GPU host gave none) is scored out of the {gradable:g} it can give, and says so.")
    return (f"PrairieLearn: a submission's score is its share of the {gradable:g} points the CPU backend grades: the "
            f"other {speed:g} (speed) need a GPU (export with --remote URL, a GPU host running `kernellab serve`, for them).")
