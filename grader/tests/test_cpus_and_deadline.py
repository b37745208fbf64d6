"""The CPUs a grade may use (cgroup quotas, affinity) and the overall grading deadline."""

import os
from pathlib import Path

import pytest

from kernellab.cpus import available_cpus, cpu_quota
from kernellab.deadline import Deadline, StageCost


def cgroup_tree(tmp_path: Path, membership: str, files: dict[str, str]) -> tuple[Path, Path]:
    root = tmp_path / "cgroup"
    for name, text in files.items():
        (root / name).parent.mkdir(parents=True, exist_ok=True)
        (root / name).write_text(text)
    proc = tmp_path / "proc-self-cgroup"
    proc.write_text(membership)
    return root, proc


@pytest.mark.parametrize("quota, period, expected", [(50000, 100000, 0.5), (150000, 100000, 1.5), (400000, 100000, 4.0)])
def test_cgroup_v2_quota_in_cpus(tmp_path, quota, period, expected):
    root, proc = cgroup_tree(tmp_path, "0::/docker/abc\n", {"docker/abc/cpu.max": f"{quota} {period}\n"})
    assert cpu_quota(root, proc) == expected, f"cpu.max {quota} {period}"


def test_the_tightest_quota_on_the_way_up_counts(tmp_path):
    root, proc = cgroup_tree(
        tmp_path, "0::/outer/inner\n", {"outer/cpu.max": "70000 100000\n", "outer/inner/cpu.max": "max 100000\n"}
    )
    assert cpu_quota(root, proc) == 0.7


def test_cgroup_v1_quota_and_no_quota(tmp_path):
    root, proc = cgroup_tree(
        tmp_path, "4:cpu,cpuacct:/job\n", {"cpu,cpuacct/job/cpu.cfs_quota_us": "250000\n", "cpu,cpuacct/job/cpu.cfs_period_us": "100000\n"}
    )
    assert cpu_quota(root, proc) == 2.5
    root, proc = cgroup_tree(tmp_path / "none", "0::/\n", {"cpu.max": "max 100000\n"})
    assert cpu_quota(root, proc) is None


def test_half_a_cpu_is_one_and_the_affinity_mask_bounds_the_count(tmp_path):
    root, proc = cgroup_tree(tmp_path, "0::/\n", {"cpu.max": "50000 100000\n"})
    assert available_cpus(root, proc) == 1
    generous, proc = cgroup_tree(tmp_path / "big", "0::/\n", {"cpu.max": "100000000 100000\n"})
    assert available_cpus(generous, proc) == len(os.sched_getaffinity(0))


class Clock:
    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


def test_a_deadline_counts_down_and_says_what_it_skipped():
    clock = Clock()
    deadline = Deadline(600, clock)
    clock.now += 470
    assert deadline.remaining() == 130
    assert deadline.fits(120) and not deadline.fits(131)
    assert deadline.skip_note(StageCost("speed", 200, "up to 12 speed points")) == (
        "speed: skipped, the grading deadline was near (it needs about 200 s, 130 s were left of 600 s); "
        "it would have given up to 12 speed points")
    assert deadline.timeout_for(300) == 130 and deadline.timeout_for(60) == 60
    clock.now += 1000
    assert deadline.remaining() == 0 and deadline.timeout_for(300) == 1


def test_no_deadline_fits_everything_and_a_nonpositive_one_is_refused():
    assert Deadline(None).fits(1e9) and Deadline(None).remaining() == float("inf")
    with pytest.raises(ValueError, match="-5"):
        Deadline(-5)
