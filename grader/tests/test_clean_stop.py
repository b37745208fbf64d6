"""SIGTERM or SIGINT to `batch`, `grade` or `serve` ends every process the grader started, the
sandboxed ones included, within 10 s, and a batch run again resumes: the students finished before
the stop are not graded again and their reports are untouched (kernellab/stopping.py).

Grading is replaced by a stand-in that starts processes where grading does and hangs in them: a
tool the grader runs itself (as CMake's configure step), and a program run through
runner.run_program in the sandbox (bubblewrap where it works here, and none) that leaves a child
in its session and an orphan. Each process carries this test's marker in its command line."""

import http.client
import io
import os
import random
import re
import signal
import subprocess
import sys
import tarfile
import threading
import time
from pathlib import Path

import pytest

from helpers import REAL_ROOT
from kernellab import batch, reports, stopping
from kernellab.grading.model import Grade, TaskGrade
from kernellab.grading.run import GradingRun
from kernellab.manifest import load_assignment
from kernellab.sandbox.bubblewrap import machine_sandbox
from kernellab.sandbox.step import SandboxUnavailable
from kernellab.scaffold import TEMPLATE_ID, TEMPLATE_ROOT
from kernellab.verdict import Status

# `kernellab` with grade_submission replaced (batch, grade and serve each import their own name):
# a student named hang-run<N> or hang-tool<N> hangs in processes whose command line holds the
# marker and N, while KERNELLAB_TEST_HANG is 1; every other grade is immediate.
STAND_IN = """
import os, subprocess, sys
from pathlib import Path
sys.path.insert(0, {grader!r})
from kernellab import batch, runner, serve
from kernellab.grading import start
from kernellab.grading.model import Grade, TaskGrade
from kernellab.sandbox.step import run_step

PROGRAM = Path({program!r})

def grade_submission(run, submission, student, job, publish=lambda grade: None):
    if os.environ.get("KERNELLAB_TEST_HANG") == "1" and student.startswith("hang-"):
        duration = {marker!r} + student[-1]
        if student.startswith("hang-tool"):
            subprocess.run(["sleep", duration])
        else:
            runner.run_program([str(PROGRAM), duration], PROGRAM.parent, 600, sandbox=run.sandbox,
                               step=run_step(PROGRAM, [], gpu=False))
    grade = Grade(student=student, assignment=run.assignment.id, backend=run.backend, status="graded",
                  tasks=(TaskGrade("copy", "Copies", len(student) % 11, 10),), seed=run.seed)
    publish(grade)
    return grade

batch.grade_submission = start.grade_submission = serve.grade_submission = grade_submission
from kernellab.cli import main
sys.exit(main(sys.argv[1:]))
"""
# The program a hanging run runs: a child in its session, an orphan (its parent, a subshell, ends
# at once, so only the run's session still holds it), and the program itself, all sleeping.
HANGING_PROGRAM = '#!/bin/sh\nsleep "$1" &\n(sleep "$1" &)\nexec sleep "$1"\n'
SLEEPERS_PER_RUN = 3
# How long the grader may take to stop, and everything it started with it (issue 26).
STOP_LIMIT_S = 10


def sandboxes() -> list:
    try:
        machine_sandbox()
        bubblewrap = pytest.param(["--sandbox", "bubblewrap"], id="bubblewrap")
    except SandboxUnavailable as why:
        bubblewrap = pytest.param(None, id="bubblewrap", marks=pytest.mark.skip(reason=str(why)))
    return [pytest.param(["--unsandboxed"], id="unsandboxed"), bubblewrap]


class Grader:
    """One `kernellab` process of the stand-in, the marker of what it starts, and the cleaning up
    after a failed test: nothing it started may outlive the test."""

    def __init__(self, tmp_path: Path):
        self.marker = f"600.{random.randrange(10**8):08d}"
        self.program = tmp_path / "hang.sh"
        self.program.write_text(HANGING_PROGRAM)
        self.program.chmod(0o755)
        self.work = tmp_path / "work"
        # Files, not pipes: a child left behind would hold a pipe open after the grader ended.
        self.stdout, self.stderr = tmp_path / "stdout", tmp_path / "stderr"
        self.process: subprocess.Popen | None = None

    def command(self, sandbox: list[str], verb: str, *arguments: str) -> list[str]:
        script = STAND_IN.format(grader=str(REAL_ROOT / "grader"), program=str(self.program), marker=self.marker)
        return [sys.executable, "-c", script, "--root", str(TEMPLATE_ROOT), verb, *arguments, "--assignment", TEMPLATE_ID,
                "--backend", "cuda", "--work", str(self.work), *sandbox]

    def start(self, command: list[str]) -> subprocess.Popen:
        with self.stdout.open("w") as stdout, self.stderr.open("w") as stderr:
            self.process = subprocess.Popen(command, stdout=stdout, stderr=stderr, env={**os.environ, "KERNELLAB_TEST_HANG": "1"})
        return self.process

    def ours(self) -> dict[int, list[str]]:
        """pid -> command line of every process that carries the marker."""
        found = {}
        for entry in Path("/proc").iterdir():
            if entry.name.isdigit():
                try:
                    arguments = (entry / "cmdline").read_bytes().decode(errors="replace").split("\0")
                except OSError:
                    continue
                if any(self.marker in argument for argument in arguments):
                    found[int(entry.name)] = arguments
        return found

    def sleeping(self, number: str) -> int:
        return sum(1 for arguments in self.ours().values() if arguments[:2] == ["sleep", self.marker + number])

    def wait_until_hanging(self, sleepers: dict[str, int]) -> None:
        """Until every hanging student (its number -> how many sleeps it starts) sleeps."""
        deadline = time.monotonic() + 120
        while any(self.sleeping(number) < count for number, count in sleepers.items()):
            assert self.process.poll() is None, self.stdout.read_text() + self.stderr.read_text()
            assert time.monotonic() < deadline, f"the runs never all started: {self.ours()}"
            time.sleep(0.1)

    def stop(self, number: signal.Signals) -> tuple[int, str]:
        """Send the signal; the exit status, once the grader and everything it started ended
        within STOP_LIMIT_S, and what the grader wrote to stderr."""
        self.process.send_signal(number)
        sent = time.monotonic()
        try:
            self.process.wait(timeout=STOP_LIMIT_S)
        except subprocess.TimeoutExpired:
            pytest.fail(f"the grader did not stop within {STOP_LIMIT_S} s of {number.name}")
        while (left := self.ours()) and time.monotonic() < sent + STOP_LIMIT_S:
            time.sleep(0.1)
        assert not left, f"left running {time.monotonic() - sent:.1f} s after {number.name}: {left}"
        return self.process.returncode, self.stderr.read_text()

    def clean_up(self) -> None:
        if self.process and self.process.poll() is None:
            self.process.kill()
            self.process.wait()
        for pid in self.ours():
            try:
                os.kill(pid, signal.SIGKILL)
            except ProcessLookupError:
                pass


@pytest.fixture
def grader(tmp_path):
    started = Grader(tmp_path)
    yield started
    started.clean_up()


def reports_of(folder: Path) -> dict[str, tuple[bytes, int]]:
    """Each report file's content and modification time."""
    return {path.name: (path.read_bytes(), path.stat().st_mtime_ns) for path in sorted(folder.iterdir())}


@pytest.mark.parametrize("number", [signal.SIGTERM, signal.SIGINT], ids=["SIGTERM", "SIGINT"])
@pytest.mark.parametrize("sandbox", sandboxes())
def test_a_stopped_batch_ends_every_process_it_started_and_resumes(tmp_path, grader, sandbox, number):
    submissions, out = tmp_path / "submissions", tmp_path / "out"
    students = ("a-done", "b-done", "hang-run1", "hang-run2", "hang-tool3")
    for student in students:
        (submissions / student).mkdir(parents=True)
    # Three at a time: the two immediate grades end first, and their places go to the last two.
    grader.start(grader.command(sandbox, "batch", str(submissions), "--out", str(out), "--jobs", "3"))
    grader.wait_until_hanging({"1": SLEEPERS_PER_RUN, "2": SLEEPERS_PER_RUN, "3": 1})
    finished = {student: reports_of(out / "students" / student) for student in ("a-done", "b-done")}
    assert all(reports.GRADE_FILE in files for files in finished.values()), finished

    status, stderr = grader.stop(number)
    assert status == 128 + number, stderr
    assert "stopped by" in stderr, stderr
    assert not list(out.glob("students/hang-*/grade.json"))

    rerun = subprocess.run(grader.command(sandbox, "batch", str(submissions), "--out", str(out), "--jobs", "3"),
                           capture_output=True, text=True, timeout=120)
    assert rerun.returncode == 0, rerun.stdout + rerun.stderr
    assert f"{len(students)} submissions, 2 already graded, 3 to grade" in rerun.stdout, rerun.stdout
    assert "a-done: grading" not in rerun.stdout and "hang-run1: grading" in rerun.stdout, rerun.stdout
    assert {student: reports_of(out / "students" / student) for student in finished} == finished
    assert all(batch.finished(out, student) for student in students)


@pytest.mark.parametrize("sandbox", sandboxes())
def test_a_stopped_grade_ends_every_process_it_started(tmp_path, grader, sandbox):
    submission, out = tmp_path / "hang-run1", tmp_path / "out"
    submission.mkdir()
    grader.start(grader.command(sandbox, "grade", str(submission), "--out", str(out)))
    grader.wait_until_hanging({"1": SLEEPERS_PER_RUN})
    status, stderr = grader.stop(signal.SIGTERM)
    assert status == 128 + signal.SIGTERM, stderr
    assert not (out / reports.GRADE_FILE).exists()


# A run started in a session of its own, whose ender is not registered yet: the moment between
# runner.py's Popen and its ended_on_stop, where CI once saw a stop leave the run's orphan alive.
RUN_BEFORE_ITS_ENDER = """
import subprocess, sys, threading
sys.path.insert(0, {grader!r})
from kernellab import stopping
with stopping.stop_on_signals():
    subprocess.Popen([{program!r}, {marker!r} + "1"], start_new_session=True)
    threading.Event().wait()
"""


def test_a_stop_ends_the_orphans_of_a_run_whose_ender_was_not_registered_yet(grader):
    script = RUN_BEFORE_ITS_ENDER.format(grader=str(REAL_ROOT / "grader"), program=str(grader.program), marker=grader.marker)
    grader.start([sys.executable, "-c", script])
    grader.wait_until_hanging({"1": SLEEPERS_PER_RUN})
    status, stderr = grader.stop(signal.SIGTERM)
    assert status == 128 + signal.SIGTERM, stderr


def test_a_stopped_service_ends_every_process_it_started(tmp_path, grader):
    token = tmp_path / "token"
    token.write_text("secret\n")
    grader.start(grader.command(["--unsandboxed"], "serve", "--listen", "127.0.0.1:0", "--token-file", str(token)))
    deadline = time.monotonic() + 60
    while not (announced := re.search(r"http://127\.0\.0\.1:(\d+)/grade", grader.stdout.read_text())):
        assert grader.process.poll() is None and time.monotonic() < deadline, grader.stderr.read_text()
        time.sleep(0.1)
    port = int(announced[1])
    archive = io.BytesIO()
    with tarfile.open(fileobj=archive, mode="w:gz") as tar:
        tar.addfile(tarfile.TarInfo("empty"))

    def post() -> None:
        connection = http.client.HTTPConnection("127.0.0.1", port, timeout=60)
        try:
            connection.request("POST", f"/grade?assignment={TEMPLATE_ID}&student=hang-run1", archive.getvalue(),
                               {"Authorization": "Bearer secret"})
            connection.getresponse().read()
        except (OSError, http.client.HTTPException):
            pass  # the service stops before it answers

    threading.Thread(target=post, daemon=True).start()
    grader.wait_until_hanging({"1": SLEEPERS_PER_RUN})
    status, stderr = grader.stop(signal.SIGINT)
    assert status == 128 + signal.SIGINT, stderr


def test_a_killed_graders_run_dies_with_it(tmp_path, grader):
    # SIGKILL reaches no handler: the process a run starts dies with the grader (PR_SET_PDEATHSIG),
    # as a sandbox dies with bubblewrap; only what that process started itself outside a sandbox
    # lives on.
    submission = tmp_path / "hang-run1"
    submission.mkdir()
    grader.start(grader.command(["--unsandboxed"], "grade", str(submission), "--out", str(tmp_path / "out")))
    grader.wait_until_hanging({"1": SLEEPERS_PER_RUN})
    runs = [pid for pid in grader.ours() if parent_of(pid) == grader.process.pid]
    assert len(runs) == 1, grader.ours()
    grader.process.kill()
    grader.process.wait()
    deadline = time.monotonic() + STOP_LIMIT_S
    while runs[0] in grader.ours():
        assert time.monotonic() < deadline, f"the run {runs[0]} outlived the killed grader"
        time.sleep(0.1)


def parent_of(pid: int) -> int:
    stat = Path(f"/proc/{pid}/stat").read_text()
    return int(stat[stat.rindex(")") + 2 :].split()[1])


class Killed(BaseException):
    """The grader's end between two of its writes: nothing after it runs."""


def test_a_student_stopped_between_two_reports_is_graded_again(tmp_path, monkeypatch):
    # A regrade replaces a finished grade's reports one by one: stopped between two of them, the
    # student must not count as finished with the old grade.json beside the new reports.
    grading = GradingRun(load_assignment(TEMPLATE_ROOT, TEMPLATE_ID), "cuda", tmp_path / "work", sandbox=None, seed=1)
    out = tmp_path / "out"

    def graded(points: float) -> Grade:
        return Grade(student="ann", assignment=TEMPLATE_ID, backend="cuda", status=Status.GRADED,
                     tasks=(TaskGrade("copy", "Copies", points, 10),), seed=1)

    reports.write_all(graded(3), out / "students" / "ann")
    assert batch.finished(out, "ann")
    monkeypatch.setattr(batch, "grade_submission", lambda *arguments: graded(7))
    written = []

    def write_then_stop(path: Path, text: str) -> None:
        if written:
            raise Killed()
        written.append(path)
        path.write_text(text)

    monkeypatch.setattr(reports, "write_atomically", write_then_stop)
    with pytest.raises(Killed):
        batch._grade_one(grading, "ann", tmp_path / "ann", out, print)
    assert batch.finished(out, "ann") is None


@pytest.mark.skipif(os.geteuid() != 0, reason="starts processes as other uids: needs root")
def test_a_stop_kills_the_processes_of_every_step_uid_registered_even_outside_its_tree(monkeypatch):
    # A stopped batch in the container sandbox walked /proc once per step (some two hundred in a
    # batch of sixteen grades on a 16-core host); now once a round for every step's uid. The
    # sleepers leave the grader's tree (setsid -f), as a step's orphans do, so that only the uid
    # walk, not the kill of the grader's descendants, can end them.
    uids = (64001, 64002)

    def processes_of(uid: int) -> list[int]:
        return [int(entry.name) for entry in Path("/proc").iterdir() if entry.name.isdigit()
                and any(line.split()[1:2] == [str(uid)] for line in _status(entry).splitlines() if line.startswith("Uid:"))]

    class Exited(Exception):
        pass

    def exit_instead(status: int) -> None:
        raise Exited(status)

    for uid in uids:
        subprocess.run(["setsid", "-f", "sleep", "60"], user=uid, group=uid, extra_groups=[], check=True)
    monkeypatch.setattr(stopping, "_stopping", threading.Event())
    monkeypatch.setattr(os, "_exit", exit_instead)
    try:
        with stopping.uid_ended_on_stop(uids[0]), stopping.uid_ended_on_stop(uids[1]):
            assert stopping._step_uids == set(uids)
            with pytest.raises(Exited):
                stopping._stop(signal.SIGTERM, None, "")
        deadline = time.monotonic() + 5
        while any(processes_of(uid) for uid in uids) and time.monotonic() < deadline:
            time.sleep(0.05)
        assert [processes_of(uid) for uid in uids] == [[], []]
        assert stopping._step_uids == set()
    finally:
        for uid in uids:
            for pid in processes_of(uid):
                os.kill(pid, signal.SIGKILL)


def _status(entry: Path) -> str:
    try:
        return (entry / "status").read_text()
    except OSError:
        return ""
