"""What a grader needs of the repository to grade one assignment on another machine (an
autograder platform's image): the CMake project, the harness, the CPU backend, the `kernellab`
package, and the assignment's folder, reference and skeleton, keeping the repository's layout
so that `kernellab --root` works there unchanged. Unlike the student handout (bundle.py), this
holds the reference: it goes only where students cannot read it.
"""

import zipfile
from pathlib import Path

from kernellab.bundle import FILE_MODE, FIXED_DATE_TIME, SCRIPT_MODE, BundleFile
from kernellab.errors import InputError
from kernellab.manifest import Assignment

# The repository's, like its harness: the `kernellab` package that its CMake project runs (the
# manifest reader), with its pyproject.toml (the grader's dependencies, and what the platform's
# setup installs). Not the package running this: an installed one has no pyproject.toml beside it.
PYPROJECT = "grader/pyproject.toml"
SHARED = ("CMakeLists.txt", "grader/harness", "grader/cpu", PYPROJECT, "grader/kernellab")
# Never copied: build folders, caches, editor files, and the templates of `kernellab new`.
_LEFT_OUT_PARTS = {"__pycache__", "build", "templates"}


def grader_files(assignment: Assignment) -> dict[str, BundleFile]:
    """Relative POSIX path -> file, for grading `assignment` with `kernellab --root` on their folder."""
    root = assignment.root
    if missing := [name for name in SHARED if not (root / name).exists()]:
        raise InputError(f"{root} has no {', '.join(missing)}: the grader's files come from the repository root, "
                         "a checkout of kernellab (or a course repository copied from one)")
    files: dict[str, BundleFile] = {}
    for name in (*SHARED, assignment.manifest_path.parent.relative_to(root).as_posix(), assignment.reference, assignment.skeleton):
        files.update(_tree(root, root / name))
    return dict(sorted(files.items()))


def _tree(root: Path, path: Path) -> dict[str, BundleFile]:
    paths = [path] if path.is_file() else sorted(found for found in path.rglob("*") if found.is_file())
    files = {}
    for found in paths:
        relative = found.relative_to(root)
        if _LEFT_OUT_PARTS & set(relative.parts) or any(part.startswith(".") for part in relative.parts):
            continue
        files[relative.as_posix()] = BundleFile(found.read_bytes(), SCRIPT_MODE if found.stat().st_mode & 0o111 else FILE_MODE)
    return files


def write_tree(files: dict[str, BundleFile], folder: Path) -> None:
    """`files` under `folder`, with their modes."""
    for name, file in files.items():
        path = folder / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(file.content)
        path.chmod(file.mode)


def zip_at_root(files: dict[str, BundleFile], path: Path) -> None:
    """A reproducible zip of `files`, each at its own path from the archive's root (not below a
    top folder: Gradescope looks for setup.sh and run_autograder there)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    with zipfile.ZipFile(path, "w") as archive:
        for name, file in sorted(files.items()):
            info = zipfile.ZipInfo(name, date_time=FIXED_DATE_TIME)
            info.compress_type = zipfile.ZIP_DEFLATED
            info.create_system = 3  # Unix: the modes below hold on extraction
            info.external_attr = (0o100000 | file.mode) << 16
            archive.writestr(info, file.content)
