"""The gradebook of a batch: one row for every entry of the submissions folder, in the CSV an LMS imports.

`grades.csv` is always written (student, status, score, per-task points, message). With
`--gradebook canvas` also `grades-canvas.csv`, in Canvas's gradebook import format: the identity
columns Student, ID, SIS User ID, SIS Login ID and Section, one column per task, and a
"Points Possible" row under the header; a task column Canvas does not know becomes a new
assignment at import. With `--gradebook moodle`, `grades-moodle.csv` for Moodle's "Import grades
from CSV": the roster's identity columns, one grade column per task and a feedback column, each
mapped to a grade item at import (Moodle keeps the points possible in the grade item).

A roster (`--roster CSV`, e.g. the LMS's own export) names the students: its `--roster-key`
column holds the name of each student's entry in the submissions folder. A roster student without
an entry gets a row "no submission" (no points: the LMS keeps what it has); an entry the roster
does not name gets a row all the same, and so does every loose file ("not a submission: why").
"""

import argparse
import csv
import io
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from kernellab.errors import InputError
from kernellab.intake import ARCHIVE_SUFFIXES
from kernellab.manifest import Assignment
from kernellab.options import GRADEBOOK_FILE
from kernellab.verdict import FINAL_STATUSES, Status

if TYPE_CHECKING:  # the grading modules load when a gradebook is written, not when options are parsed
    from kernellab.grading.model import Grade
FORMATS = ("csv", "canvas", "moodle")
CANVAS_IDENTITY = ("Student", "ID", "SIS User ID", "SIS Login ID", "Section")
# Canvas's export has this row under its header: no student, the assignments' points.
CANVAS_POINTS_ROW = "Points Possible"
NO_SUBMISSION = "no submission"
NOT_A_SUBMISSION = "not a submission"


@dataclass(frozen=True)
class GradebookOptions:
    lms: str = "csv"
    roster: Path | None = None
    roster_key: str = "submission"


@dataclass(frozen=True)
class Row:
    """One line of the gradebook: a student (or a loose entry) and what they got."""

    name: str
    status: str
    grade: "Grade | None"
    message: str
    identity: dict[str, str]


def add_options(parser: argparse.ArgumentParser) -> None:
    group = parser.add_argument_group("gradebook")
    group.add_argument("--gradebook", dest="lms", choices=FORMATS, default="csv",
                       help="also write the gradebook for an LMS's CSV import: grades-canvas.csv or "
                       f"grades-moodle.csv ({GRADEBOOK_FILE} is always written)")
    group.add_argument("--roster", type=Path, metavar="CSV",
                       help="the class list (e.g. the LMS's gradebook export): its identity columns go "
                       "into the gradebook, and every student on it gets a row")
    group.add_argument("--roster-key", default="submission", metavar="COLUMN",
                       help="the roster column holding each student's entry name in DIR, without the "
                       "archive suffix (default: submission)")


def options(args: argparse.Namespace) -> GradebookOptions:
    return GradebookOptions(args.lms, args.roster, args.roster_key)


def loose_entries(folder: Path, submissions: dict[str, Path]) -> dict[str, str]:
    """Entry name -> why it is not a submission, for every entry of `folder` that is not one."""
    taken = {path.name for path in submissions.values()}
    loose = {}
    for entry in sorted(folder.iterdir()):
        if entry.name in taken:
            continue
        if entry.name.startswith("."):
            why = "a hidden entry (its name starts with a dot)"
        elif entry.is_symlink():
            why = "a symbolic link"
        elif entry.is_file():
            why = f"a file that is not an archive ({', '.join(ARCHIVE_SUFFIXES)})"
        else:
            why = "neither a folder nor a file"
        loose[entry.name] = f"{NOT_A_SUBMISSION}: {why}"
    return loose


def read_roster(path: Path, key: str) -> dict[str, dict[str, str]]:
    """Entry name -> the roster's columns for that student."""
    try:
        text = path.read_text(encoding="utf-8-sig")
    except OSError as error:
        raise InputError(f"cannot read the roster: {error.strerror}", path) from None
    reader = csv.DictReader(io.StringIO(text))
    if not reader.fieldnames or key not in reader.fieldnames:
        raise InputError(f"the roster has no column {key!r} (its columns: {', '.join(reader.fieldnames or ())}); "
                         "name the column of entry names with --roster-key", path)
    roster: dict[str, dict[str, str]] = {}
    for line, record in enumerate(reader, start=2):
        name = (record[key] or "").strip()
        if not name or any((value or "").strip() == CANVAS_POINTS_ROW for value in record.values()):
            continue
        if name in roster:
            raise InputError(f"{name!r} appears twice in column {key!r}", path, line)
        roster[name] = {column: (value or "").strip() for column, value in record.items() if column is not None}
    return roster


def gradebook_rows(grades: "dict[str, Grade | None]", loose: dict[str, str],
                   roster: dict[str, dict[str, str]] | None, roster_key: str = "submission") -> list[Row]:
    """Every submission, every loose entry and every roster student, sorted by name. An entry the
    roster does not name has only its name, in the roster's key column."""
    from kernellab.summary import shared_notes

    roster = roster or {}
    shared = shared_notes(grades)
    rows = []
    for name in sorted(set(grades) | set(loose) | set(roster)):
        identity = roster.get(name, {roster_key: name})
        note = "not in the roster" if roster and name not in roster and name in grades else ""
        if name in grades:
            grade = grades[name]
            status = grade.status if grade else Status.NOT_GRADED
            if grade is None:
                message = "no grade was written"
            elif status == Status.GRADED:
                message = graded_message(grade, shared)
            else:
                message = grade.message
        elif name in loose:
            grade, status, message = None, NOT_A_SUBMISSION, loose[name]
        else:
            grade, status, message = None, NO_SUBMISSION, "the roster names this student; the folder has no entry"
        rows.append(Row(name, status, grade, "; ".join(filter(None, (message, note))), identity))
    return rows


def graded_message(grade: "Grade", shared: tuple[str, ...]) -> str:
    """A graded student's message: each task's first failure, then the lines of the grade's own
    message that are this student's (a note that every grade of the batch has is the class
    summary's: the large cases left to a GPU, say)."""
    from kernellab.summary import first_failure

    failures = [f"{task.id}: {failure}" for task in grade.tasks if (failure := first_failure(task))]
    return "; ".join([*failures, *(line for line in grade.message.splitlines() if line not in shared)])


def task_points(row: Row, task_ids: tuple[str, ...]) -> list[str]:
    """The row's points per task; blank where it has no grade to give (the LMS keeps its own)."""
    if row.grade is None or row.status not in FINAL_STATUSES:
        return [""] * len(task_ids)
    points = {task.id: f"{task.points:g}" for task in row.grade.tasks}
    return [points.get(task, "") for task in task_ids]


def plain_csv(assignment: Assignment, rows: list[Row]) -> str:
    task_ids = assignment.task_ids
    max_score = f"{sum(task.points for task in assignment.tasks):g}"
    buffer = io.StringIO()
    writer = csv.writer(buffer, lineterminator="\n")
    writer.writerow(["student", "status", "score", "max_score", *task_ids, "message"])
    for row in rows:
        graded = row.grade is not None and row.status in FINAL_STATUSES
        writer.writerow([row.name, row.status, f"{row.grade.score:g}" if graded else "",
                         f"{row.grade.max_score:g}" if row.grade else max_score if row.status == NO_SUBMISSION else "",
                         *task_points(row, task_ids), row.message])
    return buffer.getvalue()


def task_column(assignment: Assignment, task_id: str) -> str:
    return f"{assignment.id}: {task_id}"


def canvas_csv(assignment: Assignment, rows: list[Row]) -> str:
    buffer = io.StringIO()
    writer = csv.writer(buffer, lineterminator="\n")
    writer.writerow([*CANVAS_IDENTITY, *(task_column(assignment, task) for task in assignment.task_ids)])
    writer.writerow([CANVAS_POINTS_ROW, *([""] * (len(CANVAS_IDENTITY) - 1)), *(f"{task.points:g}" for task in assignment.tasks)])
    for row in rows:
        identity = [row.identity.get(column, "") for column in CANVAS_IDENTITY]
        if not identity[0]:
            # No roster name: the entry's own, and why it has no points when it has none.
            identity[0] = row.name if row.status in FINAL_STATUSES else f"{row.name} ({row.message})"
        writer.writerow([*identity, *task_points(row, assignment.task_ids)])
    return buffer.getvalue()


def moodle_csv(assignment: Assignment, rows: list[Row], identity_columns: tuple[str, ...]) -> str:
    buffer = io.StringIO()
    writer = csv.writer(buffer, lineterminator="\n")
    columns = identity_columns or ("submission",)
    writer.writerow([*columns, *(task_column(assignment, task) for task in assignment.task_ids), "feedback"])
    for row in rows:
        identity = [row.identity.get(column, "") for column in identity_columns] if identity_columns else [row.name]
        score = f"{row.grade.score:g} of {row.grade.max_score:g} points" if row.grade and row.status == Status.GRADED else ""
        feedback = "; ".join(filter(None, (score, row.message)))
        writer.writerow([*identity, *task_points(row, assignment.task_ids), feedback])
    return buffer.getvalue()


def write_gradebooks(assignment: Assignment, grades: "dict[str, Grade | None]", loose: dict[str, str],
                     out: Path, chosen: GradebookOptions) -> list[Path]:
    """grades.csv, and the chosen LMS's file; the paths written."""
    from kernellab.reports import write_atomically

    roster = read_roster(chosen.roster, chosen.roster_key) if chosen.roster else None
    rows = gradebook_rows(grades, loose, roster, chosen.roster_key)
    written = {out / GRADEBOOK_FILE: plain_csv(assignment, rows)}
    if chosen.lms == "canvas":
        written[out / "grades-canvas.csv"] = canvas_csv(assignment, rows)
    elif chosen.lms == "moodle":
        identity = tuple(next(iter(roster.values())).keys()) if roster else ()
        written[out / "grades-moodle.csv"] = moodle_csv(assignment, rows, identity)
    for path, text in written.items():
        write_atomically(path, text)
    return list(written)
