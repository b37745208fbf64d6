"""The sandbox's limits that no cgroup event records: GPU memory (what nvidia-smi reports per
process, summed over a step's cgroup) and RLIMIT_NPROC's hold on a step (its cgroup's threads).
nvidia-smi here is a stand-in script that prints what a test tells it to (the real one needs a
GPU); the cgroups and the processes in them are real where the grader may create cgroups."""

import stat
import subprocess
import sys
import time
from pathlib import Path

import pytest

from kernellab import gpu_memory
from kernellab.gpu_memory import MIB, DeviceMemoryUse, parse_compute_apps
from kernellab.sandbox.cgroups import Cgroups
from kernellab.sandbox.step import Step


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


def test_without_a_pids_controller_a_step_holding_all_its_processes_hit_the_process_limit():
    found = Cgroups.find()
    if found is None or "memory" not in found.controllers:
        pytest.skip("the grader may not create memory cgroups here")
    # As on the H100 machine, whose delegated cgroup has the memory controller only: there
    # RLIMIT_NPROC holds a step's processes, and no event says it was reached.
    memory_only = Cgroups({"memory": found._parents["memory"]}, found._version)
    group = memory_only.step(Step((), processes=3))
    threads = "import threading, time; [threading.Thread(target=time.sleep, args=(30,)).start() for _ in range({})]"
    process = subprocess.Popen([sys.executable, "-c", threads.format(1)], preexec_fn=group.join)
    try:
        time.sleep(0.5)
        assert group.limit_hit() == "", "two threads of three allowed"
        process.kill()
        process.wait()
        process = subprocess.Popen([sys.executable, "-c", threads.format(2)], preexec_fn=group.join)
        time.sleep(0.5)
        assert group.limit_hit() == "processes"
        process.kill()
        process.wait()
        assert group.limit_hit() == "processes", "the limit once hit stays hit after the processes end"
    finally:
        process.kill()
        process.wait()
        group.remove()


def test_a_stop_kills_a_steps_processes_without_waiting_for_its_cgroup_to_empty():
    # On an H100 host a stopped batch of sixteen grades went on for minutes: the stop removed each
    # of some two hundred steps' cgroups in turn, waiting up to 10 s for each to empty.
    cgroups = Cgroups.find()
    if cgroups is None:
        pytest.skip("the grader may not create cgroups here")
    group = cgroups.step(Step(()))
    process = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(30)"], preexec_fn=group.join)
    try:
        group.kill()
        assert process.wait(5) == -9
        assert any(folder.exists() for folder in group._folders.values()), "the step's own end removes the cgroup"
    finally:
        process.kill()
        process.wait()
        group.remove()
