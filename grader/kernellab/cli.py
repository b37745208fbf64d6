"""The `kernellab` command line: one subcommand per verb, each in kernellab/commands/<verb>.py."""

import argparse
import os
import sys
from collections.abc import Sequence
from pathlib import Path

from kernellab import __version__
from kernellab.commands import batch, calibrate, check, export, grade, new, release, serve, strip, test, wrong
from kernellab.errors import InputError

ROOT_ENVIRONMENT_VARIABLE = "KERNELLAB_ROOT"
COMMANDS = (grade, batch, test, strip, wrong, new, check, calibrate, release, export, serve)


def main(argv: Sequence[str] | None = None) -> int:
    """Exit codes: 0 success, 1 the check found problems, 2 usage or input errors."""
    parser = build_parser()
    args = parser.parse_args(argv)
    if args.command is None:
        parser.print_help(sys.stderr)
        return 2
    try:
        args.root = find_root(args.root, Path.cwd())
        return args.run(args)
    except InputError as error:
        print(f"{error}", file=sys.stderr)
        return 2


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="kernellab", description="kernellab: check a solution against an assignment's tests, generate skeletons, prove the tests reject known-wrong versions.")
    parser.add_argument("--version", action="version", version=f"kernellab {__version__}")
    _add_root_option(parser, None)
    subparsers = parser.add_subparsers(dest="command", metavar="COMMAND")
    for command in COMMANDS:
        subparser = command.add_parser(subparsers)
        # After the verb too; SUPPRESS: a verb without it keeps the --root given before the verb.
        _add_root_option(subparser, argparse.SUPPRESS)
        subparser.set_defaults(run=command.run)
    return parser


def _add_root_option(parser: argparse.ArgumentParser, default: object) -> None:
    parser.add_argument(
        "--root",
        metavar="DIR",
        default=default,
        help=f"the repository root (default: ${ROOT_ENVIRONMENT_VARIABLE}, else the first directory "
        "above the working directory holding assignments/ and CMakeLists.txt)",
    )


def find_root(explicit: str | None, start: Path) -> Path:
    """The repository root: `explicit`, else $KERNELLAB_ROOT, else the nearest marked ancestor of `start`."""
    given = explicit or os.environ.get(ROOT_ENVIRONMENT_VARIABLE)
    if given:
        root = Path(given).resolve()
        if not (root / "assignments").is_dir():
            raise InputError(f"{given} is not a kernellab repository root: it has no assignments/ directory")
        return root
    start = start.resolve()
    for directory in (start, *start.parents):
        if (directory / "assignments").is_dir() and (directory / "CMakeLists.txt").is_file():
            return directory
    raise InputError(
        f"no directory holding assignments/ and CMakeLists.txt above {start}: kernellab works in a checkout of "
        f"kernellab, or a course repository copied from one; pass --root DIR or set {ROOT_ENVIRONMENT_VARIABLE}"
    )
