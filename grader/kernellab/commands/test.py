"""`kernellab test`: build an assignment's public tests against a solution folder and report per task
(kernellab/public_tests.py)."""

import argparse
from pathlib import Path

from kernellab import public_tests
from kernellab.grading.speed.calibration import CALIBRATION_FILE
from kernellab.manifest import DEFAULT_TIMEOUT_S
from kernellab.options import add_cmake_arg_option

EXIT_CODES = """\
exit codes:
  0  every task whose tests ran passed (tasks not run for lack of a GPU, or left to
     one, do not count)
  1  some task FAILED, timed out, crashed or did not build
  2  usage or setup error: a bad solution folder or option, a manifest error,
     cmake missing or the CMake configure step failing (its errors are shown)
"""


def add_parser(subparsers: argparse._SubParsersAction) -> argparse.ArgumentParser:
    parser = subparsers.add_parser(
        "test",
        help="build the public tests against a solution folder and report per task",
        description="Build an assignment's test executables against a solution folder, run them and\n"
        "give each task a verdict: passed, FAILED, not run: no GPU, not run: needs a GPU to\n"
        "confirm (warp-synchronous code on the CPU backend), timed out, crashed or build failed.\n"
        "On a GPU it then times the speed cases of the tasks that passed and, where the assignment's\n"
        f"speed/{CALIBRATION_FILE} holds the instructor's calibration for this GPU model, previews\n"
        "the speed points they would earn.\n"
        f"The verdicts, and the preview, are also written to <build dir>/{public_tests.RESULTS_FILE}.",
        epilog=EXIT_CODES,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument(
        "solution",
        nargs="?",
        type=Path,
        metavar="SOLUTION",
        help="the folder holding the solution's files (default: the assignment's skeleton folder)",
    )
    parser.add_argument("--assignment", metavar="ID", help="the assignment (default: the only one there is)")
    parser.add_argument(
        "--build-dir",
        metavar="DIR",
        type=Path,
        help="build directory, reused when it exists so that only what changed is rebuilt "
        "(default: build/test-<ID> in the repository)",
    )
    parser.add_argument(
        "--tests",
        nargs="+",
        action="extend",
        metavar="NAME",
        help="only these test executables (a task's `tests` name from the manifest, or its id)",
    )
    parser.add_argument(
        "--timeout",
        type=float,
        default=DEFAULT_TIMEOUT_S,
        metavar="SECONDS",
        help=f"a test executable running longer counts as timed out (default: {DEFAULT_TIMEOUT_S})",
    )
    add_cmake_arg_option(parser)
    return parser


def run(args: argparse.Namespace) -> int:
    results = public_tests.test_solution(
        args.root, args.assignment, args.solution, args.tests, args.build_dir, args.timeout, args.cmake_args
    )
    return 0 if public_tests.all_fine(results) else 1
