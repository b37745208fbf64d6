"""The student handout of an assignment: which files it holds, its rendered task text, and
reproducible .tar.gz and .zip archives of it.

The bundle keeps the repository's layout, reduced to one assignment, so that the same top-level
CMake project and the same `kernellab test` work in it unchanged. Its files are chosen by an
allow-list; `audit` then proves, from the archive itself, that nothing secret slipped in.
"""

import gzip
import io
import os
import re
import subprocess
import tarfile
import zipfile
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path, PurePosixPath

from kernellab.errors import InputError
from kernellab.grading.speed.calibration import calibration_path
from kernellab.manifest import Assignment
from kernellab.markers import strip_tree

# Every archive entry gets this time, so that the same tree gives byte-identical archives
# (1980-01-01, the earliest time a zip file can hold).
FIXED_DATE_TIME = (1980, 1, 1, 0, 0, 0)
FIXED_MTIME = 315532800
FILE_MODE = 0o644
SCRIPT_MODE = 0o755

# Repository paths the bundle holds whole, each only when it exists (the CPU backend may not).
SHARED_DIRECTORIES = ("grader/harness", "grader/kernellab", "grader/cpu")
SHARED_FILES = ("CMakeLists.txt", "grader/pyproject.toml")
# Of an assignment's folder, only what its CMake project builds against the student's files: the
# public tests, the speed program and the benchmark (an assignment whose benchmark builds the
# reference guards it, so the handout leaves it out); not wrong/, questions.toml or anything else.
ASSIGNMENT_ENTRIES = ("assignment.toml", "CMakeLists.txt", "tests", "speed", "bench")
# Never shipped from a shared directory: build and editor leftovers, the assignment templates of
# `kernellab new` (a reference solution and known-wrong versions), and the CPU backend's
# benchmark, which builds an assignment's reference.
_NOT_SHIPPED = re.compile(r"(^|/)(__pycache__|build|templates|bench|\.[^/]*)(/|$)|\.pyc$")

# Path components a handout must never contain, and why.
FORBIDDEN_PARTS = {
    "reference": "the reference solution",
    "wrong": "known-wrong versions",
    "hidden": "hidden tests",
}
# Files of an assignment's folder that hold answers: `questions.toml` has the exact answers to its
# questions (the students answer in the skeleton's answers.toml).
FORBIDDEN_NAMES = {"questions.toml": "the questions with their exact answers"}
# File names that look like grader secrets (keys, tokens, private settings).
_SECRET_NAME = re.compile(r"secret|token|credential|password|\.env$|\.pem$|\.key$|^id_(rsa|ed25519)", re.IGNORECASE)

# -S: the standard library only, so the self-check works, and works the same, on any machine
# with Python, whatever is installed there.
LAUNCHER = """\
#!/bin/sh
# The kernellab command of this handout, run from its own files (nothing to install).
here=$(cd "$(dirname "$0")" && pwd)
PYTHONPATH="$here/grader" exec python3 -S -m kernellab.student --root "$here" "$@"
"""

README = """\
# {title}

The handout of assignment `{id}`: read `handout/{id}.html` (or `handout/{id}.md`) for the tasks.
Your files are in `skeleton/{id}/`; edit them there, or copy them to a folder of your own.

## Check your work

You need CMake 3.24 or newer, the CUDA toolkit (nvcc), Catch2 v2 or v3 and Python 3.11 or newer
(on Debian or Ubuntu: `apt-get install {packages}`). Nothing needs installing with
pip: the `kernellab` script in this folder runs the checker from `grader/kernellab` with Python's
standard library alone.

```sh
./kernellab test                  # the files in skeleton/{id}/
./kernellab test path/to/folder   # your own copy
```

`kernellab test` builds the public tests against your files and prints one line per task:
passed, FAILED (with the first wrong element), build failed, timed out or crashed. On a machine
without an NVIDIA GPU your code is still compiled with nvcc, so build errors show, but the GPU
tests are reported as "not run: no GPU": no verdict is given for them there.{cpu_backend}
The files you start with are correct but slow, or missing where a task says so: the tasks whose
stub is missing fail until you write them.{speed_preview}

Where there is no `sh`, `python3 -S -m kernellab.student --root . test` with `PYTHONPATH=grader`
does the same as the script.

## What is here

| path | what |
|---|---|
| `skeleton/{id}/` | the files you edit |
| `handout/` | the task text |
| `assignments/{id}/` | the assignment's manifest and its public tests |
| `grader/` | the test harness and the `kernellab` checker |
| `CMakeLists.txt` | the CMake project that builds the tests |
"""

CPU_BACKEND_NOTE = """
Without a GPU, the CPU backend in `grader/cpu/` runs the GPU tests on the CPU (built with g++):
`./kernellab test --cmake-arg=-DKERNELLAB_BACKEND=cpu`."""

# For an assignment with [[speed]] cases.
SPEED_PREVIEW_NOTE = """

On a GPU, `kernellab test` also times your kernels of the tasks that passed and, where
`{calibration}` holds the instructor's calibration of the
reference's speed on your GPU model, previews the speed points each case would earn. Only a
preview: the grade times the reference itself, beside your code."""

HTML_PAGE = """\
<!DOCTYPE html>
<html lang="en">
<head>
<meta charset="utf-8">
<title>{title}</title>
<style>
body {{ font-family: sans-serif; max-width: 50em; margin: 2em auto; padding: 0 1em; line-height: 1.45; }}
code, pre {{ font-family: monospace; background: #f4f4f4; }}
pre {{ padding: 0.6em; overflow-x: auto; }}
table {{ border-collapse: collapse; }}
th, td {{ border: 1px solid #bbb; padding: 0.25em 0.6em; text-align: left; }}
</style>
</head>
<body>
{body}
</body>
</html>
"""


@dataclass(frozen=True)
class BundleFile:
    content: bytes
    mode: int = FILE_MODE


class BundleError(InputError):
    pass


def bundle_name(assignment: Assignment) -> str:
    """The bundle's top directory, and the stem of its archives."""
    return f"kernellab-{assignment.id}"


def handout_path(assignment: Assignment) -> Path:
    return assignment.root / "handout" / f"{assignment.id}.md"


def bundle_files(assignment: Assignment) -> dict[str, BundleFile]:
    """The bundle as relative POSIX path -> file, every path below the bundle's top directory."""
    root = assignment.root
    files: dict[str, BundleFile] = {}
    for name in SHARED_FILES:
        if (root / name).is_file():
            files[name] = BundleFile((root / name).read_bytes())
    for name in SHARED_DIRECTORIES:
        files.update(_tree(root / name, name))
    assignment_dir = assignment.manifest_path.parent
    for entry in ASSIGNMENT_ENTRIES:
        files.update(_tree(assignment_dir / entry, f"assignments/{assignment.id}/{entry}"))
    # Another assignment's tests that this one shares (build.tests), where the build looks for them.
    files.update(_tree(assignment.tests_dir, assignment.tests_dir.relative_to(root).as_posix()))
    # The skeleton as the markers give it now, whatever is committed (`check` compares the two).
    for name, content in strip_tree(assignment.reference_dir, assignment.written_task_ids).items():
        files[f"skeleton/{assignment.id}/{name}"] = BundleFile(content)
    markdown_text = handout_markdown(assignment)
    files[f"handout/{assignment.id}.md"] = BundleFile(markdown_text.encode())
    files[f"handout/{assignment.id}.html"] = BundleFile(render_html(assignment.title, markdown_text).encode())
    has_cpu_backend = any(name.startswith("grader/cpu/") for name in files)
    cpu_backend = CPU_BACKEND_NOTE if has_cpu_backend else ""
    # Boost.Context: the CPU backend's fibers (grader/cpu).
    packages = "cmake catch2 ninja-build" + (" libboost-context-dev" if has_cpu_backend else "")
    calibration = calibration_path(assignment).relative_to(root).as_posix()
    speed_preview = SPEED_PREVIEW_NOTE.format(calibration=calibration) if assignment.speed else ""
    readme = README.format(id=assignment.id, title=assignment.title, cpu_backend=cpu_backend, packages=packages,
                           speed_preview=speed_preview)
    files["README.md"] = BundleFile(readme.encode())
    files["kernellab"] = BundleFile(LAUNCHER.encode(), SCRIPT_MODE)
    return dict(sorted(files.items()))


def _tree(path: Path, prefix: str) -> dict[str, BundleFile]:
    """Every file below `path` (or `path` itself) under `prefix`, but those never shipped."""
    if path.is_file():
        return {prefix: BundleFile(path.read_bytes())}
    if not path.is_dir():
        return {}
    files = {}
    for file in sorted(path.rglob("*")):
        relative = file.relative_to(path).as_posix()
        if file.is_file() and not _NOT_SHIPPED.search(relative):
            mode = SCRIPT_MODE if file.stat().st_mode & 0o111 else FILE_MODE
            files[f"{prefix}/{relative}"] = BundleFile(file.read_bytes(), mode)
    return files


def handout_markdown(assignment: Assignment) -> str:
    """handout/<id>.md with the table of tasks and points from the manifest appended."""
    path = handout_path(assignment)
    if not path.is_file():
        raise BundleError("the assignment has no task text: write handout/<id>.md", path)
    return path.read_text(encoding="utf-8").rstrip("\n") + "\n\n" + tasks_table(assignment)


def tasks_table(assignment: Assignment) -> str:
    """The Markdown table of tasks and points, generated from the manifest."""
    rows = [f"| `{task.id}` | {task.title} | {task.points} |" for task in assignment.tasks]
    total = sum(task.points for task in assignment.tasks)
    return "\n".join(
        [
            "## Tasks and points",
            "",
            "| task | title | points |",
            "|---|---|---:|",
            *rows,
            f"| | **total** | **{total}** |",
            "",
        ]
    )


def render_html(title: str, markdown_text: str) -> str:
    """A standalone HTML page of the Markdown text."""
    # Imported here: only the instructor side renders, and the handout's own copy of this
    # package must run `kernellab test` without the markdown package.
    import markdown
    from html import escape

    body = markdown.markdown(markdown_text, extensions=["tables", "fenced_code"], output_format="html")
    return HTML_PAGE.format(title=escape(title), body=body)


def release(assignment: Assignment, out_dir: Path) -> list[Path]:
    """Write both archives and audit what they hold; on a finding, remove them and raise BundleError."""
    archives = write_archives(bundle_files(assignment), bundle_name(assignment), out_dir)
    problems = [
        f"{archive.name}: {problem}" for archive in archives for problem in audit(archive_members(archive), assignment)
    ]
    if problems:
        for archive in archives:
            archive.unlink()
        raise BundleError("the handout would hold what must stay with the instructor:\n  " + "\n  ".join(problems))
    return archives


def write_archives(files: dict[str, BundleFile], top: str, out_dir: Path) -> list[Path]:
    """<out_dir>/<top>.tar.gz and <out_dir>/<top>.zip, each holding `files` below `top/`."""
    out_dir.mkdir(parents=True, exist_ok=True)
    tar_path, zip_path = out_dir / f"{top}.tar.gz", out_dir / f"{top}.zip"
    tar_path.write_bytes(tar_gz_bytes(files, top))
    zip_path.write_bytes(zip_bytes(files, top))
    return [tar_path, zip_path]


def tar_gz_bytes(files: dict[str, BundleFile], top: str) -> bytes:
    buffer = io.BytesIO()
    # mtime 0 and no file name in the gzip header: the compressed bytes depend on the content only.
    with gzip.GzipFile(filename="", mode="wb", fileobj=buffer, mtime=0) as compressed:
        with tarfile.open(fileobj=compressed, mode="w", format=tarfile.PAX_FORMAT) as archive:
            for name, file in sorted(files.items()):
                info = tarfile.TarInfo(f"{top}/{name}")
                info.size, info.mode, info.mtime = len(file.content), file.mode, FIXED_MTIME
                archive.addfile(info, io.BytesIO(file.content))
    return buffer.getvalue()


def zip_bytes(files: dict[str, BundleFile], top: str) -> bytes:
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w") as archive:
        for name, file in sorted(files.items()):
            info = zipfile.ZipInfo(f"{top}/{name}", date_time=FIXED_DATE_TIME)
            info.compress_type = zipfile.ZIP_DEFLATED
            info.create_system = 3  # Unix, so that the mode below is honoured on extraction
            info.external_attr = (0o100000 | file.mode) << 16
            archive.writestr(info, file.content)
    return buffer.getvalue()


def unpack(archive: Path, destination: Path) -> None:
    """Extract a .tar.gz archive into `destination`, as a student would."""
    with tarfile.open(archive) as opened:
        # The "data" filter (Python 3.11.4 on) refuses links and paths that leave `destination`.
        opened.extractall(destination, **({"filter": "data"} if hasattr(tarfile, "data_filter") else {}))


def self_check(bundle: Path, arguments: Sequence[str]) -> subprocess.CompletedProcess:
    """Run `./kernellab test ARGUMENTS` in an unpacked handout, in an environment that, like a
    student's, knows nothing of this repository."""
    environment = {key: value for key, value in os.environ.items() if key not in ("PYTHONPATH", "KERNELLAB_ROOT")}
    return subprocess.run(
        ["./kernellab", "test", *arguments], cwd=bundle, env=environment, capture_output=True, text=True
    )


def archive_members(archive: Path) -> dict[str, bytes]:
    """Name -> content of every file in a .tar.gz or .zip archive."""
    if archive.name.endswith(".zip"):
        with zipfile.ZipFile(archive) as opened:
            return {info.filename: opened.read(info) for info in opened.infolist() if not info.is_dir()}
    with tarfile.open(archive, "r:gz") as opened:
        return {member.name: opened.extractfile(member).read() for member in opened.getmembers() if member.isfile()}


def audit(members: dict[str, bytes], assignment: Assignment) -> list[str]:
    """What must not be in a handout but is, one line per member; empty when it is clean.

    By path: the reference, known-wrong versions, hidden tests, the questions' answers and files
    named like secrets. By content: any file holding a solution marker of the assignment's tasks,
    which only a reference file has, under whatever name it was copied.
    """
    marker = _solution_marker(assignment.task_ids)
    problems = []
    for name, content in sorted(members.items()):
        parts = PurePosixPath(name).parts
        reasons = [why for part, why in FORBIDDEN_PARTS.items() if part in parts]
        if parts[-1] in FORBIDDEN_NAMES:
            reasons.append(FORBIDDEN_NAMES[parts[-1]])
        if _SECRET_NAME.search(parts[-1]):
            reasons.append("a file named like a secret")
        if marker.search(content):
            reasons.append("a solution marker: a reference file")
        problems += [f"{name}: {reason}" for reason in reasons]
    return problems


def _solution_marker(task_ids: Iterable[str]) -> re.Pattern[bytes]:
    tasks = "|".join(re.escape(task) for task in task_ids)
    return re.compile(rb"^[ \t]*(//|#) BEGIN SOLUTION (" + tasks.encode() + rb")[ \t]*\r?$", re.MULTILINE)
