"""The adversarial suite (issue 6): hostile submissions graded as one batch, each with the verdict
the grader must reach (grader/tests/adversarial/attacks/<attack>/expect.toml).

The attacks aim at a small fixture assignment (adversarial/fixture: a map with a speed case and a
float sum, in two files so that an attack in one reaches one task's test executable only), built
in a fresh repository root. Each submission attacks one task and hands in the reference's file for
the other; the batch also grades a control, the plain reference, whose grade must equal a solo
grade of the reference with the same seed. Then each attack's expectation is checked, and what no
single grade shows: no report on disk was forged or lost, no process outlived the batch, and
nothing reached the network.

Attacks marked `needs_step_limits` run only where the sandbox limits a step's whole memory and
processes (a cgroup): without that they would take the grading machine itself down.

Backend: KERNELLAB_ADVERSARIAL_BACKEND (cuda, cpu or auto: the GPU when there is one); the suite
runs only when it is set, since a batch of this size takes many minutes on the CPU backend.
KERNELLAB_ADVERSARIAL_ATTACKS (comma-separated names) grades only those attacks and the control.
"""

import io
import json
import os
import shutil
import signal
import socket
import tarfile
import threading
import tomllib
import zipfile
from dataclasses import dataclass
from pathlib import Path

import pytest

from helpers import copy_build_system
from kernellab import environment
from kernellab.batch import find_submissions, grade_folder
from kernellab.grading.model import Grade, TaskGrade
from kernellab.grading.pipeline import grade_submission
from kernellab.grading.run import GradingRun
from kernellab.manifest import load_assignment
from kernellab.markers import strip_tree
from kernellab.sandbox.bubblewrap import Sandbox, machine_sandbox
from kernellab.sandbox.step import SandboxUnavailable
from kernellab.skeleton import replace_tree
from kernellab.verdict import Verdict

SUITE = Path(__file__).parent / "adversarial"
ATTACKS = SUITE / "attacks"
FRAGMENTS = ATTACKS / "_fragments"
ASSIGNMENT = "hostile"
SEED = 20261122
CONTROL = "control"
# Where network-connection looks for its answer server; the suite listens there.
LISTEN_PORT = 47613
# The name daemon-left-running gives its daemon.
DAEMON_NAME = "kl-adv-daemon"
# A speed time this far from the reference's, either way, was not timed as the reference's was.
FAIR_RATIO = (0.5, 2.0)
BACKEND_VARIABLE = "KERNELLAB_ADVERSARIAL_BACKEND"
ONLY_VARIABLE = "KERNELLAB_ADVERSARIAL_ATTACKS"

pytestmark = [
    pytest.mark.slow,
    pytest.mark.skipif(BACKEND_VARIABLE not in os.environ, reason=f"set {BACKEND_VARIABLE} (cpu, cuda or auto) to run it"),
]


@dataclass(frozen=True)
class Attack:
    name: str
    target: str
    # "zero", "rejected", "as-control", "no-gain" (the control's verdicts, and no task above the
    # control's points: what the attack costs itself, such as its own timing, is its own), "speed-zero",
    # "timed-fairly" or "hidden-zero" (the public cases pass, the hidden ones fail) on this backend.
    outcome: str
    message: str
    needs_step_limits: bool
    folder: Path
    table: dict

    @classmethod
    def load(cls, folder: Path, backend: str) -> "Attack":
        table = tomllib.loads((folder / "expect.toml").read_text())
        expect = {key: value for key, value in table["expect"].items() if key not in ("cpu", "cuda")}
        expect |= table["expect"].get(backend, {})
        return cls(folder.name, table["target"], expect["outcome"], expect.get("message", ""),
                   table.get("needs_step_limits", False), folder, table)


def all_attacks(backend: str) -> list[Attack]:
    return [Attack.load(folder, backend) for folder in sorted(ATTACKS.iterdir()) if (folder / "expect.toml").is_file()]


def limits_whole_steps(sandbox: Sandbox) -> bool:
    """Whether a step's memory and processes are bounded as a whole (a cgroup), not per process."""
    return "cgroup" in sandbox.describe()


def expand_fragments(text: str) -> str:
    """An attack's file with each `//@ NAME` line replaced by _fragments/NAME.cuh."""
    lines = []
    for line in text.splitlines(keepends=True):
        if line.startswith("//@ "):
            line = (FRAGMENTS / f"{line[4:].strip()}.cuh").read_text()
        lines.append(line)
    return "".join(lines)


def make_submission(attack: Attack, submissions: Path, reference: Path) -> None:
    """The attack's submission in `submissions`: the reference's files, the attacked one replaced."""
    files = {path.name: path.read_bytes() for path in reference.iterdir()}
    for path in attack.folder.glob("*.cuh"):
        files[path.name] = expand_fragments(path.read_text()).encode()
    if "edit" in attack.table:
        old, new = attack.table["edit"]
        target_file = f"{attack.target}.cuh"
        assert old.encode() in files[target_file], f"{attack.name}: its edit does not apply"
        files[target_file] = files[target_file].replace(old.encode(), new.encode())
    if "archive" in attack.table:
        make_archive(attack.table["archive"], submissions / attack.name, files)
        return
    (submissions / attack.name).mkdir()
    for name, content in files.items():
        (submissions / attack.name / name).write_bytes(content)


def make_archive(spec: dict, stem: Path, files: dict[str, bytes]) -> None:
    """A hostile archive: map.cuh stored under another path, as a link, or unpacking to map_bytes."""
    if "map_bytes" in spec:
        with zipfile.ZipFile(f"{stem}.zip", "w", zipfile.ZIP_DEFLATED, compresslevel=1) as archive:
            archive.writestr("sum.cuh", files["sum.cuh"])
            zeros = bytes(1 << 20)
            with archive.open("map.cuh", "w", force_zip64=True) as huge:
                for _ in range(spec["map_bytes"] // len(zeros)):
                    huge.write(zeros)
        return
    with tarfile.open(f"{stem}.tar.gz", "w:gz") as archive:
        for name, content in files.items():
            member = tarfile.TarInfo(spec.get("map_entry", name) if name == "map.cuh" else name)
            if name == "map.cuh" and "map_link" in spec:
                member.type = {"symbolic": tarfile.SYMTYPE, "hard": tarfile.LNKTYPE}[spec["map_link"]]
                member.linkname = "/etc/passwd"
                archive.addfile(member)
                continue
            member.size = len(content)
            archive.addfile(member, io.BytesIO(content))


def fixture_root(root: Path) -> Path:
    """A repository root holding the build system, the harness, the CPU backend and the fixture."""
    copy_build_system(root)
    shutil.copytree(SUITE / "fixture", root, dirs_exist_ok=True)
    assignment = load_assignment(root, ASSIGNMENT)
    replace_tree(assignment.skeleton_dir, strip_tree(assignment.reference_dir, assignment.task_ids))
    return root


class Listener:
    """A TCP listener on 127.0.0.1:LISTEN_PORT that counts who connects."""

    def __init__(self):
        self.connections = 0
        self._socket = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        self._socket.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        self._socket.bind(("127.0.0.1", LISTEN_PORT))
        self._socket.listen()
        self._thread = threading.Thread(target=self._accept, daemon=True)
        self._thread.start()

    def _accept(self) -> None:
        while True:
            try:
                connection, _ = self._socket.accept()
            except OSError:
                return  # closed
            self.connections += 1
            connection.close()

    def close(self) -> None:
        self._socket.close()


def daemons() -> list[int]:
    """The pids of the processes named DAEMON_NAME."""
    found = []
    for comm in Path("/proc").glob("[0-9]*/comm"):
        try:
            if comm.read_text().strip() == DAEMON_NAME:
                found.append(int(comm.parent.name))
        except OSError:
            continue
    return found


@dataclass
class Graded:
    backend: str
    attacks: dict[str, Attack]
    skipped: dict[str, str]
    grades: dict[str, Grade]
    solo: Grade
    out: Path
    top: Path
    connections: int
    survivors: list[int]


@pytest.fixture(scope="module")
def graded(tmp_path_factory) -> Graded:
    # The work and report folders lie five folders below `top`: as far up as the attacks look.
    top = tmp_path_factory.mktemp("adversarial")
    root = fixture_root(top / "root")
    assignment = load_assignment(root, ASSIGNMENT)
    backend = environment.choose_backend(os.environ[BACKEND_VARIABLE], root)
    try:
        sandbox = machine_sandbox()
    except SandboxUnavailable as why:
        pytest.skip(f"the suite runs hostile code only in the sandbox: {why}")
    # No attack's verdict depends on nvcc in a CPU-backend build, which uses it only for the
    # nvcc check (a compile per test source): without the check, the configure step does not
    # probe nvcc either, most of each submission's configure time.
    cmake_args = ("-DKERNELLAB_CPU_NVCC_CHECK=OFF",) if backend == "cpu" else ()
    work = top / "work" / ASSIGNMENT
    # The solo grade first; the batch then goes on in the same grading run, so that every batch
    # build links the harness mains of the reference build that has ended by then.
    run = GradingRun(assignment, backend, work, sandbox, SEED, cmake_args)
    solo = grade_submission(run, assignment.reference_dir, CONTROL, work / "jobs" / "solo")
    (top / "solo.json").write_text(solo.to_json())  # beside out/control: what a failed comparison compares
    attacks, skipped = {}, {}
    submissions = top / "submissions"
    submissions.mkdir()
    shutil.copytree(assignment.reference_dir, submissions / CONTROL)
    chosen = set(filter(None, os.environ.get(ONLY_VARIABLE, "").split(",")))
    for attack in all_attacks(backend):
        if chosen and attack.name not in chosen:
            skipped[attack.name] = f"not graded: {ONLY_VARIABLE} names other attacks"
            continue
        if attack.table.get("only_on", backend) != backend:
            skipped[attack.name] = f"not run: it attacks what only the {attack.table['only_on']} backend grades"
            continue
        if attack.needs_step_limits and not limits_whole_steps(sandbox):
            skipped[attack.name] = f"not run: the sandbox here bounds memory and processes per process only ({sandbox.describe()})"
            continue
        attacks[attack.name] = attack
        make_submission(attack, submissions, assignment.reference_dir)
    (top / "out").mkdir()
    # Only where the attack that connects is graded: another run of the suite may hold the port.
    listener = Listener() if "network-connection" in attacks else None
    try:
        grades = grade_folder(run, find_submissions(submissions), top / "out", jobs=2, regrade=False)
    finally:
        if listener:
            listener.close()
    survivors = daemons()
    for pid in survivors:  # ours: left by daemon-left-running
        os.kill(pid, signal.SIGKILL)
    return Graded(backend, attacks, skipped, grades, solo, top / "out", top, listener.connections if listener else 0, survivors)


def verdicts_of(task: TaskGrade) -> tuple:
    return tuple((group.group, group.verdict) for group in task.groups)


def outcome_of(task: TaskGrade) -> tuple:
    """What must not change when another student is in the batch: points and verdicts."""
    return task.points, tuple((group.group, group.verdict, group.points) for group in task.groups)


def ta_message(grade: Grade, task_id: str) -> str:
    """What a TA reads about one task: the refusal, or its feedback, verdicts, details and speed problems."""
    if grade.status != "graded":
        return grade.message
    task = next(task for task in grade.tasks if task.id == task_id)
    lines = [task.feedback] + [f"{group.verdict}: {group.detail}" for group in task.groups]
    return "\n".join(lines + [result.problem for result in task.speed])


def test_the_control_in_the_batch_grades_as_the_reference_graded_alone(graded):
    control = graded.grades[CONTROL]
    assert control.status == graded.solo.status == "graded"
    assert [outcome_of(task) for task in control.tasks] == [outcome_of(task) for task in graded.solo.tasks]
    correctness = sum(group.max_points for task in control.tasks for group in task.groups)
    assert sum(group.points for task in control.tasks for group in task.groups) == correctness


@pytest.mark.parametrize("name", sorted(path.parent.name for path in ATTACKS.glob("*/expect.toml")))
def test_the_attack_gets_its_verdict_and_the_rest_is_graded_normally(graded, name):
    if name in graded.skipped:
        pytest.skip(graded.skipped[name])
    attack = graded.attacks[name]
    grade, control = graded.grades[name], graded.grades[CONTROL]
    assert grade is not None and grade.status in ("graded", "rejected"), f"{name}: {grade and grade.message}"
    message = ta_message(grade, attack.target)
    if attack.outcome == "rejected":
        assert grade.status == "rejected" and grade.score == 0, f"{name} was not rejected"
        assert attack.message in message, f"{name}: {message!r}"
        return
    assert grade.status == "graded", f"{name} was rejected: {grade.message}"
    tasks = {task.id: task for task in grade.tasks}
    for task in control.tasks:
        if task.id != attack.target or attack.outcome == "as-control":
            assert outcome_of(tasks[task.id]) == outcome_of(task), f"{name}: task {task.id} graded otherwise than the control's"
    target, control_tasks = tasks[attack.target], {task.id: task for task in control.tasks}
    if attack.outcome == "no-gain":
        assert verdicts_of(target) == verdicts_of(control_tasks[attack.target]), f"{name}: {message}"
        assert target.points <= control_tasks[attack.target].points, f"{name}: {attack.target} scored above the control"
    elif attack.outcome == "zero":
        assert target.points == 0, f"{name}: {attack.target} scored {target.points}: {message}"
    elif attack.outcome == "speed-zero":
        assert [group.verdict for group in target.groups] == ["passed"] * len(target.groups), message
        assert target.speed and all(result.points == 0 for result in target.speed), message
    elif attack.outcome == "hidden-zero":
        assert [(group.group, group.verdict) for group in target.groups] == [("public", Verdict.PASSED), ("hidden", Verdict.FAILED)], message
        assert target.points == target.groups[0].points > 0, message
    elif attack.outcome == "timed-fairly":
        for result in target.speed:
            assert not result.problem and FAIR_RATIO[0] <= result.ratio <= FAIR_RATIO[1], f"{name}: {result}"
    assert attack.message in message, f"{name}: the TA reads {message!r}"


def test_every_report_on_disk_is_the_one_its_grade_wrote_and_no_other_exists(graded):
    written = sorted(path.relative_to(graded.top) for path in graded.top.rglob("results.json"))
    assert written == sorted(Path("out/students") / name / "results.json" for name in graded.grades), "forged or lost reports"
    for name, grade in graded.grades.items():
        on_disk = json.loads((graded.out / "students" / name / "grade.json").read_text())
        assert (on_disk["status"], on_disk["score"]) == (grade.status, grade.score), name


def test_no_process_outlives_the_batch(graded):
    assert graded.survivors == [], f"{DAEMON_NAME} still running after the batch (killed now)"


def test_nothing_reached_the_network(graded):
    assert graded.connections == 0, f"{graded.connections} connections reached 127.0.0.1:{LISTEN_PORT} from student code"
