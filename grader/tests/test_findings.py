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


def build_map_and_sum(root: Path, map_source: str) -> Path:
    """Two test programs, map (from `map_source`, which includes map.cuh) and sum (sum.cuh),
    configured and built with Ninja, each as far as it compiles; the build folder."""
    write_files(root / "project", {
        "CMakeLists.txt": "cmake_minimum_required(VERSION 3.20)\nproject(p LANGUAGES CXX)\n"
                          "add_executable(demo_test_map map.cpp)\nadd_executable(demo_test_sum sum.cpp)\n",
        "map.cpp": map_source,
        "sum.cpp": '#include "sum.cuh"\nint main() { return summed(); }\n',
        "map.cuh": "inline int mapped() { return 0; }\n",
        "sum.cuh": "inline int summed() { return 0; }\n",
    })
    build = root / "build"
    subprocess.run(["cmake", "-S", root / "project", "-B", build, "-G", "Ninja"], check=True, capture_output=True)
    subprocess.run(["cmake", "--build", build, "--", "-k", "0"], capture_output=True)
    return build


def test_a_file_counts_for_the_targets_whose_objects_include_it(tmp_path: Path):
    build = build_map_and_sum(tmp_path, '#include "map.cuh"\nint main() { return mapped(); }\n')
    assert (build / "demo_test_map").is_file() and (build / "demo_test_sum").is_file()
    assert solution_files_by_target(build, "demo", ["map", "sum"], {"map.cuh", "sum.cuh"}) == {"map": {"map.cuh"}, "sum": {"sum.cuh"}}
    assert solution_files_by_target(build, "demo", ["map", "sum"], {"map.cuh"}) == {"map": {"map.cuh"}, "sum": set()}


def test_without_a_ninja_log_every_target_counts(tmp_path: Path):
    assert solution_files_by_target(tmp_path, "demo", ["map"], {"map.cuh"}) == {"map": None}


def test_a_target_whose_compile_failed_counts_every_file(tmp_path: Path):
    # Seen in CI: a thrust include that the CPU backend cannot find failed the build, and the
    # finding "reaches thrust" was then counted for no task, as if its file were included by none.
    build = build_map_and_sum(tmp_path, '#include "map.cuh"\n#include <no/such/header.h>\nint main() { return 0; }\n')
    assert solution_files_by_target(build, "demo", ["map", "sum"], {"map.cuh", "sum.cuh"}) == {"map": None, "sum": {"sum.cuh"}}


def compile_program(path: Path, source: str) -> None:
    """`path` (<build>/assignments/<id>/<target>) built from `source`, its object where CMake puts it."""
    objects = path.parent / "CMakeFiles" / f"{path.name}.dir"
    objects.mkdir(parents=True, exist_ok=True)
    source_file = objects / "main.cpp"
    source_file.write_text(source)
    subprocess.run(["g++", "-c", "-o", objects / "main.cpp.o", source_file], check=True, capture_output=True)
    subprocess.run(["g++", "-o", path, objects / "main.cpp.o", "-ldl"], check=True, capture_output=True)


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
    assert found == {"map": ("the map build defines clock_gettime itself, which replaces libc.so.6's for the whole process: "
                             "the clock the grader times with and the records the harness writes included",)}


# The harness's main, in short: it writes records with the C library and prints with the C++ one.
REFERENCE_MAIN = '#include <cstdio>\n#include <iostream>\nint main() { std::puts("records"); std::cout << 1; return 0; }\n'


@pytest.mark.parametrize("definition, shown", [
    ('#include <cstdio>\nextern "C" size_t fwrite(const void*, size_t size, size_t n, FILE*) { return size * n; }\n', "fwrite"),
    ('#include <cstdio>\nextern "C" __attribute__((weak)) int fflush(FILE*) { return 0; }\n', "fflush"),
    ('#include <cstring>\nextern "C" void* memcpy(void* to, const void*, size_t) { return to; }\n', "memcpy"),
    ('#include <exception>\nnamespace std { void terminate() noexcept { for (;;) {} } }\n', "std::terminate()"),
], ids=["fwrite", "weak-fflush", "memcpy", "libstdc++-terminate"])
def test_a_program_that_replaces_a_library_function_is_found(tmp_path: Path, definition: str, shown: str):
    # Seen: a submission's own fwrite, in a header, rewrote the property records the harness writes.
    compile_program(tmp_path / "reference/assignments/demo/demo_test_map", REFERENCE_MAIN)
    compile_program(tmp_path / "student/assignments/demo/demo_test_map", definition + REFERENCE_MAIN)
    found = symbols_in_binaries(tmp_path / "student", "demo", ["map"], (), baseline=tmp_path / "reference", root=REAL_ROOT)
    assert len(found["map"]) == 1 and found["map"][0].startswith(f"the map build defines {shown} itself, which replaces lib"), found


def test_a_program_whose_symbols_cannot_be_read_earns_nothing(tmp_path: Path):
    compile_program(tmp_path / "reference/assignments/demo/demo_test_map", REFERENCE_MAIN)
    student = tmp_path / "student/assignments/demo/demo_test_map"
    student.parent.mkdir(parents=True)
    student.write_bytes(b"\x7fELF but not a program the tools can read")
    found = symbols_in_binaries(tmp_path / "student", "demo", ["map"], (), baseline=tmp_path / "reference", root=REAL_ROOT)
    assert found["map"][0].startswith("the map build could not be checked (nm -C failed: "), found
    # A program whose objects are not where its build put them: what it calls is unknown.
    compile_program(student, REFERENCE_MAIN)
    shutil.rmtree(student.parent / "CMakeFiles")
    found = symbols_in_binaries(tmp_path / "student", "demo", ["map"], (), baseline=tmp_path / "reference", root=REAL_ROOT)
    assert found["map"][0].startswith("the map build could not be checked (the objects of demo_test_map are not in"), found


def test_a_program_built_again_in_the_same_place_is_read_again(tmp_path: Path):
    # The checks keep what they read of each file (a batch reads the reference's programs once per
    # grade), by its path, size and time: a program rebuilt in place, as a regrade does, is new.
    compile_program(tmp_path / "reference/assignments/demo/demo_test_map", REFERENCE_MAIN)
    student = tmp_path / "student/assignments/demo/demo_test_map"
    compile_program(student, REFERENCE_MAIN)
    assert symbols_in_binaries(tmp_path / "student", "demo", ["map"], (), baseline=tmp_path / "reference", root=REAL_ROOT) == {}
    compile_program(student, '#include <cstdio>\nextern "C" size_t fwrite(const void*, size_t size, size_t n, FILE*) '
                             '{ return size * n; }\n' + REFERENCE_MAIN)
    found = symbols_in_binaries(tmp_path / "student", "demo", ["map"], (), baseline=tmp_path / "reference", root=REAL_ROOT)
    assert found["map"][0].startswith("the map build defines fwrite itself"), found


def test_every_program_is_checked_each_with_its_own_findings(tmp_path: Path):
    # The programs are read at once, one thread each: each finding stays with its own program.
    for target in ("map", "sum", "scan"):
        compile_program(tmp_path / f"reference/assignments/demo/demo_test_{target}", REFERENCE_MAIN)
    replaced = {"map": 'extern "C" size_t fwrite(const void*, size_t, size_t, FILE*) { return 0; }\n',
                "scan": 'extern "C" int fputs(const char*, FILE*) { return 0; }\n'}
    for target, definition in replaced.items():
        compile_program(tmp_path / f"student/assignments/demo/demo_test_{target}", "#include <cstdio>\n" + definition + REFERENCE_MAIN)
    compile_program(tmp_path / "student/assignments/demo/demo_test_sum", REFERENCE_MAIN)
    found = symbols_in_binaries(tmp_path / "student", "demo", ["map", "sum", "scan"], (), baseline=tmp_path / "reference",
                                root=REAL_ROOT)
    assert sorted(found) == ["map", "scan"]
    assert "defines fwrite" in found["map"][0] and "defines fputs" in found["scan"][0], found
