"""`kernellab grade`: grade one submission (a folder, .zip or .tar.gz) and write its reports.

The grading modules (numpy, rich, matplotlib) are imported when a grade is made, not when the
command line is parsed, so the student's `kernellab test` runs on Python's standard library alone.
"""

import argparse
from pathlib import Path
from typing import TYPE_CHECKING

from kernellab import cmake, environment
from kernellab.commands.test import choose_assignment
from kernellab.container_sandbox import SANDBOX_KINDS
from kernellab.errors import InputError, display_path
from kernellab.intake import ARCHIVE_SUFFIXES

if TYPE_CHECKING:
    from kernellab.grading import Grade, GradingRun

NOT_GRADED_EXIT_CODE = 3

EXIT_CODES = f"""\
exit codes:
  0  graded, whatever the score (a submission refused at intake is graded 0, with the reason)
  2  usage or setup error: a bad option, an unknown assignment, a manifest error
  {NOT_GRADED_EXIT_CODE}  not graded: grading itself could not run (the reference failed to build, a full
     disk...); no results.json is written, so an autograder platform shows a failure, not a zero
"""


def add_parser(subparsers: argparse._SubParsersAction) -> argparse.ArgumentParser:
    parser = subparsers.add_parser(
        "grade",
        help="grade one submission: build, run every test group, judge, score, write reports",
        description="Grade one submission: take the assignment's files from it, build them with the\n"
        "grader's own tests, run each task's public and hidden cases in separate processes, judge\n"
        "their outputs against the reference's, and write results.json (Gradescope),\n"
        "prairielearn.json, junit.xml, feedback.md, feedback.html and grade.json.",
        epilog=EXIT_CODES,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument("submission", type=Path, metavar="SUBMISSION", help=f"a folder or an archive ({', '.join(ARCHIVE_SUFFIXES)})")
    add_grading_options(parser)
    parser.add_argument("--out", type=Path, metavar="DIR", help="where the reports go (default: grades/<submission name>)")
    parser.add_argument(
        "--remote",
        metavar="URL",
        help="have the GPU host at URL (`kernellab serve`) grade it, for speed points on a platform without a GPU; "
        "when the host gives no grade, grade here on the CPU backend and say so in the reports",
    )
    parser.add_argument("--token-file", type=Path, metavar="FILE", help="the --remote service's token (default: $KERNELLAB_TOKEN)")
    return parser


def add_grading_options(parser: argparse.ArgumentParser) -> None:
    """The options `grade` and `batch` share."""
    parser.add_argument("--assignment", metavar="ID", help="the assignment (default: the only one there is)")
    parser.add_argument(
        "--backend",
        choices=environment.BACKENDS,
        default="auto",
        help="where kernels run: 'cuda' (a GPU), 'cpu' (kernellab's CPU backend, correctness only) or "
        "'auto' (the GPU when there is one; default)",
    )
    parser.add_argument(
        "--seed",
        type=int,
        metavar="N",
        help="the hidden cases' seed, to reproduce an earlier grading run (default: a fresh secret one)",
    )
    parser.add_argument(
        "--work",
        type=Path,
        metavar="DIR",
        help="the grader's private folder: reference build and records, job folders (default: build/grader)",
    )
    parser.add_argument(
        "--unsandboxed",
        action="store_true",
        help="build and run student code WITHOUT the bubblewrap sandbox, e.g. where user namespaces are "
        "off; the code can then read the reference and the grader's files: only for code you trust",
    )
    parser.add_argument(
        "--sandbox",
        choices=SANDBOX_KINDS,
        default="bubblewrap",
        help="how student code is confined: 'bubblewrap' (namespaces; default) or 'container' (inside an autograder "
        "platform's container, where bubblewrap cannot run: each step as an unprivileged uid of its own, "
        "no_new_privs, rlimits, the reference sealed by file permissions; needs root)",
    )
    parser.add_argument(
        "--deadline",
        type=float,
        metavar="SECONDS",
        help="finish within SECONDS (a platform's time limit, less a margin): stages that will not fit are skipped "
        "and the reports say so",
    )
    cmake.add_cmake_arg_option(parser)


def grading_run(args: argparse.Namespace, submission: Path | None = None) -> "GradingRun":
    """The grading run the options describe; a folder `submission` names its assignment by the
    files it holds when --assignment does not."""
    from kernellab.container_sandbox import choose_sandbox
    from kernellab.deadline import Deadline
    from kernellab.grading import GradingRun
    from kernellab.sandbox import SandboxUnavailable

    assignment = choose_assignment(args.root, args.assignment, submission if submission and submission.is_dir() else None)
    backend = environment.choose_backend(args.backend, args.root)
    work = (args.work or args.root / "build" / "grader").resolve()
    sandbox = None
    if args.unsandboxed:
        print("warning: --unsandboxed: student code runs without a sandbox and can read the reference", flush=True)
    else:
        try:
            sandbox = choose_sandbox(args.sandbox, args.root, work)
        except SandboxUnavailable as why:
            raise InputError(f"refusing to grade untrusted code without a sandbox: {why} (or pass --unsandboxed)") from None
    if args.deadline is not None and args.deadline <= 0:
        raise InputError(f"--deadline {args.deadline:g}: expected a positive number of seconds")
    grading = GradingRun(assignment, backend, work / assignment.id, sandbox, args.seed, tuple(args.cmake_args))
    # What the pipeline's stages check before they start (kernellab/deadline.py).
    grading.deadline = Deadline(args.deadline)
    return grading


def student_name(submission: Path) -> str:
    name = submission.resolve().name
    for suffix in ARCHIVE_SUFFIXES:
        if name.endswith(suffix):
            return name[: -len(suffix)]
    return name


def run(args: argparse.Namespace) -> int:
    from kernellab import console, remote, reports
    from kernellab.grading import grade_submission
    from kernellab.intake import SubmissionRejected

    grading = grading_run(args, args.submission)
    student = student_name(args.submission)
    out = (args.out or Path("grades") / student).resolve()
    grade, why_not_remote = None, ""
    if args.remote:
        print(f"{grading.assignment.id}: grading {display_path(args.submission)} on {args.remote}", flush=True)
        try:
            grade = remote.grade_remotely(
                args.remote, remote.read_token(args.token_file), args.submission.resolve(), grading.assignment, student,
                remote.timeout_within(grading.deadline.remaining()), args.deadline and grading.deadline.remaining(),
            )
        except remote.RemoteUnavailable as why:
            why_not_remote = str(why)
            print(f"warning: {why_not_remote}; grading here instead", flush=True)
        except SubmissionRejected:
            pass  # graded here at once: intake gives the same refusal, with its reason
    if grade is None:
        print(f"{grading.assignment.id}: grading {display_path(args.submission)} on the {grading.backend} backend", flush=True)
        grade = grade_submission(grading, args.submission.resolve(), student, grading.work / "jobs" / student)
        if why_not_remote:
            grade = remote.noted(grade, why_not_remote)
    reports.write_all(grade, out, grading.assignment.grading.hidden_visibility)
    console.print_grade(grade)
    print(f"reports: {display_path(out)}")
    return exit_code(grade)


def exit_code(grade: "Grade") -> int:
    return NOT_GRADED_EXIT_CODE if grade.status == "not graded" else 0
