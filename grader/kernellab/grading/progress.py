"""One submission's way through the grading stages under the run's deadline (deadline.py): the
stages it skips for want of time, and anything else graded otherwise than usual, each said in the
grade's message and in the feedback of the tasks it concerns, and its grade published after each stage, so that a platform that kills the
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
    # (the ids of the tasks it concerns, a note), in the order noted: a skipped stage, say.
    notes: list[tuple[tuple[str, ...], str]] = field(default_factory=list)

    def may_run(self, cost: StageCost) -> bool:
        """Whether a stage that may be skipped fits in what the deadline leaves; if not, it is
        noted as skipped and the caller skips it."""
        if self.deadline.fits(cost.estimate_s):
            return True
        self.note(cost.tasks, self.deadline.skip_note(cost))
        return False

    def note(self, tasks: tuple[str, ...], note: str) -> None:
        """Say `note` in the grade's message and in the feedback of `tasks`."""
        self.notes.append((tasks, note))

    def reached(self, stage: str, tasks: list[TaskGrade], findings: tuple[str, ...]) -> None:
        """Publish the grade as it stands when `stage` has ended."""
        if self.publish is None:
            return
        partial = (f"a partial grade, written when the {stage} stage ended: the later stages are not in it; "
                   "if this is the grade you read, the platform stopped the grading before they ended")
        self.publish(self.grade(tasks, findings, partial))

    def grade(self, tasks: list[TaskGrade], findings: tuple[str, ...], first_line: str = "", **more) -> Grade:
        """The graded submission, every note in its message and in the feedback of the tasks it
        concerns."""
        message = "\n".join(filter(None, (first_line, *(note for _tasks, note in self.notes))))
        return Grade(status=Status.GRADED, message=message, tasks=tuple(map(self._noted, tasks)), findings=findings,
                     **self.fields, **more)

    def _noted(self, task: TaskGrade) -> TaskGrade:
        notes = [note for tasks, note in self.notes if task.id in tasks]
        return replace(task, feedback="\n".join(filter(None, (task.feedback, *notes)))) if notes else task
