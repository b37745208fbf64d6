"""`kernellab serve`: the grading service of a course GPU host, for `kernellab grade --remote`
on platforms without GPUs (kernellab/serve.py)."""

import argparse
from pathlib import Path

from kernellab import stopping
from kernellab.cpus import available_cpus
from kernellab.errors import InputError
from kernellab.manifest import list_assignments, load_assignment
from kernellab.options import add_grading_options

DEFAULT_ADDRESS = "127.0.0.1:8750"
# A GPU grade of pbb takes 2 to 4 minutes in a busy batch (docs/performance.md): a grade past this
# is a submission holding a grading slot, which the others wait for.
DEFAULT_GRADE_LIMIT_S = 900.0


def add_parser(subparsers: argparse._SubParsersAction) -> argparse.ArgumentParser:
    parser = subparsers.add_parser(
        "serve",
        help="grade submissions sent over HTTP by `kernellab grade --remote` (a course GPU host)",
        description="Serve POST /grade on ADDRESS: each request (a token, an assignment id and the\n"
        "submission's files) is graded here, several at once (--parallel), in the sandbox, on the GPU, and\n"
        "answered with its grade.json. Give the token to the platform's run script\n"
        "(`kernellab export ... --remote URL --token-file FILE`).",
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument("--listen", default=DEFAULT_ADDRESS, metavar="HOST:PORT",
                        help=f"where to listen (default: {DEFAULT_ADDRESS}, the loopback interface only)")
    parser.add_argument("--token-file", type=Path, required=True, metavar="FILE",
                        help="the token requests must bear (first line of FILE; keep it readable by you alone)")
    parser.add_argument("--queue", type=int, default=16, metavar="N",
                        help="submissions waiting at most; more are answered 503, so the platform falls back at once (default: 16)")
    parser.add_argument("--parallel", type=int, default=max(1, available_cpus() // 4), metavar="N",
                        help="submissions graded at once, so that a slow one holds up no other (default: a quarter "
                             f"of the CPUs, here {max(1, available_cpus() // 4)})")
    parser.add_argument("--grade-limit", type=float, default=DEFAULT_GRADE_LIMIT_S, metavar="SECONDS",
                        help="the longest one grade may take, whatever deadline its request gives (default: "
                             f"{DEFAULT_GRADE_LIMIT_S:g})")
    parser.add_argument("--tls-cert", type=Path, metavar="FILE", help="serve HTTPS with this certificate chain (PEM)")
    parser.add_argument("--tls-key", type=Path, metavar="FILE", help="the certificate's private key (PEM)")
    add_grading_options(parser)
    return parser


def run(args: argparse.Namespace) -> int:
    from kernellab.grading.start import open_run
    from kernellab.remote import read_token
    from kernellab.serve import GradingService, make_server, parse_address

    try:
        address = parse_address(args.listen)
    except ValueError as error:
        raise InputError(f"--listen {error}") from None
    if (args.tls_cert is None) != (args.tls_key is None):
        raise InputError("--tls-cert and --tls-key go together")
    ids = [args.assignment] if args.assignment else list_assignments(args.root)
    assignments = {assignment_id: load_assignment(args.root, assignment_id) for assignment_id in ids}
    if not assignments:
        raise InputError(f"no assignments to serve under {args.root}/assignments")

    def make_run(assignment, deadline_s):
        return open_run(args.root, assignment.id, args.backend, args.seed, args.work, args.unsandboxed, args.cmake_args,
                        sandbox_kind=args.sandbox, deadline_s=deadline_s)

    make_run(next(iter(assignments.values())), None)  # fails now, not at the first request, where the sandbox cannot work
    if args.parallel < 1 or args.grade_limit <= 0:
        raise InputError("--parallel and --grade-limit must be positive")
    service = GradingService(assignments, make_run, read_token(args.token_file), args.queue, args.parallel, args.grade_limit)
    server = make_server(address, service, (args.tls_cert, args.tls_key) if args.tls_cert else None)
    scheme = "https" if args.tls_cert else "http"
    host, port = server.server_address[:2]
    print(f"grading {', '.join(assignments)} at {scheme}://{host}:{port}/grade (Ctrl-C stops)", flush=True)
    # Ctrl-C or SIGTERM ends the grade in progress and every process it started, and the service
    # (exit status 130 or 143); the platform's script then grades on its CPU backend.
    with stopping.stop_on_signals(), server:
        server.serve_forever()
    return 0
