"""The sandbox around student code (bubblewrap, real): what a step sees, what it may write, and
the limits that stop it. Skipped where bubblewrap cannot run."""

import os
import re
import shutil
import socket
import threading
import time
from dataclasses import replace
from pathlib import Path

import pytest

from kernellab import runner
from kernellab.sandbox.bubblewrap import STEP_STAGING, Sandbox, machine_sandbox
from kernellab.sandbox.cgroups import Cgroups
from kernellab.sandbox.limits import STEP_UIDS, StepUids
from kernellab.sandbox.step import SandboxFailure, SandboxUnavailable, Step, build_step, run_step, toolkit_libraries

PYTHON = "/usr/bin/python3"

try:
    SANDBOX = machine_sandbox()
except SandboxUnavailable as why:
    pytest.skip(f"no sandbox here: {why}", allow_module_level=True)


@pytest.fixture
def job(tmp_path: Path) -> Path:
    """A job folder that other users may reach (pytest's own are 0700), as the grader's are."""
    folder = Path("/tmp") / f"kernellab-sandbox-test-{os.getpid()}-{tmp_path.name}"
    folder.mkdir(mode=0o755)
    folder.chmod(0o755)
    yield folder
    shutil.rmtree(folder)


def run_python(code: str, step: Step, sandbox: Sandbox = SANDBOX, timeout_s: float = 30) -> runner.RunOutcome:
    return runner.run_program([PYTHON, "-c", code], Path("/tmp"), timeout_s, sandbox=sandbox, step=step)


def test_a_step_sees_its_own_files_and_nothing_else_of_the_job(job: Path):
    (job / "secret.rec").write_text("expected results")
    (job / "program.txt").write_text("mine")
    outcome = run_python(
        f"import os; print(open('{job}/program.txt').read()); print(os.path.exists('{job}/secret.rec'))",
        Step(readable=(job / "program.txt",)),
    )
    assert outcome.exit_code == 0, outcome.output
    assert outcome.output.split() == ["mine", "False"]


def test_a_step_writes_its_output_file_and_nowhere_else_that_lasts(job: Path):
    output = job / "records.rec"
    output.touch()
    outcome = run_python(
        f"open('{output}', 'w').write('data')\n"
        f"for path in ('{job}/forged.json', '/usr/forged.json'):\n"
        f"    try: open(path, 'w').write('x'); print('wrote', path)\n"
        f"    except OSError as error: print('refused', path, error.errno)",
        run_step(Path(PYTHON), [output], gpu=False),
    )
    assert outcome.exit_code == 0, outcome.output
    assert output.read_text() == "data"
    assert "refused /usr/forged.json" in outcome.output
    assert not (job / "forged.json").exists()  # written, if at all, to the sandbox's own tmpfs



def test_a_builds_compilers_yield_the_cores_to_the_runs_beside_them(job: Path):
    build = build_step([Path(PYTHON).parent], job)
    ran, built = (run_python("import os; print(os.nice(0))", step) for step in (run_step(Path(PYTHON), [], gpu=False), build))
    assert ran.exit_code == built.exit_code == 0, (ran.output, built.output)
    assert int(built.output) == min(19, int(ran.output) + build.niceness) > int(ran.output)


def test_a_runs_records_reach_the_grader_as_written_and_the_run_cannot_take_their_descriptor(job: Path):
    records = job / "run.rec"
    outcome = runner.run_program([PYTHON, "-c", (
        "import os\n"
        f"os.write({runner.RECORD_DESCRIPTOR}, b'the harness wrote this')\n"
        "for attempt in ('dup2', 'reopen'):\n"
        "    try:\n"
        f"        if attempt == 'dup2': os.dup2(os.pipe()[1], {runner.RECORD_DESCRIPTOR})\n"
        f"        else: os.open('/proc/self/fd/{runner.RECORD_DESCRIPTOR}', os.O_RDWR)\n"
        "        print('took it by', attempt)\n"
        "    except OSError as error: print('refused', attempt, error.errno)\n"
    )], Path("/tmp"), 30, sandbox=SANDBOX, step=run_step(Path(PYTHON), [], gpu=False), records_to=records)
    assert outcome.exit_code == 0, outcome.output
    assert "took it" not in outcome.output, outcome.output
    assert records.read_bytes() == b"the harness wrote this"


def test_the_harness_writes_its_records_where_the_grader_reads_them():
    # Two languages, one number: the harness's constant (its student role writes there) and the grader's.
    harness = (Path(__file__).parents[1] / "harness" / "include" / "kernellab" / "record.hpp").read_text()
    assert re.search(r"static constexpr int kRecordDescriptor = (\d+);", harness)[1] == str(runner.RECORD_DESCRIPTOR)


def test_a_step_has_no_network():
    with socket.socket() as server:
        server.bind(("127.0.0.1", 0))
        server.listen()
        port = server.getsockname()[1]
        outcome = run_python(
            f"import socket\ntry: socket.create_connection(('127.0.0.1', {port}), timeout=5); print('connected')\n"
            f"except OSError as error: print('refused', error)",
            Step(readable=()),
        )
    assert "refused" in outcome.output and "connected" not in outcome.output


@pytest.mark.skipif(shutil.which("unshare") is None, reason="no unshare (util-linux)")
def test_a_step_cannot_make_user_namespaces_of_its_own():
    command = [shutil.which("unshare"), "--user", "echo", "unshared"]
    outcome = runner.run_program(command, Path("/tmp"), 30, sandbox=SANDBOX, step=Step(readable=()))
    assert outcome.exit_code != 0 and "unshared" not in outcome.output


def test_a_fork_bomb_is_stopped_and_the_grader_goes_on():
    outcome = run_python("import os\nwhile True:\n    os.fork()", Step(readable=(), processes=64), timeout_s=60)
    assert not outcome.timed_out and outcome.exit_code != 0
    thread = threading.Thread(target=lambda: None)
    thread.start()
    thread.join()


def test_a_memory_bomb_is_stopped():
    outcome = run_python("block = bytearray(3 << 30); print('allocated')", Step(readable=(), memory_bytes=1 << 30))
    assert outcome.exit_code != 0 and "allocated" not in outcome.output


def test_a_program_killed_by_a_signal_reads_as_that_signal():
    outcome = run_python("import os, signal; os.kill(os.getpid(), signal.SIGSEGV)", Step(readable=()))
    assert outcome.signal_name == "SIGSEGV"


def test_a_sandbox_that_cannot_be_set_up_is_the_graders_failure_not_the_programs(job: Path):
    with pytest.raises(SandboxFailure, match="Can't find source path"):
        run_python("print('ran')", Step(readable=(job / "missing",)))


def test_a_program_that_prints_like_bubblewrap_is_still_the_program():
    outcome = run_python("print('bwrap: Can not find source path'); raise SystemExit(1)", Step(readable=()))
    assert outcome.exit_code == 1


@pytest.mark.skipif(os.geteuid() != 0, reason="step uids are for a grader running as root")
def test_without_a_process_cgroup_a_root_grader_runs_each_step_as_a_uid_of_its_own(job: Path):
    sandbox = Sandbox(shutil.which("bwrap"), shutil.which("bash"), cgroups=None)
    output = job / "records.rec"
    output.touch()
    outcome = run_python(f"open('{output}', 'w').write('data')", run_step(Path(PYTHON), [output], gpu=False), sandbox)
    assert outcome.exit_code == 0, outcome.output
    assert output.stat().st_uid in STEP_UIDS
    bomb = run_python("import os\nwhile True:\n    os.fork()", Step(readable=(), processes=64), sandbox, timeout_s=60)
    assert not bomb.timed_out and bomb.exit_code != 0


@pytest.mark.skipif(os.geteuid() != 0, reason="step uids are for a grader running as root")
def test_a_run_whose_files_lie_in_a_private_folder_runs_as_a_uid_of_its_own_on_copies(tmp_path: Path):
    sandbox = Sandbox(shutil.which("bwrap"), shutil.which("bash"), cgroups=None)
    tmp_path.chmod(0o700)
    program, output = tmp_path / "program.txt", tmp_path / "records.rec"
    program.write_text("mine")
    output.touch()
    step = Step(readable=(program,), writable=(output,))
    outcome = run_python(f"open('{output}', 'w').write(open('{program}').read())", step, sandbox)
    assert outcome.exit_code == 0, outcome.output
    assert output.read_text() == "mine" and output.stat().st_uid in STEP_UIDS
    assert not list(STEP_STAGING.glob("*/*-records.rec")), "the staged copies outlived the step"
    bomb = run_python("import os\nwhile True:\n    os.fork()", replace(step, processes=64), sandbox, timeout_s=60)
    assert not bomb.timed_out and bomb.exit_code != 0


def test_the_grade_says_which_limits_hold():
    assert SANDBOX.describe().startswith("bubblewrap")
    assert Cgroups.find() is None or "cgroup v" in SANDBOX.describe()


@pytest.mark.skipif(not any(path.glob("libcublas.so*") for path in toolkit_libraries()), reason="no cuBLAS here")
def test_a_test_program_cannot_load_the_toolkits_libraries():
    library = next(next(path.glob("libcublas.so*")) for path in toolkit_libraries() if any(path.glob("libcublas.so*")))
    outcome = run_python(
        f"import ctypes\ntry: ctypes.CDLL('{library}'); print('loaded')\nexcept OSError: print('not found')",
        run_step(Path(PYTHON), [], gpu=False),
    )
    assert outcome.output.strip() == "not found"


def test_step_uids_are_taken_in_turn_so_a_released_uid_rests_before_its_reuse(tmp_path):
    uids = StepUids(tmp_path)
    first, second = uids.acquire(), uids.acquire()
    uids.release(first)
    third = uids.acquire()
    assert len({first, second, third}) == 3
    # Another grader process on the machine skips the uids this one holds.
    assert StepUids(tmp_path).acquire() not in (second, third)


def test_the_cpu_backends_threads_stay_well_under_a_steps_process_limit_on_a_machine_of_many_cores(monkeypatch):
    monkeypatch.delenv("KERNELLAB_CPU_WORKERS", raising=False)
    monkeypatch.setattr(runner, "available_cpus", lambda: 512)
    outcome = run_python("import os; print('workers', os.environ['KERNELLAB_CPU_WORKERS'])", Step(readable=(), processes=256))
    assert "workers 64" in outcome.output


def test_the_cpu_backend_runs_blocks_on_two_threads_also_on_one_cpu(monkeypatch):
    # Blocks that wait for each other (a look-back) must run at once.
    monkeypatch.delenv("KERNELLAB_CPU_WORKERS", raising=False)
    monkeypatch.setattr(runner, "available_cpus", lambda: 1)
    outcome = run_python("import os; print('workers', os.environ['KERNELLAB_CPU_WORKERS'])", Step(readable=()))
    assert "workers 2" in outcome.output


def test_the_cpu_backends_threads_are_the_tas_choice_when_given(monkeypatch):
    monkeypatch.setenv("KERNELLAB_CPU_WORKERS", "3")
    outcome = run_python("import os; print('workers', os.environ['KERNELLAB_CPU_WORKERS'])", Step(readable=()))
    assert "workers 3" in outcome.output



def test_a_run_told_to_end_is_killed_at_once_not_at_its_time_limit():
    # A speed program that failed a pass is ended so, from the thread that drives it.
    told = threading.Event()
    threading.Timer(0.5, told.set).start()
    started = time.monotonic()
    outcome = runner.run_program([PYTHON, "-c", "import os, time\nif os.fork() == 0:\n    time.sleep(60)\ntime.sleep(60)"],
                                 Path("/tmp"), 60, sandbox=SANDBOX, step=Step(readable=()), until=told)
    assert time.monotonic() - started < 5 and not outcome.timed_out and outcome.signal_name == "SIGKILL", outcome
