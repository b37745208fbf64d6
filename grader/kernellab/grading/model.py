"""What a grade is: per task, per test group, and its JSON (grade.json, which a resumed batch reads back)."""

import json
from dataclasses import asdict, dataclass, field

from kernellab.verdict import FINAL_STATUSES, Status


@dataclass(frozen=True)
class TestCaseResult:
    """One Catch2 test case: passed when every check it made for the reference passed."""

    __test__ = False  # a result, not a pytest test class, despite its name

    name: str
    checks: int
    failed: int
    # The first failed check's inputs and message.
    first_failure: str = ""

    @property
    def passed(self) -> bool:
        return self.failed == 0



class GradingError(Exception):
    """Grading itself could not run (not the student's fault): the submission is 'not graded'."""


@dataclass(frozen=True)
class SpeedResult:
    """One [[speed]] case at one size."""

    task: str
    case: str
    size: int
    points: float
    max_points: float
    student_us: float | None = None
    reference_us: float | None = None
    copy_us: float | None = None
    # The manifest's library baseline for this case (CUB's, say) and its time, for the feedback.
    baseline: str = ""
    baseline_us: float | None = None
    bytes: float = 0.0
    problem: str = ""

    @property
    def ratio(self) -> float | None:
        """The student's time over the reference's: 1.0 is as fast, 2.0 twice as slow."""
        if self.student_us is None or not self.reference_us:
            return None
        return self.student_us / self.reference_us

    def gbps(self, micros: float | None) -> float | None:
        return self.bytes / (micros * 1e3) if micros else None


@dataclass(frozen=True)
class GroupResult:
    group: str
    verdict: str
    detail: str = ""
    test_cases: tuple[TestCaseResult, ...] = ()
    seconds: float = 0.0
    # The group's share of its task's points, and what it earned (set by score_task).
    points: float = 0.0
    max_points: float = 0.0
    # False when the run ran out of time or of GPU memory: what other runs on the GPU did could
    # have caused that.
    conclusive: bool = True


@dataclass(frozen=True)
class TaskGrade:
    id: str
    title: str
    points: float
    max_points: float
    groups: tuple[GroupResult, ...] = ()
    # For answered tasks (questions) and static findings: what the student reads.
    feedback: str = ""
    speed: tuple[SpeedResult, ...] = ()
    # compute-sanitizer's reports on the task's test executable (GPU only), and what they cost.
    sanitizer: str = ""
    sanitizer_clean: bool = True
    sanitizer_deduction: float = 0.0


@dataclass(frozen=True)
class Grade:
    student: str
    assignment: str
    backend: str
    status: Status
    message: str = ""
    tasks: tuple[TaskGrade, ...] = ()
    files: tuple[str, ...] = ()
    ignored: tuple[str, ...] = ()
    findings: tuple[str, ...] = ()
    seed: int = 0
    hidden_sizes: tuple[int, ...] = ()
    # The size of the hidden group's [large] cases (None: none ran).
    large_size: int | None = None
    environment: dict = field(default_factory=dict)
    seconds: float = 0.0
    # Seconds per stage ("build", "tests", "speed"): where grading time goes.
    stages: dict = field(default_factory=dict)

    @property
    def score(self) -> float:
        return round(sum(task.points for task in self.tasks), 2)

    @property
    def max_score(self) -> float:
        return round(sum(task.max_points for task in self.tasks), 2)

    @property
    def is_final(self) -> bool:
        """Whether this grade stands (graded, or rejected at intake); else grading is to be tried again."""
        return self.status in FINAL_STATUSES

    def to_json(self) -> str:
        """The grade with its total and maximum first, for whoever reads the file."""
        return json.dumps({"score": self.score, "max_score": self.max_score, **asdict(self)}, indent=2) + "\n"

    @classmethod
    def from_json(cls, text: str) -> "Grade":
        data = json.loads(text)
        for total in ("score", "max_score"):
            data.pop(total, None)
        data["status"] = Status(data["status"])
        data["tasks"] = tuple(
            TaskGrade(
                **{
                    **task,
                    "groups": tuple(
                        GroupResult(**{**group, "test_cases": tuple(TestCaseResult(**case) for case in group["test_cases"])})
                        for group in task["groups"]
                    ),
                    "speed": tuple(SpeedResult(**result) for result in task["speed"]),
                }
            )
            for task in data["tasks"]
        )
        for key in ("files", "ignored", "findings", "hidden_sizes"):
            data[key] = tuple(data[key])
        return cls(**data)
