"""What a student build's sandbox sees of the repository besides its assignment's folder."""

from pathlib import Path

import pytest

from kernellab.grading.building import _configure_inputs


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
