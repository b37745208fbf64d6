"""Static checks that read code as the compiler does: the include graph of a student's files and of
the built programs (real g++, CMake, Ninja), not words in the text."""

import shutil
import subprocess
from pathlib import Path

import pytest

from helpers import REAL_ROOT, write_files
from kernellab import static_checks
from kernellab.binary_checks import symbols_in_binaries, uncounted_routes

pytestmark = pytest.mark.skipif(
    not all(shutil.which(tool) for tool in ("cmake", "ninja", "g++", "nm")), reason="needs cmake, ninja, g++ and nm"
)

# A library the assignment forbids, as a toolkit installs it: include/<name>/...
LIBRARY = {"include/cub/cub.cuh": "inline int cubAnswer() { return 42; }\n"}


def test_a_header_name_pasted_together_is_found_in_the_include_graph(tmp_path):
    write_files(tmp_path / "solution", {
        "map.cuh": "#define JOIN(a, b) a##b\n#define QUOTE(x) #x\n#define NAME(x) QUOTE(x)\n"
                   "#include NAME(JOIN(c, ub)/JOIN(c, ub).cuh)\n",
        "sum.cuh": "int cubic = 3; // 'cubic' is no 'cub', nor is this comment's cub\n",
    })
    found = static_checks.forbidden_in_sources(tmp_path / "solution", ("cub",))
    assert list(found) == ["map.cuh"]
    assert found["map.cuh"][0].startswith("map.cuh:4 reaches cub (cub/cub.cuh)") or found["map.cuh"][0].startswith(
        "map.cuh reaches cub (cub/cub.cuh)"), found


def test_a_missing_header_does_not_hide_the_rest_of_the_file(tmp_path):
    # The build would find "constants.cuh" (the skeleton's); here it is missing: a stand-in lets
    # the preprocessor read on, to the define.
    write_files(tmp_path / "solution", {"map.cuh": '#include "constants.cuh"\n#define KL_REQUIRE_EQUAL(a, b, c, d)\n'})
    found = static_checks.harness_tampering(tmp_path / "solution" / "map.cuh", tmp_path / "solution", None, frozenset())
    assert found == ("map.cuh:2", "defines KL_REQUIRE_EQUAL, a name of the grader's tests or harness")



@pytest.mark.parametrize("disguise, where", [
    # A line directive renames the file in the preprocessor's line markers from there on (and
    # numbers its lines anew).
    ('#line 1 "{harness}"\n', "map.cuh:1"),
    # ... and the marker back from a header the student's file then includes gives that name.
    ('#line 1 "{harness}"\n#include "other.h"\n', "map.cuh:2"),
    # A raw string literal's lines are copied as they are, one shaped like a marker included.
    ('const char* note = R"x(\n# 1 "{harness}" 1\n)x";\n', "map.cuh:5"),
])
def test_a_define_after_a_disguised_line_marker_is_still_the_students(tmp_path, disguise, where):
    harness = static_checks.HARNESS_INCLUDE / "kernellab" / "record.hpp"
    write_files(tmp_path / "solution", {
        "map.cuh": "int before = 1;\n" + disguise.format(harness=harness) + "#define KL_REQUIRE_EQUAL(a, b, c, d)\n",
        "other.h": "int other = 2;\n",
    })
    found = static_checks.harness_tampering(tmp_path / "solution" / "map.cuh", tmp_path / "solution", None, frozenset())
    assert found == (where, "defines KL_REQUIRE_EQUAL, a name of the grader's tests or harness")


def test_a_raw_string_literal_over_several_lines_keeps_the_lines_after_it_numbered(tmp_path):
    write_files(tmp_path / "solution", {
        "map.cuh": 'const char* text = R"(first\nsecond\n)"; int mprotect_count = 0;\nint after = 2;\n'
                   "int uses = mprotect(nullptr, 0, 0);\n",
    })
    found = static_checks.preprocess(tmp_path / "solution" / "map.cuh", tmp_path / "solution")
    lines = {line: text for name, line, text in found.lines if name == "map.cuh"}
    assert lines[1] == 'const char* text = '
    assert lines[3].strip() == "; int mprotect_count = 0;"
    assert lines[4] == "int after = 2;"
    assert static_checks.harness_tampering(tmp_path / "solution" / "map.cuh", tmp_path / "solution", None,
                                           frozenset()) == ("map.cuh:5", "uses mprotect")

def build(root: Path, speed_source: str, test_source: str = "int main() { return 0; }\n") -> Path:
    """A CMake project shaped like an assignment's build: a test executable and a speed program."""
    write_files(root, {
        **LIBRARY,
        "CMakeLists.txt": "cmake_minimum_required(VERSION 3.20)\nproject(p LANGUAGES CXX)\n"
                          "include_directories(include)\nadd_subdirectory(assignments/demo)\n",
        "assignments/demo/CMakeLists.txt": "add_executable(demo_test_map test_map.cpp)\nadd_executable(demo_speed speed.cpp)\n",
        "assignments/demo/test_map.cpp": test_source,
        "assignments/demo/speed.cpp": speed_source,
    })
    subprocess.run(["cmake", "-S", root, "-B", root / "build", "-G", "Ninja"], check=True, capture_output=True)
    subprocess.run(["cmake", "--build", root / "build"], check=True, capture_output=True)
    return root / "build"


def test_cub_in_the_students_speed_program_is_found_though_the_references_has_it_as_a_baseline(tmp_path):
    with_cub = '#include <cub/cub.cuh>\nint main() { return cubAnswer() == 42 ? 0 : 1; }\n'
    reference = build(tmp_path / "reference", with_cub)
    student = build(tmp_path / "student", with_cub)
    found = symbols_in_binaries(student, "demo", ["map", "speed"], ("cub",), baseline=reference, root=REAL_ROOT)
    assert found == {"speed": ("the speed build includes cub (cub/cub.cuh), which this assignment forbids",)}
    clean = build(tmp_path / "clean", "int main() { return 0; }\n")
    assert symbols_in_binaries(clean, "demo", ["map", "speed"], ("cub",), baseline=reference, root=REAL_ROOT) == {}


def test_calls_around_the_counted_copies_are_found_beyond_the_references(tmp_path):
    # Weak: links without the CUDA runtime. The reference's own dlsym is no finding.
    looks_up = 'extern "C" void* dlsym(void*, const char*);\n'
    maps_host_memory = 'extern "C" __attribute__((weak)) int cudaHostAlloc(void**, unsigned long, unsigned);\n'
    main = "int main() {{ return {} ? 1 : 0; }}\n"
    reference = build(tmp_path / "reference", "int main() { return 0; }\n",
                      looks_up + main.format('dlsym(nullptr, "x") != nullptr'))
    student = build(tmp_path / "student", "int main() { return 0; }\n", looks_up + maps_host_memory
                    + main.format('dlsym(nullptr, "x") != nullptr || cudaHostAlloc(nullptr, 4, 0) == 0'))
    found = symbols_in_binaries(student, "demo", ["map", "speed"], (), baseline=reference, root=REAL_ROOT)
    assert found == {"map": ("the map build calls cudaHostAlloc: host memory a kernel can write, which moves "
                             "results to the host without a copy",)}


def test_the_copies_and_launches_the_harness_counts_and_copies_to_the_device_are_no_finding():
    counted_or_harmless = {"cudaMemcpy", "cudaMemcpyAsync", "cudaMemcpy2D", "cudaMemcpy3DAsync", "cudaMemcpyFromSymbol",
                           "cudaMemcpyToSymbol", "cudaMemcpyPeer", "cudaMalloc", "cudaLaunchKernel", "__cudaLaunchKernel",
                           "__cudaLaunchKernel_ptsz", "cudaLaunchHostFunc", "cudaMemset"}
    around = {"cuMemcpyDtoH_v2", "cuGetProcAddress_v2", "dlsym", "dl_iterate_phdr", "cudaGetDriverEntryPoint",
              "cudaMallocManaged", "cudaHostRegister", "cudaMemPoolCreate", "cudaMallocArray", "cudaMemcpy2DFromArray",
              "cudaMemcpyBatchAsync", "cudaMemcpy_ptds", "cudaMemcpy3DPeer", "cudaGraphLaunch", "__real_cudaMemcpy",
              "__cudaRegisterManagedVar", "cudaLaunchKernelExC", "cudaLaunchCooperativeKernel", "cudaLaunchKernel_ptsz"}
    assert {name for name, _ in uncounted_routes(counted_or_harmless | around, REAL_ROOT)} == around
