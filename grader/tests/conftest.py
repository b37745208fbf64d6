"""Fixtures shared by the tests."""

import os
import resource
from pathlib import Path

import pytest

from helpers import manifest_text, write_files


def pytest_configure(config):
    config.addinivalue_line("markers", "slow: builds CUDA code with CMake, about a minute; -m 'not slow' skips it")


# CPU-seconds per test: this process's and those of the processes it waited for, compilers among
# them (not the grader's sandboxed steps, reaped outside this tree: .ci/timed). On a loaded
# machine, such as CI's two cores with four pieces at once, a test's wall time says more about
# its neighbours than about its own cost.
_CPU_SECONDS: dict[str, float] = {}


def _cpu_seconds() -> float:
    return sum(usage.ru_utime + usage.ru_stime
               for usage in (resource.getrusage(resource.RUSAGE_SELF), resource.getrusage(resource.RUSAGE_CHILDREN)))


@pytest.hookimpl(wrapper=True)
def pytest_runtest_protocol(item, nextitem):
    start = _cpu_seconds()
    try:
        return (yield)
    finally:
        _CPU_SECONDS[item.nodeid] = _cpu_seconds() - start


def pytest_terminal_summary(terminalreporter, exitstatus, config):
    """Beside --durations=N's slowest N tests, the N costliest (N=0: all)."""
    if config.getoption("durations") is None or not _CPU_SECONDS:
        return
    costliest = sorted(_CPU_SECONDS.items(), key=lambda entry: entry[1], reverse=True)
    costliest = costliest[:config.getoption("durations") or len(costliest)]
    terminalreporter.write_sep("=", f"costliest {len(costliest)} tests in CPU-seconds, "
                                    f"of {sum(_CPU_SECONDS.values()):.0f} for all tests")
    for nodeid, seconds in costliest:
        terminalreporter.write_line(f"{seconds:8.2f}s  {nodeid}")


@pytest.fixture
def make_repo(tmp_path: Path):
    """make_repo(reference_files, assignment_id="x", task_ids=(...)) -> the root of a fixture repository."""

    def make(
        reference_files: dict[str, str | bytes],
        assignment_id: str = "x",
        task_ids: tuple[str, ...] = ("alpha", "beta"),
    ) -> Path:
        write_files(tmp_path, {"CMakeLists.txt": "cmake_minimum_required(VERSION 3.24)\n"})
        manifest = manifest_text(assignment_id, task_ids)
        write_files(tmp_path / "assignments" / assignment_id, {"assignment.toml": manifest})
        write_files(tmp_path / "reference" / assignment_id, reference_files)
        return tmp_path

    return make


@pytest.fixture
def own_umask():
    """The container sandbox sets the grader's umask to 077 for the whole process; the tests
    after one that grades with it need theirs back."""
    kept = os.umask(0o022)
    os.umask(kept)
    yield
    os.umask(kept)
