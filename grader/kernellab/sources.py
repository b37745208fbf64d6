"""Reading C++ and CUDA sources as code: their comments blanked, whole words found."""

import re

COMMENT = re.compile(r"//[^\n]*|/\*.*?\*/", re.DOTALL)


def blank_comments(text: str) -> str:
    """`text` with every comment's characters but its newlines turned into spaces: what is left is
    the code, each word at its line and column (a comment separates words, as for the compiler)."""
    return COMMENT.sub(lambda comment: re.sub(r"[^\n]", " ", comment.group()), text)


def word_pattern(words: tuple[str, ...]) -> re.Pattern[str]:
    """Any of `words` as a whole word, case-insensitively; group 1 is the word found."""
    return re.compile(r"\b(" + "|".join(map(re.escape, words)) + r")\b", re.IGNORECASE)
