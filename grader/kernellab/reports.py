"""A grade in the formats its readers want: Gradescope's and PrairieLearn's results.json, JUnit
XML for CI dashboards, and a Markdown and an HTML feedback page for the student.

Each writer is a pure function of the Grade over the same list of scored entries (one per test
group, or per answered task); `write_all` puts them side by side in a folder. An entry left to a
GPU (coverage.py) is no failure: JUnit marks it skipped, and the course platforms, whose containers
grade without a GPU, leave out the speed cases and show a test group left to a GPU without points,
PrairieLearn's score being out of the points the grade's backend can give.
"""

import html
import json
import os
import socket
import threading
import xml.etree.ElementTree as ElementTree
from dataclasses import dataclass
from pathlib import Path

from kernellab import coverage
from kernellab.backend import Backend
from kernellab.grading.model import Grade, SpeedResult, TaskGrade
from kernellab.grading.scoring import NO_POINTS
from kernellab.speed_table import score_tables, size_name, speed_chart, speed_table
from kernellab.verdict import NOT_RUN, Status, Verdict

GRADESCOPE_FILE = "results.json"
PRAIRIELEARN_FILE = "prairielearn.json"
JUNIT_FILE = "junit.xml"
MARKDOWN_FILE = "feedback.md"
HTML_FILE = "feedback.html"
GRADE_FILE = "grade.json"


@dataclass(frozen=True)
class Entry:
    name: str
    task: str
    points: float
    max_points: float
    passed: bool
    verdict: str
    output: str
    seconds: float
    # "public" or "hidden" for a test group's entry, "" for the others.
    group: str = ""
    # Its points need a GPU: a test group not run here, or a speed case where none was timed for that.
    left_to_gpu: bool = False


def entries(grade: Grade) -> list[Entry]:
    rows = []
    for task in grade.tasks:
        if not task.groups:
            passed = task.points == task.max_points
            rows.append(
                Entry(f"{task.id}: {task.title}", task.id, task.points, task.max_points, passed,
                      Verdict.PASSED if passed else Verdict.FAILED, task.feedback, 0.0)
            )
        for group in task.groups:
            output = "\n".join(text for text in (task.feedback, group.detail) if text)
            unpaid = group.verdict == Verdict.PASSED and group.points < group.max_points
            rows.append(
                Entry(f"{task.id}: {group.group} tests", task.id, group.points, group.max_points,
                      group.verdict == Verdict.PASSED and not unpaid, _passed_unpaid(task) if unpaid else group.verdict,
                      output, group.seconds, group.group, left_to_gpu=group.verdict in NOT_RUN)
            )
        if task.sanitizer:
            rows.append(
                Entry(f"{task.id}: GPU sanitizers", task.id, -task.sanitizer_deduction if task.sanitizer_deduction else 0.0, 0.0,
                      task.sanitizer_clean,
                      "no errors" if task.sanitizer_clean else "errors found", task.sanitizer, 0.0)
            )
        for result in task.speed:
            # Left to a GPU, the why is the grade's coverage line, not six copies of it.
            needs_gpu = coverage.speed_needs_gpu(grade, task)
            rows.append(
                Entry(f"{task.id}: speed of {result.case} at {size_name(result.size)}", task.id, result.points,
                      result.max_points, result.points == result.max_points,
                      "not run: needs a GPU" if needs_gpu else speed_verdict(result), "" if needs_gpu else result.problem,
                      0.0, left_to_gpu=needs_gpu)
            )
    return rows


def _passed_unpaid(task: TaskGrade) -> str:
    """The verdict of a group whose tests passed while a finding (a requirement not met, a
    forbidden library) took its task's points: what took them, not a bare "passed" at no points."""
    first = task.feedback.split("\n", 1)[0]
    return f"passed, {first}" if first.startswith(NO_POINTS) else "passed, no points"


def platform_entries(grade: Grade) -> list[Entry]:
    """The entries a course platform lists as tests: not the speed cases left to a GPU, which are
    no test where the grade was made (the summary says what a GPU would give)."""
    return [entry for entry in entries(grade) if not (entry.left_to_gpu and not entry.group)]


def speed_verdict(result: SpeedResult) -> str:
    if result.ratio is None or result.problem:
        return "not timed" if result.student_us is None else "no speed points"
    return (
        f"{result.student_us:.1f} us, {result.gbps(result.student_us):.0f} GB/s: {result.ratio:.2f}x the reference's time "
        f"({result.reference_us:.1f} us)"
    )


def headline(grade: Grade) -> str:
    """'pbb: 88 of 88 points (graded)': out of the points the grade's backend can give (the
    coverage line says what a GPU would add)."""
    return f"{grade.assignment}: {grade.score:g} of {coverage.platform_max(grade):g} points ({grade.status})"


def summary(grade: Grade) -> str:
    """The overall outcome in one paragraph, first what a student must know."""
    lines = [headline(grade)]
    if covered := coverage.line(grade):
        lines.append(covered)
    if grade.message:
        lines.append(grade.message)
    lines += grade.findings
    lines.append(_where(grade))
    return "\n".join(lines)


def _where(grade: Grade) -> str:
    facts = grade.environment
    gpu = facts.get("gpu", "")
    if not Backend(grade.backend).on_gpu:
        return f"Kernels ran on kernellab's CPU backend ({gpu}); hidden-case seed {grade.seed}.{_sandbox(grade)}"
    details = ", ".join(f"{key} {facts[key]}" for key in ("driver", "sm_clock", "memory_clock") if facts.get(key))
    return f"Graded on {gpu or 'an unknown GPU'} ({details}; CUDA {facts.get('cuda', '?')}); hidden-case seed {grade.seed}.{_sandbox(grade)}"


def _sandbox(grade: Grade) -> str:
    return f" Sandbox: {grade.environment['sandbox']}." if grade.environment.get("sandbox") else ""


def summary_markdown(grade: Grade) -> str:
    """The summary as Markdown: the outcome in bold, the message (in a code block when it spans
    lines: compiler output), the findings as a list, where it was graded, and the speed table."""
    blocks = [f"**{headline(grade)}**"]
    if covered := coverage.line(grade):
        blocks.append(covered)
    if grade.message:
        blocks.append(f"```\n{grade.message}\n```" if "\n" in grade.message else grade.message)
    if grade.findings:
        blocks.append("\n".join(f"- {finding}" for finding in grade.findings))
    blocks.append(_where(grade))
    if rows := speed_table(grade):
        blocks.append("\n".join(["| case | size | kernel | time (us) | GB/s |", "|---|---|---|---|---|",
                                 *(f"| {case} | {size} | {kernel} | {micros:.1f} | {gbps:.0f} |" for case, size, kernel, micros, gbps in rows)]))
    return "\n\n".join(blocks)


def gradescope(grade: Grade, hidden_visibility: str = "visible") -> dict:
    """Gradescope's autograder results.json: one test per entry tagged with its task id, the
    hidden cases' entries shown as the manifest says (`hidden_visibility`), the summary as
    Markdown, and the seed and the machine in extra_data."""
    return {
        "score": grade.score,
        "execution_time": round(grade.seconds),
        "output": summary_markdown(grade),
        "output_format": "md",
        "test_output_format": "text",
        "visibility": "visible",
        "stdout_visibility": "hidden",
        "tests": [_gradescope_test(entry, number, hidden_visibility) for number, entry in enumerate(platform_entries(grade), start=1)],
        "extra_data": {
            "student": grade.student,
            "assignment": grade.assignment,
            "status": grade.status,
            "backend": grade.backend,
            "seed": grade.seed,
            "hidden_sizes": list(grade.hidden_sizes),
            "large_size": grade.large_size,
            "environment": grade.environment,
            "stages": grade.stages,
        },
        "leaderboard": [
            {"name": f"{result.case} {size_name(result.size)} (GB/s)", "value": round(result.gbps(result.student_us), 1), "order": "desc"}
            for task in grade.tasks
            for result in task.speed
            if result.student_us and not result.problem
        ],
    }


def _gradescope_test(entry: Entry, number: int, hidden_visibility: str) -> dict:
    test = {
        "name": entry.name,
        "number": str(number),
        "score": entry.points,
        "max_score": entry.max_points,
        "status": "passed" if entry.passed else "failed",
        "output": f"{entry.verdict}\n{entry.output}".rstrip(),
        "tags": [entry.task],
        "visibility": hidden_visibility if entry.group == "hidden" else "visible",
    }
    if entry.left_to_gpu:
        # Gradescope's tests are passed or failed; one of no points and no status is neither.
        del test["status"]
        test |= {"max_score": 0.0, "output": f"{entry.verdict} (its {entry.max_points:g} points need a GPU)\n{entry.output}".rstrip()}
    return test


def prairielearn(grade: Grade) -> dict:
    """PrairieLearn's external-grader results: score from 0 to 1. Not gradable when grading could
    not run, or when intake refused the submission: PrairieLearn then shows the reason
    (`format_errors`) and costs the student no attempt, instead of a zero."""
    refused = {"format_errors": [grade.message]} if grade.status == Status.REJECTED else {}
    gradable_max = coverage.platform_max(grade)
    return {
        "gradable": grade.status == Status.GRADED,
        **refused,
        "score": grade.score / gradable_max if gradable_max else 0.0,
        "message": summary(grade),
        "output": "",
        "tests": [
            {
                "name": entry.name,
                "description": entry.verdict,
                "points": entry.points,
                "max_points": 0.0 if entry.left_to_gpu else entry.max_points,
                "message": f"{entry.verdict} (its {entry.max_points:g} points need a GPU)" if entry.left_to_gpu else entry.verdict,
                "output": entry.output,
            }
            for entry in platform_entries(grade)
        ],
    }


def junit(grade: Grade) -> str:
    """JUnit XML: a test suite per submission, a test case per entry, failures with their detail."""
    rows = entries(grade)
    suites = ElementTree.Element("testsuites")
    suite = ElementTree.SubElement(
        suites,
        "testsuite",
        name=f"{grade.assignment}.{grade.student}",
        tests=str(len(rows)),
        failures=str(sum(not row.passed and not row.left_to_gpu for row in rows)),
        skipped=str(sum(row.left_to_gpu for row in rows)),
        errors="1" if grade.status == Status.NOT_GRADED else "0",
        time=f"{grade.seconds:.3f}",
    )
    if grade.status == Status.NOT_GRADED:
        error = ElementTree.SubElement(ElementTree.SubElement(suite, "testcase", classname=grade.assignment, name="grading"), "error")
        error.set("message", Status.NOT_GRADED)
        error.text = grade.message
    for row in rows:
        case = ElementTree.SubElement(
            suite, "testcase", classname=f"{grade.assignment}.{row.task}", name=row.name, time=f"{row.seconds:.3f}"
        )
        if row.left_to_gpu:
            ElementTree.SubElement(case, "skipped", message=row.verdict).text = row.output or None
        elif not row.passed:
            failure = ElementTree.SubElement(case, "failure", message=row.verdict)
            failure.text = row.output
    ElementTree.indent(suites)
    return '<?xml version="1.0" encoding="UTF-8"?>\n' + ElementTree.tostring(suites, encoding="unicode") + "\n"


def shows_output(row: Entry) -> bool:
    """Whether the feedback shows what a row says: a problem, or a warning beside a pass (a
    warp-synchronous race that the task accepts)."""
    return bool(row.output) and (not row.passed or "warning: " in row.output)


def markdown(grade: Grade) -> str:
    lines = [f"# {grade.assignment}: feedback for {grade.student}", "", *summary(grade).split("\n"), ""]
    lines += ["| test | points | verdict |", "|---|---|---|"]
    lines += [f"| {row.name} | {row.points:g} / {row.max_points:g} | {row.verdict} |" for row in entries(grade)]
    speed_rows = speed_table(grade)
    if speed_rows:
        lines += ["", "## Speed", *score_tables(grade), "", "| case | size | kernel | time (us) | GB/s |", "|---|---|---|---|---|"]
        lines += [f"| {case} | {size} | {kernel} | {micros:.1f} | {gbps:.0f} |" for case, size, kernel, micros, gbps in speed_rows]
    for row in entries(grade):
        if shows_output(row):
            lines += ["", f"## {row.name}: {row.verdict}", "", "```", row.output, "```"]
    return "\n".join(lines) + "\n"


def html_page(grade: Grade) -> str:
    rows = entries(grade)
    table = "".join(
        f'<tr class="{"pass" if row.passed else "skip" if row.left_to_gpu else "fail"}"><td>{html.escape(row.name)}</td>'
        f"<td>{row.points:g} / {row.max_points:g}</td><td>{html.escape(row.verdict)}</td></tr>"
        for row in rows
    )
    details = "".join(
        f"<h2>{html.escape(row.name)}: {html.escape(row.verdict)}</h2><pre>{html.escape(row.output)}</pre>"
        for row in rows
        if shows_output(row)
    )
    title = f"{grade.assignment}: feedback for {grade.student}"
    chart_uri = speed_chart(grade)
    chart = f'<h2>Speed</h2><img alt="GB/s of your kernels, the reference and a copy kernel" src="{chart_uri}">' if chart_uri else ""
    return (
        "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">"
        f"<title>{html.escape(title)}</title><style>"
        "body{font-family:sans-serif;max-width:60em;margin:2em auto}table{border-collapse:collapse}"
        "td,th{border:1px solid #ccc;padding:.3em .6em}tr.pass td:last-child{color:#070}tr.skip td:last-child{color:#666}"
        "tr.fail td:last-child{color:#a00}pre{background:#f4f4f4;padding:.6em;white-space:pre-wrap;overflow-wrap:anywhere}"
        f"</style></head><body><h1>{html.escape(title)}</h1><p>{html.escape(summary(grade)).replace(chr(10), '<br>')}</p>"
        f"<table><tr><th>test</th><th>points</th><th>verdict</th></tr>{table}</table>{chart}{details}</body></html>\n"
    )


def write_all(grade: Grade, folder: Path, hidden_visibility: str = "visible") -> None:
    """Every report of `grade` in `folder`; grade.json last, each file replaced atomically, so a
    folder with a grade.json holds a complete set (batch resumption relies on it).
    `hidden_visibility`: the manifest's, for Gradescope's hidden-case tests."""
    folder.mkdir(parents=True, exist_ok=True)
    outputs = {
        PRAIRIELEARN_FILE: json.dumps(prairielearn(grade), indent=2) + "\n",
        JUNIT_FILE: junit(grade),
        MARKDOWN_FILE: markdown(grade),
        HTML_FILE: html_page(grade),
    }
    # Gradescope reads a results.json as a score: a submission that could not be graded gets
    # none, so the autograder run shows as failed instead of as a zero.
    if grade.status != Status.NOT_GRADED:
        outputs[GRADESCOPE_FILE] = json.dumps(gradescope(grade, hidden_visibility), indent=2) + "\n"
    else:
        (folder / GRADESCOPE_FILE).unlink(missing_ok=True)
    outputs[GRADE_FILE] = grade.to_json()
    for name, text in outputs.items():
        write_atomically(folder / name, text)


def write_platform_results(grade: Grade, folder: Path, hidden_visibility: str = "visible") -> None:
    """Gradescope's and PrairieLearn's results of a grade in progress (after a stage), so that a
    platform that kills the run at its timeout still finds what was earned; not grade.json, whose
    presence tells a batch that the student is finished."""
    folder.mkdir(parents=True, exist_ok=True)
    write_atomically(folder / PRAIRIELEARN_FILE, json.dumps(prairielearn(grade), indent=2) + "\n")
    if grade.status != Status.NOT_GRADED:
        write_atomically(folder / GRADESCOPE_FILE, json.dumps(gradescope(grade, hidden_visibility), indent=2) + "\n")


def write_atomically(path: Path, text: str) -> None:
    # A temporary name of this process and thread: writers of the same file (the array tasks of
    # a Slurm batch, on several nodes) never write into each other's temporary file.
    temporary = path.with_name(f".{path.name}.{socket.gethostname()}.{os.getpid()}.{threading.get_ident()}.tmp")
    with open(temporary, "w", encoding="utf-8") as out:
        out.write(text)
        out.flush()
        os.fsync(out.fileno())
    os.replace(temporary, path)
