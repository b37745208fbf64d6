"""`kernellab release`: write the student handout of an assignment as .tar.gz and .zip archives (kernellab/bundle.py)."""

import argparse
from pathlib import Path

from kernellab.bundle import archive_members, release
from kernellab.errors import display_path
from kernellab.manifest import load_assignment

EXIT_CODES = """\
exit codes:
  0  both archives written, and neither holds anything that must stay with the instructor
  2  usage or input error: a manifest or marker error, no handout text, or an archive that
     would hold the reference, hidden tests, known-wrong versions or secrets (then nothing is kept)
"""


def add_parser(subparsers: argparse._SubParsersAction) -> argparse.ArgumentParser:
    parser = subparsers.add_parser(
        "release",
        help="write the student handout as .tar.gz and .zip",
        description="Write <DIR>/kernellab-<ID>.tar.gz and .zip: the skeleton (generated from the\n"
        "reference by the markers), the public tests, the test harness, the CMake project, the CPU\n"
        "backend when there is one, the `kernellab test` self-check, and the task text as Markdown\n"
        "and HTML with a table of tasks and points from the manifest. The same tree always gives\n"
        "byte-identical archives. Run `kernellab check ID` first: it also builds the handout.",
        epilog=EXIT_CODES,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument("assignment", metavar="ID", help="the assignment")
    parser.add_argument("--out", metavar="DIR", type=Path, required=True, help="where the archives go")
    return parser


def run(args: argparse.Namespace) -> int:
    assignment = load_assignment(args.root, args.assignment)
    archives = release(assignment, args.out)
    print(f"{assignment.id}: {len(archive_members(archives[0]))} files")
    for archive in archives:
        print(f"  {display_path(archive)} ({archive.stat().st_size} bytes)")
    return 0
