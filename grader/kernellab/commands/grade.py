"""`kernellab grade`: grade one submission (a folder, .zip or .tar.gz) and write its reports
(kernellab/grading/, see docs/architecture.md).

The grading modules (numpy, rich, matplotlib) are imported when a grade is made, not when the
command line is parsed, so the student's `kernellab test` runs on Python's standard library alone.
"""

import argparse
from pathlib import Path

from kernellab import stopping
from kernellab.errors import InputError
from kernellab.intake import ARCHIVE_SUFFIXES
from kernellab.options import NOT_GRADED_EXIT_CODE, add_grading_options

EXIT_CODES = f"""\
exit codes:
  0  graded, whatever the score (a submission refused at intake is graded 0, with the reason)
  2  usage or setup error: a bad option, no such submission, an unknown assignment, a manifest error
  {NOT_GRADED_EXIT_CODE}  not graded: grading itself could not run (the reference failed to build, a full
     disk...); no results.json is written, so an autograder platform shows a failure, not a zero
  130, 143  stopped by SIGINT or SIGTERM, every process it started ended
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


def run(args: argparse.Namespace) -> int:
    from kernellab.grading.start import grade_one, open_run
    from kernellab.remote import RemoteHost, read_token

    # A path that is not there is the TA's typo, not a student's submission to refuse with 0 points.
    if not args.submission.exists():
        raise InputError(f"{args.submission}: no such file or folder")
    with stopping.stop_on_signals():
        grading = open_run(args.root, args.assignment, args.backend, args.seed, args.work, args.unsandboxed, args.cmake_args,
                           args.submission, sandbox_kind=args.sandbox, deadline_s=args.deadline)
        remote = RemoteHost(args.remote, read_token(args.token_file)) if args.remote else None
        grade = grade_one(grading, args.submission, args.out, remote)
    return 0 if grade.is_final else NOT_GRADED_EXIT_CODE
