"""The examples of docs/instructors.md are quoted from real files: each must still be in its file."""

import re

import pytest

from helpers import REAL_ROOT

DOC = REAL_ROOT / "docs" / "instructors.md"
# A fenced block, with the "From `path`:" that names its source when it is a quote.
_BLOCK = re.compile(
    r"(?:[Ff]rom\s+`(?P<path>[^`]+)`:\n\n)?```(?P<language>\w*)\n(?P<body>.*?)^```$", re.DOTALL | re.MULTILINE
)
# Blocks of commands to type are not quotes.
COMMAND_LANGUAGES = ("sh",)

BLOCKS = list(_BLOCK.finditer(DOC.read_text(encoding="utf-8")))
QUOTES = [block for block in BLOCKS if block["language"] not in COMMAND_LANGUAGES]


def test_the_doc_has_quoted_examples():
    assert len(QUOTES) >= 8


@pytest.mark.parametrize("block", QUOTES, ids=[f"{block['path']}:{block.start()}" for block in QUOTES])
def test_each_example_is_quoted_verbatim_from_the_file_it_names(block: re.Match):
    assert block["path"], f"an example block names no source file:\n{block['body']}"
    source = REAL_ROOT / block["path"]
    assert source.is_file(), f"{block['path']} does not exist"
    assert block["body"] in source.read_text(encoding="utf-8"), f"no longer in {block['path']}:\n{block['body']}"


def test_every_command_the_doc_names_exists():
    from kernellab.cli import COMMANDS

    verbs = {command.__name__.rsplit(".", 1)[1] for command in COMMANDS}
    named = set(re.findall(r"^kernellab (\w+)", "".join(block["body"] for block in BLOCKS), re.MULTILINE))
    assert named and named <= verbs
