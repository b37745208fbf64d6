"""Points: each tested task's share per group that passed, and answered tasks' questions."""

import tomllib
from dataclasses import replace
from pathlib import Path

from kernellab.grading.model import GradingError, GroupResult, TaskGrade
from kernellab.manifest import Assignment, Task
from kernellab.verdict import Verdict

# How a task's feedback starts when a finding took its points (reports.py words its passed groups by it).
NO_POINTS = "no points: "


def correctness_points(assignment: Assignment, task: Task) -> float:
    """A task's points less those its [[speed]] cases give."""
    return task.points - sum(case.points for case in assignment.speed if case.task == task.id)


def score_task(assignment: Assignment, task: Task, groups: tuple[GroupResult, ...], findings: tuple[str, ...]) -> TaskGrade:
    """Each group that passed earns its share of the task's correctness points; a forbidden library
    earns none. Speed points come later (speed/stage.py: add_speed)."""
    shares = {"public": assignment.grading.public_share, "hidden": 1 - assignment.grading.public_share}
    if len(groups) == 1:
        shares = {groups[0].group: 1.0}
    correctness = correctness_points(assignment, task)
    scored = tuple(
        replace(
            group,
            max_points=round(shares[group.group] * correctness, 2),
            points=round(shares[group.group] * correctness, 2) if group.verdict == Verdict.PASSED and not findings else 0.0,
        )
        for group in groups
    )
    feedback = NO_POINTS + "; ".join(findings) if findings else ""
    return TaskGrade(task.id, task.title, round(sum(group.points for group in scored), 2), task.points, scored, feedback)


def score_answers(assignment: Assignment, task: Task, solution: Path) -> TaskGrade:
    """Each question's points for an answer equal to the instructor's (within its tolerance)."""
    try:
        questions = tomllib.loads(assignment.questions_path.read_text(encoding="utf-8"))["questions"]
    except (OSError, tomllib.TOMLDecodeError, KeyError) as error:
        raise GradingError(f"the questions of {assignment.id} cannot be read: {error}") from None
    answers_file = solution / task.answers
    try:
        answers = tomllib.loads(answers_file.read_text(encoding="utf-8")) if answers_file.is_file() else {}
        problem = "" if answers_file.is_file() else f"no {task.answers} in the submission"
    except (tomllib.TOMLDecodeError, UnicodeDecodeError) as error:
        answers, problem = {}, f"{task.answers} is not valid TOML: {error}"
    earned = 0.0
    lines = [problem] if problem else []
    for question in questions:
        given = answers.get(question["id"])
        right = answer_matches(given, question["answer"], question.get("tolerance", 0.0))
        earned += question["points"] if right else 0
        verdict = "right" if right else "no answer" if given is None else "wrong"
        lines.append(f"{question['id']}: {verdict} ({question['points'] if right else 0}/{question['points']})")
    max_points = sum(question["points"] for question in questions)
    if max_points != task.points:
        raise GradingError(f"the questions of {assignment.id} give {max_points} points, its task {task.id} {task.points}")
    return TaskGrade(task.id, task.title, earned, task.points, (), "\n".join(lines))


def answer_matches(given: object, answer: int | float, tolerance: float) -> bool:
    if type(given) not in (int, float):
        return False
    if tolerance == 0:
        return given == answer
    return abs(given - answer) <= tolerance * abs(answer)


def score_tasks(
    assignment: Assignment,
    results: dict[tuple[str, str], GroupResult],
    groups: tuple[str, ...],
    findings_of: dict[str, tuple[str, ...]],
    solution: Path,
) -> list[TaskGrade]:
    """Every task's grade before speed and sanitizers: answered tasks from their file, tested
    tasks from their groups' verdicts and their findings (`findings_of`, by task id)."""
    return [
        score_answers(assignment, task, solution) if task.answers is not None
        else score_task(assignment, task, tuple(results[(task.tests, group)] for group in groups), findings_of[task.id])
        for task in assignment.tasks
    ]
