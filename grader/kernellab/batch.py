"""Grade a folder of submissions, resumably, and write the gradebook.

Builds run in parallel on the CPU cores; test runs share the GPU and speed measurements have it
alone (GpuLock), so no timing is ever shared. Each student's reports are written atomically as
the student finishes (an earlier grade.json removed first, the new one written last), and a rerun
skips every student whose grade.json says graded or rejected: a batch killed at any moment resumes
without losing or duplicating a grade. Stopped by SIGTERM or SIGINT, it first ends every process
it started (stopping.py).
"""

import json
import shutil
import time
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor, as_completed
from dataclasses import dataclass
from pathlib import Path

from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn, TimeRemainingColumn
from rich.table import Table

from kernellab import coverage, gradebook, reports, stopping, summary
from kernellab.console import console
from kernellab.errors import InputError, display_path
from kernellab.gradebook import GradebookOptions
from kernellab.grading.isolation import stage as isolation
from kernellab.grading.model import Grade
from kernellab.grading.pipeline import grade_submission
from kernellab.grading.resources import GradeSlots
from kernellab.grading.run import GradingRun
from kernellab.grading.start import student_name
from kernellab.intake import ARCHIVE_SUFFIXES
from kernellab.manifest import Assignment
from kernellab.options import BATCH_FILE
from kernellab.verdict import Status

# Grades in flight for each grade on the cores (--jobs): the others build, wait for a build turn
# or for the GPU alone, which takes one at a time (resources.GradeSlots), or hold it.
GRADES_IN_FLIGHT_PER_JOB = 3


def find_submissions(folder: Path) -> dict[str, Path]:
    """Student name -> submission, for every subfolder and archive of `folder` (hidden ones skipped)."""
    if not folder.is_dir():
        raise InputError(f"{folder} is not a folder of submissions")
    found: dict[str, Path] = {}
    for entry in sorted(folder.iterdir()):
        if entry.name.startswith(".") or not (entry.is_dir() or entry.name.endswith(ARCHIVE_SUFFIXES)):
            continue
        student = student_name(entry)
        if student in found:
            raise InputError(f"two submissions for {student}: {found[student].name} and {entry.name}")
        found[student] = entry
    if not found:
        raise InputError(f"{folder} holds no subfolder or archive ({', '.join(ARCHIVE_SUFFIXES)})")
    return found


def resumed_seed(out: Path) -> int | None:
    """The seed of the batch whose output folder `out` is, if one ran there: a resumed batch is
    the same grading run, with the same hidden cases for every student."""
    settings = out / BATCH_FILE
    return json.loads(settings.read_text())["seed"] if settings.is_file() else None


def all_final(grades: dict[str, Grade | None]) -> bool:
    """Whether every student has a grade that stands."""
    return all(grade is not None and grade.is_final for grade in grades.values())


@dataclass(frozen=True)
class ClassFiles:
    """What the class files are made of besides the grades: the submissions folder (its loose
    entries get gradebook rows) and the gradebook's format and roster."""

    folder: Path
    gradebook: GradebookOptions


def grade_folder(
    grading: GradingRun,
    submissions: dict[str, Path],
    out: Path,
    jobs: int,
    regrade: bool,
    class_files: ClassFiles | None = None,
) -> dict[str, Grade | None]:
    """Grade the submissions not yet finished (all of them with `regrade`), then, given
    `class_files`, write the gradebook and the class summary (a slice of a Slurm array leaves
    them to the job after it); every student's grade, None where none could be written."""
    reports.write_atomically(
        out / BATCH_FILE,
        json.dumps({"assignment": grading.assignment.id, "backend": grading.backend, "seed": grading.seed}, indent=2) + "\n",
    )
    pending = [name for name in submissions if regrade or finished(out, name) is None]
    console.print(
        f"{grading.assignment.id}: {len(submissions)} submissions, {len(submissions) - len(pending)} already graded, "
        f"{len(pending)} to grade on the {grading.backend} backend"
    )
    _grade_all(grading, submissions, pending, out, jobs)
    if class_files is None:
        return {name: _read_grade(out, name) for name in submissions}
    return collect(grading.assignment, submissions, out, class_files)


def collect(assignment: Assignment, submissions: dict[str, Path], out: Path, class_files: ClassFiles) -> dict[str, Grade | None]:
    """The gradebook and the class summary from the grades in `out`, and the table of grades;
    every student's grade, None where none was written."""
    grades = {name: _read_grade(out, name) for name in submissions}
    loose = gradebook.loose_entries(class_files.folder, submissions)
    written = gradebook.write_gradebooks(assignment, grades, loose, out, class_files.gradebook)
    written += summary.write_summary(assignment, submissions, grades, loose, out)
    print_summary(grades)
    console.print(f"gradebook and class summary: {', '.join(map(display_path, written))}; reports: {display_path(out / 'students')}")
    return grades


# What a batch keeps of a graded submission's job folder: the files it graded and what its runs
# printed (the tests', speed runs' and sanitizers' logs). Its builds and records, some 0.5 GB a
# grade of pbb (the records of every case's arrays), go once its reports are written: a class of
# a hundred would otherwise fill a GPU host's 64 GB disk. `kernellab grade` keeps them all.
KEPT_AFTER_GRADING = ("submission", "logs", "speed", "sanitizers")


def discard_scratch(job: Path) -> None:
    """Remove what a graded submission's job folder holds beyond KEPT_AFTER_GRADING."""
    for entry in job.iterdir() if job.is_dir() else ():
        if entry.name in KEPT_AFTER_GRADING:
            continue
        if entry.is_dir() and not entry.is_symlink():
            shutil.rmtree(entry, ignore_errors=True)
        else:
            entry.unlink(missing_ok=True)


def _grade_all(grading: GradingRun, submissions: dict[str, Path], pending: list[str], out: Path, jobs: int) -> None:
    """`jobs` grades on the cores at once (resources.GradeSlots); more in flight, the others
    building or waiting to, or waiting for the GPU alone or holding it."""
    grading.grade_slots = GradeSlots(jobs)
    failed = 0
    columns = (
        TextColumn("{task.description}"),
        BarColumn(),
        MofNCompleteColumn(),
        TextColumn("{task.fields[failed]} not graded"),
        TimeElapsedColumn(),
        TimeRemainingColumn(),
    )
    with Progress(*columns, console=console) as progress, ThreadPoolExecutor(jobs * GRADES_IN_FLIGHT_PER_JOB) as pool:
        bar = progress.add_task("grading", total=len(pending), failed=0)
        futures = {pool.submit(_grade_one, grading, name, submissions[name], out, progress.console.print): name for name in pending}
        for future in as_completed(futures):
            grade = future.result()
            failed += not grade.is_final
            progress.update(bar, advance=1, failed=failed)
            progress.console.print(f"{grade.student}: {grade.score:g}/{grade.max_score:g} ({grade.status})")


def _grade_one(grading: GradingRun, student: str, submission: Path, out: Path, say: Callable[[str], None]) -> Grade:
    with grading.grade_slots.held():
        return _graded(grading, student, submission, out, say)


def _graded(grading: GradingRun, student: str, submission: Path, out: Path, say: Callable[[str], None]) -> Grade:
    # A grade takes minutes (the first ones wait for the reference's build too): the log says
    # when each starts and what it has earned after each stage, not only when it ends.
    started = time.monotonic()
    say(f"{student}: grading")

    def stage_ended(partial: Grade) -> None:
        say(f"{student}: {partial.score:g}/{partial.max_score:g} so far, after {time.monotonic() - started:.0f} s")

    job = grading.work / "jobs" / student
    try:
        grade = grade_submission(grading, submission.resolve(), student, job, stage_ended)
    except Exception as error:  # the grader's own failure: this student is "not graded", the batch goes on
        grade = Grade(
            student=student,
            assignment=grading.assignment.id,
            backend=grading.backend,
            status=Status.NOT_GRADED,
            message=f"grader error: {type(error).__name__}: {error}",
            seed=grading.seed,
            seconds=time.monotonic() - started,
        )
    # A stop of the grader kills the runs of grades in progress: such a grade is never written.
    stopping.hold_if_stopping()
    folder = out / "students" / student
    try:
        # An earlier grade.json goes first: a batch stopped while the new reports replace the old
        # ones one by one must not find the student finished beside half of them.
        (folder / reports.GRADE_FILE).unlink(missing_ok=True)
        reports.write_all(grade, folder, grading.assignment.grading.hidden_visibility)
    except OSError as error:  # a full disk: say so, keep going, and let a rerun retry this student
        console.print(f"{student}: not graded: its reports could not be written: {error}")
    discard_scratch(job)
    return grade


def _read_grade(out: Path, student: str) -> Grade | None:
    path = out / "students" / student / reports.GRADE_FILE
    try:
        return Grade.from_json(path.read_text(encoding="utf-8"))
    except (OSError, ValueError, KeyError, TypeError):
        return None


def finished(out: Path, student: str) -> Grade | None:
    grade = _read_grade(out, student)
    return grade if grade is not None and grade.is_final else None


def print_summary(grades: dict[str, Grade | None]) -> None:
    table = Table(title="gradebook", title_justify="left")
    for column in ("student", "status", "score"):
        table.add_column(column, justify="right" if column == "score" else "left")
    for student in sorted(grades):
        grade = grades[student]
        status = grade.status if grade else Status.NOT_GRADED
        score = f"{grade.score:g}/{grade.max_score:g}" if grade and grade.is_final else "-"
        table.add_row(student, status, score)
    console.print(table)
    if covered := coverage.class_line([grade for grade in grades.values() if grade]):
        console.print(covered)
    # A machine without libclang, say: the TA must hear it once, not read it in each student's report.
    if whole := sorted(name for name, grade in grades.items() if grade and isolation.WHOLE_SUBMISSION_NOTE in grade.message):
        console.print(f"[bold yellow]graded on the whole submission ({len(whole)})[/bold yellow]: a mistake in one function "
                      f"may have cost other tasks too; each grade's message says why: {', '.join(whole)}")
    problems = {name: grade for name, grade in grades.items() if grade is None or not grade.is_final}
    if problems:
        console.print(f"[bold red]not graded ({len(problems)})[/bold red]: run the same command again to retry them")
        for name, grade in sorted(problems.items()):
            console.print(f"  {name}: {grade.message if grade else 'no grade was written'}")
