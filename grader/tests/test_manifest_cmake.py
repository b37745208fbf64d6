"""The build reads the manifest through kernellab.manifest_cmake: any valid TOML reaches CMake
(multi-line arrays, inline tables), an invalid manifest stops the configure step with its error,
and a change of the manifest configures the build again."""

import re
import shutil
import subprocess
from pathlib import Path

import pytest

from helpers import REAL_ROOT, write_files
from kernellab.scaffold import scaffold
from kernellab.manifest import ManifestError, load_assignment
from kernellab.manifest_cmake import cmake_text, write_cmake_file

ID = "demo"
# The starter's one task, with the manifest's every list and table written as TOML allows but
# no line regex would read: a multi-line array with a trailing comma, inline tables.
MULTI_LINE_FILES = """\
[files]
required = ["kernels.cuh"]
optional = [
    "constants.cuh",
    "tuning.cuh",
]
entry = "kernels.cuh"
aliases = { "saxpy_kernels.cuh" = "kernels.cuh", "consts.cuh" = "constants.cuh", "params.cuh" = "tuning.cuh" }
"""

needs_cpu_backend_build = pytest.mark.skipif(
    shutil.which("cmake") is None or not Path("/usr/include/boost/context").is_dir(),
    reason="configures a CPU-backend build: needs cmake and Boost.Context",
)


def starter_root(directory: Path) -> Path:
    """A repository with the real build system and reader, and the starter scaffolded as `demo`
    with MULTI_LINE_FILES as its [files] table and two optional headers in its reference."""
    (directory / "assignments").mkdir(parents=True)
    shutil.copy(REAL_ROOT / "CMakeLists.txt", directory)
    for name in ("grader/harness", "grader/kernellab", "grader/cpu"):
        shutil.copytree(REAL_ROOT / name, directory / name, ignore=shutil.ignore_patterns("__pycache__"))
    scaffold(directory, ID, None)
    write_files(directory / "reference" / ID, {"constants.cuh": "#pragma once\n", "tuning.cuh": "#pragma once\n"})
    write_files(directory / "skeleton" / ID, {"constants.cuh": "#pragma once\n", "tuning.cuh": "#pragma once\n"})
    manifest = directory / "assignments" / ID / "assignment.toml"
    text = manifest.read_text()
    files_table = re.search(r"(?ms)^\[files\]\n.*?(?=^\[build\])", text)
    manifest.write_text(text.replace(files_table[0], MULTI_LINE_FILES + "\n"))
    return directory


def configure(root: Path, build: Path, solution: Path) -> subprocess.CompletedProcess:
    generator = ["-G", "Ninja"] if shutil.which("ninja") else []
    return subprocess.run(
        ["cmake", "-S", str(root), "-B", str(build), *generator, "-DKERNELLAB_BACKEND=cpu",
         "-DKERNELLAB_CPU_NVCC_CHECK=OFF", f"-DKERNELLAB_ASSIGNMENTS={ID}", f"-DKERNELLAB_SOLUTION={solution}"],
        capture_output=True, text=True,
    )


def one_line(text: str) -> str:
    """CMake's message text with its line wrapping undone."""
    return " ".join(text.split())


def student_folder(root: Path, directory: Path) -> Path:
    """A student's folder with the entry file under its alias and no optional file."""
    directory.mkdir()
    shutil.copy(root / "skeleton" / ID / "kernels.cuh", directory / "saxpy_kernels.cuh")
    return directory


@needs_cpu_backend_build
def test_a_multi_line_optional_array_and_inline_aliases_reach_the_build(tmp_path: Path):
    root = starter_root(tmp_path / "repo")
    build = tmp_path / "build"
    configured = configure(root, build, student_folder(root, tmp_path / "student"))
    assert configured.returncode == 0, configured.stdout + configured.stderr
    generated = build / "assignments" / ID
    # The entry under the alias the student used.
    solution_header = (generated / "kernellab_generated" / "kernellab_solution.h").read_text()
    assert '#include "saxpy_kernels.cuh"' in solution_header, solution_header
    # Both optional files from the skeleton, each also under its alias, and the student's file
    # under the name the student did not use.
    fallback = generated / "kernellab_fallback"
    assert sorted(path.name for path in fallback.iterdir()) == ["constants.cuh", "consts.cuh", "kernels.cuh", "params.cuh", "tuning.cuh"]
    assert (fallback / "kernels.cuh").read_text() == '#include "saxpy_kernels.cuh"\n'
    assert (fallback / "consts.cuh").read_text() == '#include "constants.cuh"\n'
    assert (fallback / "params.cuh").read_text() == '#include "tuning.cuh"\n'
    # The task's test executable comes from the manifest alone (the CMakeLists names none).
    tests = subprocess.run(["ctest", "--test-dir", str(build), "-N"], capture_output=True, text=True).stdout
    assert f"{ID}.saxpy" in tests, tests


@needs_cpu_backend_build
def test_a_changed_manifest_configures_the_build_again(tmp_path: Path):
    root = starter_root(tmp_path / "repo")
    build = tmp_path / "build"
    assert configure(root, build, root / "skeleton" / ID).returncode == 0
    ninja_file = build / "build.ninja"
    if not ninja_file.is_file():
        pytest.skip("checks the Ninja build's own regeneration rule: needs ninja")
    assert "KERNELLAB_WARP_SYNCHRONOUS" not in ninja_file.read_text()
    manifest = root / "assignments" / ID / "assignment.toml"
    manifest.write_text(manifest.read_text().replace("# warp_synchronous = \"fail\"", 'warp_synchronous = "warn"'))
    # The build tool itself notices the change: regenerating build.ninja is a target of its own.
    regenerated = subprocess.run(["cmake", "--build", str(build), "--target", "build.ninja"], capture_output=True, text=True)
    assert regenerated.returncode == 0, regenerated.stdout + regenerated.stderr
    assert 'KERNELLAB_WARP_SYNCHRONOUS=\\"warn\\"' in ninja_file.read_text()


@needs_cpu_backend_build
def test_an_invalid_manifest_stops_the_configure_step_with_the_readers_error(tmp_path: Path):
    root = starter_root(tmp_path / "repo")
    manifest = root / "assignments" / ID / "assignment.toml"
    manifest.write_text(manifest.read_text().replace('tests = "saxpy"', 'tests = "sax-py"'))
    configured = configure(root, tmp_path / "build", root / "skeleton" / ID)
    assert configured.returncode != 0
    assert "tasks[0].tests: 'sax-py' does not match" in one_line(configured.stderr), configured.stderr


@needs_cpu_backend_build
def test_a_task_test_listed_again_in_the_cmake_file_stops_the_configure_step(tmp_path: Path):
    root = starter_root(tmp_path / "repo")
    (root / "assignments" / ID / "CMakeLists.txt").write_text(f"kernellab_add_assignment_tests({ID} GPU saxpy)\n")
    configured = configure(root, tmp_path / "build", root / "skeleton" / ID)
    assert configured.returncode != 0
    assert "lists 'saxpy', the tests of a task in the manifest" in one_line(configured.stderr), configured.stderr


@pytest.mark.skipif(shutil.which("cmake") is None, reason="reads the generated file with cmake -P")
def test_cmake_reads_back_every_name_as_written(tmp_path: Path):
    """Names with spaces, `$`, `#` and `=`: bracket arguments reach CMake unexpanded."""
    root = starter_root(tmp_path / "repo")
    manifest = root / "assignments" / ID / "assignment.toml"
    odd_names = ["con sts ${HOME}.cuh", "#tuning=.cuh"]
    text = manifest.read_text().replace('"constants.cuh"', f'"{odd_names[0]}"').replace('"tuning.cuh"', f'"{odd_names[1]}"')
    manifest.write_text(text)
    output = tmp_path / "manifest.cmake"
    write_cmake_file(manifest, output)
    script = tmp_path / "print.cmake"
    script.write_text(
        f"include({output.as_posix()})\n"
        'foreach(name IN LISTS manifest_optional_files manifest_file_aliases_1 manifest_entry_names)\n'
        '  message("<${name}>")\n'
        "endforeach()\n"
    )
    printed = subprocess.run(["cmake", "-P", str(script)], capture_output=True, text=True)
    assert printed.returncode == 0, printed.stderr
    assert printed.stderr.splitlines() == [f"<{name}>" for name in [*odd_names, "consts.cuh", "kernels.cuh", "saxpy_kernels.cuh"]]


def test_a_name_that_cmake_cannot_carry_is_a_manifest_error(tmp_path: Path):
    root = starter_root(tmp_path / "repo")
    manifest = root / "assignments" / ID / "assignment.toml"
    for odd in ("tun;ing.cuh", "tun[ing.cuh", 'tun"ing.cuh'):
        manifest.write_text(manifest.read_text().replace('"tuning.cuh"', f"'{odd}'"))
        with pytest.raises(ManifestError, match=re.escape(f"files.optional: {odd!r} holds")):
            cmake_text(load_assignment(root, ID))
        manifest.write_text(manifest.read_text().replace(f"'{odd}'", '"tuning.cuh"'))


@pytest.mark.skipif(shutil.which("ninja") is None or shutil.which("nvcc") is None, reason="needs ninja and nvcc")
def test_on_the_gpu_backend_only_warn_tasks_are_built_with_pauses_that_never_split_a_warp(tmp_path: Path):
    # pmph-w2 warns of the course's lockstep idiom: on an H100 its scan_warp tests failed that idiom
    # (52 of 56) with per-lane pauses, and pass it (the course's race at 1024 still caught) with
    # whole-warp ones (kernellab/jitter.hpp). pbb fails the idiom: its pauses stay per lane.
    build = tmp_path / "build"
    subprocess.run(["cmake", "-S", str(REAL_ROOT), "-B", str(build), "-G", "Ninja", "-DCMAKE_CUDA_ARCHITECTURES=90",
                    "-DKERNELLAB_ASSIGNMENTS=pbb;pmph-w2", "-DKERNELLAB_SOLUTION=reference"], check=True, capture_output=True)

    def defines_warn(target: str) -> bool:
        commands = subprocess.run(["ninja", "-C", str(build), "-t", "commands", target], check=True, capture_output=True, text=True)
        compile_line = next(line for line in commands.stdout.splitlines() if "test_scan_warp.cu" in line and " -c " in line)
        return 'KERNELLAB_WARP_SYNCHRONOUS=\\"warn\\"' in compile_line

    assert defines_warn("pmph-w2_test_scan_warp")
    assert not defines_warn("pbb_test_scan_warp")


def test_the_tests_folder_reaches_the_build_from_the_manifest(tmp_path: Path):
    """Its own `tests` folder by default; another assignment's with build.tests."""
    root = starter_root(tmp_path / "repo")
    manifest = root / "assignments" / ID / "assignment.toml"
    output = tmp_path / "manifest.cmake"
    write_cmake_file(manifest, output)
    assert f"set(manifest_tests_dir [=[assignments/{ID}/tests]=])" in output.read_text()
    manifest.write_text(manifest.read_text().replace("[build]\n", '[build]\ntests = "assignments/other/tests"\n'))
    write_cmake_file(manifest, output)
    assert "set(manifest_tests_dir [=[assignments/other/tests]=])" in output.read_text()
