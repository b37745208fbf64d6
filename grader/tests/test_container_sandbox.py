"""The container sandbox (no bubblewrap), real: steps as unprivileged uids with no_new_privs,
the reference sealed, nothing left running after a step. Needs root, as in a platform's container."""

import os
import shutil
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest

from kernellab import runner
from kernellab.sandbox.container import ContainerSandbox
from kernellab.sandbox.limits import STEP_UIDS
from kernellab.sandbox.step import SandboxFailure, SandboxUnavailable, Step, build_step, run_step

PYTHON = "/usr/bin/python3"

pytestmark = [
    pytest.mark.skipif(os.geteuid() != 0, reason="the container sandbox switches uids: it needs root"),
    pytest.mark.usefixtures("own_umask"),
]


@pytest.fixture
def layout(tmp_path: Path):
    """(root, work, job): a repository with a reference and a work folder with a reference build,
    its records and a job, all under a folder others may enter (pytest's own are 0700)."""
    top = Path("/tmp") / f"kernellab-container-test-{os.getpid()}-{tmp_path.name}"
    root, work = top / "repo", top / "work"
    (root / "reference" / "x").mkdir(parents=True)
    (root / "reference" / "x" / "kernels.cuh").write_text("// the reference's answer\n")
    (root / "assignments" / "x" / "tests").mkdir(parents=True)
    (root / "assignments" / "x" / "questions.toml").write_text("answer = 42\n")
    (root / "assignments" / "x" / "tests" / "test.cu").write_text("// public test\n")
    build = work / "x" / "reference-x-cpu"
    (build / "assignments" / "x").mkdir(parents=True)
    (build / "CMakeCache.txt").write_text("cache\n")
    (build / "assignments" / "x" / "x_test_alpha").write_text("reference executable\n")
    (build / "grader" / "harness").mkdir(parents=True)
    (build / "grader" / "harness" / "main.o").write_text("harness object\n")
    (work / "x" / "reference-records").mkdir(parents=True)
    (work / "x" / "reference-records" / "alpha.hidden.rec").write_text("expected\n")
    job = work / "x" / "jobs" / "student"
    (job / "records").mkdir(parents=True)
    for folder in (top, *[path for path in top.rglob("*") if path.is_dir()]):
        folder.chmod(0o755)
    yield root, work, job
    shutil.rmtree(top)


def run_python(sandbox: ContainerSandbox, code: str, step: Step, timeout_s: float = 30) -> runner.RunOutcome:
    return runner.run_program([PYTHON, "-c", code], Path("/tmp"), timeout_s, sandbox=sandbox, step=step)


def test_a_step_runs_as_an_unprivileged_uid_with_no_new_privs(layout):
    root, work, _ = layout
    sandbox = ContainerSandbox.find(root, work)
    outcome = run_python(
        sandbox,
        "import os; status = open('/proc/self/status').read();"
        "print(os.getuid(), os.getgid(), os.getgroups(), [line for line in status.splitlines() if line.startswith('NoNewPrivs')])",
        Step(readable=()),
    )
    assert outcome.exit_code == 0, outcome.output
    uid, gid, *rest = outcome.output.split(maxsplit=2)
    assert int(uid) in STEP_UIDS and gid == uid, outcome.output
    assert "[]" in rest[0] and "NoNewPrivs:\\t1" in rest[0], outcome.output


def test_student_code_reads_neither_the_reference_nor_the_records_nor_the_reference_executables(layout):
    root, work, job = layout
    sandbox = ContainerSandbox.find(root, work)
    secrets = [
        root / "reference" / "x" / "kernels.cuh",
        root / "assignments" / "x" / "questions.toml",
        work / "x" / "reference-x-cpu" / "assignments" / "x" / "x_test_alpha",
        work / "x" / "reference-records" / "alpha.hidden.rec",
    ]
    public = [root / "assignments" / "x" / "tests" / "test.cu", work / "x" / "reference-x-cpu" / "grader" / "harness" / "main.o"]
    code = (
        "import sys\n"
        "for path in sys.argv[1:]:\n"
        "    try: open(path).read(); print('read', path)\n"
        "    except OSError as error: print('refused', path, error.errno)\n"
    )
    outcome = runner.run_program([PYTHON, "-c", code, *map(str, secrets + public)], Path("/tmp"), 30, sandbox=sandbox,
                         step=build_step([root / "assignments" / "x"], job / "build"))
    # the build folder is created by the grader before a build
    assert outcome.exit_code == 0, outcome.output
    for path in secrets:
        assert f"refused {path} 13" in outcome.output, f"{path} was readable:\n{outcome.output}"
    for path in public:
        assert f"read {path}" in outcome.output, f"{path} was not readable:\n{outcome.output}"


@pytest.fixture(autouse=True)
def build_folder(layout):
    (layout[2] / "build").mkdir()



def test_what_the_grader_writes_while_a_step_runs_is_never_readable_by_it(layout):
    root, work, job = layout
    sandbox = ContainerSandbox.find(root, work)
    # The reference's build goes on beside a student's build: written after the step's seal.
    late = work / "x" / "reference-x-cpu" / "assignments" / "x" / "x_test_beta"
    code = (
        "import sys, time\n"
        "for _ in range(100):\n"
        "    try: print(open(sys.argv[1]).read()); break\n"
        "    except FileNotFoundError: time.sleep(0.05)\n"
        "    except OSError as error: print('refused', error.errno); break\n"
    )
    with sandbox.confine([PYTHON, "-c", code, str(late)], Step(readable=()), Path("/tmp")) as confined:
        import subprocess
        step = subprocess.Popen(confined.argv, cwd=confined.cwd, preexec_fn=confined.preexec, stdout=subprocess.PIPE, text=True)
        (work / "x" / "reference-x-cpu" / "assignments").chmod(0o755)  # even where an older folder was open
        late.write_text("the reference's test executable\n")
        output, _ = step.communicate(timeout=30)
    assert output.strip() == "refused 13", output


def test_a_step_writes_its_output_and_not_the_grader_s_files(layout):
    root, work, job = layout
    sandbox = ContainerSandbox.find(root, work)
    output = job / "records" / "alpha.public.rec"
    output.touch()
    forged = work / "x" / "reference-records" / "alpha.hidden.rec"
    outcome = run_python(
        sandbox,
        f"open('{output}', 'w').write('mine')\n"
        f"try: open('{forged}', 'w').write('forged'); print('forged')\n"
        f"except OSError as error: print('refused', error.errno)",
        run_step(Path(PYTHON), [output], gpu=False),
    )
    assert outcome.exit_code == 0, outcome.output
    assert output.read_text() == "mine"
    assert "refused 13" in outcome.output and forged.read_text() == "expected\n"


def test_nothing_a_step_started_outlives_it(layout, tmp_path):
    root, work, job = layout
    sandbox = ContainerSandbox.find(root, work)
    marker = job / "records" / "survivor.txt"
    marker.touch()
    # A grandchild leaves the step's session and would write the file 2 s after the step ended.
    code = (
        "import os, subprocess, sys\n"
        f"subprocess.Popen([sys.executable, '-c', 'import time; time.sleep(2); open(\"{marker}\", \"w\").write(\"alive\")'],"
        " start_new_session=True)\n"
    )
    outcome = run_python(sandbox, code, run_step(Path(PYTHON), [marker], gpu=False))
    assert outcome.exit_code == 0, outcome.output
    time.sleep(3)
    assert marker.read_text() == "", "a process of the step outlived it"


def test_a_fork_bomb_stops_at_the_step_s_process_limit(layout):
    root, work, job = layout
    sandbox = ContainerSandbox.find(root, work)
    code = (
        "import os\n"
        "children = 0\n"
        "try:\n"
        "    for _ in range(200):\n"
        "        pid = os.fork()\n"
        "        if pid == 0:\n"
        "            import time; time.sleep(5); os._exit(0)\n"
        "        children += 1\n"
        "except OSError as error: print('stopped after', children, 'errno', error.errno)\n"
    )
    outcome = run_python(sandbox, code, Step(readable=(), processes=17))
    # 17 processes of the uid: the supervising bash, python, and 15 children
    assert "stopped after 15 errno 11" in outcome.output, outcome.output


def test_a_path_closed_to_others_fails_the_step_and_says_which(layout, tmp_path):
    root, work, _ = layout
    sandbox = ContainerSandbox.find(root, work)
    private = tmp_path / "program"  # pytest's tmp_path is 0700
    private.write_text("x")
    with pytest.raises(SandboxFailure, match=str(private)) as failure:
        run_python(sandbox, "pass", Step(readable=(private,)))
    # The whole message reaches the student ("not graded"): it ends saying where to grade from.
    assert str(failure.value).endswith("grade from a folder that every user can reach (one under /tmp or /srv, say, not under /root)")


def test_without_root_the_container_sandbox_is_refused_with_the_reason(layout, monkeypatch):
    root, work, _ = layout
    monkeypatch.setattr(os, "geteuid", lambda: 1000)
    with pytest.raises(SandboxUnavailable, match="needs root"):
        ContainerSandbox.find(root, work)


def test_a_new_work_folder_is_made_reachable_and_a_grader_that_has_made_it_before_finds_it_so(layout):
    root, work, _ = layout
    fresh = work.parent / "fresh-work" / "grader"
    ContainerSandbox.find(root, fresh)
    ContainerSandbox.find(root, fresh)  # now under the grader's umask 077
    assert fresh.stat().st_mode & 0o001, oct(fresh.stat().st_mode)


def test_a_folder_a_step_reads_alone_is_closed_to_every_other_step_during_and_after_it(layout):
    # A task's folder holds the reference's code of the other tasks' functions (grading/building.py).
    root, work, job = layout
    sandbox = ContainerSandbox.find(root, work)
    own, other = job / "isolated" / "alpha" / "kernels.cuh", job / "isolated" / "beta" / "kernels.cuh"
    for path in (own, other):
        path.parent.mkdir(parents=True)
        path.write_text(f"// {path.parent.name}: the reference's code of the other tasks\n")
    read = ("import sys, time\n"
            "for path in sys.argv[1:]:\n"
            "    try: open(path).read(); print('read', path, flush=True)\n"
            "    except OSError as error: print('refused', error.errno, path, flush=True)\n")
    import subprocess
    step = build_step((), job / "records", alone=(own.parent,))
    with sandbox.confine([PYTHON, "-c", read + "time.sleep(3)", str(own)], step, Path("/tmp")) as confined:
        running = subprocess.Popen(confined.argv, cwd=confined.cwd, preexec_fn=confined.preexec, stdout=subprocess.PIPE, text=True)
        assert running.stdout.readline().strip() == f"read {own}"
        beside = runner.run_program([PYTHON, "-c", read, str(own), str(other)], Path("/tmp"), 30, sandbox=sandbox,
                                    step=build_step((), job / "records", alone=(other.parent,)))
        running.communicate(timeout=30)
    assert f"refused 13 {own}" in beside.output and f"read {other}" in beside.output, beside.output
    after = run_python(sandbox, f"import sys; sys.argv[1:] = ['{own}', '{other}']\n" + read, Step(readable=()))
    assert f"refused 13 {own}" in after.output and f"refused 13 {other}" in after.output, after.output
    # Closed to every group too, so that no later step given the same uid reads them.
    assert all(path.stat().st_mode & 0o077 == 0 for path in (own, own.parent, other, other.parent))


def test_two_steps_that_read_one_folder_alone_take_turns_and_both_read_it(layout):
    # A task's GPU build and its race-check build run side by side (grading/pipeline.py): the
    # second waited for nothing, took the folder's group for its own uid, and the first lost it.
    root, work, job = layout
    sandbox = ContainerSandbox.find(root, work)
    own = job / "isolated" / "alpha" / "kernels.cuh"
    own.parent.mkdir(parents=True)
    own.write_text("// alpha: the reference's code of the other tasks\n")
    read_twice = (f"import time\nopen('{own}').read()\ntime.sleep(1)\n"
                  f"try: open('{own}').read(); print('read twice', flush=True)\n"
                  "except OSError as error: print('refused', error.errno, flush=True)\n")

    def step_reading_alone(_: int) -> str:
        return runner.run_program([PYTHON, "-c", read_twice], Path("/tmp"), 30, sandbox=sandbox,
                                  step=build_step((), job / "records", alone=(own.parent,))).output.strip()

    started = time.monotonic()
    with ThreadPoolExecutor(2) as pool:
        outputs = list(pool.map(step_reading_alone, range(2)))
    assert outputs == ["read twice", "read twice"], outputs
    assert time.monotonic() - started >= 2  # one after the other
