"""`kernellab test`: build an assignment's public tests against a solution folder and report per task.

The student's self-check, and the first stage of grading. Each task's test executable is built
on its own, so that a compile error costs only the tasks whose executable it breaks, and run with
a timeout; its exit status and JUnit report give the task's verdict.
"""

import argparse
import json
import re
import signal
from dataclasses import asdict, dataclass, field
from pathlib import Path

from kernellab import cmake, properties, speed
from kernellab.cmake import BUILD_FAILED, CRASHED, FAILED, NO_GPU, PASSED, TIMED_OUT
from kernellab.errors import InputError, display_path
from kernellab.junit import failed_test_cases, first_failure
from kernellab.manifest import Assignment, Task, list_assignments, load_assignment
from kernellab.table import format_columns, shortened

# Every other verdict is a problem of the solution: the command exits 1.
NOT_PROBLEMS = (PASSED, NO_GPU)

DEFAULT_TIMEOUT_S = 300
DETAIL_WIDTH = 60
OUTPUT_TAIL_LINES = 5
OTHER_FAILURES_SHOWN = 3

# What the main of a GPU test executable prints before it exits with 77.
_NO_GPU_LINE = re.compile(r"no CUDA device \((.*)\)")
# The directories of the file a compiler error names, left out of the table.
_ERROR_PATH = re.compile(r"^\S*/")

EXIT_CODES = """\
exit codes:
  0  every task whose tests ran passed (tasks not run for lack of a GPU do not count)
  1  some task FAILED, timed out, crashed or did not build
  2  usage or setup error: a bad solution folder or option, a manifest error,
     cmake missing or the CMake configure step failing (its errors are shown)
"""

# (verdict, detail, failed test cases) of one test executable.
Outcome = tuple[str, str, list[str]]


@dataclass(frozen=True)
class TaskResult:
    id: str
    title: str
    points: int
    verdict: str
    # The first line goes in the table; all of it under the table for a problem verdict.
    detail: str = ""
    failed_cases: list[str] = field(default_factory=list)


def add_parser(subparsers: argparse._SubParsersAction) -> argparse.ArgumentParser:
    parser = subparsers.add_parser(
        "test",
        help="build the public tests against a solution folder and report per task",
        description="Build an assignment's test executables against a solution folder, run them and\n"
        "give each task a verdict: passed, FAILED, not run: no GPU, timed out, crashed or\n"
        "build failed. The verdicts are also written to <build dir>/results.json.",
        epilog=EXIT_CODES,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument(
        "solution",
        nargs="?",
        type=Path,
        metavar="SOLUTION",
        help="the folder holding the solution's files (default: the assignment's skeleton folder)",
    )
    parser.add_argument("--assignment", metavar="ID", help="the assignment (default: the only one there is)")
    parser.add_argument(
        "--build-dir",
        metavar="DIR",
        type=Path,
        help="build directory, reused when it exists so that only what changed is rebuilt "
        "(default: build/test-<ID> in the repository)",
    )
    parser.add_argument(
        "--tests",
        nargs="+",
        action="extend",
        metavar="NAME",
        help="only these test executables (a task's `tests` name from the manifest, or its id)",
    )
    parser.add_argument(
        "--timeout",
        type=float,
        default=DEFAULT_TIMEOUT_S,
        metavar="SECONDS",
        help=f"a test executable running longer counts as timed out (default: {DEFAULT_TIMEOUT_S})",
    )
    cmake.add_cmake_arg_option(parser)
    return parser


def run(args: argparse.Namespace) -> int:
    assignment = choose_assignment(args.root, args.assignment, args.solution)
    solution = check_solution(assignment, args.solution)
    tasks = select_tasks(assignment, args.tests)
    if args.timeout <= 0:
        raise InputError(f"--timeout {args.timeout:g}: expected a positive number of seconds")
    build_dir = (args.build_dir or args.root / "build" / f"test-{assignment.id}").resolve()
    print(f"{assignment.id}: testing {display_path(solution)} in {display_path(build_dir)}", flush=True)
    results_file = build_dir / "results.json"
    results_file.unlink(missing_ok=True)  # no verdicts of an earlier run if this one stops early
    cmake.configure(
        assignment.root, build_dir, assignment.id, solution, build_dir / "logs" / "configure.log", args.cmake_args
    )
    results = test_tasks(assignment, tasks, build_dir, args.timeout)
    results_file.write_text(json.dumps([asdict(result) for result in results], indent=2) + "\n")
    print()
    print(format_report(results))
    print(f"results: {display_path(results_file)}; logs: {display_path(build_dir / 'logs')}")
    print_speed_table(assignment, results, build_dir)
    return 0 if all(result.verdict in NOT_PROBLEMS for result in results) else 1


def print_speed_table(assignment: Assignment, results: list[TaskResult], build_dir: Path) -> None:
    """The speed of the [[speed]] cases of the tasks that passed, with the baselines, on this GPU."""
    passed = {result.id for result in results if result.verdict == PASSED}
    cases = [case for case in assignment.speed if case.task in passed]
    if not cases:
        return
    if "KERNELLAB_BACKEND:STRING=cpu" in (build_dir / "CMakeCache.txt").read_text(errors="replace"):
        print("\nno speed table: the CPU backend gives correctness only; speed needs a GPU")
        return
    target = f"{assignment.id}_speed"
    built = cmake.run_logged(cmake.build_command(build_dir, target), build_dir / "logs" / "speed.build.log")
    program = build_dir / "assignments" / assignment.id / target
    if built.exit_code != 0 or not program.is_file():
        print(f"\nno speed table: {target} did not build (see {display_path(build_dir / 'logs' / 'speed.build.log')})")
        return
    try:
        rows = speed.local_table(cases, program, build_dir / "speed")
    except speed.SpeedError as error:
        print(f"\nno speed table: {error}")
        return
    cells = [("case", "size", "kernel", "time (us)", "GB/s")]
    cells += [(case, str(size), kernel, f"{micros:.1f}", f"{gbps:.0f}") for case, size, kernel, micros, gbps in rows]
    print("\nspeed on this GPU (median of the repetitions; the grader scores it against the reference's):")
    print("\n".join(format_columns(cells)))


def choose_assignment(root: Path, given: str | None, solution: Path | None) -> Assignment:
    """The assignment named, else the only one, else the one whose required files `solution` holds."""
    if given:
        return load_assignment(root, given)
    assignment_ids = list_assignments(root)
    if len(assignment_ids) == 1:
        return load_assignment(root, assignment_ids[0])
    assignments = [load_assignment(root, assignment_id) for assignment_id in assignment_ids]
    matching = [assignment for assignment in assignments if solution is not None and _holds_required_files(assignment, solution)]
    if len(matching) == 1:
        return matching[0]
    known = ", ".join(assignment_ids) or "none"
    raise InputError(f"name the assignment with --assignment ID (assignments: {known})")


def _holds_required_files(assignment: Assignment, folder: Path) -> bool:
    aliases = assignment.files.aliases
    return folder.is_dir() and all(
        any((folder / name).is_file() for name in [required, *(alias for alias, canonical in aliases.items() if canonical == required)])
        for required in assignment.files.required
    )


def check_solution(assignment: Assignment, given: Path | None) -> Path:
    """The absolute solution folder, which must hold each required file under its name or an alias."""
    solution = (given or assignment.skeleton_dir).resolve()
    if not solution.is_dir():
        raise InputError(f"the solution folder {given or solution} is not a directory")
    aliases = assignment.files.aliases
    for name in assignment.files.required:
        names = [name] + [alias for alias, canonical in aliases.items() if canonical == name]
        if not any((solution / candidate).is_file() for candidate in names):
            raise InputError(f"the solution folder has no {' or '.join(names)}", solution)
    return solution


def select_tasks(assignment: Assignment, names: list[str] | None) -> list[Task]:
    """The tasks whose test executable (or id) `names` lists, in manifest order; all without names."""
    if not names:
        return list(assignment.tested_tasks)
    executables = list(dict.fromkeys(task.tests for task in assignment.tested_tasks))
    for name in names:
        if name not in executables and name not in assignment.task_ids:
            raise InputError(
                f"--tests {name}: not a test executable or task of {assignment.id} (tests: {', '.join(executables)})"
            )
    return [task for task in assignment.tested_tasks if task.tests in names or task.id in names]


def test_tasks(assignment: Assignment, tasks: list[Task], build_dir: Path, timeout_s: float) -> list[TaskResult]:
    """Build and run each task's test executable, once per executable, going on past failed builds."""
    outcomes: dict[str, Outcome] = {}
    results = []
    for task in tasks:
        if task.tests not in outcomes:
            outcomes[task.tests] = build_and_run(assignment.id, task.tests, build_dir, timeout_s)
        verdict, detail, failed_cases = outcomes[task.tests]
        print(f"{task.id}: {verdict}", flush=True)
        results.append(TaskResult(task.id, task.title, task.points, verdict, detail, failed_cases))
    return results


def build_and_run(assignment_id: str, tests: str, build_dir: Path, timeout_s: float) -> Outcome:
    target = cmake.test_target(assignment_id, tests)
    print(f"building {target}", flush=True)
    logs = build_dir / "logs"
    built = cmake.run_logged(cmake.build_command(build_dir, target), logs / f"{tests}.build.log")
    if built.exit_code != 0:
        return BUILD_FAILED, "\n".join(cmake.first_error_lines(built.output)), []
    report = build_dir / "reports" / f"{tests}.xml"
    tested = cmake.run_tests(build_dir, assignment_id, tests, report, logs / f"{tests}.test.log", timeout_s)
    # What the tasks are graded on beside their results (issue 15): the measured properties, which
    # Catch2's JUnit reporter moves from the output into the report.
    report_text = report.read_text(encoding="utf-8", errors="replace") if report.is_file() else ""
    for line in properties.measured_lines(tested.output + "\n" + report_text):
        print(f"  measured: {line}", flush=True)
    return task_verdict(tested, report, timeout_s)


def task_verdict(tested: cmake.Completed, report: Path, timeout_s: float) -> Outcome:
    """The verdict on one run of a test executable, from its exit status and its JUnit report.

    A task passes only on exit code 0 with no failed test case: a run that stopped early never
    passes, whatever it wrote before stopping.
    """
    failed_cases = failed_test_cases(report)
    if tested.timed_out:
        return TIMED_OUT, f"no result after {timeout_s:g} s (a kernel that never finishes?)", failed_cases
    # Catch2 exits with the number of failed assertions, which can be 77 too.
    if tested.exit_code == cmake.NO_GPU_EXIT_CODE and not failed_cases:
        reason = _NO_GPU_LINE.search(tested.output)
        return NO_GPU, f"no CUDA device ({reason[1]})" if reason else "no CUDA device", []
    if tested.exit_code == 0 and not failed_cases:
        return PASSED, "", []
    failure = first_failure(report)
    verdict = f"{CRASHED} ({_signal_name(-tested.exit_code)})" if tested.exit_code < 0 else FAILED
    if failure is None:
        status = "" if tested.exit_code < 0 else f"exit code {tested.exit_code}, "
        return verdict, "\n".join([f"{status}no failed test case in the report", *_output_tail(tested.output)]), []
    return verdict, f"{failure.test_case}\n{failure.message}", failed_cases


def _signal_name(number: int) -> str:
    try:
        return f"signal {number}, {signal.Signals(number).name}"
    except ValueError:
        return f"signal {number}"


def _output_tail(output: str) -> list[str]:
    lines = [line.rstrip() for line in output.splitlines() if line.strip()]
    return ["last output:", *(f"  {line}" for line in lines[-OUTPUT_TAIL_LINES:])] if lines else []


def format_report(results: list[TaskResult]) -> str:
    """The table of tasks, the details behind its problem verdicts, and the points summary."""
    header = ("task", "title", "points", "verdict", "detail")
    cells = [header] + [
        (result.id, result.title, str(result.points), result.verdict, _detail_cell(result)) for result in results
    ]
    return "\n".join(format_columns(cells) + _problem_details(results) + summary_lines(results))


def summary_lines(results: list[TaskResult]) -> list[str]:
    """Points from the tasks that got a verdict, and plainly which tasks got none for lack of a GPU.

    A task whose executable did not build counts as tested: its verdict is final, and it earns nothing.
    """
    judged = [result for result in results if result.verdict != NO_GPU]
    earned = sum(result.points for result in judged if result.verdict == PASSED)
    lines = ["", f"correctness: {earned} of {sum(result.points for result in judged)} points from tests that ran"]
    not_run = [result for result in results if result.verdict == NO_GPU]
    if not_run:
        lines.append(
            f"The GPU tests of {', '.join(result.id for result in not_run)} "
            f"({sum(result.points for result in not_run)} points) were skipped because this machine has no "
            "CUDA device, so no correctness verdict was given for those tasks "
            "(--cmake-arg=-DKERNELLAB_BACKEND=cpu runs them on the CPU backend, or `kernellab grade` does by itself)."
        )
    return lines


def _detail_cell(result: TaskResult) -> str:
    first_line = result.detail.split("\n", 1)[0]
    if result.verdict == BUILD_FAILED:
        first_line = _ERROR_PATH.sub("", first_line)
    more = len(result.failed_cases) - 1
    return shortened(first_line, DETAIL_WIDTH) + (f" (+{more} more)" if more > 0 else "")


def _problem_details(results: list[TaskResult]) -> list[str]:
    """Each problem's full detail, indented under its task; a repeated build error only once."""
    lines = []
    shown: dict[str, str] = {}  # detail -> the task it was shown under
    for result in results:
        if result.verdict in NOT_PROBLEMS or not result.detail:
            continue
        lines += ["", f"{result.id}: {result.verdict}"]
        if result.detail in shown:
            lines.append(f"    the same as {shown[result.detail]}")
            continue
        shown[result.detail] = result.id
        lines += [f"    {line}" for line in result.detail.split("\n")]
        others = result.failed_cases[1:]
        if others:
            listed = ", ".join(others[:OTHER_FAILURES_SHOWN])
            more = len(others) - OTHER_FAILURES_SHOWN
            lines.append(f"    also failed: {listed}" + (f" (+{more} more)" if more > 0 else ""))
    return lines
