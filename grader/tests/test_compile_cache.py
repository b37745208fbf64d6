"""The compile cache (kernellab/compile_cache.py), real: ccache filled by a trusted compile, and a
student build's step, in bubblewrap and in the container sandbox, that tries to poison it: it may
read the cache, never change or add an entry."""

import hashlib
import os
import shutil
import subprocess
from pathlib import Path

import pytest

from helpers import REAL_ROOT
from kernellab import compile_cache, runner
from kernellab.compile_cache import CompileCache
from kernellab.grading import building
from kernellab.grading.race.check import RaceCheckRun
from kernellab.manifest import load_assignment
from kernellab.sandbox.bubblewrap import Sandbox
from kernellab.sandbox.container import ContainerSandbox
from kernellab.sandbox.step import SandboxUnavailable

CCACHE = shutil.which("ccache")
COMPILER = shutil.which("g++") or "/usr/bin/g++"
pytestmark = [pytest.mark.skipif(CCACHE is None, reason="needs ccache"), pytest.mark.usefixtures("own_umask")]

HARNESS_UNIT = "int harness_answer() { return 42; }\n"
# The student's compiler, taken over: it compiles the harness's translation unit (a hit), one of
# its own (a miss, which a writer would store), runs ccache as a writer, writes over every file
# of the cache and a new one, and clears it. Nothing of it may reach the cache.
ATTACK = """
ccache {compiler} -O2 -c {unit} -o {build}/hit.o
echo 'int harness_answer() {{ return 7; }}' > {build}/forged.cpp
ccache {compiler} -O2 -c {build}/forged.cpp -o {build}/forged.o
env -u CCACHE_READONLY -u CCACHE_NOSTATS ccache {compiler} -O2 -c {build}/forged.cpp -o {build}/forged-again.o
find {cache} -type f | while read -r file; do
  echo poisoned 2>/dev/null >"$file" && echo "WROTE $file"
  cp {build}/forged.o "$file" 2>/dev/null && echo "REPLACED $file"
done
touch {cache}/new-entry 2>/dev/null && echo WROTE new-entry
ccache --clear >/dev/null 2>&1
true
"""


def snapshot(folder: Path) -> dict[str, str]:
    return {str(path.relative_to(folder)): hashlib.sha256(path.read_bytes()).hexdigest()
            for path in sorted(folder.rglob("*")) if path.is_file()}


@pytest.fixture
def filled(tmp_path: Path):
    """(cache, the harness's unit, a student's build folder, the cache's files) under a folder
    that others may enter (the container sandbox's steps are other uids), the cache filled by a
    trusted compile of the harness's unit."""
    top = Path("/tmp") / f"kernellab-cache-test-{os.getpid()}-{tmp_path.name}"
    work, sources = top / "work" / "x", top / "sources"
    cache = CompileCache(work / "compile-cache", CCACHE)
    build_dir = work / "jobs" / "student" / "build"
    for folder in (cache.folder, sources, build_dir):
        folder.mkdir(parents=True)
    for folder in (top, *[path for path in top.rglob("*") if path.is_dir()]):
        folder.chmod(0o755)
    unit = sources / "harness.cpp"
    unit.write_text(HARNESS_UNIT)
    unit.chmod(0o644)
    trusted = subprocess.run([CCACHE, COMPILER, "-O2", "-c", str(unit), "-o", str(top / "trusted.o")],
                             env={**os.environ, **cache.environment(top, writes=True)}, capture_output=True, text=True)
    assert trusted.returncode == 0, trusted.stderr
    files = snapshot(cache.folder)
    assert any(name.endswith("R") for name in files), files  # ccache's result file: the object is stored
    yield cache, unit, build_dir, files
    shutil.rmtree(top)


def attack(sandbox: Sandbox | ContainerSandbox, cache: CompileCache, unit: Path, build_dir: Path) -> runner.RunOutcome:
    # As a build's step: the cache and the compiler slots, through which ccache runs what it compiles.
    step = building.build_step([unit.parent, *compile_cache.readable(cache)], build_dir)
    command = ["bash", "-c", ATTACK.format(compiler=COMPILER, unit=unit, build=build_dir, cache=cache.folder)]
    return runner.run_program(command, build_dir, 120, environment=cache.environment(build_dir, writes=False),
                              sandbox=sandbox, step=step)


def assert_unpoisoned(outcome: runner.RunOutcome, cache: CompileCache, unit: Path, build_dir: Path, files: dict[str, str]):
    assert outcome.exit_code == 0, outcome.output
    assert not any(word in outcome.output for word in ("WROTE", "REPLACED")), outcome.output
    assert (build_dir / "hit.o").is_file() and (build_dir / "forged.o").is_file(), outcome.output
    assert snapshot(cache.folder) == files
    # A trusted build's lookup of the harness's unit still gets the harness's object.
    again = subprocess.run([CCACHE, COMPILER, "-O2", "-c", str(unit), "-o", str(build_dir / "again.o")],
                           env={**os.environ, **cache.environment(build_dir, writes=True)}, capture_output=True, check=True)
    symbols = subprocess.run(["objdump", "-d", str(build_dir / "again.o")], capture_output=True, text=True, check=True).stdout
    assert "$0x2a" in symbols and "$0x7" not in symbols, again


def test_a_student_build_in_bubblewrap_reads_the_cache_and_cannot_alter_an_entry(filled):
    try:
        sandbox = Sandbox.find()
    except SandboxUnavailable as why:
        pytest.skip(f"no sandbox here: {why}")
    cache, unit, build_dir, files = filled
    assert_unpoisoned(attack(sandbox, cache, unit, build_dir), cache, unit, build_dir, files)


@pytest.mark.skipif(os.geteuid() != 0, reason="the container sandbox switches uids: it needs root")
def test_a_student_build_in_the_container_sandbox_reads_the_cache_and_cannot_alter_an_entry(filled):
    cache, unit, build_dir, files = filled
    root = cache.folder.parent.parent.parent / "repo"
    root.mkdir(mode=0o755)
    sandbox = ContainerSandbox.find(root, cache.folder.parent.parent)
    assert_unpoisoned(attack(sandbox, cache, unit, build_dir), cache, unit, build_dir, files)


def test_a_student_build_step_reads_the_harness_cache_writes_only_its_build_folder_and_never_sees_the_reference_cache(
        tmp_path: Path, monkeypatch):
    monkeypatch.setenv(compile_cache.LOCATION_VARIABLE, str(tmp_path / "caches"))
    harness = compile_cache.for_work(tmp_path / "work", compile_cache.HARNESS)
    reference = compile_cache.for_work(tmp_path / "work", compile_cache.REFERENCE)
    pbb = load_assignment(REAL_ROOT, "pbb")
    (tmp_path / "build").mkdir()
    (tmp_path / "build" / "CMakeCache.txt").write_text(f"CMAKE_CXX_COMPILER_LAUNCHER:STRING={CCACHE}\n")
    step = building._build_step(pbb, tmp_path / "solution", tmp_path / "build", (), cache=harness)
    assert harness.folder in step.readable and step.writable == (tmp_path / "build",)
    assert not any(path == reference.folder or reference.folder.is_relative_to(path) for path in step.reads)
    reader = harness.environment(tmp_path / "build", writes=False)
    assert reader["CCACHE_READONLY"] == "1" and reader["CCACHE_TEMPDIR"].startswith(str(tmp_path / "build"))
    assert "CCACHE_READONLY" not in harness.environment(tmp_path / "build", writes=True)
    # The reference's compiled code: the grader's alone, as a folder and in every file ccache writes.
    assert reference.folder.stat().st_mode & 0o077 == 0 and reference.environment(tmp_path, writes=True)["CCACHE_UMASK"] == "077"
    assert (tmp_path / "caches").stat().st_mode & 0o777 == 0o711  # the caches' names are not listed
    with pytest.raises(ValueError):
        building.build(pbb, tmp_path / "solution", tmp_path / "build", ["copy"], (building.STUDENT_ROLE,), None, cache=reference)


def test_the_race_check_builds_through_the_grading_runs_caches(tmp_path: Path, monkeypatch):
    monkeypatch.delenv(compile_cache.LOCATION_VARIABLE, raising=False)
    race_run = RaceCheckRun(load_assignment(REAL_ROOT, "pbb"), tmp_path / "work", None, seed=1)
    assert race_run.compile_cache.folder == tmp_path / "work" / compile_cache.FOLDER / compile_cache.HARNESS
    assert race_run.reference_compile_cache.folder == tmp_path / "work" / compile_cache.FOLDER / compile_cache.REFERENCE
    assert not (race_run.work / compile_cache.FOLDER).exists()
