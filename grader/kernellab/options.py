"""The command-line options, exit codes and output names that several verbs, or a verb and its
library, share (the verbs themselves never import each other). Standard library only: the
command line is parsed before any grading module (numpy, rich) is loaded."""

import argparse
from pathlib import Path

from kernellab.cpus import available_cpus
from kernellab.environment import BACKEND_CHOICES

# A submission that could not be graded (grade, batch): an autograder platform shows a failure.
NOT_GRADED_EXIT_CODE = 3
# What a batch's output folder holds besides the students' reports: the run's settings (to
# resume it with the same hidden cases) and the gradebook.
BATCH_FILE = "batch.json"
GRADEBOOK_FILE = "grades.csv"
# A quarter of the CPUs: a job's first build (-j<CPUs>) and, on the CPU backend, its test runs
# (KERNELLAB_CPU_WORKERS, every core) already spread over the cores, but much of a job is one
# process (the one test source a patch changes, the link, a GPU test run), so a few jobs at
# once keep the cores busy; many would make the first builds of all jobs compete for memory.
DEFAULT_WRONG_JOBS = max(1, available_cpus() // 4)
# How student code can be confined (kernellab/sandbox/bubblewrap.py, kernellab/sandbox/container.py).
SANDBOX_KINDS = ("bubblewrap", "container")


def add_cmake_arg_option(parser: argparse.ArgumentParser) -> None:
    """The --cmake-arg option of the verbs that configure a build."""
    parser.add_argument(
        "--cmake-arg",
        dest="cmake_args",
        metavar="ARG",
        action="append",
        default=[],
        help="pass ARG to the CMake configure step, e.g. --cmake-arg=-DCMAKE_CUDA_ARCHITECTURES=90 "
        "(write it with '=' since ARG starts with '-'; repeatable)",
    )


def add_jobs_option(parser: argparse.ArgumentParser) -> None:
    """The --jobs option of the verbs that check the known-wrong versions."""
    parser.add_argument(
        "--jobs",
        type=_job_count,
        default=DEFAULT_WRONG_JOBS,
        metavar="N",
        help="check N known-wrong versions at a time, each job in its own solution and build folder "
        "(default: a quarter of the CPUs, here %(default)s). Each build runs with -j<CPUs>, but after a "
        "job's first build a version recompiles only the test source its patch reaches, so N jobs "
        "compile about N files at a time",
    )


def _job_count(text: str) -> int:
    if not text.isdigit() or int(text) < 1:
        raise argparse.ArgumentTypeError(f"expected a whole number of at least 1, got {text!r}")
    return int(text)


def add_backend_option(parser: argparse.ArgumentParser, help: str) -> None:
    parser.add_argument("--backend", choices=BACKEND_CHOICES, default="auto", help=help)


def add_grading_options(parser: argparse.ArgumentParser) -> None:
    """The options `grade` and `batch` share."""
    parser.add_argument("--assignment", metavar="ID", help="the assignment (default: the only one there is)")
    add_backend_option(
        parser,
        "where kernels run: 'cuda' (a GPU), 'cpu' (kernellab's CPU backend, correctness only) or "
        "'auto' (the GPU when there is one; default)",
    )
    parser.add_argument(
        "--seed",
        type=int,
        metavar="N",
        help="the hidden cases' seed, to reproduce an earlier grading run (default: a fresh secret one)",
    )
    parser.add_argument(
        "--work",
        type=Path,
        metavar="DIR",
        help="the grader's private folder: reference build and records, job folders (default: build/grader)",
    )
    parser.add_argument(
        "--unsandboxed",
        action="store_true",
        help="build and run student code WITHOUT the bubblewrap sandbox, e.g. where user namespaces are "
        "off; the code can then read the reference and the grader's files: only for code you trust",
    )
    parser.add_argument(
        "--sandbox",
        choices=SANDBOX_KINDS,
        default="bubblewrap",
        help="how student code is confined: 'bubblewrap' (namespaces; default) or 'container' (inside an autograder "
        "platform's container, where bubblewrap cannot run: each step as an unprivileged uid of its own, "
        "no_new_privs, rlimits, the reference sealed by file permissions; needs root)",
    )
    parser.add_argument(
        "--deadline",
        type=float,
        metavar="SECONDS",
        help="finish within SECONDS (a platform's time limit, less a margin): each run's limit is cut to what is "
        "left, the stages that will not fit (confirming a failure alone, speed, sanitizers) are skipped and the "
        "reports say so, and `grade` writes the platform results after each stage",
    )
    add_cmake_arg_option(parser)
