"""The error type shared by the loaders and parsers, printed as `path:line: error: message`."""

from pathlib import Path


class InputError(Exception):
    """A problem with what the tool was given (a file, a manifest, an option): the CLI exits 2."""

    def __init__(self, message: str, path: Path | str | None = None, line: int | None = None):
        super().__init__(message)
        self.message = message
        self.path = path
        self.line = line

    def __str__(self) -> str:
        if self.path is None:
            return f"error: {self.message}"
        location = display_path(self.path)
        if self.line is not None:
            location += f":{self.line}"
        return f"{location}: error: {self.message}"


def display_path(path: Path | str) -> str:
    """The path relative to the working directory when it lies below it, so editors can open it."""
    path = Path(path)
    try:
        return str(path.resolve().relative_to(Path.cwd().resolve()))
    except ValueError:
        return str(path)
