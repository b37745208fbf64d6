"""Everything an instructor must know before releasing an assignment (`kernellab check`), as one table.

A pipeline of small checks, each one row with its verdict and detail. A check is a function of
the shared `Context` returning a `CheckResult`; to add one, write the function and list it in CHECKS.
"""

import shutil
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

from kernellab import cmake, environment, known_wrong
from kernellab.bundle import archive_members, audit, bundle_name, handout_path, release, self_check, unpack
from kernellab.errors import InputError, display_path
from kernellab.grading.speed.calibration import calibration_path, read_calibrations, stale_entries
from kernellab.manifest import Assignment, Task, load_assignment
from kernellab.patches import PatchError, apply_patch, parse_patch
from kernellab.public_tests import RESULTS_FILE, TaskResult, read_results, test_tasks
from kernellab.skeleton import changes_to_skeleton
from kernellab.table import format_columns, shortened
from kernellab.verdict import Verdict

DEFAULT_TOTAL_POINTS = 100
DETAIL_WIDTH = 80
# Exit status when no check failed but some did not run here ("not run: no GPU").
NOT_RUN_HERE_EXIT_CODE = 3


@dataclass(frozen=True)
class CheckResult:
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
    perform: Callable[[Context], CheckResult]


def check_release(
    root: Path, assignment_id: str, build_dir: Path | None, requested_backend: str, total_points: int, cmake_args: list[str], jobs: int
) -> list[tuple[str, CheckResult]]:
    """`kernellab check`: run every check in order, each row printed as it ends, then the table."""
    assignment = load_assignment(root, assignment_id)
    work = (build_dir or root / "build" / f"check-{assignment.id}").resolve()
    runs_kernels, backend, backend_args = kernel_backend(requested_backend, root)
    context = Context(assignment, work, list(cmake_args) + backend_args, total_points, runs_kernels, backend, jobs)
    print(f"{assignment.id}: checking in {display_path(work)} ({backend})", flush=True)
    rows = [(check.name, run_check(check, context)) for check in CHECKS]
    print()
    print(format_report(rows))
    return rows


def kernel_backend(requested: str, root: Path) -> tuple[bool, str, list[str]]:
    """(whether kernels run here, what runs them, the CMake arguments that select it)."""
    backend = environment.choose_backend(requested, root)
    if not backend.on_gpu:
        return True, "kernels run on the CPU backend", list(backend.cmake_args)
    if environment.gpus():
        return True, "kernels run on the GPU", []
    return False, "no GPU: kernels do not run here", []


def run_check(check: Check, context: Context) -> CheckResult:
    print(f"{check.name} ...", flush=True)
    try:
        verdict = check.perform(context)
    except InputError as error:
        verdict = CheckResult(Verdict.FAILED, str(error))
    print(f"{check.name}: {verdict.verdict}", flush=True)
    return verdict


def exit_code(verdicts: list[CheckResult]) -> int:
    if any(verdict.verdict not in (Verdict.PASSED, Verdict.NO_GPU) for verdict in verdicts):
        return 1
    return NOT_RUN_HERE_EXIT_CODE if any(verdict.verdict == Verdict.NO_GPU for verdict in verdicts) else 0


def format_report(rows: list[tuple[str, CheckResult]]) -> str:
    cells = [("check", "verdict", "detail")] + [
        (name, verdict.verdict, shortened(verdict.detail.split("\n", 1)[0], DETAIL_WIDTH)) for name, verdict in rows
    ]
    details = []
    for name, verdict in rows:
        if "\n" in verdict.detail or (verdict.verdict != Verdict.PASSED and len(verdict.detail) > DETAIL_WIDTH):
            details += ["", f"{name}: {verdict.verdict}", *(f"    {line}" for line in verdict.detail.split("\n"))]
    return "\n".join(format_columns(cells) + details)


# The checks, in order.


def check_manifest(context: Context) -> CheckResult:
    """Everything the manifest names exists: files, test sources, known-wrong folders, task text."""
    assignment = context.assignment
    assignment_dir = assignment.manifest_path.parent
    missing = []
    if not assignment.reference_dir.is_dir():
        missing.append(f"{assignment.reference}/ (build.reference)")
    for name in assignment.files.required + assignment.files.optional:
        if not (assignment.reference_dir / name).is_file():
            missing.append(f"{assignment.reference}/{name} (files)")
    if not (assignment_dir / "CMakeLists.txt").is_file():
        missing.append(f"assignments/{assignment.id}/CMakeLists.txt")
    for task in assignment.tasks:
        missing += _missing_task_files(assignment, task)
    if not handout_path(assignment).is_file():
        missing.append(f"handout/{assignment.id}.md (the task text)")
    # Raises InputError, which fails this row, for anything in wrong/ that is not a task's patch.
    known_wrong.find_wrong_versions(assignment, None)
    if missing:
        return CheckResult(Verdict.FAILED, "missing: " + "\n".join(missing))
    return CheckResult(Verdict.PASSED, f"every file, test and task id it names exists ({len(assignment.tasks)} task(s))")


def _missing_task_files(assignment: Assignment, task: Task) -> list[str]:
    # A task is checked by a test executable, or (tasks with `answers`) by an answers file.
    if task.answers is not None:
        present = (assignment.reference_dir / task.answers).is_file()
        return [] if present else [f"{assignment.reference}/{task.answers} (answers of task {task.id})"]
    source = assignment.tests_dir / f"test_{task.tests}.cu"
    return [] if source.is_file() else [f"{source.relative_to(assignment.root).as_posix()} (task {task.id})"]


def check_skeleton_up_to_date(context: Context) -> CheckResult:
    assignment = context.assignment
    changes = changes_to_skeleton(assignment)
    if changes:
        names = ", ".join(name for name, _, _ in changes)
        return CheckResult(Verdict.FAILED, f"differs from the markers in {names}: run `kernellab strip {assignment.id}`")
    return CheckResult(Verdict.PASSED, f"{assignment.skeleton}/ is what the markers give (strip --check)")


def check_reference(context: Context) -> CheckResult:
    results = _test_solution(context, context.assignment.reference_dir)
    expected = {task.id: Verdict.PASSED for task in context.assignment.tested_tasks}
    return _compare_verdicts(results, expected, "passes every public test", context)


def check_skeleton_fails(context: Context) -> CheckResult:
    results = _test_solution(context, context.assignment.skeleton_dir)
    expected = skeleton_verdicts(context.assignment)
    failing = [task for task, verdict in expected.items() if verdict == Verdict.FAILED]
    return _compare_verdicts(results, expected, f"builds, and fails exactly {', '.join(failing) or 'no task'}", context)


def check_known_wrong(context: Context) -> CheckResult:
    """Every known-wrong version is rejected by a test: the test-suite strength, which must be 100%."""
    assignment = context.assignment
    versions = known_wrong.find_wrong_versions(assignment, None)
    with_versions = {task.id for task, _ in versions}
    without = [task.id for task in assignment.tested_tasks if task.id not in with_versions]
    if not context.runs_kernels:
        # The patches must still apply; building each one would say nothing more without a GPU.
        not_applying = []
        for _, patch_file in versions:
            known_wrong.prepare_solution(assignment.reference_dir, context.work / "wrong-apply")
            try:
                apply_patch(parse_patch(patch_file), context.work / "wrong-apply")
            except PatchError as error:
                not_applying.append(str(error))
        if not_applying:
            return CheckResult(Verdict.FAILED, "\n".join(not_applying))
        if without:
            return CheckResult(Verdict.FAILED, f"no known-wrong version for task(s) {', '.join(without)}")
        return CheckResult(Verdict.NO_GPU, f"{len(versions)} known-wrong versions apply; none was run")
    rows = known_wrong.check_versions(assignment, versions, context.work / "wrong", context.cmake_args, context.jobs)
    rejected = sum(row.verdict == Verdict.REJECTED for row in rows)
    strength = f"test-suite strength {rejected}/{len(rows)}"
    table = known_wrong.format_table(rows) + known_wrong.format_problem_details(rows).rstrip("\n")
    if without:
        return CheckResult(Verdict.FAILED, f"{strength}; no known-wrong version for task(s) {', '.join(without)}\n{table}")
    if rejected == len(rows):
        return CheckResult(Verdict.PASSED, f"{strength} (100%), {context.backend}\n{table}")
    if all(row.verdict in (Verdict.REJECTED, Verdict.NO_GPU) for row in rows):
        return CheckResult(Verdict.NO_GPU, f"{strength}\n{table}")
    return CheckResult(Verdict.FAILED, f"{strength}: must be 100% to release\n{table}")


def check_points(context: Context) -> CheckResult:
    tasks = context.assignment.tasks
    total = sum(task.points for task in tasks)
    terms = " + ".join(str(task.points) for task in tasks)
    if total != context.total_points:
        return CheckResult(Verdict.FAILED, f"{terms} = {total}, not {context.total_points} (declare another total with --points)")
    return CheckResult(Verdict.PASSED, f"{terms} = {total}")


def check_speed_calibration(context: Context) -> CheckResult:
    """The calibration of the reference's speed, which the students' preview of speed points reads,
    still names every [[speed]] case and size and no other (calibration.py)."""
    assignment = context.assignment
    if not assignment.speed:
        return CheckResult(Verdict.PASSED, "no speed cases")
    path = calibration_path(assignment)
    if not path.is_file():
        return CheckResult(Verdict.PASSED, f"none ({display_path(path)}): students see no preview of speed points; "
                                           f"`kernellab calibrate {assignment.id}` on a GPU writes it")
    calibrations = read_calibrations(path)
    stale = stale_entries(assignment, calibrations)
    if stale:
        return CheckResult(Verdict.FAILED, "\n".join([f"{display_path(path)} is out of date: run `kernellab calibrate "
                                                       f"{assignment.id}` again on each GPU model", *stale]))
    return CheckResult(Verdict.PASSED, f"{', '.join(sorted(calibrations))}: every speed case and size")


def check_handout_contents(context: Context) -> CheckResult:
    """The archives hold no reference, hidden tests, known-wrong versions or secrets."""
    problems = []
    for archive in context.handout_archives():
        members = archive_members(archive)
        problems += [f"{archive.name}: {problem}" for problem in audit(members, context.assignment)]
    if problems:
        return CheckResult(Verdict.FAILED, "\n".join(problems))
    summary = f"{len(members)} files, none of reference, hidden tests, known-wrong versions or secrets"
    return CheckResult(Verdict.PASSED, "\n".join([summary, *_listing(members)]))


def _listing(members: dict[str, bytes]) -> list[str]:
    """The archive's files below its top folder: a file there by name, the rest counted by folder
    (two levels deep)."""
    counts = Counter()
    for name in members:
        folders, file = name.split("/")[1:-1], name.split("/")[-1]
        counts["/".join(folders[:2]) + "/" if folders else file] += 1
    return [f"{key} ({count} files)" if key.endswith("/") else key for key, count in sorted(counts.items())]


def check_handout_builds(context: Context) -> CheckResult:
    """The handout, unpacked into an empty folder, builds and its self-check fails exactly the
    tasks with skeleton_fails (or, with no GPU, builds and says so)."""
    assignment = context.assignment
    unpacked = context.work / "handout"
    shutil.rmtree(unpacked, ignore_errors=True)
    unpacked.mkdir(parents=True)
    unpack(context.handout_archives()[0], unpacked)
    bundle = unpacked / bundle_name(assignment)
    completed = self_check(bundle, [f"--cmake-arg={argument}" for argument in context.cmake_args])
    results_file = bundle / "build" / f"test-{assignment.id}" / RESULTS_FILE
    if not results_file.is_file():
        tail = (completed.stdout + completed.stderr).strip().splitlines()[-10:]
        return CheckResult(Verdict.FAILED, "\n".join(["`./kernellab test` in the unpacked handout gave no verdicts:", *tail]))
    results = read_results(results_file)
    expected = skeleton_verdicts(assignment)
    return _compare_verdicts(results, expected, "unpacked into an empty folder, built, self-check as expected", context)


CHECKS = (
    Check("manifest", check_manifest),
    Check("skeleton up to date", check_skeleton_up_to_date),
    Check("reference passes", check_reference),
    Check("skeleton fails as declared", check_skeleton_fails),
    Check("known-wrong rejected", check_known_wrong),
    Check("points", check_points),
    Check("speed calibration", check_speed_calibration),
    Check("handout contents", check_handout_contents),
    Check("handout builds", check_handout_builds),
)


def skeleton_verdicts(assignment: Assignment) -> dict[str, str]:
    """The verdict each tested task must get on the skeleton."""
    return {task.id: Verdict.FAILED if task.skeleton_fails else Verdict.PASSED for task in assignment.tested_tasks}


def _test_solution(context: Context, solution: Path) -> list[TaskResult]:
    """Build and run every task's tests against `solution`, in one build folder reconfigured each time."""
    build_dir = context.work / "build"
    assignment = context.assignment
    log = context.work / "logs" / f"configure-{solution.name}.log"
    cmake.configure(assignment.root, build_dir, assignment.id, solution, log, context.cmake_args)
    return test_tasks(assignment, list(assignment.tested_tasks), build_dir, known_wrong.TEST_TIMEOUT_S)


def _compare_verdicts(results: list[TaskResult], expected: dict[str, str], success: str, context: Context) -> CheckResult:
    """passed when every task got its expected verdict; not run when only the missing GPU kept some
    from one; FAILED, naming each task that got another, otherwise (a build failure always is)."""
    wrong_verdicts = [
        result for result in results if result.verdict != expected[result.id] and result.verdict != Verdict.NO_GPU
    ]
    if wrong_verdicts:
        lines = [
            f"{result.id}: {result.verdict}, expected {expected[result.id]}"
            + (f" ({result.detail.splitlines()[0]})" if result.detail else "")
            for result in wrong_verdicts
        ]
        return CheckResult(Verdict.FAILED, "\n".join(lines))
    not_run = [result.id for result in results if result.verdict == Verdict.NO_GPU]
    if not_run:
        return CheckResult(Verdict.NO_GPU, f"builds; {len(not_run)} of {len(results)} tasks need a GPU to run\n{', '.join(not_run)}")
    return CheckResult(Verdict.PASSED, f"{success} ({context.backend})")
