"""Starting a grading run from the TA's choices (`kernellab grade` and `batch`), and grading one
submission into its reports."""

from pathlib import Path

from kernellab import console, environment, reports
from kernellab.backend import Backend
from kernellab.errors import InputError, display_path
from kernellab.grading.model import Grade
from kernellab.grading.pipeline import grade_submission
from kernellab.grading.sanitizers import compute_sanitizer
from kernellab.grading.run import GradingRun
from kernellab.intake import ARCHIVE_SUFFIXES
from kernellab.manifest import Assignment
from kernellab.sandbox.choice import choose_sandbox
from kernellab.deadline import Deadline
from kernellab.remote import RemoteHost, noted
from kernellab.sandbox.step import SandboxUnavailable
from kernellab.solution import choose_assignment


def open_run(
    root: Path,
    assignment_id: str | None,
    requested_backend: str,
    seed: int | None,
    work: Path | None,
    unsandboxed: bool,
    cmake_args: list[str],
    submission: Path | None = None,
    sandbox_kind: str = "bubblewrap",
    deadline_s: float | None = None,
) -> GradingRun:
    """The grading run the options describe; a folder `submission` names its assignment by the
    files it holds when `assignment_id` does not. Refuses to run without a sandbox (of
    `sandbox_kind`, options.SANDBOX_KINDS) unless `unsandboxed`. `deadline_s`: the time budget
    of the whole run (None: none)."""
    if deadline_s is not None and deadline_s <= 0:
        raise InputError(f"--deadline {deadline_s:g}: expected a positive number of seconds")
    assignment = choose_assignment(root, assignment_id, submission if submission and submission.is_dir() else None)
    backend = environment.choose_backend(requested_backend, root)
    _require_deciding_sanitizer(assignment, backend)
    work = (work or root / "build" / "grader").resolve()
    sandbox = None
    if unsandboxed:
        print("warning: --unsandboxed: student code runs without a sandbox and can read the reference", flush=True)
    else:
        try:
            sandbox = choose_sandbox(sandbox_kind, root, work)
        except SandboxUnavailable as why:
            raise InputError(f"refusing to grade untrusted code without a sandbox: {why} (or pass --unsandboxed)") from None
    return GradingRun(assignment, backend, work / assignment.id, sandbox, seed, tuple(cmake_args), Deadline(deadline_s))


def _require_deciding_sanitizer(assignment: Assignment, backend: Backend) -> None:
    """On a GPU, racecheck is the race check's GPU half, which decides points (grading/sanitizers.py):
    without compute-sanitizer the check could not run, and a check that cannot run must not pass."""
    racing = [task.id for task in assignment.tested_tasks if task.race_check == "fail"]
    if backend.runs_sanitizers and racing and compute_sanitizer.find_tool() is None:
        raise InputError(f"{assignment.id}: compute-sanitizer was not found (on PATH or beside nvcc), and its racecheck "
                         f"decides the points of {', '.join(racing)} on a GPU: install the CUDA toolkit's "
                         f"compute-sanitizer, or grade with --backend cpu (correctness only)")


def student_name(submission: Path) -> str:
    """The submission's name without its archive suffix."""
    name = submission.resolve().name
    for suffix in ARCHIVE_SUFFIXES:
        if name.endswith(suffix):
            return name[: -len(suffix)]
    return name


def grade_one(grading: GradingRun, submission: Path, out: Path | None, remote: RemoteHost | None = None) -> Grade:
    """`kernellab grade`: grade one submission (on the GPU host `remote` when given and able),
    write its reports to `out` (default: grades/<student>) and show the grade."""
    student = student_name(submission)
    out = (out or Path("grades") / student).resolve()
    visibility = grading.assignment.grading.hidden_visibility
    grade, why_not_remote = remote.grade(grading, submission.resolve(), student) if remote else (None, "")
    if grade is None:
        print(f"{grading.assignment.id}: grading {display_path(submission)} on the {grading.backend} backend", flush=True)

        def publish(partial: Grade) -> None:
            # A platform that kills the run at its time limit keeps the results of the last stage.
            reports.write_platform_results(noted(partial, why_not_remote) if why_not_remote else partial, out, visibility)

        grade = grade_submission(grading, submission.resolve(), student, grading.work / "jobs" / student, publish)
        if why_not_remote:
            grade = noted(grade, why_not_remote)
    reports.write_all(grade, out, visibility)
    console.print_grade(grade)
    print(f"reports: {display_path(out)}")
    return grade
