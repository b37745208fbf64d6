"""The CPU backend's source rewrite: launches and shared memory become runtime calls on the same
lines, and what the backend cannot run stops the build with the student's file and line."""

import importlib.util
import sys
from pathlib import Path

import pytest

_spec = importlib.util.spec_from_file_location("rewrite", Path(__file__).resolve().parent.parent / "rewrite.py")
rewrite_module = importlib.util.module_from_spec(_spec)
sys.modules["rewrite"] = rewrite_module
_spec.loader.exec_module(rewrite_module)
rewrite = rewrite_module.rewrite
RewriteError = rewrite_module.RewriteError


def body(source: str) -> list[str]:
    """The rewritten lines, without the leading #line directive."""
    lines = rewrite(source, "student.cu").split("\n")
    assert lines[0] == '#line 1 "student.cu"'
    return lines[1:]


def test_a_templated_launch_over_several_lines_keeps_every_line_in_place():
    source = "void f() {\n  k<OP, 3><<<g,\n b, s>>>(x,\n y);\n  after();\n}\n"
    lines = body(source)
    assert len(lines) == len(source.split("\n"))
    assert lines[1].startswith('  ::kernellab::cpu::Launch(KL_CPU_SITE, "k<OP, 3>", "x, y",')
    assert "{ k<OP, 3>(kl_cpu_arguments...); }" in lines[1]
    assert lines[4] == "  after();"


def test_shared_declarations_become_block_memory():
    source = ("__global__ void k() {\n"
              "  __shared__ float tile[32][33];\n"
              "  volatile __shared__ int flag;\n"
              "  extern __shared__ char dynamic[];\n"
              "}\n")
    lines = body(source)
    assert lines[1] == "  float (&tile)[32][33] = ::kernellab::cpu::staticSharedVariable<float[32][33]>([] {});"
    assert lines[2] == "  volatile int &flag = ::kernellab::cpu::staticSharedVariable<volatile int>([] {});"
    assert lines[3] == "  char* const dynamic = static_cast<char*>(::kernellab::cpu::dynamicShared());"


def test_comments_and_strings_are_left_alone():
    source = 'void f() {\n  // k<<<1, 1>>>(x);\n  puts("__shared__ int x;");\n}\n'
    assert rewrite(source, "student.cu").endswith(source)


@pytest.mark.parametrize(
    "line, what",
    [
        ('  asm volatile("membar.gl;");', "inline PTX"),
        ("  float v = tex1Dfetch(texture_ref, i);", "textures"),
        ("  cooperative_groups::this_grid().sync();", "grid-wide synchronization"),
        ("  auto active = cg::coalesced_threads();", "coalesced groups"),
        ("  cg::cluster_group cluster = cg::this_cluster();", "thread block clusters"),
        ("  child<<<1, 32>>>(x);", "dynamic parallelism"),
    ],
)
def test_unsupported_device_code_fails_with_file_and_line(line, what):
    source = f"__global__ void k(int* x) {{\n  int i = 0;\n{line}\n}}\n"
    with pytest.raises(RewriteError) as error:
        rewrite(source, "student.cu")
    assert f"student.cu:3: error: kernellab CPU backend: " in str(error.value)
    assert what in str(error.value)


def test_file_scope_shared_memory_fails_with_its_line():
    with pytest.raises(RewriteError, match=r"student\.cu:2: .*__shared__ outside a function"):
        rewrite("namespace n {\n__shared__ int table[32];\n}\n", "student.cu")


def test_a_launch_from_host_code_inside_a_namespace_and_class_is_rewritten():
    source = "namespace n {\nstruct S {\n  void run() { k<<<1, 2>>>(); }\n};\n}\n"
    assert "::kernellab::cpu::Launch" in body(source)[2]


def test_cooperative_groups_of_blocks_and_tiles_are_left_to_the_headers():
    source = ("__global__ void k(int* x) {\n"
              "  auto warp = cg::tiled_partition<32>(cg::this_thread_block());\n"
              "  x[0] = cg::reduce(warp, x[0], cg::plus<int>());\n"
              "}\n")
    assert body(source) == source.split("\n")
