"""The machine's compiler slots (compiler_slots.py): a launcher before each compiler, a lock per
slot, and what a build's sandbox step sees of them."""

import fcntl
import os
import shutil
import signal
import subprocess
import time
from pathlib import Path

import pytest

from helpers import REAL_ROOT
from kernellab import compile_cache, compiled_checks, compiler_slots
from kernellab.compile_cache import CompileCache
from kernellab.grading import building
from kernellab.manifest import load_assignment

pytestmark = pytest.mark.skipif(shutil.which("flock") is None, reason="needs flock (util-linux)")


def compiler(tmp_path: Path, seconds: float) -> list[str]:
    """A stand-in compiler that logs when it starts and ends."""
    return ["sh", "-c", f'echo start >> "{tmp_path}/log"; sleep {seconds}; echo end >> "{tmp_path}/log"']


def most_at_once(log: Path) -> int:
    running = most = 0
    for line in log.read_text().split():
        running += 1 if line == "start" else -1
        most = max(most, running)
    return most


@pytest.mark.parametrize("slots", [1, 2, 3])
def test_no_more_compilers_run_at_once_than_there_are_slots_and_every_slot_is_used(tmp_path: Path, slots: int):
    launcher = compiler_slots.prepare(tmp_path / "slots", slots)
    started = time.monotonic()
    compilers = [subprocess.Popen([str(launcher), *compiler(tmp_path, 0.3)]) for _ in range(2 * slots + 1)]
    assert [process.wait(30) for process in compilers] == [0] * len(compilers)
    assert most_at_once(tmp_path / "log") == slots
    assert time.monotonic() - started >= 0.3 * 3  # three rounds of slots


def test_a_compiler_killed_while_it_holds_a_slot_gives_it_back(tmp_path: Path):
    launcher = compiler_slots.prepare(tmp_path / "slots", 1)
    holder = subprocess.Popen([str(launcher), *compiler(tmp_path, 60)], start_new_session=True)
    deadline = time.monotonic() + 10
    while not (tmp_path / "log").exists() and time.monotonic() < deadline:
        time.sleep(0.02)
    os.killpg(holder.pid, signal.SIGKILL)
    holder.wait()
    started = time.monotonic()
    assert subprocess.run([str(launcher), "true"], timeout=10).returncode == 0
    assert time.monotonic() - started < 5


def test_a_compilers_exit_status_and_arguments_pass_through(tmp_path: Path):
    launcher = compiler_slots.prepare(tmp_path / "slots", 2)
    finished = subprocess.run([str(launcher), "sh", "-c", 'echo "$1 $2"; exit 3', "sh", "a b", "c"], capture_output=True, text=True)
    assert (finished.returncode, finished.stdout) == (3, "a b c\n")


def test_a_folder_others_may_write_is_not_used(tmp_path: Path):
    # Another user's folder of that name in a shared /tmp could hold a launcher of theirs.
    (tmp_path / "slots").mkdir(mode=0o777)
    (tmp_path / "slots").chmod(0o777)
    assert compiler_slots.prepare(tmp_path / "slots", 2) is None


def test_a_build_step_reads_the_slots_folder_and_ccaches_installation_but_not_the_folder_above_the_slots(
        tmp_path: Path, monkeypatch):
    launcher = compiler_slots.prepare(tmp_path / "tmp" / "slots", 2)
    monkeypatch.setattr(compiler_slots, "launcher", lambda: launcher)
    ccache = tmp_path / "opt" / "ccache" / "bin" / "ccache"
    ccache.parent.mkdir(parents=True)
    ccache.write_text("#!/bin/sh\nexec \"$@\"\n")
    ccache.chmod(0o755)
    (tmp_path / "build").mkdir()
    (tmp_path / "build" / "CMakeCache.txt").write_text(f"CMAKE_CXX_COMPILER_LAUNCHER:STRING={launcher};{ccache}\n")
    step = building._build_step(load_assignment(REAL_ROOT, "pbb"), tmp_path / "solution", tmp_path / "build", ())
    assert launcher.parent in step.readable and tmp_path / "opt" / "ccache" in step.readable
    assert tmp_path / "tmp" not in step.readable
    assert compile_cache.configure_args(None) == tuple(f"-DCMAKE_{language}_COMPILER_LAUNCHER={launcher}"
                                                       for language in compile_cache.LANGUAGES)


def test_the_harness_check_reads_the_compilers_command_after_both_launchers(tmp_path: Path):
    launcher = compiler_slots.prepare(tmp_path / "slots", 1)
    (tmp_path / "unit.cpp").write_text("int x;\n")
    command = f"{launcher} /usr/bin/ccache g++ -O2 -c {tmp_path}/unit.cpp -o unit.o"
    [single] = compiled_checks.preprocessing_passes(str(tmp_path), command, str(tmp_path / "unit.cpp"))
    assert single.command[:2] == ("g++", "-O2") and single.command[-2:] == ("-E", "-dD")


def test_the_slots_are_readable_by_a_build_steps_own_uid_whatever_the_graders_umask(tmp_path: Path):
    previous = os.umask(0o077)
    try:
        launcher = compiler_slots.prepare(tmp_path / "slots", 2)
    finally:
        os.umask(previous)
    assert [path.stat().st_mode & 0o777 for path in sorted(launcher.parent.iterdir())] == [0o755, 0o644, 0o644]
    assert launcher.parent.stat().st_mode & 0o777 == 0o755


def test_without_a_readable_slot_file_the_compiler_runs_without_a_slot(tmp_path: Path):
    launcher = compiler_slots.prepare(tmp_path / "slots", 2)
    for slot in launcher.parent.glob("slot-*"):
        slot.unlink()
    assert subprocess.run([str(launcher), "sh", "-c", "exit 5"]).returncode == 5


@pytest.mark.skipif(shutil.which("ccache") is None or shutil.which("g++") is None, reason="needs ccache and g++")
def test_an_object_the_cache_holds_takes_no_slot_and_a_compile_takes_one(tmp_path: Path, monkeypatch):
    launcher = compiler_slots.prepare(tmp_path / "slots", 1)
    monkeypatch.setattr(compiler_slots, "launcher", lambda: launcher)
    cache = CompileCache(tmp_path / "cache", shutil.which("ccache"))
    [launcher_arg, *_] = compile_cache.configure_args(cache)
    assert launcher_arg.endswith(f"_COMPILER_LAUNCHER={cache.ccache}")  # ccache alone in front of the compiler
    (tmp_path / "held.cpp").write_text("int held() { return 1; }\n")
    (tmp_path / "new.cpp").write_text("int fresh() { return 2; }\n")

    def compile_unit(name: str, writes: bool) -> subprocess.Popen:
        environment = {**os.environ, **cache.environment(tmp_path, writes)}
        return subprocess.Popen([cache.ccache, shutil.which("g++"), "-O2", "-c", str(tmp_path / f"{name}.cpp"),
                                 "-o", str(tmp_path / f"{name}.o")], env=environment)

    assert compile_unit("held", writes=True).wait(60) == 0  # the trusted warm-up fills the cache
    with open(launcher.parent / "slot-0") as slot:
        fcntl.flock(slot, fcntl.LOCK_EX)  # every slot taken
        assert compile_unit("held", writes=False).wait(20) == 0
        missing = compile_unit("new", writes=False)
        with pytest.raises(subprocess.TimeoutExpired):
            missing.wait(2)
        fcntl.flock(slot, fcntl.LOCK_UN)
        assert missing.wait(60) == 0
