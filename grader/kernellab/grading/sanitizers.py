"""The sanitizer stage: compute-sanitizer on each built test executable (GPU only), its reports as
feedback on the tasks, and what the manifest's sanitizer_penalty makes them cost."""

from concurrent.futures import ThreadPoolExecutor
from dataclasses import replace
from pathlib import Path

from kernellab import sanitizer
from kernellab.grading.building import Built
from kernellab.grading.model import TaskGrade
from kernellab.grading.resources import PARALLEL_RUNS
from kernellab.grading.run import GradingRun
from kernellab.grading.targets import executable


def run_sanitizers(grading: GradingRun, job: Path, built: Built) -> list[sanitizer.SanitizerReport]:
    """compute-sanitizer's reports on each test executable that built (GPU only; none without the tool)."""
    tool_path = sanitizer.find_tool()
    if not grading.backend.runs_sanitizers or tool_path is None:
        return []

    limits = grading.assignment.grading

    def sanitize(job_key: tuple[str, str]) -> sanitizer.SanitizerReport:
        tests, tool = job_key
        with grading.run_slots:
            return sanitizer.sanitize(
                tool_path, tool, executable(job / "build", grading.assignment.id, tests), tests,
                job / "sanitizers" / f"{tests}.{tool}.log", grading.timeout_s * sanitizer.TIMEOUT_FACTOR, grading.sandbox,
                limits.sanitizer_sizes, limits.sanitizer_block_sizes,
            )

    tests_built = [tests for tests, errors in built.items() if errors is None]
    with grading.gpu_lock.shared(), ThreadPoolExecutor(PARALLEL_RUNS) as pool:
        return list(pool.map(sanitize, [(tests, tool) for tests in tests_built for tool in sanitizer.TOOLS]))


def add_sanitizer_reports(grading: GradingRun, grades: list[TaskGrade], reports: list[sanitizer.SanitizerReport]) -> list[TaskGrade]:
    """The sanitizers' reports as feedback on the tasks whose tests they ran; a task with errors
    loses the manifest's sanitizer_penalty share of its points."""
    limits = grading.assignment.grading
    penalty = limits.sanitizer_penalty
    tests_of = {task.id: task.tests for task in grading.assignment.tasks}
    sizes, blocks = ", ".join(map(str, limits.sanitizer_sizes)), " and ".join(map(str, limits.sanitizer_block_sizes))
    updated = []
    for grade in grades:
        own = [report for report in reports if report.tests == tests_of[grade.id]]
        if not own:
            updated.append(grade)
            continue
        lines = [f"at size {sizes}, blocks of {blocks} threads:"] + [report.describe() for report in own]
        clean = not any(report.errors for report in own)
        deduction = 0.0 if clean else round(grade.points * penalty, 2)
        if deduction:
            lines.append(f"sanitizer errors cost {penalty:.0%} of this task's points: -{deduction:g}")
        updated.append(replace(grade, points=round(grade.points - deduction, 2), sanitizer="\n".join(lines),
                               sanitizer_clean=clean, sanitizer_deduction=deduction))
    return updated
