"""The class view of a batch: summary.md and summary.html beside the gradebook.

What a TA needs to see at once: the score histogram, mean, median and quartiles; each task's pass
rate per test group (public, hidden); the distribution of the speed ratios (the student's time
over the reference's); the most common first failures of each task; and a similarity report over
the submissions, with the skeleton as base code (its code is not counted as shared). The
similarity check is copydetect's winnowing (an optional dependency: `pip install
'kernellab[similarity]'`; it runs offline); without it the summary says so. copydetect hashes
with Python's per-process string hash, so a pair's share can move by a few points between runs.
"""

import html
import re
import statistics
import tempfile
from collections import Counter
from dataclasses import dataclass
from pathlib import Path

from kernellab import coverage, reports
from kernellab.grading.model import Grade, GroupResult, TaskGrade
from kernellab.grading.run import GROUPS
from kernellab.intake import SubmissionRejected, take
from kernellab.manifest import Assignment
from kernellab.verdict import FINAL_STATUSES, NOT_RUN, Status, Verdict

MARKDOWN_FILE = "summary.md"
HTML_FILE = "summary.html"
HISTOGRAM_BINS = 10
COMMON_FAILURES = 3
# copydetect's defaults: a match shorter than NOISE tokens is ignored, one of GUARANTEE is always found.
NOISE_TOKENS = 25
GUARANTEE_TOKENS = 30
# A pair is listed when this share of either one's code (the skeleton's not counted) is shared.
SIMILARITY_THRESHOLD = 0.5
MAX_PAIRS = 20
SIMILARITY_INSTALL = "pip install 'kernellab[similarity]' (copydetect)"


@dataclass(frozen=True)
class Similar:
    first: str
    second: str
    # The share of each one's code (tokens, after the skeleton's are removed) found in the other.
    first_share: float
    second_share: float


@dataclass(frozen=True)
class Similarity:
    compared: int  # submissions compared (rejected ones have no files to compare)
    pairs: tuple[Similar, ...]  # at or above SIMILARITY_THRESHOLD, most similar first
    problem: str = ""  # why no check was made


@dataclass(frozen=True)
class ClassSummary:
    assignment: str
    max_score: float
    counts: dict[str, int]  # status -> students
    scores: tuple[float, ...]  # graded and rejected students
    histogram: tuple[tuple[float, float, int], ...]  # (from, to, students)
    statistics: dict[str, float]  # mean, median, first and third quartile
    pass_rates: dict[str, dict[str, tuple[int, int]]]  # task -> group -> (passed, graded)
    speed: dict[str, tuple[float, ...]]  # "task: case at size" -> ratios
    # What share of the points the grades could give without a GPU (coverage.py); '' for all.
    coverage_line: str
    notes: tuple[str, ...]  # what every grade's message says (shared_notes)
    first_failures: dict[str, list[tuple[str, int]]]  # task -> (failure, students), commonest first
    similarity: Similarity


def summarize(assignment: Assignment, grades: dict[str, Grade | None], loose: dict[str, str],
              similarity: Similarity) -> ClassSummary:
    max_score = float(sum(task.points for task in assignment.tasks))
    counts = Counter(grade.status if grade else Status.NOT_GRADED for grade in grades.values())
    counts["not a submission"] = len(loose)
    scored = [grade for grade in grades.values() if grade and grade.status in FINAL_STATUSES]
    graded = [grade for grade in scored if grade.status == Status.GRADED]
    scores = tuple(sorted(grade.score for grade in scored))
    pass_rates: dict[str, dict[str, tuple[int, int]]] = {}
    first_failures: dict[str, list[tuple[str, int]]] = {}
    speed: dict[str, list[float]] = {}
    for task in assignment.tasks:
        task_grades = [found for grade in graded for found in grade.tasks if found.id == task.id]
        pass_rates[task.id] = {
            group: (sum(_group_passed(found, group) for found in task_grades), len(task_grades))
            for group in (GROUPS if any(found.groups for found in task_grades) else ("all",))
        }
        failures = Counter(failure for found in task_grades if (failure := first_failure(found)))
        first_failures[task.id] = failures.most_common(COMMON_FAILURES)
        for found in task_grades:
            for result in found.speed:
                if result.ratio is not None and not result.problem:
                    speed.setdefault(f"{task.id}: {result.case} at {reports.size_name(result.size)}", []).append(result.ratio)
    return ClassSummary(
        assignment=assignment.id,
        max_score=max_score,
        counts={status: count for status, count in counts.items() if count},
        scores=scores,
        histogram=histogram(scores, max_score),
        statistics=score_statistics(scores),
        pass_rates=pass_rates,
        speed={name: tuple(sorted(ratios)) for name, ratios in speed.items()},
        coverage_line=coverage.class_line(graded),
        notes=shared_notes(grades),
        first_failures=first_failures,
        similarity=similarity,
    )


def shared_notes(grades: dict[str, Grade | None]) -> tuple[str, ...]:
    """The lines of the message that every graded student's grade has: notes on how the batch
    graded (the large cases left to a GPU, say), said once for the class, not as each student's."""
    messages = [grade.message.splitlines() for grade in grades.values() if grade and grade.status == Status.GRADED]
    return tuple(line for line in messages[0] if all(line in others for others in messages[1:])) if messages else ()


def _group_passed(task: TaskGrade, group: str) -> bool:
    if group == "all":  # an answered task: passed when it has every point
        return task.points == task.max_points
    return any(found.group == group and _earned(found) for found in task.groups)


def _earned(group: GroupResult) -> bool:
    """Whether a group passed with its points: one that passed but lost them (a required property
    not met, a forbidden library: "passed, no points") did not."""
    return group.verdict == Verdict.PASSED and group.points >= group.max_points


def first_failure(task: TaskGrade) -> str:
    """What went wrong first in a task, in words that students' failures share (no sizes or seeds):
    the first group that failed, its verdict and its first failing test case; else, where its
    groups passed without their points, why (the first line of the feedback: its findings).
    Neither a group left to a GPU nor a note (the large cases run on a GPU only, a stage skipped)
    is a failure: the coverage line counts the first, and the notes end the feedback."""
    for group in task.groups:
        if group.verdict == Verdict.PASSED or group.verdict in NOT_RUN:
            continue
        failed = next((case.name for case in group.test_cases if not case.passed), "")
        return f"{group.group}: {group.verdict}" + (f": {failed}" if failed else "")
    if task.groups:
        lost = any(group.verdict == Verdict.PASSED and not _earned(group) for group in task.groups)
    else:  # an answered task
        lost = task.points < task.max_points
    if lost and task.feedback:
        return task.feedback.splitlines()[0]
    return ""


def histogram(scores: tuple[float, ...], max_score: float) -> tuple[tuple[float, float, int], ...]:
    """HISTOGRAM_BINS equal bins from 0 to the maximum; the last one includes the maximum."""
    width = max_score / HISTOGRAM_BINS if max_score else 1.0
    counts = [0] * HISTOGRAM_BINS
    for score in scores:
        counts[min(int(score // width), HISTOGRAM_BINS - 1)] += 1
    return tuple((index * width, (index + 1) * width, count) for index, count in enumerate(counts))


def score_statistics(scores: tuple[float, ...]) -> dict[str, float]:
    if not scores:
        return {}
    first, median, third = statistics.quantiles(scores, n=4, method="inclusive") if len(scores) > 1 else scores * 3
    return {"mean": statistics.fmean(scores), "median": median, "first quartile": first, "third quartile": third}


def check_similarity(assignment: Assignment, submissions: dict[str, Path]) -> Similarity:
    """copydetect over every submission's files (each student's as one document, in the manifest's
    order), the skeleton's fingerprints removed, every pair compared."""
    try:
        from copydetect import CodeFingerprint, compare_files
    except ImportError:
        return Similarity(0, (), f"not checked: copydetect is not installed; {SIMILARITY_INSTALL}")
    window = GUARANTEE_TOKENS - NOISE_TOKENS + 1
    base = CodeFingerprint("skeleton.cu", NOISE_TOKENS, 1, language="cuda",
                           fp=_StringSource(_document(assignment, assignment.skeleton_dir)))
    prints = {}
    with tempfile.TemporaryDirectory(prefix="kernellab-similarity-") as scratch:
        for student, submission in sorted(submissions.items()):
            try:
                take(submission, assignment, Path(scratch) / student)
            except SubmissionRejected:
                continue
            text = _document(assignment, Path(scratch) / student)
            prints[student] = CodeFingerprint(f"{student}.cu", NOISE_TOKENS, window, boilerplate=list(base.hashes),
                                              language="cuda", fp=_StringSource(text))
    names = sorted(prints)
    pairs = []
    for index, first in enumerate(names):
        for second in names[index + 1:]:
            if prints[first].hashes.isdisjoint(prints[second].hashes):  # most pairs of a class: nothing shared
                continue
            _tokens, (first_share, second_share), _slices = compare_files(prints[first], prints[second])
            if max(first_share, second_share) >= SIMILARITY_THRESHOLD:
                pairs.append(Similar(first, second, float(first_share), float(second_share)))
    pairs.sort(key=lambda pair: -max(pair.first_share, pair.second_share))
    return Similarity(len(names), tuple(pairs))


def _document(assignment: Assignment, folder: Path) -> str:
    """The assignment's files found in `folder` (under their names or aliases), one after another;
    nothing when there is no such folder (an assignment whose skeleton is not generated yet)."""
    if not folder.is_dir():
        return ""
    names = {name: name for name in (*assignment.files.required, *assignment.files.optional)}
    names |= {alias: name for alias, name in assignment.files.aliases.items()}
    found = sorted((names[path.name], path) for path in folder.iterdir() if path.name in names)
    return "\n".join(path.read_text(encoding="utf-8", errors="replace") for _name, path in found)


class _StringSource:
    """What copydetect reads a document from instead of a file."""

    def __init__(self, text: str):
        self._text = text

    def read(self) -> str:
        return self._text


def markdown(summary: ClassSummary) -> str:
    students = ", ".join(f"{count} {status}" for status, count in summary.counts.items())
    lines = [f"# {summary.assignment}: class summary", "", f"Entries: {students}.", ""]
    lines += ["## Scores", ""]
    if summary.statistics:
        lines += [", ".join(f"{name} {value:.1f}" for name, value in summary.statistics.items())
                  + f" (of {summary.max_score:g}; {len(summary.scores)} scores, a rejected submission counts 0)", ""]
    if summary.coverage_line:
        lines += [summary.coverage_line, ""]
    lines += [f"Every grade says: {note}" for note in summary.notes] + ([""] if summary.notes else [])
    widest = max((count for _low, _high, count in summary.histogram), default=0) or 1
    lines += ["| points | students | |", "|---|---|---|"]
    lines += [f"| {low:g}-{high:g} | {count} | {'#' * round(40 * count / widest)} |" for low, high, count in summary.histogram]
    lines += ["", "## Pass rates", "", "A group passed where it passed with its points: one that passed without them "
              "(a required property not met, a forbidden library) did not.", "",
              "| task | group | passed | of graded | rate |", "|---|---|---|---|---|"]
    for task, groups in summary.pass_rates.items():
        for group, (passed, total) in groups.items():
            lines.append(f"| {task} | {group} | {passed} | {total} | {_percent(passed, total)} |")
    lines += ["", "## Speed: the student's time over the reference's", ""]
    if summary.speed:
        lines += ["| case | students | min | first quartile | median | third quartile | max |", "|---|---|---|---|---|---|---|"]
        lines += [f"| {case} | {len(ratios)} | " + " | ".join(f"{value:.2f}" for value in _five_numbers(ratios)) + " |"
                  for case, ratios in summary.speed.items()]
    else:
        lines.append("No speed was measured (the CPU backend, or no task passed its tests).")
    lines += ["", "## Most common first failures", "", "| task | first failure | students |", "|---|---|---|"]
    lines += [f"| {task} | {_cell(failure)} | {count} |" for task, failures in summary.first_failures.items()
              for failure, count in failures]
    lines += ["", "## Similarity (copydetect, the skeleton as base code)", "", *_similarity_lines(summary.similarity)]
    return "\n".join(lines) + "\n"


def _similarity_lines(similarity: Similarity) -> list[str]:
    if similarity.problem:
        return [similarity.problem]
    lines = [f"{similarity.compared} submissions compared pairwise; pairs sharing {SIMILARITY_THRESHOLD:.0%} or more "
             f"of either's code beyond the skeleton: {len(similarity.pairs)}."]
    if similarity.pairs:
        lines += ["", "| student | student | share of the first's code | share of the second's |", "|---|---|---|---|"]
        lines += [f"| {pair.first} | {pair.second} | {pair.first_share:.0%} | {pair.second_share:.0%} |"
                  for pair in similarity.pairs[:MAX_PAIRS]]
    return lines


def html_page(summary: ClassSummary) -> str:
    """The Markdown's sections as HTML, the histogram drawn as bars."""
    widest = max((count for _low, _high, count in summary.histogram), default=0) or 1
    bars = "".join(
        f'<tr><td>{low:g}-{high:g}</td><td><span class="bar" style="width:{20 * count / widest:.1f}em"></span> {count}</td></tr>'
        for low, high, count in summary.histogram
    )
    histogram_table = f"<table><tr><th>points</th><th>students</th></tr>{bars}</table>"
    sections = markdown(summary).split("\n## ")[1:]
    body = "".join(_section_html(section, histogram_table) for section in sections)
    title = f"{summary.assignment}: class summary"
    return (
        '<!DOCTYPE html>\n<html lang="en"><head><meta charset="utf-8">'
        f"<title>{html.escape(title)}</title><style>body{{font-family:sans-serif;max-width:64em;margin:2em auto}}"
        "table{border-collapse:collapse;margin:.5em 0}td,th{border:1px solid #ccc;padding:.25em .6em}"
        ".bar{display:inline-block;height:.9em;background:#47a}</style></head><body>"
        f"<h1>{html.escape(title)}</h1>{body}</body></html>\n"
    )


def _section_html(section: str, histogram_table: str) -> str:
    """One '## ' section of the Markdown as HTML, in its order: paragraphs and tables (the
    Scores section's table is the histogram, drawn as bars)."""
    heading, *lines = section.split("\n")
    parts = [f"<h2>{html.escape(heading)}</h2>"]
    rows: list[list[str]] = []
    for line in [*lines, ""]:
        if line.startswith("|"):
            if not line.startswith("|---"):
                rows.append([cell.replace("\\|", "|") for cell in re.split(r"(?<!\\) \| ", line.strip("| "))])
            continue
        if rows:
            parts.append(histogram_table if heading == "Scores" else _table_html(rows))
            rows = []
        if line:
            parts.append(f"<p>{html.escape(line)}</p>")
    return "".join(parts)


def _table_html(rows: list[list[str]]) -> str:
    head = "".join(f"<th>{html.escape(cell)}</th>" for cell in rows[0])
    body = "".join("<tr>" + "".join(f"<td>{html.escape(cell)}</td>" for cell in row) + "</tr>" for row in rows[1:])
    return f"<table><tr>{head}</tr>{body}</table>"


def _five_numbers(values: tuple[float, ...]) -> tuple[float, ...]:
    quartiles = statistics.quantiles(values, n=4, method="inclusive") if len(values) > 1 else values * 3
    return (values[0], *quartiles, values[-1])


def _percent(part: int, whole: int) -> str:
    return f"{100 * part / whole:.0f}%" if whole else "-"


def _cell(text: str) -> str:
    return text.replace("|", "\\|").replace("\n", " ")


def write_summary(assignment: Assignment, submissions: dict[str, Path], grades: dict[str, Grade | None],
                  loose: dict[str, str], out: Path) -> list[Path]:
    """summary.md and summary.html in `out`; the paths written."""
    summary = summarize(assignment, grades, loose, check_similarity(assignment, submissions))
    written = {out / MARKDOWN_FILE: markdown(summary), out / HTML_FILE: html_page(summary)}
    for path, text in written.items():
        reports.write_atomically(path, text)
    return list(written)
