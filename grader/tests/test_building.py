"""What a student build's sandbox sees of the repository besides its assignment's folder, and of
the other tasks' folders."""

import shutil
from pathlib import Path

import pytest

from helpers import REAL_ROOT
from kernellab import runner
from kernellab.cpus import available_cpus
from kernellab.grading import building
from kernellab.grading.building import _configure_inputs
from kernellab.grading.isolation import stage as isolation
from kernellab.grading.model import GradingError
from kernellab.grading.targets import executable, view_dir
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


# What nvcc says when the kernel's OOM killer ends its cicc (SIGKILL), and g++ of its cc1plus.
KILLED = {"nvcc": "FAILED: pbb_test_scan_multi\nnvcc error   : 'cicc' died due to signal 9 (Kill signal)\n",
          "g++": "FAILED: pbb_test_scan_multi\ng++: fatal error: Killed signal terminated program cc1plus\n"}


def fake_build(tmp_path: Path, monkeypatch, outputs: list[runner.RunOutcome]) -> list[str]:
    """_build_folder of pbb's scan_multi tests in a folder CMake has configured, its `cmake --build`
    runs answered by `outputs` in turn (an empty output builds the program); the -j of each run."""
    pbb = load_assignment(REAL_ROOT, "pbb")
    build_dir = tmp_path / "build"
    build_dir.mkdir()
    (build_dir / "CMakeCache.txt").write_text("")
    monkeypatch.setattr(building.cmake, "configure", lambda *args, **kwargs: None)
    jobs = []

    def run_program(command, cwd, timeout_s, **kwargs):
        jobs.append(command[command.index("-j") + 1])
        outcome = outputs[len(jobs) - 1]
        if not outcome.output:
            program = executable(build_dir, pbb.id, "scan_multi")
            program.parent.mkdir(parents=True, exist_ok=True)
            program.write_text("built")
        return outcome

    monkeypatch.setattr(building.runner, "run_program", run_program)
    built = building._build_folder(pbb, pbb.reference_dir, build_dir, ["scan_multi"], (), None, (), 7, False, None)
    assert built == {"scan_multi": None}
    return jobs


@pytest.mark.parametrize("driver", sorted(KILLED))
def test_a_compiler_the_machine_killed_is_run_again_one_step_at_a_time(tmp_path: Path, monkeypatch, driver: str):
    # Seen on an H100 host under a batch of sixteen grades: a task's isolated build that failed
    # is graded on the whole submission, so a compiler killed for the machine's memory cost a
    # known-wrong copy task three more tasks.
    jobs = fake_build(tmp_path, monkeypatch, [runner.RunOutcome(1, False, 1.0, KILLED[driver]), runner.RunOutcome(0, False, 1.0, "")])
    assert jobs == [str(max(1, available_cpus() // 7)), "1"]


def test_a_compiler_the_machine_kills_twice_leaves_the_grade_not_graded(tmp_path: Path, monkeypatch):
    killed = runner.RunOutcome(1, False, 1.0, KILLED["nvcc"])
    with pytest.raises(GradingError, match=r"killed twice.*'cicc' died due to signal 9 \(Kill signal\); grade it again"):
        fake_build(tmp_path, monkeypatch, [killed, killed])


@pytest.mark.parametrize("outcome", [
    runner.RunOutcome(1, False, 1.0, KILLED["nvcc"], limit_hit="memory"),  # its own limit: the code's
    runner.RunOutcome(None, True, 900.0, KILLED["g++"]),  # its time limit
    runner.RunOutcome(1, False, 1.0, "FAILED: pbb_test_scan_multi\nerror: expected ';'\n"),
], ids=["own-memory-limit", "timed-out", "compile-error"])
def test_a_build_that_failed_for_its_own_reasons_is_not_the_machines_doing(outcome):
    assert not building.killed_by_the_machine(outcome)
