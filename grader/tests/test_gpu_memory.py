"""The sandbox's GPU memory limit: what nvidia-smi reports per process, summed over a step's
cgroup. nvidia-smi here is a stand-in script that prints what a test tells it to (the real one
needs a GPU); the cgroup and the process in it are real where the grader may create cgroups."""

import stat
import subprocess
import sys
from pathlib import Path

import pytest

from kernellab import gpu_memory
from kernellab.gpu_memory import MIB, DeviceMemoryUse, parse_compute_apps
from kernellab.sandbox import Cgroups, Step


def stand_in_nvidia_smi(tmp_path: Path, answer: str) -> Path:
    program = tmp_path / "nvidia-smi"
    (tmp_path / "answer").write_text(answer)
    program.write_text(f"#!/bin/sh\ncat {tmp_path / 'answer'}\n")
    program.chmod(program.stat().st_mode | stat.S_IXUSR)
    return program


def test_compute_apps_are_read_in_bytes_per_pid_and_unreported_use_is_left_out():
    assert parse_compute_apps("456, 3590\n789, [N/A]\n456, 10\n\n") == {456: 3600 * MIB}


def test_device_memory_is_summed_over_the_pids_asked_for(tmp_path):
    use = DeviceMemoryUse(str(stand_in_nvidia_smi(tmp_path, "10, 100\n11, 200\n12, 400\n")))
    assert use.held_by({10, 12, 99}) == 500 * MIB
    assert use.held_by(set()) == 0


def test_a_gpu_step_whose_processes_hold_more_than_its_limit_hit_the_gpu_memory_limit(tmp_path, monkeypatch):
    cgroups = Cgroups.find()
    if cgroups is None:
        pytest.skip("the grader may not create cgroups here")
    group = cgroups.step(Step((), gpu=True, gpu_memory_bytes=64 * MIB))
    process = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(30)"], preexec_fn=group.join)
    try:
        answer = stand_in_nvidia_smi(tmp_path, f"{process.pid}, 63\n")
        monkeypatch.setattr(gpu_memory, "machine_use", lambda: DeviceMemoryUse(str(answer)))
        assert group.limit_hit() == ""
        (tmp_path / "answer").write_text(f"{process.pid}, 65\n{process.pid + 1}, 1000\n")
        assert group.limit_hit() == "GPU memory"
        (tmp_path / "answer").write_text("")
        assert group.limit_hit() == "GPU memory", "the limit once hit stays hit after the memory is freed"
    finally:
        process.kill()
        process.wait()
        group.remove()
