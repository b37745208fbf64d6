"""The command line of the student handout: `kernellab test` alone.

The handout runs from its own files with nothing installed, so this entry point imports only
the standard library and the modules `test` needs; the instructor and grading verbs of
kernellab.cli import packages (numpy, rich) a student's machine may not have.
"""

import argparse
import sys
from collections.abc import Sequence
from pathlib import Path

from kernellab.commands import test
from kernellab.errors import InputError


def main(argv: Sequence[str] | None = None) -> int:
    """Exit codes as `kernellab test --help` lists them."""
    parser = argparse.ArgumentParser(prog="kernellab", description="Check your solution against the public tests.")
    parser.add_argument("--root", metavar="DIR", type=Path, required=True, help="the handout's folder")
    subparsers = parser.add_subparsers(dest="command", metavar="COMMAND", required=True)
    test.add_parser(subparsers).set_defaults(run=test.run)
    args = parser.parse_args(argv)
    args.root = args.root.resolve()
    try:
        return args.run(args)
    except InputError as error:
        print(f"{error}", file=sys.stderr)
        return 2


if __name__ == "__main__":
    sys.exit(main())
