"""`kernellab calibrate`: record the reference's speed on this GPU model for `kernellab test`'s
preview of speed points (kernellab/calibrate.py)."""

import argparse
import sys
from pathlib import Path

from kernellab import calibrate
from kernellab.grading.speed import timing
from kernellab.grading.speed.calibration import CALIBRATION_FILE
from kernellab.options import add_cmake_arg_option

EXIT_CODES = """\
exit codes:
  0  the GPU's entry was written
  1  the reference's speed program did not build, or its speed run failed
  2  usage or setup error: no GPU, the CPU backend, an assignment without [[speed]] cases, a
     malformed calibration file, a manifest error, cmake missing or the CMake configure step failing
"""


def add_parser(subparsers: argparse._SubParsersAction) -> argparse.ArgumentParser:
    parser = subparsers.add_parser(
        "calibrate",
        help="record the reference's speed on this GPU model, for `kernellab test`'s preview of speed points",
        description="Build the reference's speed program and time, on this GPU, every [[speed]] case at\n"
        "every size with the copy kernel, as a grade times the reference. The reference's time over\n"
        f"the copy kernel's is written to assignments/<ID>/speed/{CALIBRATION_FILE}, under this GPU's\n"
        "model (other models' entries are kept), with the date, driver, CUDA and kernellab commit.\n"
        "The file holds times, no code, and ships in the handout: `kernellab test` on a GPU of a\n"
        "calibrated model previews the speed points each case would earn.",
        epilog=EXIT_CODES,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument("assignment", metavar="ID", help="the assignment")
    parser.add_argument(
        "--build-dir",
        metavar="DIR",
        type=Path,
        help="build directory, reused so that only what changed is rebuilt (default: build/calibrate-<ID>)",
    )
    add_cmake_arg_option(parser)
    return parser


def run(args: argparse.Namespace) -> int:
    try:
        calibrate.calibrate(args.root, args.assignment, args.build_dir, args.cmake_args)
    except timing.SpeedError as error:
        print(f"the reference's speed could not be measured: {error}", file=sys.stderr)
        return 1
    return 0
