"""`kernellab export`: what an instructor uploads to a course platform to grade an assignment
there: Gradescope's autograder zip (kernellab/export_gradescope.py) or a PrairieLearn question
(kernellab/export_prairielearn.py)."""

import argparse
from pathlib import Path

from kernellab.errors import InputError, display_path
from kernellab.manifest import load_assignment

PLATFORMS = ("gradescope", "prairielearn")


def add_parser(subparsers: argparse._SubParsersAction) -> argparse.ArgumentParser:
    parser = subparsers.add_parser(
        "export",
        help="write Gradescope's autograder zip or a PrairieLearn question for an assignment",
        description="gradescope: write OUT/kernellab-ID-gradescope.zip (setup.sh, run_autograder and the\n"
        "grader with the reference) to upload as the assignment's autograder.\n"
        "prairielearn: write the question questions/ID, the grader under serverFilesCourse/kernellab and\n"
        "the grading image's Dockerfile (graders/kernellab) into the course folder.\n"
        "Platform containers have no GPU: they grade on the CPU backend, or with --remote on a GPU\n"
        "host running `kernellab serve` (speed points), falling back to the CPU backend.",
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument("platform", choices=PLATFORMS, help="the course platform")
    parser.add_argument("assignment", metavar="ID", help="the assignment")
    parser.add_argument("--out", type=Path, metavar="DIR", help="gradescope: where the zip goes")
    parser.add_argument("--course", type=Path, metavar="DIR", help="prairielearn: the course folder")
    parser.add_argument("--image", metavar="NAME", help="prairielearn: the grading image's Docker Hub name (you build and push it)")
    parser.add_argument(
        "--timeout",
        type=int,
        metavar="SECONDS",
        help="the platform's time limit for one grade, as set there (default: Gradescope's 600, PrairieLearn's "
        "maximum 600); grading gets it less a margin as its --deadline",
    )
    parser.add_argument("--remote", metavar="URL", help="grade on the GPU host at URL (`kernellab serve`)")
    parser.add_argument("--token-file", type=Path, metavar="FILE", help="with --remote: the service's token, copied into the export")
    return parser


def run(args: argparse.Namespace) -> int:
    from kernellab import coverage, export_gradescope, export_prairielearn
    from kernellab.backend import Backend
    from kernellab.deadline import cut_limits_warning
    from kernellab.remote import read_token

    assignment = load_assignment(args.root, args.assignment)
    token = read_token(args.token_file) if args.remote else None
    exporter = export_gradescope if args.platform == "gradescope" else export_prairielearn
    timeout_s = args.timeout or (export_gradescope.DEFAULT_TIMEOUT_S if args.platform == "gradescope"
                                 else export_prairielearn.MAX_TIMEOUT_S)
    try:
        if args.platform == "gradescope":
            if args.out is None:
                raise InputError("export gradescope needs --out DIR")
            written = [export_gradescope.export(assignment, args.out.resolve(), timeout_s, args.remote, token)]
        else:
            if args.course is None or args.image is None:
                raise InputError("export prairielearn needs --course DIR and --image NAME")
            written = export_prairielearn.export(assignment, args.course.resolve(), args.image, timeout_s, args.remote, token)
    except ValueError as error:
        raise InputError(f"--timeout: {error}") from None
    for path in written:
        print(f"wrote {display_path(path)}")
    if args.remote:
        print("it holds the service's token: keep it out of what students can see")
    # What full marks are there, and whether a hang can be told from the grader's lack of time.
    print(coverage.platform_note(assignment, args.platform, bool(args.remote)))
    limits = assignment.grading
    if warning := cut_limits_warning(Backend.CPU.timeout_s(limits.timeout_s, limits.cpu_timeout_s), timeout_s - exporter.MARGIN_S):
        print(warning)
    return 0
