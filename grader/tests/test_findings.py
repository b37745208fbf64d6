"""Static findings on a build: a forbidden word costs only the tasks whose executables include
its file, and symbols count only beyond those of the reference's build (real g++, CMake, Ninja)."""

import shutil
import subprocess
from pathlib import Path

import pytest

from helpers import REAL_ROOT, write_files
from kernellab.binary_checks import symbols_in_binaries
from kernellab.grading.findings import solution_files_by_target

pytestmark = pytest.mark.skipif(
    not all(shutil.which(tool) for tool in ("cmake", "ninja", "g++", "nm")), reason="needs cmake, ninja, g++ and nm"
)


def test_a_file_counts_for_the_targets_whose_objects_include_it(tmp_path: Path):
    write_files(tmp_path / "project", {
        "CMakeLists.txt": "cmake_minimum_required(VERSION 3.20)\nproject(p LANGUAGES CXX)\n"
                          "add_executable(demo_test_map map.cpp)\nadd_executable(demo_test_sum sum.cpp)\n",
        "map.cpp": '#include "map.cuh"\nint main() { return mapped(); }\n',
        "sum.cpp": '#include "sum.cuh"\nint main() { return summed(); }\n',
        "map.cuh": "inline int mapped() { return 0; }\n",
        "sum.cuh": "inline int summed() { return 0; }\n",
    })
    build = tmp_path / "build"
    subprocess.run(["cmake", "-S", tmp_path / "project", "-B", build, "-G", "Ninja"], check=True, capture_output=True)
    subprocess.run(["cmake", "--build", build], check=True, capture_output=True)
    assert solution_files_by_target(build, {"map.cuh", "sum.cuh"}) == {"demo_test_map": {"map.cuh"}, "demo_test_sum": {"sum.cuh"}}
    assert solution_files_by_target(build, {"map.cuh"}) == {"demo_test_map": {"map.cuh"}, "demo_test_sum": set()}


def test_without_a_ninja_log_every_target_counts(tmp_path: Path):
    assert solution_files_by_target(tmp_path, {"map.cuh"}) is None


def compile_program(path: Path, source: str) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    source_file = path.with_suffix(".cpp")
    source_file.write_text(source)
    subprocess.run(["g++", "-o", path, source_file, "-ldl"], check=True, capture_output=True)


def test_symbols_count_only_beyond_the_references_build(tmp_path: Path):
    runtime = '#include <dlfcn.h>\nvoid* runtime() { return dlopen("libcuda.so", RTLD_NOW); }\n'
    compile_program(tmp_path / "reference/assignments/demo/demo_test_map", runtime + "int main() { return runtime() != 0; }\n")
    compile_program(
        tmp_path / "student/assignments/demo/demo_test_map",
        runtime + '#include <ctime>\nextern "C" int clock_gettime(clockid_t, timespec* t) { t->tv_sec = 0; return 0; }\n'
        "int main() { return runtime() != 0; }\n",
    )
    found = symbols_in_binaries(tmp_path / "student", "demo", ["map"], ("dlopen", "cublas"),
                                baseline=tmp_path / "reference", root=REAL_ROOT)
    assert found == {"map": ("the map build defines clock_gettime itself, which would replace the clock the grader times with",)}
