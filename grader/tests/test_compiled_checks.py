"""The harness check reads what each build compiled (kernellab/compiled_checks.py): every
preprocessing pass of every translation unit, in the context the compiler saw; a pass that cannot
run refuses the submission."""

import shutil
import subprocess
from pathlib import Path

import pytest

from helpers import REAL_ROOT
from kernellab import compiled_checks, intake
from kernellab.compile_cache import CompileCache
from kernellab.grading import building
from kernellab.manifest import load_assignment

# Hidden from a file preprocessed alone (its own level 0, level 1 from the host file), seen by the
# compiler of every test, which includes it deeper.
FORGERY = """\
#if __INCLUDE_LEVEL__ > 2
#undef KL_REQUIRE_EQUAL
#define KL_REQUIRE_EQUAL(...) (void)0
#endif
"""


@pytest.mark.skipif(shutil.which("nvcc") is None, reason="needs nvcc")
def test_nvcc_is_read_in_its_own_passes_the_host_and_each_device_architecture(tmp_path: Path):
    source = tmp_path / "unit.cu"
    source.write_text("#ifdef __CUDA_ARCH__\nint device_pass;\n#else\nint host_pass;\n#endif\n")
    command = (f"nvcc -DKERNELLAB_RECORD_ROLE=1 --generate-code=arch=compute_80,code=sm_80 "
               f"--generate-code=arch=compute_90,code=sm_90 -MD -MT unit.o -MF unit.o.d -x cu -c {source} -o unit.o")
    passes = compiled_checks.preprocessing_passes(str(tmp_path), command, str(source))
    assert sorted(p.label for p in passes) == ["device (compute_80)", "device (compute_90)", "host"]
    for preprocessing in passes:
        assert preprocessing.command[-1] == "-dD" and "-o" not in preprocessing.command and "-MF" not in preprocessing.command
        output = subprocess.run(preprocessing.command, cwd=tmp_path, capture_output=True, text=True, check=True).stdout
        assert ("int host_pass;" in output) == (preprocessing.label == "host"), preprocessing.label
        assert "#define KERNELLAB_RECORD_ROLE 1" in output


def test_a_cpp_compile_is_read_as_one_pass_with_its_macro_directives(tmp_path: Path):
    (passed,) = compiled_checks.preprocessing_passes(str(tmp_path), "/usr/bin/c++ -DX=1 -O3 -MD -MT a.o -MF a.o.d -o a.o -c a.cpp", "a.cpp")
    assert passed.command == ("/usr/bin/c++", "-DX=1", "-O3", "a.cpp", "-E", "-dD") and passed.label == "C++"


def test_a_compile_through_the_compile_cache_is_read_as_the_compilers_own(tmp_path: Path):
    (passed,) = compiled_checks.preprocessing_passes(str(tmp_path), "/usr/bin/ccache /usr/bin/c++ -DX=1 -o a.o -c a.cpp", "a.cpp")
    assert passed.command == ("/usr/bin/c++", "-DX=1", "a.cpp", "-E", "-dD")


@pytest.fixture(scope="module")
def forged_build(tmp_path_factory):
    """pbb's skeleton with FORGERY in its kernels file, built for task copy on the CPU backend;
    (assignment, solution, build folder, what the build raised)."""
    if shutil.which("ninja") is None:
        pytest.skip("needs ninja")
    top = tmp_path_factory.mktemp("forged")
    pbb = load_assignment(REAL_ROOT, "pbb")
    shutil.copytree(pbb.skeleton_dir, top / "handed-in")
    kernels = top / "handed-in" / "pbbKernels.cu.h"
    kernels.write_text(FORGERY + kernels.read_text())
    taken = intake.take(top / "handed-in", pbb, top / "solution")  # a file read alone shows nothing
    assert "pbbKernels.cu.h" in taken.files
    # Through the compile cache where ccache is installed, as the grader builds: the check reads
    # the compiler's command behind the launchers (the compiler slots' first, where flock is).
    cache = CompileCache(top / "cache", shutil.which("ccache")) if shutil.which("ccache") else None
    with pytest.raises(compiled_checks.HarnessTampering) as raised:
        building.build(pbb, top / "solution", top / "build", ["copy"],
                       ("-DKERNELLAB_BACKEND=cpu", "-DKERNELLAB_CPU_NVCC_CHECK=OFF", building.STUDENT_ROLE), None, cache=cache)
    if cache:
        units = compiled_checks.compiled_units(top / "build", ["pbb_test_copy"])["pbb_test_copy"]
        assert units and all(f" {cache.ccache} " in f" {command}" for _, command, _ in units), units
    return pbb, top / "solution", top / "build", raised.value


@pytest.mark.slow
def test_a_forgery_hidden_from_a_file_read_alone_is_refused_in_the_build(forged_build):
    *_, rejection = forged_build
    assert rejection.message.startswith(
        "pbbKernels.cu.h:2 reaches into the grader's test harness (undefs KL_REQUIRE_EQUAL, a name of the grader's "
        "tests or harness, in the C++ pass)"), rejection.message


@pytest.mark.slow
def test_a_pass_that_cannot_finish_refuses_the_submission(forged_build, monkeypatch):
    # Seen: a header whose preprocessed code passed the check's 64 MiB limit got the check's
    # preprocessor killed, and the failure was ignored.
    pbb, solution, build_dir, _ = forged_build
    monkeypatch.setattr(building, "PREPROCESSED_BYTES", 1 << 20)
    build = building._build_step(pbb, solution, build_dir, ())
    with pytest.raises(compiled_checks.HarnessTampering) as raised:
        building._check_what_was_compiled(pbb, solution, build_dir, ["copy"], None, build)
    assert "could not be checked: its C++ preprocessing stopped" in raised.value.message, raised.value.message
    assert "never graded as one that passed" in raised.value.message


@pytest.mark.slow
def test_a_program_with_no_compile_command_listed_cannot_pass_unchecked(forged_build):
    _, solution, build_dir, _ = forged_build
    found = compiled_checks.tampering(build_dir, ["pbb_test_nothing"], (solution,), frozenset(), lambda _: ("", ""))
    assert found == ("pbb_test_nothing", "could not be checked: Ninja lists no compile command of it")
