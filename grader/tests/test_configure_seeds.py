"""New build folders configured from the compiler detection of the first one with the same
arguments (cmake._Seeds): the same build files, without detecting the compilers again."""

import re
import shutil
from pathlib import Path

import pytest

from helpers import REAL_ROOT
from kernellab import cmake
from kernellab.errors import InputError

pytestmark = pytest.mark.skipif(shutil.which("cmake") is None or shutil.which("ninja") is None, reason="needs cmake and ninja")

DETECTION = "The CXX compiler identification is"
CPU_ONLY = ("-DKERNELLAB_BACKEND=cpu", "-DKERNELLAB_CPU_NVCC_CHECK=OFF")


@pytest.fixture(autouse=True)
def own_seeds(monkeypatch):
    monkeypatch.setattr(cmake, "_SEEDS", cmake._Seeds())


def configured(folder: Path, solution: str, args: tuple[str, ...] = CPU_ONLY) -> tuple[str, str]:
    """The configure step's output and the build files, with the folder's own path and the
    solution's named alike."""
    cmake.configure(REAL_ROOT, folder, "pbb", REAL_ROOT / solution / "pbb", folder / "configure.log", args)
    ninja = (folder / "build.ninja").read_text().replace(str(folder.resolve()), "FOLDER").replace(solution, "SOLUTION")
    return (folder / "configure.log").read_text(), ninja


def test_a_second_new_folder_is_configured_without_detecting_the_compilers_into_the_same_build_files(tmp_path: Path):
    first_log, _ = configured(tmp_path / "first", "reference")
    second_log, seeded = configured(tmp_path / "second", "skeleton")
    assert DETECTION in first_log and DETECTION not in second_log
    assert f"KERNELLAB_SOLUTION:STRING={REAL_ROOT / 'skeleton' / 'pbb'}" in (tmp_path / "second" / "CMakeCache.txt").read_text()
    assert str(tmp_path / "first") not in (tmp_path / "second" / "CMakeCache.txt").read_text()
    # What CMake makes of an existing folder configured again: the seeded folder's build files.
    _, again = configured(tmp_path / "first", "skeleton")
    assert seeded == again


def test_a_folder_with_other_arguments_detects_its_compilers_itself(tmp_path: Path):
    configured(tmp_path / "first", "reference")
    log, _ = configured(tmp_path / "other", "reference", (*CPU_ONLY, "-DKERNELLAB_CPU_FIXED_ORDERS=2"))
    assert DETECTION in log


def test_a_folder_configured_in_another_environment_detects_its_compilers_itself(tmp_path: Path, monkeypatch):
    # PATH, CXX or CUDAARCHS choose what CMake detects: a test's stand-in compiler among them.
    configured(tmp_path / "first", "reference")
    monkeypatch.setenv("CXXFLAGS", "-O1")
    log, _ = configured(tmp_path / "other", "reference")
    assert DETECTION in log


def test_a_seed_that_no_longer_configures_is_dropped_for_a_configure_step_from_nothing(tmp_path: Path, monkeypatch):
    configured(tmp_path / "first", "reference")
    steps = []
    run_logged = cmake.run_logged
    monkeypatch.setattr(cmake, "run_logged", lambda command, log, *rest: steps.append(run_logged(command, log, *rest)) or steps[-1])
    # A seed naming a compiler that is gone (the toolchain updated under a long batch).
    seeds = cmake._SEEDS._seeds
    [key] = seeds
    seeds[key] = {name: re.sub(rb"(CMAKE_CXX_COMPILER:\w+=)\S+", rb"\1/nonexistent/g++", content) if name == "CMakeCache.txt" else content
                  for name, content in seeds[key].items()}
    log, _ = configured(tmp_path / "second", "reference")
    assert DETECTION in log
    assert [step.exit_code == 0 for step in steps] == [False, True], "the seeded step failed, the one from nothing did not"


def test_a_configure_step_that_fails_from_nothing_still_says_why(tmp_path: Path):
    configured(tmp_path / "first", "reference")
    with pytest.raises(InputError, match="configuring pbb with CMake failed"):
        cmake.configure(REAL_ROOT, tmp_path / "second", "pbb", tmp_path / "missing", tmp_path / "log", CPU_ONLY)
