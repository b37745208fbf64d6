"""`kernellab batch`: grade a folder of submissions, resumably, and write the gradebook (kernellab/batch.py)."""

import argparse
from pathlib import Path

from kernellab import gradebook, slurm, stopping
from kernellab.errors import InputError
from kernellab.options import GRADEBOOK_FILE, NOT_GRADED_EXIT_CODE, add_grading_options

EXIT_CODES = f"""\
exit codes:
  0  every submission has a grade (graded, or refused at intake with the reason)
  2  usage or setup error
  {NOT_GRADED_EXIT_CODE}  some submissions could not be graded (listed at the end and in {GRADEBOOK_FILE});
     run the same command again to retry just those
  130, 143  stopped by SIGINT or SIGTERM, every process it started ended; run it again to resume
"""


def add_parser(subparsers: argparse._SubParsersAction) -> argparse.ArgumentParser:
    parser = subparsers.add_parser(
        "batch",
        help="grade every submission in a folder and write the gradebook",
        description="Grade each subfolder or archive of DIR as one student's submission (the student's\n"
        "name is its name without the archive suffix). Reports go to OUT/students/<name>/, the\n"
        f"gradebook to OUT/{GRADEBOOK_FILE}, the class view to OUT/summary.md and summary.html.\n"
        "Rerunning resumes: finished students are skipped. --slurm grades on a Slurm cluster.",
        epilog=EXIT_CODES,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument("submissions", type=Path, metavar="DIR", help="the folder of submissions")
    parser.add_argument("--out", type=Path, required=True, metavar="DIR", help="where reports and the gradebook go")
    parser.add_argument("--jobs", type=int, default=2, metavar="N", help="grades on the cores at once; up to 3 N in flight, the others waiting for the GPU alone (default: 2)")
    parser.add_argument("--regrade", action="store_true", help="grade every submission again, finished or not")
    add_grading_options(parser)
    gradebook.add_options(parser)
    slurm.add_options(parser)
    return parser


def run(args: argparse.Namespace) -> int:
    from kernellab import batch
    from kernellab.grading.start import open_run

    if args.jobs < 1:
        raise InputError(f"--jobs {args.jobs}: expected at least 1")
    submissions = batch.find_submissions(args.submissions)
    out = args.out.resolve()
    out.mkdir(parents=True, exist_ok=True)
    seed = args.seed if args.seed is not None else batch.resumed_seed(out)
    # Slurm's time limit, too, ends an array task with SIGTERM.
    with stopping.stop_on_signals("; run the same command again to resume (finished grades are kept)"):
        if args.slurm or args.slurm_task or args.slurm_collect:
            args.seed = seed
            return slurm.run(args, submissions, out)
        grading = open_run(args.root, args.assignment, args.backend, seed, args.work, args.unsandboxed, args.cmake_args,
                           sandbox_kind=args.sandbox, deadline_s=args.deadline)
        class_files = batch.ClassFiles(args.submissions.resolve(), gradebook.options(args))
        grades = batch.grade_folder(grading, submissions, out, args.jobs, args.regrade, class_files)
    return 0 if batch.all_final(grades) else NOT_GRADED_EXIT_CODE
