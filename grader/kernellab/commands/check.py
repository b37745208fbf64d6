"""`kernellab check`: everything an instructor must know before releasing an assignment, as one table.

A pipeline of small checks, each one row with its verdict and detail. A check is a function of
the shared `Context` returning a `Verdict`; to add one, write the function and list it in CHECKS.
"""

import argparse
import json
import re
import shutil
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

from kernellab import cmake, environment
from kernellab.bundle import archive_members, audit, bundle_name, handout_path, self_check, unpack
from kernellab.cmake import NO_GPU
from kernellab.commands import wrong
from kernellab.commands.release import release
from kernellab.commands.strip import tree_changes
from kernellab.commands.test import FAILED, PASSED, TaskResult, test_tasks
from kernellab.errors import InputError, display_path
from kernellab.manifest import Assignment, Task, load_assignment
from kernellab.markers import strip_tree
from kernellab.patches import PatchError, apply_patch, parse_patch
from kernellab.table import format_columns, shortened

DEFAULT_TOTAL_POINTS = 100
DETAIL_WIDTH = 80
# A test executable may run this long in a check before it counts as timed out.
TEST_TIMEOUT_S = cmake.TEST_TIMEOUT_S

EXIT_CODES = """\
exit codes:
  0  every check passed: ready to release
  1  some check FAILED
  2  usage or input error: an unknown assignment, a manifest that does not load, cmake missing
  3  no check failed, but some did not run here ("not run: no GPU"): run it again on a machine
     with an NVIDIA GPU, or with --backend cpu, before releasing
"""


@dataclass(frozen=True)
class Verdict:
    verdict: str
    # The first line goes in the table; the rest below it, for any verdict but passed.
    detail: str = ""


@dataclass
class Context:
    """What the checks share: the assignment, where to build, and what the earlier checks made."""

    assignment: Assignment
    work: Path
    cmake_args: list[str]
    total_points: int
    # Whether test executables can run kernels here: a GPU, or the CPU backend.
    runs_kernels: bool
    backend: str
    # How many known-wrong versions are checked at a time.
    jobs: int = 1
    archives: list[Path] = field(default_factory=list)

    def handout_archives(self) -> list[Path]:
        """The released archives, written once for every check that needs them."""
        if not self.archives:
            self.archives = release(self.assignment, self.work / "release")
        return self.archives


@dataclass(frozen=True)
class Check:
    name: str
    run: Callable[[Context], Verdict]


def add_parser(subparsers: argparse._SubParsersAction) -> argparse.ArgumentParser:
    parser = subparsers.add_parser(
        "check",
        help="check an assignment before release: one table of every check",
        description="Check everything an assignment needs before release, one row per check: the\n"
        "manifest and what it names, the generated skeleton, the reference passing the public tests,\n"
        "the skeleton failing exactly the tasks with skeleton_fails, every known-wrong version\n"
        "rejected (the test-suite strength, which must be 100%), the points, and the handout:\n"
        "its contents listed and audited, unpacked into an empty folder, built and self-checked.\n"
        "Without a GPU (and without the CPU backend) the rows that run kernels say\n"
        "'not run: no GPU', never passed.",
        epilog=EXIT_CODES,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument("assignment", metavar="ID", help="the assignment")
    parser.add_argument(
        "--points",
        type=int,
        default=DEFAULT_TOTAL_POINTS,
        metavar="N",
        help=f"what the tasks' points must add up to (default: {DEFAULT_TOTAL_POINTS})",
    )
    parser.add_argument(
        "--build-dir",
        metavar="DIR",
        type=Path,
        help="work directory, reused so that only what changed is rebuilt (default: build/check-<ID>)",
    )
    parser.add_argument(
        "--backend",
        choices=environment.BACKENDS,
        default="auto",
        help="where kernels run: 'cuda' (a GPU), 'cpu' (kernellab's CPU backend) or 'auto' (the GPU when "
        "there is one, else the CPU backend when there is one; default)",
    )
    wrong.add_jobs_option(parser)
    cmake.add_cmake_arg_option(parser)
    return parser


def run(args: argparse.Namespace) -> int:
    assignment = load_assignment(args.root, args.assignment)
    work = (args.build_dir or args.root / "build" / f"check-{assignment.id}").resolve()
    runs_kernels, backend, backend_args = kernel_backend(args.backend, args.root)
    cmake_args = list(args.cmake_args) + backend_args
    context = Context(assignment, work, cmake_args, args.points, runs_kernels, backend, args.jobs)
    print(f"{assignment.id}: checking in {display_path(work)} ({backend})", flush=True)
    rows = [(check.name, run_check(check, context)) for check in CHECKS]
    print()
    print(format_report(rows))
    return exit_code([verdict for _, verdict in rows])


def kernel_backend(requested: str, root: Path) -> tuple[bool, str, list[str]]:
    """(whether kernels run here, what runs them, the CMake arguments that select it)."""
    if environment.choose_backend(requested, root) == "cpu":
        return True, "kernels run on the CPU backend", ["-DKERNELLAB_BACKEND=cpu"]
    if environment.gpus():
        return True, "kernels run on the GPU", []
    return False, "no GPU: kernels do not run here", []


def run_check(check: Check, context: Context) -> Verdict:
    print(f"{check.name} ...", flush=True)
    try:
        verdict = check.run(context)
    except InputError as error:
        verdict = Verdict(FAILED, str(error))
    print(f"{check.name}: {verdict.verdict}", flush=True)
    return verdict


def exit_code(verdicts: list[Verdict]) -> int:
    if any(verdict.verdict not in (PASSED, NO_GPU) for verdict in verdicts):
        return 1
    return 3 if any(verdict.verdict == NO_GPU for verdict in verdicts) else 0


def format_report(rows: list[tuple[str, Verdict]]) -> str:
    cells = [("check", "verdict", "detail")] + [
        (name, verdict.verdict, shortened(verdict.detail.split("\n", 1)[0], DETAIL_WIDTH)) for name, verdict in rows
    ]
    details = []
    for name, verdict in rows:
        if "\n" in verdict.detail or (verdict.verdict != PASSED and len(verdict.detail) > DETAIL_WIDTH):
            details += ["", f"{name}: {verdict.verdict}", *(f"    {line}" for line in verdict.detail.split("\n"))]
    return "\n".join(format_columns(cells) + details)


# The checks, in order.


def check_manifest(context: Context) -> Verdict:
    """Everything the manifest names exists: files, test sources, known-wrong folders, task text."""
    assignment = context.assignment
    assignment_dir = assignment.manifest_path.parent
    missing = []
    if not assignment.reference_dir.is_dir():
        missing.append(f"{assignment.reference}/ (build.reference)")
    for name in assignment.files.required + assignment.files.optional:
        if not (assignment.reference_dir / name).is_file():
            missing.append(f"{assignment.reference}/{name} (files)")
    cmake_lists = assignment_dir / "CMakeLists.txt"
    registered = cmake_lists.read_text(encoding="utf-8") if cmake_lists.is_file() else ""
    if not registered:
        missing.append(f"assignments/{assignment.id}/CMakeLists.txt")
    for task in assignment.tasks:
        missing += _missing_task_files(assignment, task, registered)
    if not handout_path(assignment).is_file():
        missing.append(f"handout/{assignment.id}.md (the task text)")
    # Raises InputError, which fails this row, for anything in wrong/ that is not a task's patch.
    wrong.find_wrong_versions(assignment, None)
    if missing:
        return Verdict(FAILED, "missing: " + "\n".join(missing))
    return Verdict(PASSED, f"every file, test and task id it names exists ({len(assignment.tasks)} task(s))")


def _missing_task_files(assignment: Assignment, task: Task, registered: str) -> list[str]:
    # A task is checked by a test executable, or (tasks with `answers`) by an answers file.
    answers = getattr(task, "answers", None)
    if answers is not None:
        present = (assignment.reference_dir / answers).is_file()
        return [] if present else [f"{assignment.reference}/{answers} (answers of task {task.id})"]
    source = assignment.manifest_path.parent / "tests" / f"test_{task.tests}.cu"
    missing = [] if source.is_file() else [f"assignments/{assignment.id}/tests/{source.name} (task {task.id})"]
    if not re.search(rf"(?<!\w){task.tests}(?!\w)", registered):
        missing.append(f"{task.tests} in kernellab_add_assignment_tests of assignments/{assignment.id}/CMakeLists.txt")
    return missing


def check_skeleton_up_to_date(context: Context) -> Verdict:
    assignment = context.assignment
    changes = tree_changes(strip_tree(assignment.reference_dir, assignment.task_ids), assignment.skeleton_dir)
    if changes:
        names = ", ".join(name for name, _, _ in changes)
        return Verdict(FAILED, f"differs from the markers in {names}: run `kernellab strip {assignment.id}`")
    return Verdict(PASSED, f"{assignment.skeleton}/ is what the markers give (strip --check)")


def check_reference(context: Context) -> Verdict:
    results = _test_solution(context, context.assignment.reference_dir)
    expected = {task.id: PASSED for task in tested_tasks(context.assignment)}
    return _compare_verdicts(results, expected, "passes every public test", context)


def check_skeleton_fails(context: Context) -> Verdict:
    results = _test_solution(context, context.assignment.skeleton_dir)
    expected = skeleton_verdicts(context.assignment)
    failing = [task for task, verdict in expected.items() if verdict == FAILED]
    return _compare_verdicts(results, expected, f"builds, and fails exactly {', '.join(failing) or 'no task'}", context)


def check_known_wrong(context: Context) -> Verdict:
    """Every known-wrong version is rejected by a test: the test-suite strength, which must be 100%."""
    assignment = context.assignment
    versions = wrong.find_wrong_versions(assignment, None)
    with_versions = {task.id for task, _ in versions}
    without = [task.id for task in tested_tasks(assignment) if task.id not in with_versions]
    if not context.runs_kernels:
        # The patches must still apply; building each one would say nothing more without a GPU.
        not_applying = []
        for _, patch_file in versions:
            wrong.prepare_solution(assignment.reference_dir, context.work / "wrong-apply")
            try:
                apply_patch(parse_patch(patch_file), context.work / "wrong-apply")
            except PatchError as error:
                not_applying.append(str(error))
        if not_applying:
            return Verdict(FAILED, "\n".join(not_applying))
        if without:
            return Verdict(FAILED, f"no known-wrong version for task(s) {', '.join(without)}")
        return Verdict(NO_GPU, f"{len(versions)} known-wrong versions apply; none was run")
    rows = wrong.check_versions(assignment, versions, context.work / "wrong", context.cmake_args, context.jobs)
    rejected = sum(row.verdict == wrong.REJECTED for row in rows)
    strength = f"test-suite strength {rejected}/{len(rows)}"
    table = wrong.format_table(rows) + wrong.format_problem_details(rows).rstrip("\n")
    if without:
        return Verdict(FAILED, f"{strength}; no known-wrong version for task(s) {', '.join(without)}\n{table}")
    if rejected == len(rows):
        return Verdict(PASSED, f"{strength} (100%), {context.backend}\n{table}")
    if all(row.verdict in (wrong.REJECTED, NO_GPU) for row in rows):
        return Verdict(NO_GPU, f"{strength}\n{table}")
    return Verdict(FAILED, f"{strength}: must be 100% to release\n{table}")


def check_points(context: Context) -> Verdict:
    tasks = context.assignment.tasks
    total = sum(task.points for task in tasks)
    terms = " + ".join(str(task.points) for task in tasks)
    if total != context.total_points:
        return Verdict(FAILED, f"{terms} = {total}, not {context.total_points} (declare another total with --points)")
    return Verdict(PASSED, f"{terms} = {total}")


def check_handout_contents(context: Context) -> Verdict:
    """The archives hold no reference, hidden tests, known-wrong versions or secrets."""
    problems = []
    for archive in context.handout_archives():
        members = archive_members(archive)
        problems += [f"{archive.name}: {problem}" for problem in audit(members, context.assignment)]
    if problems:
        return Verdict(FAILED, "\n".join(problems))
    summary = f"{len(members)} files, none of reference, hidden tests, known-wrong versions or secrets"
    return Verdict(PASSED, "\n".join([summary, *_listing(members)]))


def _listing(members: dict[str, bytes]) -> list[str]:
    """The archive's files below its top folder: a file there by name, the rest counted by folder
    (two levels deep)."""
    counts = Counter()
    for name in members:
        folders, file = name.split("/")[1:-1], name.split("/")[-1]
        counts["/".join(folders[:2]) + "/" if folders else file] += 1
    return [f"{key} ({count} files)" if key.endswith("/") else key for key, count in sorted(counts.items())]


def check_handout_builds(context: Context) -> Verdict:
    """The handout, unpacked into an empty folder, builds and its self-check fails exactly the
    tasks with skeleton_fails (or, with no GPU, builds and says so)."""
    assignment = context.assignment
    unpacked = context.work / "handout"
    shutil.rmtree(unpacked, ignore_errors=True)
    unpacked.mkdir(parents=True)
    unpack(context.handout_archives()[0], unpacked)
    bundle = unpacked / bundle_name(assignment)
    completed = self_check(bundle, [f"--cmake-arg={argument}" for argument in context.cmake_args])
    results_file = bundle / "build" / f"test-{assignment.id}" / "results.json"
    if not results_file.is_file():
        tail = (completed.stdout + completed.stderr).strip().splitlines()[-10:]
        return Verdict(FAILED, "\n".join(["`./kernellab test` in the unpacked handout gave no verdicts:", *tail]))
    results = [TaskResult(**result) for result in json.loads(results_file.read_text())]
    expected = skeleton_verdicts(assignment)
    return _compare_verdicts(results, expected, "unpacked into an empty folder, built, self-check as expected", context)


CHECKS = (
    Check("manifest", check_manifest),
    Check("skeleton up to date", check_skeleton_up_to_date),
    Check("reference passes", check_reference),
    Check("skeleton fails as declared", check_skeleton_fails),
    Check("known-wrong rejected", check_known_wrong),
    Check("points", check_points),
    Check("handout contents", check_handout_contents),
    Check("handout builds", check_handout_builds),
)


def tested_tasks(assignment: Assignment) -> list[Task]:
    """The tasks that a test executable checks; a task with `answers` is scored from a file instead."""
    return [task for task in assignment.tasks if getattr(task, "tests", None) is not None]


def skeleton_verdicts(assignment: Assignment) -> dict[str, str]:
    """The verdict each tested task must get on the skeleton."""
    return {task.id: FAILED if task.skeleton_fails else PASSED for task in tested_tasks(assignment)}


def _test_solution(context: Context, solution: Path) -> list[TaskResult]:
    """Build and run every task's tests against `solution`, in one build folder reconfigured each time."""
    build_dir = context.work / "build"
    assignment = context.assignment
    log = context.work / "logs" / f"configure-{solution.name}.log"
    cmake.configure(assignment.root, build_dir, assignment.id, solution, log, context.cmake_args)
    return test_tasks(assignment, tested_tasks(assignment), build_dir, TEST_TIMEOUT_S)


def _compare_verdicts(results: list[TaskResult], expected: dict[str, str], success: str, context: Context) -> Verdict:
    """passed when every task got its expected verdict; not run when only the missing GPU kept some
    from one; FAILED, naming each task that got another, otherwise (a build failure always is)."""
    wrong_verdicts = [
        result for result in results if result.verdict != expected[result.id] and result.verdict != NO_GPU
    ]
    if wrong_verdicts:
        lines = [
            f"{result.id}: {result.verdict}, expected {expected[result.id]}"
            + (f" ({result.detail.splitlines()[0]})" if result.detail else "")
            for result in wrong_verdicts
        ]
        return Verdict(FAILED, "\n".join(lines))
    not_run = [result.id for result in results if result.verdict == NO_GPU]
    if not_run:
        return Verdict(NO_GPU, f"builds; {len(not_run)} of {len(results)} tasks need a GPU to run\n{', '.join(not_run)}")
    return Verdict(PASSED, f"{success} ({context.backend})")
