"""What `grade` and `batch` show in the terminal: rich tables, plain when the output is not a terminal."""

from rich.console import Console
from rich.table import Table

from kernellab.grading.model import Grade
from kernellab.reports import entries, summary
from kernellab.verdict import Verdict

console = Console(highlight=False)
DETAIL_LINES = 12


def print_grade(grade: Grade) -> None:
    table = Table(title=f"{grade.assignment}: {grade.student}", title_justify="left")
    table.add_column("test")
    table.add_column("points", justify="right")
    table.add_column("verdict")
    table.add_column("time", justify="right")
    for entry in entries(grade):
        # Left to a GPU is no failure: neither green nor red.
        style = "green" if entry.passed else "yellow" if entry.left_to_gpu else "red"
        first = entry.output.split("\n", 1)[0] if not entry.passed else ""
        verdict = f"[{style}]{_escape(entry.verdict)}[/{style}]" + (f" {_escape(first)}" if first and first not in entry.verdict else "")
        table.add_row(entry.name, f"{entry.points:g}/{entry.max_points:g}", verdict, f"{entry.seconds:.1f} s")
    console.print(table)
    for entry in entries(grade):
        if entry.output and entry.verdict != Verdict.PASSED and not entry.passed:
            lines = entry.output.split("\n")
            shown = lines[:DETAIL_LINES] + ([f"... ({len(lines) - DETAIL_LINES} more lines in the reports)"] if len(lines) > DETAIL_LINES else [])
            console.print(f"\n[bold]{_escape(entry.name)}[/bold]: {_escape(entry.verdict)}")
            for line in shown:
                console.print(f"    {_escape(line)}")
    console.print()
    console.print(_escape(summary(grade)))


def _escape(text: str) -> str:
    """Student output may hold '[...]', which rich would read as markup."""
    return text.replace("[", "\\[")
