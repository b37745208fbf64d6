"""The public tests against a solution folder, per task: the student's self-check (`kernellab
test`) and the instructor's check of the reference and the skeleton (`kernellab check`).

Each task's test executable is built on its own, so that a compile error costs only the tasks
whose executable it breaks, and run with a timeout; its exit status and JUnit report give the
task's verdict. Python's standard library only: the handout runs this with nothing installed.
"""

import json
import re
from dataclasses import asdict, dataclass, field, replace
from pathlib import Path

from kernellab import cmake, environment, properties
from kernellab.errors import InputError, display_path
from kernellab.grading.model import SpeedResult
from kernellab.grading.speed import calibration, timing
from kernellab.junit import failed_test_cases, first_failure
from kernellab.manifest import Assignment, SpeedCase, Task
from kernellab.solution import check_solution, choose_assignment
from kernellab.table import format_columns, shortened
from kernellab.verdict import (LOCKSTEP_RIGHT, LOCKSTEP_WRONG, NO_GPU_EXIT_CODE, NOT_RUN, RunEnd, Verdict, decide,
                               lockstep_warning)

# Every other verdict is a problem of the solution.
NOT_PROBLEMS = (Verdict.PASSED, *NOT_RUN)
RESULTS_FILE = "results.json"
DETAIL_WIDTH = 60
OUTPUT_TAIL_LINES = 5
OTHER_FAILURES_SHOWN = 3

# What the main of a GPU test executable prints before it exits with 77.
_NO_GPU_LINE = re.compile(r"no CUDA device \((.*)\)")
# The directories of the file a compiler error names, left out of the table.
_ERROR_PATH = re.compile(r"^\S*/")

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
    # The task's speed cases as the grade would score them, the reference's time predicted from
    # the instructor's calibration on this GPU model (calibration.py); empty without a preview.
    speed_preview: list[SpeedResult] = field(default_factory=list)


def test_solution(
    root: Path,
    assignment_id: str | None,
    solution_dir: Path | None,
    names: list[str] | None,
    build_dir: Path | None,
    timeout_s: float,
    cmake_args: list[str],
) -> list[TaskResult]:
    """`kernellab test`: build and run the tests of the tasks `names` picks (all without) against
    the solution folder (default: the skeleton), print the report and write <build dir>/results.json."""
    assignment = choose_assignment(root, assignment_id, solution_dir)
    solution = check_solution(assignment, solution_dir)
    tasks = select_tasks(assignment, names)
    if timeout_s <= 0:
        raise InputError(f"--timeout {timeout_s:g}: expected a positive number of seconds")
    build_dir = (build_dir or root / "build" / f"test-{assignment.id}").resolve()
    print(f"{assignment.id}: testing {display_path(solution)} in {display_path(build_dir)}", flush=True)
    results_file = build_dir / RESULTS_FILE
    results_file.unlink(missing_ok=True)  # no verdicts of an earlier run if this one stops early
    cmake.configure(assignment.root, build_dir, assignment.id, solution, build_dir / "logs" / "configure.log", cmake_args)
    results = test_tasks(assignment, tasks, build_dir, timeout_s)
    write_results(results_file, results)
    print()
    print(format_report(results))
    print(f"results: {display_path(results_file)}; logs: {display_path(build_dir / 'logs')}")
    speed_preview = print_speed_table(assignment, results, build_dir)
    if speed_preview:
        results = [replace(result, speed_preview=[row for row in speed_preview if row.task == result.id])
                   for result in results]
        write_results(results_file, results)
    return results


def write_results(results_file: Path, results: list[TaskResult]) -> None:
    results_file.write_text(json.dumps([asdict(result) for result in results], indent=2) + "\n")


def read_results(results_file: Path) -> list[TaskResult]:
    """The verdicts a run of `kernellab test` wrote."""
    return [TaskResult(**{**result, "speed_preview": [SpeedResult(**row) for row in result.get("speed_preview", [])]})
            for result in json.loads(results_file.read_text())]


def all_fine(results: list[TaskResult]) -> bool:
    """Whether every task whose tests ran passed (tasks not run for lack of a GPU do not count)."""
    return all(result.verdict in NOT_PROBLEMS for result in results)


def print_speed_table(assignment: Assignment, results: list[TaskResult], build_dir: Path) -> list[SpeedResult]:
    """The speed of the [[speed]] cases of the tasks that passed, with the baselines, on this GPU;
    then the preview of their speed points, which it returns (empty without one)."""
    passed = {result.id for result in results if result.verdict == Verdict.PASSED}
    cases = [case for case in assignment.speed if case.task in passed]
    if not cases:
        return []
    if built_for_cpu(build_dir):
        print("\nno speed table: the CPU backend gives correctness only; speed needs a GPU")
        return []
    try:
        rows = timing.local_table(cases, build_speed_program(assignment.id, build_dir), build_dir / "speed")
    except timing.SpeedError as error:
        print(f"\nno speed table: {error}")
        return []
    cells = [("case", "size", "kernel", "time (us)", "GB/s")]
    cells += [(case, str(size), kernel, f"{micros:.1f}", f"{gbps:.0f}") for case, size, kernel, micros, gbps in rows]
    print("\nspeed on this GPU (the least of the repetitions; the grader scores it against the reference's):")
    print("\n".join(format_columns(cells)))
    return print_points_preview(assignment, cases, {(kernel, size): micros for _, size, kernel, micros, _ in rows})


def build_speed_program(assignment_id: str, build_dir: Path) -> Path:
    """The assignment's speed program, built in `build_dir`; a timing.SpeedError where it does not build."""
    target = cmake.speed_target(assignment_id)
    log = build_dir / "logs" / "speed.build.log"
    built = cmake.run_logged(cmake.build_command(build_dir, target), log)
    program = cmake.program(build_dir, assignment_id, target)
    if built.exit_code != 0 or not program.is_file():
        raise timing.SpeedError(f"{target} did not build (see {display_path(log)})")
    return program


def print_points_preview(assignment: Assignment, cases: list[SpeedCase], times: dict[tuple[str, int], float]
                         ) -> list[SpeedResult]:
    """The speed points that `times` ((kernel, size) -> microseconds, as timed here) would earn,
    the reference's times predicted from the calibration file's entry for this GPU model; one line
    saying why where there is none. Returns the scored rows."""
    gpu = environment.first_gpu()
    try:
        entry = calibration.calibration_for(assignment, gpu["name"] if gpu else None)
    except (calibration.NoPreview, InputError) as why:
        print(f"\nno preview of speed points: {why}")
        return []
    scored = calibration.preview(cases, times, entry)
    print(f"\npreview of speed points: the grade times the reference itself in the same run; this predicts its time "
          f"from the instructor's calibration on {entry.gpu} ({entry.measured.date().isoformat()}), as the copy "
          "kernel's time here times the reference's time over the copy kernel's there:")
    print("\n".join(format_columns(preview_cells(scored))))
    for case in cases:
        points = sum(row.points for row in scored if row.case == case.case)
        print(f"{case.case}: {points:g} of {case.points} speed points")
    return scored


def preview_cells(scored: list[SpeedResult]) -> list[tuple[str, ...]]:
    """The preview's table: per case and size the copy kernel's time, the reference's predicted,
    yours, the ratio and the points it gives."""
    cells = [("case", "size", "copy (us)", "reference (us, predicted)", "yours (us)", "yours / reference", "points")]
    for row in scored:
        predicted, ratio = (f"{row.reference_us:.1f}", f"{row.ratio:.2f}") if row.reference_us else ("-", "-")
        points = f"{row.points:g} of {row.max_points:g}" + (f" ({row.problem})" if row.problem else "")
        cells.append((row.case, str(row.size), f"{row.copy_us:.1f}", predicted, f"{row.student_us:.1f}", ratio, points))
    return cells


def built_for_cpu(build_dir: Path) -> bool:
    """Whether the build folder's kernels run on kernellab's CPU backend."""
    return "KERNELLAB_BACKEND:STRING=cpu" in (build_dir / "CMakeCache.txt").read_text(errors="replace")


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
        return Verdict.BUILD_FAILED, "\n".join(cmake.first_error_lines(built.output)), []
    report = build_dir / "reports" / f"{tests}.xml"
    tested = cmake.run_tests(build_dir, assignment_id, tests, report, logs / f"{tests}.test.log", timeout_s)
    # What the tasks are graded on beside their results: the measured properties, which Catch2's
    # JUnit reporter moves from the output into the report.
    report_text = report.read_text(encoding="utf-8", errors="replace") if report.is_file() else ""
    for line in properties.measured_lines(tested.output + "\n" + report_text):
        print(f"  measured: {line}", flush=True)
    return task_verdict(tested, report, timeout_s, built_for_cpu(build_dir))


def run_end(tested: cmake.Completed, failed_cases: list[str], cpu_backend: bool = False) -> RunEnd:
    """How a run ended, as its exit status and its JUnit report's failed test cases tell. On the
    CPU backend (which always runs its tests) exit status 77 is its warning of warp-synchronous
    code, which leaves the verdict to a GPU as a grade does (verdict.RunEnd)."""
    failed = bool(failed_cases)
    return RunEnd(None if tested.timed_out else tested.exit_code, tested.timed_out, failed=failed,
                  has_results=failed or cpu_backend, needs_gpu=cpu_backend and tested.exit_code == NO_GPU_EXIT_CODE,
                  failures_left_to_gpu=cpu_backend)


def task_verdict(tested: cmake.Completed, report: Path, timeout_s: float, cpu_backend: bool = False) -> Outcome:
    """The verdict on one run of a test executable, from its exit status and its JUnit report.

    A task passes only on exit code 0 with no failed test case: a run that stopped early never
    passes, whatever it wrote before stopping.
    """
    failed_cases = failed_test_cases(report)
    verdict = decide(run_end(tested, failed_cases, cpu_backend))
    if verdict == Verdict.TIMED_OUT:
        return verdict, f"no result after {timeout_s:g} s (a kernel that never finishes?)", failed_cases
    if verdict == Verdict.NO_GPU:
        reason = _NO_GPU_LINE.search(tested.output)
        return verdict, f"no CUDA device ({reason[1]})" if reason else "no CUDA device", []
    if verdict == Verdict.PASSED:
        return verdict, f"warning: {race}" if (race := lockstep_warning(tested.output)) else "", []
    failure = first_failure(report)
    if verdict == Verdict.NEEDS_GPU:
        return verdict, f"{LOCKSTEP_WRONG}\n{failure.test_case}\n{failure.message}" if failure else LOCKSTEP_RIGHT, []
    if failure is None:
        status = "" if tested.exit_code < 0 else f"exit code {tested.exit_code}, "
        return verdict, "\n".join([f"{status}no failed test case in the report", *_output_tail(tested.output)]), []
    return verdict, f"{failure.test_case}\n{failure.message}", failed_cases


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
    judged = [result for result in results if result.verdict not in NOT_RUN]
    earned = sum(result.points for result in judged if result.verdict == Verdict.PASSED)
    lines = ["", f"correctness: {earned} of {sum(result.points for result in judged)} points from tests that ran"]
    left = [result for result in results if result.verdict == Verdict.NEEDS_GPU]
    if left:
        lines.append(f"The tests of {', '.join(result.id for result in left)} ({sum(result.points for result in left)} "
                     "points) are left to a GPU: warp-synchronous code, which only a GPU can judge (see above).")
    not_run = [result for result in results if result.verdict == Verdict.NO_GPU]
    if not_run:
        lines.append(
            f"The GPU tests of {', '.join(result.id for result in not_run)} "
            f"({sum(result.points for result in not_run)} points) were skipped because this machine has no "
            "CUDA device, so no correctness verdict was given for those tasks "
            "(--cmake-arg=-DKERNELLAB_BACKEND=cpu runs them on the CPU backend)."
        )
    return lines


def _detail_cell(result: TaskResult) -> str:
    first_line = result.detail.split("\n", 1)[0]
    if result.verdict == Verdict.BUILD_FAILED:
        first_line = _ERROR_PATH.sub("", first_line)
    more = len(result.failed_cases) - 1
    return shortened(first_line, DETAIL_WIDTH) + (f" (+{more} more)" if more > 0 else "")


def _problem_details(results: list[TaskResult]) -> list[str]:
    """Each problem's full detail, indented under its task; a repeated build error only once; and
    why tests were left to a GPU."""
    lines = []
    shown: dict[str, str] = {}  # detail -> the task it was shown under
    for result in results:
        if result.verdict in (Verdict.PASSED, Verdict.NO_GPU) or not result.detail:
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
