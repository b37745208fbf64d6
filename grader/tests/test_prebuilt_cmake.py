"""A build links the harness mains and the CPU runtime of another build folder
(KERNELLAB_PREBUILT_MAINS, KERNELLAB_PREBUILT_CPU_RUNTIME) only when that folder was configured
from the same source tree: an unpacked handout must compile its own from its own files."""

import shutil
import subprocess
from pathlib import Path

import pytest

from helpers import copy_build_system
from kernellab.commands.new import scaffold

pytestmark = pytest.mark.skipif(
    shutil.which("cmake") is None or shutil.which("ninja") is None or not Path("/usr/include/boost/context").is_dir(),
    reason="configures CPU-backend builds with Ninja: needs cmake, ninja and Boost.Context",
)

MAIN_OBJECT = "grader/harness/CMakeFiles/kernellab_gpu_main.dir/src/catch_main.cpp.o"
RUNTIME_ARCHIVE = "grader/cpu/libkernellab_cpu_runtime.a"


def configure(root: Path, build: Path, *args: str) -> None:
    configured = subprocess.run(
        ["cmake", "-S", str(root), "-B", str(build), "-G", "Ninja", "-DKERNELLAB_BACKEND=cpu",
         "-DKERNELLAB_CPU_NVCC_CHECK=OFF", "-DKERNELLAB_ASSIGNMENTS=demo", *args],
        capture_output=True, text=True,
    )
    assert configured.returncode == 0, configured.stdout + configured.stderr


def linked_by_the_test(build: Path) -> str:
    """The inputs of the link step of demo's test executable, as build.ninja lists them."""
    line = next(line for line in (build / "build.ninja").read_text().splitlines()
                if line.startswith("build assignments/demo/demo_test_saxpy:"))
    return line


def test_prebuilt_objects_are_linked_from_the_same_tree_only(tmp_path: Path):
    roots = []
    for name in ("repo", "handout"):
        root = copy_build_system(tmp_path / name)
        scaffold(root, "demo", None)
        roots.append(root)
    prebuilt = tmp_path / "prebuilt"
    configure(roots[0], prebuilt)
    # What a build of that folder leaves (configured only: no compiling needed to decide).
    for name in (MAIN_OBJECT, RUNTIME_ARCHIVE):
        (prebuilt / name).parent.mkdir(parents=True, exist_ok=True)
        (prebuilt / name).write_bytes(b"")
    arguments = (f"-DKERNELLAB_PREBUILT_MAINS={prebuilt}", f"-DKERNELLAB_PREBUILT_CPU_RUNTIME={prebuilt}")

    configure(roots[0], tmp_path / "same-tree", *arguments)
    link = linked_by_the_test(tmp_path / "same-tree")
    assert str(prebuilt / MAIN_OBJECT) in link and str(prebuilt / RUNTIME_ARCHIVE) in link, link

    configure(roots[1], tmp_path / "other-tree", *arguments)
    link = linked_by_the_test(tmp_path / "other-tree")
    assert str(prebuilt) not in link, link
    assert f"{MAIN_OBJECT}" in link and RUNTIME_ARCHIVE in link, link
