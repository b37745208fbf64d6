"""The grader's clock around a speed program's repetitions: what the program says is never a time.

The programs here are small Python scripts that speak the harness's protocol (kernellab/speed.hpp),
honestly or not: no GPU is needed to see what the grader measures and what it refuses.
"""

import hashlib
import os
import shutil
import stat
import sys
import threading
import time
from dataclasses import replace
from pathlib import Path

import pytest

from kernellab.grading.speed import clock, timing
from kernellab.grading.speed.clock import OVERHEAD, TIME, Served, SpeedProgram
from kernellab.manifest import SpeedCase
from kernellab.sandbox.bubblewrap import machine_sandbox
from kernellab.sandbox.step import SandboxUnavailable

# A speed program in Python: the harness's protocol, each call taking CALL_S seconds, the
# digest a function of the seed (what a right output gives). BEHAVIOUR changes one thing.
PROGRAM = """\
#!/usr/bin/env python3
import hashlib, os, sys, time
options = dict(zip(sys.argv[1::2], sys.argv[2::2]))
commands = os.fdopen(int(options["--commands"]), "r")
replies = os.fdopen(int(options["--replies"]), "w")
CALL_S = {call_s}
def say(line):
    replies.write(line + "\\n")
    replies.flush()
def digest(seed):
    return hashlib.sha256(str(seed).encode()).hexdigest()[:16]
def serving(cases):
    print("serving", cases, flush=True)
{behaviour}
say("started")
while True:
    command = commands.readline().split()
    if command in ([], ["end"]):
        break
    serving(command[1])
    for size in options["--sizes"].split(","):
        for case in command[1].split(","):
            say(f"ready {{case}} {{size}} 800")
            while True:
                say("armed")
                order = commands.readline().split()
                if order == ["next"]:
                    break
                kind, seed = order[0], int(order[1])
                if kind == "time":
                    time.sleep(CALL_S)
                say(f"done {{answer(kind, seed)}}")
    say("finished")
"""
HONEST = "def answer(kind, seed):\n    return digest(seed)"


# The case the measuring tests time, with few repetitions (few_repetitions) to keep them short.
MAP = SpeedCase(task="map", case="map", sizes=(64,), points=10.0, zero_at=4.0, full_at=1.2, baseline="")


@pytest.fixture
def few_repetitions(monkeypatch):
    monkeypatch.setattr(timing, "REPETITIONS", 3)


def program(tmp_path: Path, behaviour: str = HONEST, call_s: float = 0.004, name: str = "speed") -> Path:
    path = tmp_path / name
    path.write_text(PROGRAM.format(call_s=call_s, behaviour=behaviour))
    path.chmod(path.stat().st_mode | stat.S_IXUSR)
    return path


def serve(program: Path, cases: list[str], sizes: list[int], orders, log: Path, timeout_s: float) -> Served:
    """One pass of `program` over `cases`, in a run of its own."""
    with SpeedProgram(program, cases, sizes, log, timeout_s, timeout_s, None) as run:
        run.wait_started()
        return run.serve(cases, orders)


def orders(case: str, size: int) -> list[tuple[str, int]]:
    return [(TIME, 11), (OVERHEAD, 11), (TIME, 12), (OVERHEAD, 12)]


def expected_digest(seed: int) -> str:
    return hashlib.sha256(str(seed).encode()).hexdigest()[:16]


def test_the_grader_times_each_call_with_its_own_clock(tmp_path):
    served = serve(program(tmp_path, call_s=0.02), ["map"], [64, 128], orders, tmp_path / "log", 60)
    assert served.problem == ""
    assert served.bytes == {("map", 64): 800.0, ("map", 128): 800.0}
    timed = [repetition for repetition in served.repetitions if repetition.kind == TIME]
    assert len(timed) == 4 and all(repetition.micros >= 20_000 for repetition in timed)
    overhead = [repetition for repetition in served.repetitions if repetition.kind == OVERHEAD]
    assert all(repetition.micros < 20_000 for repetition in overhead)
    assert [repetition.digest for repetition in timed[:2]] == [expected_digest(11), expected_digest(12)]


@pytest.mark.parametrize("awake", [True, False])
def test_the_clock_waits_for_a_reply_awake_or_asleep_as_told(awake):
    # Asleep in select(), the clock was woken some time after a reply, inside the window, and how
    # long differed from one run to the next (docs/performance.md): with a CPU for each side it
    # spins. A wait awake costs its share of a core even on a busy machine; one asleep, none.
    read_end, write_end = os.pipe()
    reply = threading.Timer(1.0, os.write, (write_end, b"done 0123\n"))
    reply.start()
    cpu_before = time.thread_time()
    try:
        replies = clock._Replies(read_end)
        replies.deadline, replies.awake = time.monotonic() + 60, awake
        said = replies.expect("done")
    finally:
        reply.join()
        os.close(read_end)
        os.close(write_end)
    cpu_s = time.thread_time() - cpu_before
    assert said == ["0123"]
    assert cpu_s >= 0.05 if awake else cpu_s < 0.01, f"the clock's thread used {cpu_s:.3f} CPU-s over a wait of 1 s"


@pytest.mark.parametrize(("cpus", "wait"), [(1, "sleep"), (2, "spin"), (16, "spin")])
def test_the_program_waits_awake_where_each_side_has_a_cpu_and_asleep_on_one(tmp_path, monkeypatch, cpus, wait):
    # On one CPU the clock and the program would spin in turns of the scheduler's time slices.
    monkeypatch.setattr(clock, "available_cpus", lambda: cpus)
    told = "print('told to wait:', options['--wait'], flush=True)\n" + HONEST
    served = serve(program(tmp_path, told), ["map"], [64], orders, tmp_path / "log", 60)
    assert served.problem == ""
    assert f"told to wait: {wait}" in (tmp_path / "log").read_text()


def test_a_program_that_works_before_the_clock_starts_cannot_know_the_input(tmp_path):
    # It does its (slow) work while "armed" is pending, on the seed it guesses: the digest is wrong.
    guesses = "def answer(kind, seed):\n    return digest(0)"
    served = serve(program(tmp_path, guesses), ["map"], [64], orders, tmp_path / "log", 60)
    assert all(repetition.digest != expected_digest(repetition.seed) for repetition in served.repetitions)


@pytest.mark.parametrize(
    ("behaviour", "problem"),
    [
        # The old attack: timing lines of its own, here where the grader expects the protocol.
        ('say(\'{"case": "map", "size": 64, "repetition": 0, "host_us": 1.0}\')\n' + HONEST, "where the harness says 'started'"),
        ("import sys\n" + HONEST.replace("return digest(seed)", "sys.exit(0)"), "the program ended"),
        ("say('x' * 10000)\n" + HONEST, "longer than the harness ever writes"),
        ("def serving(cases):\n    say('ready map 64 800')\n" + HONEST, "where the harness says 'armed'"),
    ],
    ids=["timing-lines", "exits", "endless-line", "out-of-turn"],
)
def test_anything_but_the_protocol_ends_the_run_with_a_problem(tmp_path, behaviour, problem):
    served = serve(program(tmp_path, behaviour), ["map"], [64], orders, tmp_path / "log", 60)
    assert problem in served.problem, served.problem


def test_a_program_that_never_replies_is_stopped_at_its_time_limit(tmp_path):
    silent = "import time\ntime.sleep(30)\n" + HONEST
    served = serve(program(tmp_path, silent), ["map"], [64], orders, tmp_path / "log", 2)
    assert "timed out" in served.problem or "time limit" in served.problem


def test_speed_scores_net_times_and_refuses_wrong_digests(tmp_path, few_repetitions):
    reference = program(tmp_path, call_s=0.02, name="reference")
    copy_case = "def answer(kind, seed):\n    return digest(seed)"
    same_speed = program(tmp_path, copy_case, call_s=0.02, name="student")
    [fair] = timing.measure([MAP], {MAP.case: same_speed}, reference, tmp_path / "fair-work", seed=5, sandbox=None)
    assert fair.problem == "" and 0.5 < fair.ratio < 2.0, fair
    slow = program(tmp_path, copy_case, call_s=0.2, name="slow")
    [slower] = timing.measure([MAP], {MAP.case: slow}, reference, tmp_path / "slow-work", seed=5, sandbox=None)
    assert slower.ratio > 4 and slower.points == 0
    wrong = program(tmp_path, "def answer(kind, seed):\n    return digest(seed + 1)", call_s=0.02, name="wrong")
    [refused] = timing.measure([MAP], {MAP.case: wrong}, reference, tmp_path / "wrong-work", seed=5, sandbox=None)
    assert refused.points == 0 and "differs from the reference's" in refused.problem


def test_windows_that_something_else_slowed_down_do_not_move_the_time(tmp_path, few_repetitions):
    # Two of every three timed windows take 0.5 s longer (another build held the core, say): the
    # time stays near the undisturbed one's (the median would make it 11 times the reference's),
    # since no window can be shorter than its work.
    reference = program(tmp_path, call_s=0.05, name="reference")
    disturbed = "windows = 0\ndef answer(kind, seed):\n    global windows\n    windows += kind == 'time'\n" \
                "    if kind == 'time' and windows % 3:\n        time.sleep(0.5)\n    return digest(seed)"
    student = program(tmp_path, disturbed, call_s=0.05, name="disturbed")
    [result] = timing.measure([MAP], {MAP.case: student}, reference, tmp_path / "work", seed=5, sandbox=None)
    assert result.problem == "" and 0.5 < result.ratio < 2.0, result


def test_a_reference_run_slowed_as_a_whole_does_not_make_a_spared_student_faster_than_its_work(tmp_path, few_repetitions):
    # Under load every window of one run can lengthen alike, the overhead's too: here each of the
    # reference's, by 0.2 s. Its own overhead cancels that; the reference's overhead taken from the
    # student's time made the spared student's call shorter than its work ("faster than a copy").
    slowed = "def answer(kind, seed):\n    time.sleep(0.2)\n    return digest(seed)"
    reference = program(tmp_path, slowed, call_s=0.05, name="reference")
    student = program(tmp_path, call_s=0.05, name="student")
    [result] = timing.measure([MAP], {MAP.case: student}, reference, tmp_path / "work", seed=5, sandbox=None)
    assert result.problem == "" and 0.5 < result.ratio < 2.0 and result.points == MAP.points, result


def test_a_student_that_lengthens_its_own_overhead_windows_gains_nothing(tmp_path, few_repetitions):
    reference = program(tmp_path, call_s=0.05, name="reference")
    padded = "def answer(kind, seed):\n    if kind == 'overhead':\n        time.sleep(0.2)\n    return digest(seed)"
    student = program(tmp_path, padded, call_s=0.2, name="padded")
    [result] = timing.measure([MAP], {MAP.case: student}, reference, tmp_path / "work", seed=5, sandbox=None)
    assert result.ratio > 3, result


def test_a_case_short_of_its_points_is_timed_again_and_only_that_case(tmp_path, few_repetitions):
    # The first three passes over "map" are slowed as a whole (a busy host, say); its fourth, in a
    # run of its own, is not. "other" has a program of its own, never slowed.
    cases = [MAP, replace(MAP, case="other")]
    reference = program(tmp_path, call_s=0.05, name="reference")
    slowed_at_first = ("import pathlib\npasses = pathlib.Path.cwd() / 'map-passes'\n"
                       "def serving(cases):\n    print('serving', cases, flush=True)\n    with passes.open('a') as tally:\n        tally.write('.')\n"
                       "def answer(kind, seed):\n    if kind == 'time' and passes.stat().st_size <= 3:\n"
                       "        time.sleep(0.2)\n    return digest(seed)")
    programs = {"map": program(tmp_path, slowed_at_first, call_s=0.05, name="map"), "other": program(tmp_path, call_s=0.05, name="other")}
    results = timing.measure(cases, programs, reference, tmp_path / "work", seed=5, sandbox=None)
    assert [result.points for result in results] == [10.0, 10.0], results
    passes = {path.name: path.read_text().count("serving") for path in (tmp_path / "work").glob("*.log")}
    assert passes == {"reference.log": timing.ROUNDS + 1, "student-0-0.log": timing.ROUNDS, "student-0-1.log": timing.ROUNDS,
                      f"student-{timing.ROUNDS}-0.log": 1}, passes
    assert f"serving map\n" in (tmp_path / "work" / f"student-{timing.ROUNDS}-0.log").read_text()


def test_repetition_seeds_follow_the_run_seed_and_never_repeat():
    seeds = {timing.repetition_seed(7, r, "map", 64, i) for r in range(3) for i in range(15)}
    assert len(seeds) == 45
    assert timing.repetition_seed(7, 0, "map", 64, 0) != timing.repetition_seed(8, 0, "map", 64, 0)



def test_the_clock_starts_where_kernellab_is_not_installed(tmp_path, monkeypatch):
    # Seen on an H100 after the clock moved a folder down: the PYTHONPATH it was given named the
    # wrong folder, and only an installed kernellab (site-packages) let it start here. Without
    # site-packages (python -S) the clock finds this package through its PYTHONPATH alone.
    without_site = tmp_path / "python-without-site"
    without_site.write_text(f'#!/bin/sh\nexec "{sys.executable}" -S "$@"\n')
    without_site.chmod(0o755)
    monkeypatch.setattr(sys, "executable", str(without_site))
    monkeypatch.chdir(tmp_path)  # `python -m` puts the working folder on sys.path
    served = serve(program(tmp_path), ["map"], [64], orders, tmp_path / "log", 60)
    assert served.problem == ""


def test_a_host_that_got_busy_between_two_grades_costs_the_second_grade_nothing(tmp_path, few_repetitions):
    # From the second grade on, every window of both programs waits 0.2 s more (a host busy with
    # other grades). Each grade times the reference in its own stage, alternating with the student,
    # so both sides meet the same host. Reference windows kept from the first, quiet grade would set
    # the second's busy windows against a quiet overhead and take all its speed points.
    busy = tmp_path / "busy"
    waits_when_busy = (f"import pathlib\nBUSY_S = float(pathlib.Path({str(busy)!r}).read_text() or 0)\n"
                       "def answer(kind, seed):\n    time.sleep(BUSY_S)\n    return digest(seed)")
    reference = program(tmp_path, waits_when_busy, call_s=0.05, name="reference")
    student = program(tmp_path, waits_when_busy, call_s=0.05, name="student")
    for grade, busy_s in enumerate(["", "0.2"]):
        busy.write_text(busy_s)
        work = tmp_path / f"grade-{grade}"
        [result] = timing.measure([MAP], {MAP.case: student}, reference, work, seed=5, sandbox=None)
        assert result.problem == "" and 0.5 < result.ratio < 2.0 and result.points == MAP.points, (busy_s, result)
        for log in ("reference.log", "student-0-0.log"):
            assert (work / log).read_text().count("serving") == timing.ROUNDS, log


# A student's program leaves its pid where the reference's program looks at each pass.
LEAVES_PID = "pathlib.Path(f'student-pid-{os.getpid()}').touch()\n"
LOOKS_FOR_STUDENTS = """\
def serving(cases):
    print("serving", cases, flush=True)
    for pid_file in pathlib.Path.cwd().glob("student-pid-*"):
        try:
            os.kill(int(pid_file.name.rsplit("-", 1)[1]), 0)
            print("a student's program is alive while the reference serves", cases, flush=True)
        except ProcessLookupError:
            pass
"""


def test_no_student_program_is_alive_while_the_reference_is_timed(tmp_path, few_repetitions):
    # One run of a program serves all its passes, so a student's program waits between its passes:
    # alive during one of the reference's, it could keep a kernel running to slow the reference down.
    reference = program(tmp_path, "import pathlib\n" + LOOKS_FOR_STUDENTS + HONEST, call_s=0.01, name="reference")
    programs = {name: program(tmp_path, "import pathlib\n" + LEAVES_PID + HONEST, call_s=0.01, name=name) for name in ("map", "other")}
    results = timing.measure([MAP, replace(MAP, case="other")], programs, reference, tmp_path / "work", seed=5, sandbox=None)
    assert all(result.problem == "" for result in results), results
    assert len(list((tmp_path / "work").glob("student-pid-*"))) == 2
    log = (tmp_path / "work" / "reference.log").read_text()
    assert log.count("serving") == timing.ROUNDS and "is alive" not in log, log


def test_a_program_stuck_in_a_pass_is_ended_at_the_pass_limit_and_serves_no_more(tmp_path):
    stuck_second = ("import pathlib\n" + LEAVES_PID + "passes = 0\ndef serving(cases):\n    global passes\n    passes += 1\n"
                    "    if passes == 2:\n        time.sleep(60)\n" + HONEST)
    started = time.monotonic()
    with SpeedProgram(program(tmp_path, stuck_second), ["map"], [64], tmp_path / "log", 1, 60, None) as run:
        run.wait_started()
        first, second, third = (run.serve(["map"], orders) for _ in range(3))
    assert first.problem == "" and "time limit" in second.problem and third.problem == second.problem, (second, third)
    assert time.monotonic() - started < 10
    [pid_file] = tmp_path.glob("student-pid-*")
    with pytest.raises(ProcessLookupError):
        os.kill(int(pid_file.name.rsplit("-", 1)[1]), 0)


def test_a_program_that_does_not_end_when_told_is_killed(tmp_path, monkeypatch):
    monkeypatch.setattr(clock, "CLOSE_GRACE_S", 0.5)
    lingers = "import atexit, pathlib\n" + LEAVES_PID + "atexit.register(time.sleep, 60)\n" + HONEST
    started = time.monotonic()
    with SpeedProgram(program(tmp_path, lingers), ["map"], [64], tmp_path / "log", 60, 60, None) as run:
        run.wait_started()
        assert run.serve(["map"], orders).problem == ""
    assert time.monotonic() - started < 10
    [pid_file] = tmp_path.glob("student-pid-*")
    with pytest.raises(ProcessLookupError):
        os.kill(int(pid_file.name.rsplit("-", 1)[1]), 0)


def test_a_wrong_output_is_told_even_when_a_later_pass_crashed(tmp_path, few_repetitions):
    # Seen on an H200: work a host thread left running after each window wrote into the buffers the
    # pass freed, and the next pass crashed on it; the TA is told of the wrong outputs first.
    reference = program(tmp_path, call_s=0.01, name="reference")
    wrong_then_crashes = ("passes = 0\ndef serving(cases):\n    global passes\n    passes += 1\n    if passes == 2:\n"
                          "        sys.exit('an illegal memory access was encountered')\n"
                          "def answer(kind, seed):\n    return digest(seed + 1)")
    student = program(tmp_path, wrong_then_crashes, call_s=0.01, name="student")
    [result] = timing.measure([MAP], {MAP.case: student}, reference, tmp_path / "work", seed=5, sandbox=None)
    assert result.points == 0 and "differs from the reference's" in result.problem, result


def test_a_sandboxed_program_serves_its_passes_through_the_sandbox_and_a_stuck_one_is_ended():
    # As a grade runs the speed programs: in bubblewrap, the pipes passed through it, and a
    # program stuck in a pass killed there with its pid namespace.
    try:
        sandbox = machine_sandbox()
    except SandboxUnavailable as why:
        pytest.skip(f"no sandbox here: {why}")
    folder = Path("/tmp") / f"kernellab-speed-test-{os.getpid()}"
    folder.mkdir(mode=0o755)
    folder.chmod(0o755)  # the step runs as a uid of its own, which must reach the program
    try:
        stuck_second = "passes = 0\ndef serving(cases):\n    global passes\n    passes += 1\n    if passes == 2:\n        time.sleep(60)\n" + HONEST
        started = time.monotonic()
        with SpeedProgram(program(folder, stuck_second), ["map"], [64], folder / "log", 5, 60, sandbox) as run:
            run.wait_started()
            first, second = run.serve(["map"], orders), run.serve(["map"], orders)
        assert first.problem == "" and [repetition.digest for repetition in first.repetitions if repetition.kind == TIME] == [
            expected_digest(11), expected_digest(12)], first
        assert "time limit" in second.problem and time.monotonic() - started < 30, second
    finally:
        shutil.rmtree(folder)
