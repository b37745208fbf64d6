"""`kernellab wrong`: prove that the tests reject every known-wrong version of the solution
(kernellab/known_wrong.py)."""

import argparse
from pathlib import Path

from kernellab import known_wrong
from kernellab.options import add_cmake_arg_option, add_jobs_option


def add_parser(subparsers: argparse._SubParsersAction) -> argparse.ArgumentParser:
    parser = subparsers.add_parser(
        "wrong",
        help="check that the tests reject every known-wrong version",
        description="Apply each assignments/<ID>/wrong/<task>/<name>.patch to a copy of the reference, "
        "build that task's test executable against it and check that the tests fail. They stop at the "
        "first failure (but for tasks with warp_synchronous = \"warn\"): the test that caught the version.",
    )
    parser.add_argument("assignment", metavar="ID", help="the assignment")
    parser.add_argument("--task", metavar="TASK", help="only the known-wrong versions of this task")
    parser.add_argument(
        "--build-dir", metavar="DIR", type=Path, help="work directory to use and keep (default: a temporary one)"
    )
    parser.add_argument("--keep", action="store_true", help="keep the temporary work directory")
    add_jobs_option(parser)
    add_cmake_arg_option(parser)
    return parser


def run(args: argparse.Namespace) -> int:
    rows = known_wrong.check_assignment(
        args.root, args.assignment, args.task, args.build_dir, args.keep, args.cmake_args, args.jobs
    )
    return 1 if any(row.verdict in known_wrong.PROBLEMS for row in rows) else 0
