"""Intake: take the files the manifest names out of a submitted folder, .zip or .tar.gz.

Only the student's own files (the manifest's `files`, under their names or aliases) are taken,
wherever they sit in the submission; anything else (their copy of the tests, build folders) is
listed as ignored, because the grader builds with its own. A submission is refused whole, with a
message a TA can act on, when it holds a link, a device file, a path leaving the archive, an
oversized file, a name that appears twice, no copy of a required file, or code that reaches into
the test harness that records its results (read as the compiler reads it: static_checks.py).
"""

import os
import stat
import tarfile
import zipfile
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path, PurePosixPath

from kernellab import static_checks
from kernellab.errors import InputError
from kernellab.manifest import Assignment

# No student source file of a lab is anywhere near this; a bigger one is a mistake or an attack.
MAX_FILE_BYTES = 4 << 20
MAX_ENTRIES = 10_000
ARCHIVE_SUFFIXES = (".zip", ".tar.gz", ".tgz", ".tar")
_READ_BLOCK = 1 << 16
class SubmissionRejected(InputError):
    """The submission cannot be graded as it is; the message says why."""


@dataclass(frozen=True)
class Intake:
    # The files taken, by the name the student gave them (a manifest name or alias).
    files: tuple[str, ...]
    # Paths inside the submission that were left out.
    ignored: tuple[str, ...]


@dataclass(frozen=True)
class _Entry:
    path: PurePosixPath
    size: int
    kind: str  # "file", "dir" or what makes it unacceptable ("a symbolic link", ...)


def take(submission: Path, assignment: Assignment, destination: Path) -> Intake:
    """Copy the submission's accepted files into `destination` (created, must not exist)."""
    accepted = set(assignment.files.required) | set(assignment.files.optional) | set(assignment.files.aliases)
    if submission.is_symlink():
        raise SubmissionRejected(f"{submission} is a symbolic link; submit the folder or archive itself")
    if submission.is_dir():
        source = _FolderSource(submission)
    elif submission.is_file() and submission.name.endswith(ARCHIVE_SUFFIXES):
        source = _ArchiveSource.open(submission)
    elif submission.exists():
        raise SubmissionRejected(
            f"{submission.name}: not a folder or an archive ({', '.join(ARCHIVE_SUFFIXES)})"
        )
    else:
        raise SubmissionRejected(f"{submission}: no such file or folder")
    with source:
        entry_names = set(assignment.files.names_of(assignment.files.entry))
        chosen = _choose(source.entries(), accepted, entry_names, submission.name)
        destination.mkdir(parents=True)
        for name, entry in chosen.items():
            source.copy(entry, destination / name)
        ignored = tuple(
            str(entry.path) for entry in source.entries() if entry.kind == "file" and entry not in chosen.values()
        )
    _require(assignment, set(chosen), submission.name)
    _refuse_harness_tampering(destination, assignment, submission.name)
    return Intake(tuple(sorted(chosen)), ignored)


def _choose(entries: list[_Entry], accepted: set[str], entry_names: set[str], label: str) -> dict[str, _Entry]:
    """The entry to take for each accepted name. A name found in several folders is taken from
    the folder of the entry file (`entry_names`: its name and aliases) where one copy sits there:
    a course's hand-in of several parts may give each part its own copy of a header (CS149's asst3
    has CycleTimer.h in saxpy/, scan/ and render/; the scan's is scan/'s). Otherwise it is refused."""
    if len(entries) > MAX_ENTRIES:
        raise SubmissionRejected(f"{label} holds {len(entries)} entries, more than {MAX_ENTRIES}")
    copies: dict[str, list[_Entry]] = {}
    for entry in entries:
        if entry.path.is_absolute() or ".." in entry.path.parts:
            raise SubmissionRejected(f"{label}: the path {entry.path} leaves the submission")
        if entry.kind not in ("file", "dir"):
            raise SubmissionRejected(f"{label}: {entry.path} is {entry.kind}; only plain files are accepted")
        if entry.kind != "file" or entry.path.name not in accepted:
            continue
        if entry.size > MAX_FILE_BYTES:
            raise SubmissionRejected(
                f"{label}: {entry.path} is {entry.size} bytes, more than the {MAX_FILE_BYTES} a source file may have"
            )
        copies.setdefault(entry.path.name, []).append(entry)
    entry_copies = [entry for name in entry_names for entry in copies.get(name, [])]
    entry_folder = entry_copies[0].path.parent if len(entry_copies) == 1 else None
    chosen: dict[str, _Entry] = {}
    for name, found in copies.items():
        beside_entry = [entry for entry in found if entry.path.parent == entry_folder]
        if len(found) > 1 and len(beside_entry) != 1:
            raise SubmissionRejected(
                f"{label}: {name} appears twice ({found[0].path} and {found[1].path}); submit one copy"
            )
        chosen[name] = found[0] if len(found) == 1 else beside_entry[0]
    return chosen


def _require(assignment: Assignment, names: set[str], label: str) -> None:
    aliases = assignment.files.aliases
    for required in assignment.files.required:
        candidates = [required] + [alias for alias, canonical in aliases.items() if canonical == required]
        if not names & set(candidates):
            raise SubmissionRejected(f"{label} has no {' or '.join(candidates)}")
    for canonical in (*assignment.files.required, *assignment.files.optional):
        both = names & ({canonical} | {alias for alias, name in aliases.items() if name == canonical})
        if len(both) > 1:
            raise SubmissionRejected(f"{label} holds {' and '.join(sorted(both))}: the same file twice; submit one")


def _refuse_harness_tampering(taken: Path, assignment: Assignment, label: str) -> None:
    """Refuse code that reaches into the harness: results are recorded in the process that runs
    the student's code, so such code could forge them. Read as the compiler reads it
    (static_checks.py): comments, strings, line splices and macros cannot hide it. A first look,
    each file alone and before any build; every build checks what it compiled (compiled_checks.py)."""
    tests = assignment.tests_dir
    protected = static_checks.assignment_protected_names(assignment)
    for path in sorted(taken.iterdir()):
        if path.suffix not in static_checks.SOURCE_SUFFIXES:
            continue  # read only where code includes it, as part of that code
        if found := static_checks.harness_tampering(path, taken, tests, protected):
            where, what = found
            raise SubmissionRejected(
                f"{label}: {where} reaches into the grader's test harness ({what}); "
                "a solution may not touch the code that records test results"
            )


def _kind_of_mode(mode: int) -> str:
    if stat.S_ISREG(mode):
        return "file"
    if stat.S_ISDIR(mode):
        return "dir"
    if stat.S_ISLNK(mode):
        return "a symbolic link"
    if stat.S_ISCHR(mode) or stat.S_ISBLK(mode):
        return "a device file"
    if stat.S_ISFIFO(mode):
        return "a named pipe"
    return "not a plain file"


class _FolderSource:
    def __init__(self, root: Path):
        self.root = root
        self._entries: list[_Entry] | None = None

    def __enter__(self) -> "_FolderSource":
        return self

    def __exit__(self, *exc: object) -> None:
        return None

    def entries(self) -> list[_Entry]:
        if self._entries is None:
            self._entries = list(self._walk())
        return self._entries

    def _walk(self) -> Iterator[_Entry]:
        # os.walk does not follow links to folders; each link is reported as what it is.
        for directory, folders, files in os.walk(self.root):
            for name in sorted(folders + files):
                path = Path(directory, name)
                info = path.lstat()
                yield _Entry(PurePosixPath(path.relative_to(self.root).as_posix()), info.st_size, _kind_of_mode(info.st_mode))
            folders.sort()

    def copy(self, entry: _Entry, target: Path) -> None:
        with open(self.root / entry.path, "rb") as source:
            _copy_limited(source, target, entry.path)


class _ArchiveSource:
    def __init__(self, path: Path, archive: zipfile.ZipFile | tarfile.TarFile):
        self.path = path
        self.archive = archive
        self._entries: list[_Entry] | None = None
        self._members: dict[PurePosixPath, object] = {}

    @classmethod
    def open(cls, path: Path) -> "_ArchiveSource":
        try:
            if path.name.endswith(".zip"):
                return cls(path, zipfile.ZipFile(path))
            return cls(path, tarfile.open(path))
        except (zipfile.BadZipFile, tarfile.TarError, OSError, EOFError) as error:
            raise SubmissionRejected(f"{path.name} cannot be read as an archive: {error}") from None

    def __enter__(self) -> "_ArchiveSource":
        return self

    def __exit__(self, *exc: object) -> None:
        self.archive.close()

    def entries(self) -> list[_Entry]:
        if self._entries is None:
            try:
                self._entries = list(self._list())
            except (zipfile.BadZipFile, tarfile.TarError, OSError, EOFError) as error:
                raise SubmissionRejected(f"{self.path.name} cannot be read as an archive: {error}") from None
        return self._entries

    def _list(self) -> Iterator[_Entry]:
        if isinstance(self.archive, zipfile.ZipFile):
            for info in self.archive.infolist():
                mode = info.external_attr >> 16
                kind = "dir" if info.is_dir() else _kind_of_mode(mode) if stat.S_IFMT(mode) else "file"
                path = PurePosixPath(info.filename.rstrip("/"))
                self._members[path] = info
                yield _Entry(path, info.file_size, kind)
            return
        for member in self.archive:
            kind = (
                "file" if member.isreg() else "dir" if member.isdir()
                else "a symbolic link" if member.issym()
                else "a hard link" if member.islnk()
                else "a device file" if member.isdev()
                else "not a plain file"
            )
            path = PurePosixPath(member.name)
            self._members[path] = member
            yield _Entry(path, member.size, kind)

    def copy(self, entry: _Entry, target: Path) -> None:
        member = self._members[entry.path]
        try:
            if isinstance(self.archive, zipfile.ZipFile):
                with self.archive.open(member) as source:
                    _copy_limited(source, target, entry.path)
            else:
                source = self.archive.extractfile(member)
                if source is None:
                    raise SubmissionRejected(f"{self.path.name}: {entry.path} cannot be read")
                with source:
                    _copy_limited(source, target, entry.path)
        except (zipfile.BadZipFile, tarfile.TarError, OSError, EOFError) as error:
            raise SubmissionRejected(f"{self.path.name}: {entry.path} cannot be extracted: {error}") from None


def _copy_limited(source, target: Path, label: PurePosixPath) -> None:
    """Copy at most MAX_FILE_BYTES: an archive's stated size is not trusted (zip bombs)."""
    written = 0
    with open(target, "wb") as out:
        while block := source.read(_READ_BLOCK):
            written += len(block)
            if written > MAX_FILE_BYTES:
                raise SubmissionRejected(f"{label} unpacks to more than {MAX_FILE_BYTES} bytes")
            out.write(block)
