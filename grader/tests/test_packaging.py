"""A plain, non-editable `pip install ./grader` in a fresh virtual environment: the wheel pip
builds carries the starter template, so the installed `kernellab new` scaffolds with no checkout
of kernellab beside it, and `kernellab --version` names the version."""

import shutil
import subprocess
import sys

import pytest

from helpers import REAL_ROOT, write_files
from kernellab import __version__

pytestmark = pytest.mark.slow

# What pip says when it cannot download the build backend (setuptools): no package index here.
NO_INDEX = ("No matching distribution found", "Could not find a version", "Failed to establish a new connection")


def test_the_installed_wheel_prints_its_version_and_scaffolds_from_its_own_templates(tmp_path):
    source = tmp_path / "source"
    source.mkdir()
    shutil.copy(REAL_ROOT / "grader" / "pyproject.toml", source / "pyproject.toml")
    shutil.copytree(REAL_ROOT / "grader" / "kernellab", source / "kernellab", ignore=shutil.ignore_patterns("__pycache__"))
    venv = tmp_path / "venv"
    # This pip installs into the venv (--python): quicker than a pip of its own, the same install.
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(venv)], check=True)
    # --no-deps: what is under test is the package's own files; numpy and the others come from PyPI.
    installed = subprocess.run([sys.executable, "-m", "pip", "--python", str(venv / "bin" / "python"), "install", "--no-deps",
                                "--disable-pip-version-check", str(source)], capture_output=True, text=True)
    if installed.returncode != 0 and any(words in installed.stdout + installed.stderr for words in NO_INDEX):
        pytest.skip(f"pip cannot download setuptools to build the wheel: {installed.stderr.strip()[-300:]}")
    assert installed.returncode == 0, installed.stdout + installed.stderr
    shutil.rmtree(source)  # nothing may come from the source tree any more

    kernellab = str(venv / "bin" / "kernellab")
    version = subprocess.run([kernellab, "--version"], capture_output=True, text=True, check=True)
    assert version.stdout.strip() == f"kernellab {__version__}"
    course = tmp_path / "course"
    write_files(course, {"CMakeLists.txt": "", "assignments/.keep": ""})
    created = subprocess.run([kernellab, "new", "lab1"], cwd=course, capture_output=True, text=True)
    assert created.returncode == 0, created.stdout + created.stderr
    for path in ("assignments/lab1/assignment.toml", "assignments/lab1/tests/test_saxpy.cu", "reference/lab1/kernels.cuh",
                 "skeleton/lab1/kernels.cuh", "handout/lab1.md"):
        assert (course / path).is_file(), f"kernellab new lab1 made no {path}: {created.stdout}"
    assert "BEGIN SOLUTION" not in (course / "skeleton/lab1/kernels.cuh").read_text()
