"""What a student build's sandbox sees of the repository besides its assignment's folder, and of
the other tasks' folders."""

import shutil
from pathlib import Path

import pytest

from helpers import REAL_ROOT
from kernellab.grading import building
from kernellab.grading.building import _configure_inputs
from kernellab.grading.isolation import stage as isolation
from kernellab.grading.targets import view_dir
from kernellab.manifest import load_assignment
from kernellab.sandbox.bubblewrap import machine_sandbox
from kernellab.sandbox.step import SandboxUnavailable


@pytest.mark.parametrize("outputs", ["build.ninja", "build.ninja /b/build.ninja"], ids=["cmake-3", "cmake-4"])
def test_the_folders_the_configure_step_read_are_seen_but_never_the_reference(tmp_path: Path, outputs: str):
    root = tmp_path / "repo"
    (root / "reference" / "pmph-w2").mkdir(parents=True)
    build = tmp_path / "build"
    build.mkdir()
    inputs = [root / "CMakeLists.txt", root / "assignments" / "pbb" / "tests" / "probes.cmake",
              root / "reference" / "pmph-w2" / "CMakeLists.txt", Path("/usr/share/cmake/Modules/FindPython3.cmake")]
    (build / "build.ninja").write_text(f"build {outputs}: RERUN_CMAKE | {' '.join(map(str, inputs))} CMakeCache.txt\n  pool = console\n")
    # Not the root either: it holds the reference.
    assert _configure_inputs(build, root) == [root / "assignments" / "pbb" / "tests"]


# A probe in the student's file of every task's folder: which folders a compiler of one task's
# code can read. Each of its two tasks' folders names the other: both readable means a compiler of
# one read the other's, which holds the reference's code of the first task's functions.
SIBLING_PROBE = """\
#if __has_include("../scan_warp/pbbKernels.cu.h") && __has_include("../scan_block/pbbKernels.cu.h")
#error "kernellab-probe: another task's folder is readable"
#elif __has_include("{other_build}/CMakeCache.txt")
#error "kernellab-probe: another task's build folder is readable"
#else
#error "kernellab-probe: its own folder alone"
#endif
"""


@pytest.mark.slow
@pytest.mark.skipif(shutil.which("ninja") is None, reason="needs ninja")
def test_a_tasks_build_reads_its_own_folder_and_no_other_tasks_folder_or_build(tmp_path: Path):
    try:
        sandbox = machine_sandbox()
    except SandboxUnavailable as unavailable:
        pytest.skip(str(unavailable))
    pbb = load_assignment(REAL_ROOT, "pbb")
    job = tmp_path / "job"
    solution = job / "submission"
    shutil.copytree(pbb.skeleton_dir, solution)
    isolations = isolation.isolate_tasks(pbb, solution, job)[0]
    views = {tests: folder for tests, folder in isolation.views(isolations).items() if tests in ("scan_warp", "scan_block")}
    for tests, folder in views.items():
        other = next(name for name in views if name != tests)
        probe = SIBLING_PROBE.format(other_build=view_dir(job / "build", other))
        (folder / "pbbKernels.cu.h").write_text(probe + (folder / "pbbKernels.cu.h").read_text())
    cpu = ("-DKERNELLAB_BACKEND=cpu", "-DKERNELLAB_CPU_NVCC_CHECK=OFF")

    built = building.build(pbb, solution, job / "build", sorted(views), cpu, sandbox, views=views)
    assert all("kernellab-probe: its own folder alone" in built[tests] for tests in views), built

    # The probe can tell: a build of one task's folder in a step that may read the other's.
    together = building.build(pbb, views["scan_warp"], tmp_path / "together", ["scan_warp"], cpu, sandbox,
                              readable=(views["scan_block"],))
    assert "kernellab-probe: another task's folder is readable" in together["scan_warp"], together
