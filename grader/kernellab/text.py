"""Byte-exact text handling shared by the marker stripper and the patch applier."""

import re
from pathlib import Path

_LINE = re.compile(r"[^\n]*\n|[^\n]+\Z")


def read_text(path: Path) -> str:
    # surrogateescape round-trips any byte, so files that are not UTF-8 still come back unchanged.
    return path.read_bytes().decode("utf-8", "surrogateescape")


def encode_text(text: str) -> bytes:
    return text.encode("utf-8", "surrogateescape")


def split_lines(text: str) -> list[str]:
    """Lines with their endings; unlike str.splitlines, only '\\n' ends a line."""
    return _LINE.findall(text)


def split_ending(line: str) -> tuple[str, str]:
    """('body', 'ending') where ending is '\\r\\n', '\\n' or ''."""
    for ending in ("\r\n", "\n"):
        if line.endswith(ending):
            return line[: -len(ending)], ending
    return line, ""
