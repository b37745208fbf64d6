"""A plain, non-editable install of grader/ in a fresh virtual environment, the wheel built offline:
the installed `kernellab` names its version, scaffolds from the templates in its own wheel, and
exports an assignment for Gradescope and PrairieLearn with the grader's files of the repository
it is pointed at (an installed package has no pyproject.toml beside it), with no checkout of
kernellab on its path."""

import json
import shutil
import site
import subprocess
import sys
import tomllib
import zipfile
from pathlib import Path

import pytest

from helpers import REAL_ROOT, write_files
from kernellab import __version__

pytestmark = pytest.mark.slow


@pytest.fixture(scope="module")
def installed(tmp_path_factory) -> Path:
    """The bin folder of a fresh virtual environment holding kernellab's wheel alone."""
    scratch = tmp_path_factory.mktemp("packaging")
    source = scratch / "source"
    source.mkdir()
    shutil.copy(REAL_ROOT / "grader" / "pyproject.toml", source / "pyproject.toml")
    shutil.copytree(REAL_ROOT / "grader" / "kernellab", source / "kernellab", ignore=shutil.ignore_patterns("__pycache__"))
    # Built with this Python's setuptools (the test extra), so no package index is needed.
    built = subprocess.run([sys.executable, "-m", "pip", "wheel", "--no-deps", "--no-build-isolation", "--no-index",
                            "--disable-pip-version-check", "--wheel-dir", str(scratch / "dist"), str(source)],
                           capture_output=True, text=True)
    assert built.returncode == 0, built.stdout + built.stderr
    (wheel,) = (scratch / "dist").glob("kernellab-*.whl")
    venv = scratch / "venv"
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(venv)], check=True)
    python = str(venv / "bin" / "python")
    # This pip installs into the venv (--python): quicker than a pip of its own, the same install.
    installing = subprocess.run([sys.executable, "-m", "pip", "--python", python, "install", "--no-deps",
                                 "--no-index", "--disable-pip-version-check", str(wheel)], capture_output=True, text=True)
    assert installing.returncode == 0, installing.stdout + installing.stderr
    # --no-deps: what is under test is the package's own files; numpy and the others are this
    # Python's, on the venv's path after its own site-packages (a .pth adds folders at the end), so
    # `kernellab` is the wheel's. (--system-site-packages would miss them where this is a venv.)
    own = subprocess.run([python, "-c", "import sysconfig; print(sysconfig.get_path('purelib'))"],
                         capture_output=True, text=True, check=True).stdout.strip()
    (Path(own) / "dependencies.pth").write_text("".join(f"{folder}\n" for folder in site.getsitepackages()))
    shutil.rmtree(source)  # nothing may come from the source tree any more
    return venv / "bin"


def test_the_installed_wheel_prints_its_version_and_scaffolds_from_its_own_templates(installed, tmp_path):
    kernellab = str(installed / "kernellab")
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


def test_the_installed_wheel_exports_for_gradescope_and_prairielearn_with_the_repository_s_grader(installed, tmp_path):
    where = subprocess.run([str(installed / "python"), "-c", "import kernellab; print(kernellab.__file__)"],
                           cwd=tmp_path, capture_output=True, text=True, check=True)
    assert Path(where.stdout.strip()).is_relative_to(installed.parent), "the export must run the installed package"
    kernellab = [str(installed / "kernellab"), "--root", str(REAL_ROOT), "export"]
    course = tmp_path / "course"
    exported = subprocess.run([*kernellab, "prairielearn", "pbb", "--course", str(course), "--image", "course/grader"],
                              cwd=tmp_path, capture_output=True, text=True)
    assert exported.returncode == 0, exported.stdout + exported.stderr
    pyproject = (REAL_ROOT / "grader" / "pyproject.toml").read_text()
    info = json.loads((course / "questions/pbb/info.json").read_text())
    assert info["externalGradingOptions"]["enabled"] is True
    server_files = course / "serverFilesCourse/kernellab"
    assert (server_files / "grader/pyproject.toml").read_text() == pyproject
    assert (server_files / "grader/kernellab/cli.py").is_file() and (server_files / "grader/harness").is_dir()
    dockerfile = (course / "graders/kernellab/Dockerfile").read_text()
    for requirement in tomllib.loads(pyproject)["project"]["dependencies"]:
        assert f"'{requirement}'" in dockerfile, dockerfile

    exported = subprocess.run([*kernellab, "gradescope", "pbb", "--out", str(tmp_path / "gradescope")],
                              cwd=tmp_path, capture_output=True, text=True)
    assert exported.returncode == 0, exported.stdout + exported.stderr
    with zipfile.ZipFile(tmp_path / "gradescope/kernellab-pbb-gradescope.zip") as archive:
        # setup.sh installs the grader from this folder: without its pyproject.toml, pip cannot.
        assert archive.read("kernellab/grader/pyproject.toml").decode() == pyproject
        assert "kernellab/grader/kernellab/cli.py" in archive.namelist()
