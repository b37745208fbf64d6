"""`kernellab new`: scaffold an assignment that builds and passes its own checks at once (kernellab/scaffold.py)."""

import argparse

from kernellab.errors import display_path
from kernellab.scaffold import ASSIGNMENT_ID, scaffold


def add_parser(subparsers: argparse._SubParsersAction) -> argparse.ArgumentParser:
    parser = subparsers.add_parser(
        "new",
        help="scaffold a new assignment",
        description="Create assignments/<ID>/ (manifest with every field commented, CMakeLists.txt,\n"
        "a public test, known-wrong versions), reference/<ID>/ (with solution markers),\n"
        "handout/<ID>.md and the generated skeleton/<ID>/: a copy of the starter template, or of\n"
        "another assignment with --from, with its id replaced. It builds and passes\n"
        "`kernellab check <ID>` as it is; then replace the example with your tasks.",
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument("assignment", metavar="ID", help=f"the new assignment's id ({ASSIGNMENT_ID.pattern})")
    parser.add_argument(
        "--from",
        dest="source",
        metavar="SOURCE",
        help="copy this assignment of the repository instead of the starter template",
    )
    return parser


def run(args: argparse.Namespace) -> int:
    created = scaffold(args.root, args.assignment, args.source)
    for path in created:
        print(f"created {display_path(path)}")
    print(f"next: edit them, then `kernellab check {args.assignment}`")
    return 0
