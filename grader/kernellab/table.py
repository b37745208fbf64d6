"""Plain-text tables for the verbs' reports: left-aligned columns two spaces apart."""

from collections.abc import Sequence


def format_columns(rows: Sequence[Sequence[str]]) -> list[str]:
    """One line per row, each column padded to its widest cell, trailing spaces dropped."""
    widths = [max(len(row[column]) for row in rows) for column in range(len(rows[0]))]
    return ["  ".join(cell.ljust(width) for cell, width in zip(row, widths)).rstrip() for row in rows]


def shortened(text: str, width: int) -> str:
    return text if len(text) <= width else text[: width - 3] + "..."
