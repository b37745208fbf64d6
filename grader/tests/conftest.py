"""Fixtures shared by the tests."""

import os
from pathlib import Path

import pytest

from helpers import manifest_text, write_files


def pytest_configure(config):
    config.addinivalue_line("markers", "slow: builds CUDA code with CMake, about a minute; -m 'not slow' skips it")


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
