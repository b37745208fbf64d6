"""How many CPUs this process may actually use: what its affinity mask allows, and what the
cgroup's CPU quota (cgroup v2's cpu.max, v1's cfs_quota_us / cfs_period_us) pays for.

A container on an autograder platform sees the machine's cores (os.cpu_count() says 64) but may
be given half a CPU of time; starting a build job or a test run per core there makes every run
slower, past its time limit. Parallelism is sized by `available_cpus()` instead.
"""

import math
import os
from pathlib import Path

CGROUP_ROOT = Path("/sys/fs/cgroup")


def available_cpus(cgroup_root: Path = CGROUP_ROOT, proc_self_cgroup: Path = Path("/proc/self/cgroup")) -> int:
    """The CPUs this process may run on at once, rounded up, never less than 1."""
    usable = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else (os.cpu_count() or 1)
    quota = cpu_quota(cgroup_root, proc_self_cgroup)
    if quota is not None:
        usable = min(usable, math.ceil(quota))
    return max(1, usable)


def cpu_quota(cgroup_root: Path = CGROUP_ROOT, proc_self_cgroup: Path = Path("/proc/self/cgroup")) -> float | None:
    """The smallest CPU quota (in CPUs) on the way from this process's cgroup up to the root;
    None when no quota is set or no cgroup file can be read."""
    try:
        memberships = proc_self_cgroup.read_text().splitlines()
    except OSError:
        return None
    quotas = []
    for line in memberships:
        _, controllers, path = line.split(":", 2)
        if controllers == "":  # cgroup v2: cpu.max holds "quota period" or "max period"
            quotas += [_v2_quota(folder / "cpu.max") for folder in _ancestors(cgroup_root, path)]
        elif "cpu" in controllers.split(","):
            hierarchy = next((cgroup_root / name for name in ("cpu,cpuacct", "cpu", "cpuacct,cpu") if (cgroup_root / name).is_dir()), None)
            if hierarchy is not None:
                quotas += [_v1_quota(folder) for folder in _ancestors(hierarchy, path)]
    found = [quota for quota in quotas if quota is not None]
    return min(found) if found else None


def _ancestors(mount: Path, path: str) -> list[Path]:
    """`mount/path` and each folder above it up to `mount` (a container sees its own cgroup as '/')."""
    folder = mount / path.lstrip("/")
    return [folder, *(parent for parent in folder.parents if parent == mount or mount in parent.parents)]


def _v2_quota(cpu_max: Path) -> float | None:
    try:
        quota, period = cpu_max.read_text().split()
        return None if quota == "max" else int(quota) / int(period)
    except (OSError, ValueError):
        return None


def _v1_quota(folder: Path) -> float | None:
    try:
        quota = int((folder / "cpu.cfs_quota_us").read_text())
        period = int((folder / "cpu.cfs_period_us").read_text())
    except (OSError, ValueError):
        return None
    return quota / period if quota > 0 and period > 0 else None
