"""Per-task isolation (grading/isolation/splice.py): each task's folder holds the student's own functions
of that task, the reference's functions of other tasks that the task's reference code calls, and
the skeleton's of the rest."""

import importlib.util
import os
import re
import shutil
import subprocess
import sys
from importlib.util import find_spec
from pathlib import Path

import pytest

from helpers import REAL_ROOT, write_files
from kernellab.deadline import Deadline
from kernellab.errors import InputError
from kernellab.grading import building
from kernellab.grading.isolation import parse, splice
from kernellab.grading.isolation import stage as isolation
from kernellab.grading.model import TaskGrade
from kernellab.grading.progress import Progress
from kernellab.grading.run import GradingRun
from kernellab.grading.targets import executable
from kernellab.manifest import ManifestError, load_assignment, load_manifest
from kernellab.markers import strip_tree
from kernellab.patches import apply_patch, parse_patch

HANDOUTS = Path("/work/handouts")

# A fixture assignment in the shape of the course's code: three tasks, a warp scan, a block scan
# built on it and a host wrapper built on that; a reference-only helper on each level.
MANIFEST = """\
id = "x"
title = "Isolation fixture"

[files]
required = ["kernels.cu.h", "host.cu.h"]
optional = ["constants.cu.h"]
entry = "host.cu.h"

[files.aliases]
"kernels.cuh" = "kernels.cu.h"

[build]
reference = "reference/x"
skeleton = "skeleton/x"

[[tasks]]
id = "warp"
title = "Warp scan"
points = 10
tests = "warp"
functions = ["scanIncWarp"]
skeleton_fails = true

[[tasks]]
id = "block"
title = "Block scan"
points = 10
tests = "block"
functions = ["scanIncBlock"]
skeleton_fails = true

[[tasks]]
id = "multi"
title = "Host wrapper"
points = 10
tests = "multi"
functions = ["scanInc"]
skeleton_fails = true
"""
CONSTANTS = "#ifndef CONSTANTS_H\n#define CONSTANTS_H\n#define WARP (32)\n#define lgWARP (5)\n#endif\n"
REFERENCE_KERNELS = """\
#ifndef KERNELS_H
#define KERNELS_H
#include <cstdint>
#include "constants.cu.h"

class Mssp {
  public:
    typedef int RedElTp;
    static __device__ __host__ inline int apply(const int a, const int b) { return a + b; }
    static __device__ __host__ inline int remVolatile(volatile int& t) { int r = t; return r; }
};

__device__ inline uint32_t laneOf(const uint32_t idx) { return idx & (WARP - 1); }

template<class OP>
__device__ inline typename OP::RedElTp
scanIncWarp( volatile typename OP::RedElTp* ptr, const uint32_t idx ) {
    const uint32_t lane = laneOf(idx);
    // BEGIN SOLUTION warp
    typename OP::RedElTp acc = OP::remVolatile(ptr[idx]);
    for (uint32_t h = 1; h < WARP; h <<= 1) {
        if (lane >= h) { acc = OP::apply(OP::remVolatile(ptr[idx - h]), acc); }
        __syncwarp();
        ptr[idx] = acc;
        __syncwarp();
    }
    return acc;
    // STUB
    // return OP::remVolatile(ptr[idx]);
    // END SOLUTION
}

template<class OP>
__device__ inline typename OP::RedElTp
scanIncBlock( volatile typename OP::RedElTp* ptr, const uint32_t idx ) {
    // BEGIN SOLUTION block
    typename OP::RedElTp res = scanIncWarp<OP>(ptr, idx);
    __syncthreads();
    return res;
    // STUB
    // return OP::remVolatile(ptr[idx]);
    // END SOLUTION
}

template<class OP>
__global__ void scanKernel(typename OP::RedElTp* d, const uint32_t n) {
    extern __shared__ char sh[];
    volatile typename OP::RedElTp* s = (typename OP::RedElTp*)sh;
    s[threadIdx.x] = d[threadIdx.x];
    d[threadIdx.x] = scanIncBlock<OP>(s, threadIdx.x);
}
#endif
"""
REFERENCE_HOST = """\
#ifndef HOST_H
#define HOST_H
#include <type_traits>
#include "constants.cu.h"
#include "kernels.cu.h"

inline uint32_t blocksFor(const uint32_t n, const uint32_t b) { return (n + b - 1) / b; }

template<class OP>
void scanInc(const uint32_t B, const uint32_t n, typename OP::RedElTp* d) {
    // BEGIN SOLUTION multi
    static_assert(std::is_class<OP>::value, "an operator is a class");
    scanKernel<OP><<<blocksFor(n, B), B, B * sizeof(typename OP::RedElTp)>>>(d, n);
    // STUB
    // (void)B; (void)n; (void)d;
    // END SOLUTION
}
#endif
"""
# The student's files, as course code: the pre-Volta lockstep warp scan (no __syncwarp), a
# `const unsigned int idx`, an Mssp whose apply takes volatile references, no laneOf, no
# blocksFor, no <type_traits>, no constants file (the skeleton's is used), and the 2024 name
# of the kernels file.
STUDENT_KERNELS = """\
#ifndef KERNELS_H
#define KERNELS_H
#include "constants.cu.h"

class Mssp {
  public:
    typedef int RedElTp;
    static __device__ __host__ inline int apply(volatile int& a, volatile int& b) { return a + b; }
    static __device__ __host__ inline int remVolatile(volatile int& t) { return t; }
};

template<class OP>
__device__ inline typename OP::RedElTp
scanIncWarp( volatile typename OP::RedElTp* ptr, const unsigned int idx ) {
    const unsigned int lane = idx & (WARP-1);
    if (lane >= 1)  ptr[idx] = OP::apply(ptr[idx-1],  ptr[idx]);
    if (lane >= 2)  ptr[idx] = OP::apply(ptr[idx-2],  ptr[idx]);
    if (lane >= 4)  ptr[idx] = OP::apply(ptr[idx-4],  ptr[idx]);
    if (lane >= 8)  ptr[idx] = OP::apply(ptr[idx-8],  ptr[idx]);
    if (lane >= 16) ptr[idx] = OP::apply(ptr[idx-16], ptr[idx]);
    return OP::remVolatile(ptr[idx]);
}

template<class OP>
__device__ inline typename OP::RedElTp
scanIncBlock(volatile typename OP::RedElTp* ptr, const unsigned int idx) {
    const int line_mark = __LINE__;
    typename OP::RedElTp res = scanIncWarp<OP>(ptr, idx);
    __syncthreads();
    return res + 0 * line_mark;
}

template<class OP>
__global__ void scanKernel(typename OP::RedElTp* d, const uint32_t n) {
    extern __shared__ char sh[];
    volatile typename OP::RedElTp* s = (typename OP::RedElTp*)sh;
    s[threadIdx.x] = d[threadIdx.x];
    d[threadIdx.x] = scanIncBlock<OP>(s, threadIdx.x);
}
#endif
"""
STUDENT_HOST = """\
#ifndef HOST_H
#define HOST_H
#include "constants.cu.h"
#include "kernels.cuh"

template<class OP>
void scanInc(const uint32_t B, const uint32_t n, typename OP::RedElTp* d) {
    scanKernel<OP><<<(n + B - 1) / B, B, B * sizeof(typename OP::RedElTp)>>>(d, n);
}
#endif
"""


def _fixture(root: Path, kernels: str = STUDENT_KERNELS, manifest: str = MANIFEST) -> tuple[Path, Path]:
    write_files(root / "assignments" / "x", {"assignment.toml": manifest})
    write_files(root / "reference" / "x", {"kernels.cu.h": REFERENCE_KERNELS, "host.cu.h": REFERENCE_HOST,
                                          "constants.cu.h": CONSTANTS})
    skeleton = strip_tree(root / "reference" / "x", ["warp", "block", "multi"])
    write_files(root / "skeleton" / "x", {name: content.decode() for name, content in skeleton.items()})
    solution = root / "solution"
    write_files(solution, {"kernels.cuh": kernels, "host.cu.h": STUDENT_HOST})
    return solution, root / "tasks"


def _isolate(root: Path, solution: Path, out: Path) -> dict[str, splice.Isolation]:
    assignment = load_assignment(root, "x")
    return splice.isolated_solutions(assignment, solution, assignment.reference_dir, out)


def test_a_tasks_folder_holds_its_own_function_the_references_that_it_calls_and_the_skeletons_others(tmp_path):
    solution, out = _fixture(tmp_path)
    isolations = _isolate(tmp_path, solution, out)

    assert sorted(isolations) == ["block", "multi", "warp"]
    block = isolations["block"]
    assert block.folder == out / "block"
    assert sorted(path.name for path in block.folder.iterdir()) == ["host.cu.h", "kernels.cuh"], "the student's names"
    found = splice.function_definitions(block.folder, "host.cu.h")
    student = splice.function_definitions(solution, "host.cu.h")
    reference = splice.function_definitions(tmp_path / "reference" / "x", "host.cu.h")
    skeleton = splice.function_definitions(tmp_path / "skeleton" / "x", "host.cu.h")
    assert found["scanIncBlock"] == student["scanIncBlock"], "the task's own function is the student's"
    assert found["scanIncWarp"] == reference["scanIncWarp"], "another task's function that it calls is the reference's"
    assert found["scanInc"] == skeleton["scanInc"], "one that it does not call is the skeleton's: no solution to call"
    assert found["scanKernel"] == student["scanKernel"], "given code stays the student's"
    # Reference-only helpers the spliced functions use come along; the course's Mssp stays.
    assert found["laneOf"] == reference["laneOf"] and "blocksFor" not in found
    assert block.helpers == ("laneOf",)
    kernels = (block.folder / "kernels.cuh").read_text()
    assert "apply(volatile int& a, volatile int& b)" in kernels
    assert kernels.index("laneOf(const uint32_t idx)") < kernels.index("scanIncWarp( volatile")
    # WARP comes from the skeleton's constants (the student has none): not brought along.
    assert "#define WARP" not in kernels
    host = (block.folder / "host.cu.h").read_text()
    assert host.startswith("#include <type_traits>\n#include <cstdint>\n#line 1\n"), host[:120]
    assert (block.own, block.from_reference, block.from_skeleton, block.added, block.own_missing) == (
        ("scanIncBlock",), ("scanIncWarp",), ("scanInc",), (), ())


def test_a_task_of_given_code_is_built_with_every_tasks_function_from_the_reference(tmp_path):
    given = '\n[[tasks]]\nid = "given"\ntitle = "Given code"\npoints = 0\ntests = "given"\nskeleton_fails = false\n'
    solution, out = _fixture(tmp_path, manifest=MANIFEST + given)
    isolation = _isolate(tmp_path, solution, out)["given"]
    found = splice.function_definitions(isolation.folder, "host.cu.h")
    reference = splice.function_definitions(tmp_path / "reference" / "x", "host.cu.h")
    student = splice.function_definitions(solution, "host.cu.h")
    for name in ("scanIncWarp", "scanIncBlock", "scanInc"):
        assert found[name] == reference[name], name
    assert found["scanKernel"] == student["scanKernel"], "the given code is the student's"
    assert (isolation.own, isolation.from_reference) == ((), ("scanIncWarp", "scanIncBlock", "scanInc"))
    assert splice.feedback_lines(isolation)[0].startswith("Task given tests the code you were given: ")


def test_a_reference_type_that_a_spliced_function_needs_comes_with_its_semicolon(tmp_path):
    solution, out = _fixture(tmp_path)
    reference = tmp_path / "reference" / "x" / "kernels.cu.h"
    reference.write_text(REFERENCE_KERNELS.replace("__device__ inline uint32_t laneOf",
                                                   "typedef unsigned int lane_t ;\n__device__ inline lane_t laneOf"))
    block = _isolate(tmp_path, solution, out)["block"]
    assert block.helpers == ("lane_t", "laneOf")
    assert "typedef unsigned int lane_t ;\n" in (block.folder / "kernels.cuh").read_text()


def test_a_task_whose_isolated_build_failed_is_graded_on_the_whole_submission_and_says_so(tmp_path):
    solution, out = _fixture(tmp_path)
    assignment = load_assignment(tmp_path, "x")
    isolations = _isolate(tmp_path, solution, out)
    job = tmp_path / "job"

    def build_whole(whole_dir, targets):
        for tests in targets:
            program = executable(whole_dir, "x", tests)
            program.parent.mkdir(parents=True, exist_ok=True)
            program.write_text("the whole submission's")
        return {tests: None for tests in targets}

    built, standing = isolation.whole_where_isolated_failed(
        {"warp": None, "block": "kernels.cuh(9): error: ...", "multi": None}, isolations, build_whole, job, "x")
    assert built == {"warp": None, "block": None, "multi": None}
    assert sorted(standing) == ["multi", "warp"], "the race check and the feedback no longer take block as isolated"
    assert executable(job / "build", "x", "block").read_text() == "the whole submission's"
    tasks, note = isolation.whole_build_note(assignment, isolations, standing)
    assert tasks == ("block",)
    assert note.startswith("note: block graded on your whole submission, not on its own functions: the reference's")
    assert isolation.whole_build_note(assignment, isolations, isolations) == ((), "")


def test_the_warp_tasks_folder_keeps_the_students_lockstep_scan(tmp_path):
    solution, out = _fixture(tmp_path)
    warp = _isolate(tmp_path, solution, out)["warp"]
    found = splice.function_definitions(warp.folder, "host.cu.h")
    student = splice.function_definitions(solution, "host.cu.h")
    skeleton = splice.function_definitions(tmp_path / "skeleton" / "x", "host.cu.h")
    assert found["scanIncWarp"] == student["scanIncWarp"] and b"__syncwarp" not in found["scanIncWarp"][0]
    assert found["scanIncBlock"] == skeleton["scanIncBlock"], "the reference's calls the task's own function"
    assert warp.from_reference == () and warp.helpers == (), "no reference code in the warp task's folder"


def test_the_students_own_lines_keep_their_numbers_after_a_splice(tmp_path):
    if shutil.which("g++") is None:
        pytest.skip("needs g++ to preprocess")
    solution, out = _fixture(tmp_path)
    block = _isolate(tmp_path, solution, out)["block"]
    expected = STUDENT_KERNELS.splitlines().index("    const int line_mark = __LINE__;") + 1
    # Only the line numbers matter: the system headers the splice added may be empty.
    write_files(tmp_path / "system", {"cstdint": "", "type_traits": ""})
    preprocessed = subprocess.run(
        ["g++", "-E", "-P", "-x", "c++", "-nostdinc", f"-I{tmp_path / 'skeleton' / 'x'}", f"-I{tmp_path / 'system'}",
         "kernels.cuh"],
        cwd=block.folder, capture_output=True, text=True, check=True,
    ).stdout
    assert f"const int line_mark = {expected};" in preprocessed


def test_a_syntax_error_inside_one_function_does_not_stop_the_splice_of_the_others(tmp_path):
    broken = STUDENT_KERNELS.replace(
        "    return OP::remVolatile(ptr[idx]);\n}",
        "    ptr[idx] = = ;\n    oops(<<<>>);\n    return OP::remVolatile(ptr[idx]);\n}",
    )
    solution, out = _fixture(tmp_path, kernels=broken)
    isolations = _isolate(tmp_path, solution, out)
    reference = splice.function_definitions(tmp_path / "reference" / "x", "host.cu.h")
    block = splice.function_definitions(isolations["block"].folder, "host.cu.h")
    assert block["scanIncWarp"] == reference["scanIncWarp"], "the broken function is replaced"
    assert b"= = ;" not in (isolations["block"].folder / "kernels.cuh").read_bytes()
    warp_kernels = (isolations["warp"].folder / "kernels.cuh").read_text()
    assert "ptr[idx] = = ;\n    oops(<<<>>);" in warp_kernels, "the task's own broken code stays as it is"
    warp = splice.function_definitions(isolations["warp"].folder, "host.cu.h")
    assert warp["scanIncBlock"] == splice.function_definitions(tmp_path / "skeleton" / "x", "host.cu.h")["scanIncBlock"]


def test_a_renamed_function_is_reported_and_the_other_tasks_get_the_references(tmp_path):
    renamed = STUDENT_KERNELS.replace("scanIncBlock(volatile", "scanBlock(volatile")
    solution, out = _fixture(tmp_path, kernels=renamed)
    isolations = _isolate(tmp_path, solution, out)
    warp = isolations["warp"]
    assert warp.added == ("scanIncBlock",)
    kernels = (warp.folder / "kernels.cuh").read_text()
    # After the student's scanIncWarp (which it calls), before the given kernel that calls it.
    positions = [kernels.index(text) for text in ("scanIncWarp( volatile", "scanIncBlock( volatile", "scanKernel(")]
    assert positions == sorted(positions)
    block = isolations["block"]
    assert block.own_missing == ("scanIncBlock",)
    feedback = " ".join(splice.feedback_lines(block))
    assert "your scanIncBlock not found" in feedback and "the ones it calls (scanIncWarp) are the reference's" in feedback
    assert "the others (scanInc) the skeleton's" in feedback
    assert "Not found in your code (renamed or missing?): scanIncBlock" in " ".join(splice.feedback_lines(warp))


def test_a_task_owning_a_function_the_reference_lacks_is_an_error(tmp_path):
    solution, out = _fixture(tmp_path, manifest=MANIFEST.replace('["scanInc"]', '["scanIncGrid"]'))
    with pytest.raises(splice.IsolationError, match="scanIncGrid"):
        _isolate(tmp_path, solution, out)


def test_check_functions_finds_a_region_outside_the_listed_functions(tmp_path):
    _fixture(tmp_path, manifest=MANIFEST.replace('["scanIncBlock"]', '["scanKernel"]'))
    problems = splice.check_functions(load_assignment(tmp_path, "x"))
    assert len(problems) == 2, problems
    assert "the region of task 'block' lies in scanIncBlock" in problems[0]
    assert "task 'block' lists 'scanKernel', which holds none of its solution regions" in problems[1]


@pytest.mark.parametrize("manifest", [
    REAL_ROOT / "assignments" / "pbb" / "assignment.toml",
    REAL_ROOT / "assignments" / "reduce" / "assignment.toml",
    REAL_ROOT / "grader" / "kernellab" / "templates" / "starter" / "assignments" / "starter" / "assignment.toml",
], ids=["pbb", "reduce", "starter"])
def test_the_manifests_functions_are_exactly_the_functions_holding_solution_regions(manifest):
    assignment = load_manifest(manifest, manifest.parents[2])
    assert all(task.functions for task in assignment.tested_tasks)
    assert splice.check_functions(assignment) == []


def test_a_task_alone_needs_no_folder_of_its_own(tmp_path):
    manifest = REAL_ROOT / "grader/kernellab/templates/starter/assignments/starter/assignment.toml"
    starter = load_manifest(manifest, manifest.parents[2])
    assert splice.isolated_solutions(starter, starter.reference_dir, starter.reference_dir, tmp_path) == {}
    assert not any(tmp_path.iterdir())


@pytest.mark.parametrize("problem, table", [
    ("is owned by task 'warp' already", '["scanIncWarp"]'),
    ("is not a C++ function name", '["scan-inc"]'),
    ("lists a name twice", '["scanIncBlock", "scanIncBlock"]'),
])
def test_the_manifest_refuses_bad_functions(tmp_path, problem, table):
    write_files(tmp_path / "assignments" / "x", {"assignment.toml": MANIFEST.replace('["scanIncBlock"]', table)})
    with pytest.raises(ManifestError, match=re.escape(problem)):
        load_assignment(tmp_path, "x")


def test_the_skeletons_scan_block_folder_holds_its_racy_scan_block_and_the_references_warp_scan(tmp_path):
    pbb = load_assignment(REAL_ROOT, "pbb")
    isolations = splice.isolated_solutions(pbb, pbb.skeleton_dir, pbb.reference_dir, tmp_path)
    skeleton = splice.function_definitions(pbb.skeleton_dir, "hostSkel.cu.h")
    reference = splice.function_definitions(pbb.reference_dir, "hostSkel.cu.h")
    for tests, isolation in isolations.items():
        found = splice.function_definitions(isolation.folder, "hostSkel.cu.h")
        assert found.keys() == skeleton.keys(), f"{tests}: no helper is needed, none is missing"
        for name in found:
            expected = skeleton if name in isolation.own or name not in isolation.from_reference else reference
            assert found[name] == expected[name], f"{tests}: {name}"
        assert isolation.helpers == isolation.added == isolation.own_missing == ()
    block = splice.function_definitions(isolations["scan_block"].folder, "hostSkel.cu.h")
    assert b"ptr[warpid] = OP::remVolatile(ptr[idx]);" in block["scanIncBlock"][0], "the skeleton's racy version"
    assert b"h <<= 1" in block["scanIncWarp"][0], "the reference's warp scan"
    # No reference code where the task's reference code calls no other task's function: a
    # student's scanIncWarp finds no segmented warp scan of the reference's to call.
    assert isolations["scan_warp"].from_reference == isolations["copy"].from_reference == ()
    assert isolations["scan_multi"].from_reference == ("copyFromGlb2ShrMem", "copyFromShr2GlbMem", "scanIncWarp", "scanIncBlock")


@pytest.mark.parametrize("year", ["2020", "2024", "2025"])
def test_the_course_handouts_splice(tmp_path, year):
    handout = HANDOUTS / year / "w2-code-handin" / "cuda"
    if not handout.is_dir():
        pytest.skip(f"the course handout of {year} is not here")
    pbb = load_assignment(REAL_ROOT, "pbb")
    accepted = set(pbb.files.required) | set(pbb.files.optional) | set(pbb.files.aliases)
    solution = tmp_path / "solution"
    solution.mkdir()
    for path in handout.iterdir():
        if path.name in accepted:
            shutil.copy(path, solution / path.name)
    entry = "hostSkel.cu.h" if (solution / "hostSkel.cu.h").exists() else "host_skel.cuh"
    isolations = splice.isolated_solutions(pbb, solution, pbb.reference_dir, tmp_path / "tasks")
    course = splice.function_definitions(solution, entry)
    reference = splice.function_definitions(pbb.reference_dir, "hostSkel.cu.h")
    found = splice.function_definitions(isolations["scan_block"].folder, entry)
    assert found["scanIncBlock"] == course["scanIncBlock"]
    assert b"ptr[warpid] = OP::remVolatile(ptr[idx])" in found["scanIncBlock"][0], "the course's racy version"
    assert found["scanIncWarp"] == reference["scanIncWarp"]
    assert found["redAssocKernel"] == course["redAssocKernel"], "given code stays the course's"
    # scan-block's reference calls no host wrapper: scanInc there is the skeleton's, which needs none
    # of what the course lacks (the reference's scanInc needed withChunk and more, and 2024 renamed
    # closestMul32 to nextMul32), and no reference helper comes along.
    skeleton = splice.function_definitions(pbb.skeleton_dir, "hostSkel.cu.h")
    assert found["scanInc"] == skeleton["scanInc"]
    assert isolations["scan_block"].helpers == ()
    assert all(not isolation.own_missing and not isolation.added for isolation in isolations.values())


@pytest.mark.slow
@pytest.mark.skipif(shutil.which("ninja") is None, reason="needs ninja")
def test_on_the_cpu_backend_a_broken_warp_scan_fails_only_the_warp_task(tmp_path):
    pbb, solution, isolations = _isolated_pbb(tmp_path, "operands-swapped.patch")
    build_dir = tmp_path / "build"
    built = building.build(pbb, solution, build_dir, ["scan_block", "scan_warp"],
                           ("-DKERNELLAB_BACKEND=cpu", "-DKERNELLAB_CPU_NVCC_CHECK=OFF"), None, views=isolation.views(isolations))
    assert built == {"scan_block": None, "scan_warp": None}
    # One thread order: what is tested is which code each program holds, not its races.
    one_order = {**os.environ, "KERNELLAB_CPU_ORDERS": "1"}
    block = subprocess.run([str(executable(build_dir, "pbb", "scan_block"))], capture_output=True, text=True, env=one_order)
    assert block.returncode == 0, f"scan_block with the reference's scanIncWarp:\n{block.stdout[-3000:]}"
    warp = subprocess.run([str(executable(build_dir, "pbb", "scan_warp")), "--abort"], capture_output=True, text=True, env=one_order)
    assert warp.returncode != 0 and "first mismatch" in warp.stdout, warp.stdout[-3000:]


def _python_without_site(tmp_path: Path, monkeypatch) -> None:
    """Children started with sys.executable run without site-packages, where libclang's bindings
    are installed."""
    python_without_site = tmp_path / "python-without-site"
    python_without_site.write_text(f'#!/bin/sh\nexec "{sys.executable}" -S "$@"\n')
    python_without_site.chmod(0o755)
    monkeypatch.setattr(sys, "executable", str(python_without_site))


def test_without_libclang_no_grade_is_made_and_the_error_says_how_to_install_it(tmp_path, monkeypatch):
    # Seen twice on a GPU host whose libclang was where the grader's Python did not look: every
    # task fell back to the whole submission, and a known-wrong copy function cost three tasks
    # that call it. A grade must not depend on the machine: the grade is not made.
    _python_without_site(tmp_path, monkeypatch)
    solution, _ = _fixture(tmp_path)
    assignment = load_assignment(tmp_path, "x")
    with pytest.raises(parse.LibclangMissing, match=r"pip install libclang\): without them no task can be graded"):
        isolation.isolate_tasks(assignment, solution, tmp_path / "job")


def test_a_grading_run_without_libclang_refuses_to_start(tmp_path, monkeypatch):
    solution, _ = _fixture(tmp_path)
    monkeypatch.setattr(importlib.util, "find_spec", lambda name, *args: None if name == "clang" else find_spec(name, *args))
    with pytest.raises(InputError, match=r"^error: x: libclang.s Python bindings are not installed"):
        GradingRun(load_assignment(tmp_path, "x"), "cpu", tmp_path / "work", None)


def test_a_submission_that_cannot_be_parsed_is_graded_whole_and_the_grade_says_why(tmp_path, monkeypatch):
    solution, _ = _fixture(tmp_path)
    monkeypatch.setattr(parse, "PARSE_TIMEOUT_S", 0.001)  # a parse that never ends, as on `#include "/dev/zero"`
    assignment = load_assignment(tmp_path, "x")
    isolations, note = isolation.isolate_tasks(assignment, solution, tmp_path / "job")
    assert isolations == {}
    assert note.startswith("note: every task was graded on your whole submission, not on its own functions")
    assert "parsing the solution took more than 0.001 s" in note

    progress = Progress(Deadline(None), dict(student="s", assignment="x", backend="cpu"))
    progress.note(("warp", "block"), note)
    grades = [TaskGrade(task, task, 10, 10, feedback="passed") for task in ("warp", "block", "multi")]
    graded = progress.grade(grades, ())
    assert note in graded.message
    assert [note in task.feedback for task in graded.tasks] == [True, True, False]


def _isolated_pbb(tmp_path: Path, scan_warp_patch: str):
    """pbb's reference with one known-wrong scanIncWarp, isolated per task."""
    pbb = load_assignment(REAL_ROOT, "pbb")
    solution = tmp_path / "solution"
    shutil.copytree(pbb.reference_dir, solution)
    apply_patch(parse_patch(pbb.wrong_dir / "scan-warp" / scan_warp_patch), solution)
    return pbb, solution, splice.isolated_solutions(pbb, solution, pbb.reference_dir, tmp_path / "tasks")


def test_a_submission_without_its_entry_file_is_parsed_through_the_skeletons_copy(tmp_path):
    # Seen: a real 2025 submission handed in the kernels file alone; intake took the host file
    # from the course layout, the parse of the missing entry failed ("Error parsing translation
    # unit"), and every task was graded whole: a lockstep warp scan then failed scan-block.
    pmph = load_assignment(REAL_ROOT, "pmph-w2")
    solution = tmp_path / "submission"
    solution.mkdir()
    shutil.copy(pmph.reference_dir / "pbbKernels.cu.h", solution)
    isolations, note = isolation.isolate_tasks(pmph, solution, tmp_path / "job")
    assert note == ""
    assert isolations["scan_block"].own == ("scanIncBlock",) and isolations["scan_block"].from_reference == ("scanIncWarp",)
