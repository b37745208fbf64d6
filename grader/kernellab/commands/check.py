"""`kernellab check`: everything an instructor must know before releasing an assignment, as one
table (kernellab/release_check.py)."""

import argparse
from pathlib import Path

from kernellab import release_check
from kernellab.options import add_backend_option, add_cmake_arg_option, add_jobs_option

EXIT_CODES = f"""\
exit codes:
  0  every check passed: ready to release
  1  some check FAILED
  2  usage or input error: an unknown assignment, a manifest that does not load, cmake missing
  {release_check.NOT_RUN_HERE_EXIT_CODE}  no check failed, but some did not run here ("not run: no GPU"): run it again on a machine
     with an NVIDIA GPU, or with --backend cpu, before releasing
"""


def add_parser(subparsers: argparse._SubParsersAction) -> argparse.ArgumentParser:
    parser = subparsers.add_parser(
        "check",
        help="check an assignment before release: one table of every check",
        description="Check everything an assignment needs before release, one row per check: the\n"
        "manifest and what it names, the generated skeleton, the reference passing the public tests,\n"
        "the skeleton failing exactly the tasks with skeleton_fails, every known-wrong version\n"
        "rejected (the test-suite strength, which must be 100%), the points, and the handout:\n"
        "its contents listed and audited, unpacked into an empty folder, built and self-checked.\n"
        "Without a GPU (and without the CPU backend) the rows that run kernels say\n"
        "'not run: no GPU', never passed.",
        epilog=EXIT_CODES,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument("assignment", metavar="ID", help="the assignment")
    parser.add_argument(
        "--points",
        type=int,
        default=release_check.DEFAULT_TOTAL_POINTS,
        metavar="N",
        help=f"what the tasks' points must add up to (default: {release_check.DEFAULT_TOTAL_POINTS})",
    )
    parser.add_argument(
        "--build-dir",
        metavar="DIR",
        type=Path,
        help="work directory, reused so that only what changed is rebuilt (default: build/check-<ID>)",
    )
    add_backend_option(
        parser,
        "where kernels run: 'cuda' (a GPU), 'cpu' (kernellab's CPU backend) or 'auto' (the GPU when "
        "there is one, else the CPU backend when there is one; default)",
    )
    add_jobs_option(parser)
    add_cmake_arg_option(parser)
    return parser


def run(args: argparse.Namespace) -> int:
    rows = release_check.check_release(
        args.root, args.assignment, args.build_dir, args.backend, args.points, args.cmake_args, args.jobs
    )
    return release_check.exit_code([result for _, result in rows])
