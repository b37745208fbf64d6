"""`kernellab strip`: generate skeleton/<id> from the solution markers in reference/<id> (kernellab/skeleton.py)."""

import argparse

from kernellab.skeleton import regenerate


def add_parser(subparsers: argparse._SubParsersAction) -> argparse.ArgumentParser:
    parser = subparsers.add_parser(
        "strip",
        help="regenerate skeleton/<ID> from reference/<ID>",
        description="Regenerate each assignment's skeleton directory from its reference directory: "
        "solution regions are dropped and their stubs uncommented; other files are copied.",
    )
    parser.add_argument("assignments", nargs="*", metavar="ID", help="assignments to process (default: all)")
    parser.add_argument(
        "--check",
        action="store_true",
        help="write nothing; exit 1 and show the differences when a skeleton is out of date",
    )
    return parser


def run(args: argparse.Namespace) -> int:
    return 1 if regenerate(args.root, args.assignments, args.check) else 0
