"""One submission's way through the grading stages under the run's deadline (deadline.py): the
stages it skips for want of time, each said in the grade's message and in the feedback of the
tasks it concerns, and its grade published after each stage, so that a platform that kills the
run at its time limit keeps what was earned (start.grade_one writes the platform results)."""

from collections.abc import Callable
from dataclasses import dataclass, field, replace

from kernellab.deadline import Deadline, StageCost
from kernellab.grading.model import Grade, TaskGrade
from kernellab.verdict import Status


@dataclass
class Progress:
    deadline: Deadline
    # The Grade's fields known before grading (student, assignment, backend, seed, files...).
    fields: dict
    # Called with the grade so far after each stage; None: nothing is published before the end.
    publish: Callable[[Grade], None] | None = None
    # (stage skipped, its note), in the order skipped.
    skipped: list[tuple[StageCost, str]] = field(default_factory=list)

    def may_run(self, cost: StageCost) -> bool:
        """Whether a stage that may be skipped fits in what the deadline leaves; if not, it is
        noted as skipped and the caller skips it."""
        if self.deadline.fits(cost.estimate_s):
            return True
        self.skipped.append((cost, self.deadline.skip_note(cost)))
        return False

    def reached(self, stage: str, tasks: list[TaskGrade], findings: tuple[str, ...]) -> None:
        """Publish the grade as it stands when `stage` has ended."""
        if self.publish is None:
            return
        partial = (f"a partial grade, written when the {stage} stage ended: the later stages are not in it; "
                   "if this is the grade you read, the platform stopped the grading before they ended")
        self.publish(self.grade(tasks, findings, partial))

    def grade(self, tasks: list[TaskGrade], findings: tuple[str, ...], first_line: str = "", **more) -> Grade:
        """The graded submission, every skipped stage's note in its message and in the feedback
        of the tasks the stage concerns."""
        message = "\n".join(filter(None, (first_line, *(note for _cost, note in self.skipped))))
        return Grade(status=Status.GRADED, message=message, tasks=tuple(map(self._noted, tasks)), findings=findings,
                     **self.fields, **more)

    def _noted(self, task: TaskGrade) -> TaskGrade:
        notes = [note for cost, note in self.skipped if task.id in cost.tasks]
        return replace(task, feedback="\n".join(filter(None, (task.feedback, *notes)))) if notes else task
