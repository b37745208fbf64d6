"""The grading service of a GPU host (`kernellab serve`) and its client (`grade --remote`), over
real HTTP on the loopback interface: the token, the queue, refusals, and the client's fallback."""

import http.client
import io
import json
import os
import shutil
import socket
import tarfile
import threading
import time
from dataclasses import replace
from pathlib import Path

import pytest

from helpers import REAL_ROOT, copy_build_system
from kernellab.cli import main
from kernellab.grading.model import Grade
from kernellab.grading.run import GradingRun
from kernellab.grading.start import open_run
from kernellab.intake import SubmissionRejected
from kernellab.manifest import load_assignment
from kernellab.remote import RemoteUnavailable, grade_remotely, noted
from kernellab.sandbox.bubblewrap import machine_sandbox
from kernellab.sandbox.step import SandboxUnavailable
from kernellab.scaffold import scaffold
from kernellab.serve import GradingService, make_server, parse_address

TOKEN = "t0k3n-2c9e51"
PBB = load_assignment(REAL_ROOT, "pbb")


def serving(service: GradingService):
    server = make_server(("127.0.0.1", 0), service)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    return server


@pytest.fixture
def pbb_service(tmp_path):
    runs = []

    def make_run(assignment, deadline_s):
        runs.append(deadline_s)
        return GradingRun(assignment, "cpu", tmp_path / "work" / assignment.id, None)

    server = serving(GradingService({"pbb": PBB}, make_run, TOKEN, queue=2))
    yield server, runs
    server.shutdown()
    server.server_close()


def post(server, path: str, body: bytes, token: str | None = TOKEN) -> tuple[int, dict]:
    connection = http.client.HTTPConnection(*server.server_address[:2], timeout=60)
    headers = {"Authorization": f"Bearer {token}"} if token else {}
    connection.request("POST", path, body=body, headers=headers)
    response = connection.getresponse()
    return response.status, json.loads(response.read())


def tar_gz(files: dict[str, str]) -> bytes:
    buffer = io.BytesIO()
    with tarfile.open(fileobj=buffer, mode="w:gz") as archive:
        for name, text in files.items():
            info = tarfile.TarInfo(name)
            info.size = len(text.encode())
            archive.addfile(info, io.BytesIO(text.encode()))
    return buffer.getvalue()


def test_requests_without_the_right_token_are_refused(pbb_service):
    server, runs = pbb_service
    for token in (None, "t0k3n-2c9e52", ""):
        status, answer = post(server, "/grade?assignment=pbb", b"x", token)
        assert (status, answer["error"]) == (401, "missing or wrong token"), f"token {token!r}"
    assert runs == []


@pytest.mark.parametrize("path, body, status, words", [
    ("/grade?assignment=nope", b"x", 400, "unknown assignment 'nope'; this service grades pbb"),
    ("/grade?assignment=pbb&student=../../etc", b"x", 400, "does not match"),
    ("/grade?assignment=pbb&deadline=soon", b"x", 400, "'soon' is not a number"),
    ("/grade?assignment=pbb", b"", 413, "got 0"),
    ("/upload", b"x", 404, "POST /grade"),
])
def test_bad_requests_are_refused_saying_why(pbb_service, path, body, status, words):
    server, runs = pbb_service
    answer_status, answer = post(server, path, body)
    assert answer_status == status and words in answer["error"], f"{path}: {answer_status} {answer}"
    assert runs == []


def test_a_submission_the_host_s_intake_refuses_comes_back_as_a_rejected_grade(pbb_service):
    server, runs = pbb_service
    status, answer = post(server, "/grade?assignment=pbb&student=alice&deadline=500", tar_gz({"hostSkel.cu.h": "// host\n"}))
    assert status == 200, answer
    grade = Grade.from_json(json.dumps(answer))
    assert (grade.student, grade.status, grade.score) == ("alice", "rejected", 0)
    assert "pbbKernels.cu.h" in grade.message
    assert len(runs) == 1 and runs[0] == pytest.approx(500.0, abs=5), "what is left of the request's deadline"


def test_beyond_the_queue_the_service_answers_503_at_once(tmp_path):
    release = threading.Event()
    entered = threading.Event()

    def slow_run(assignment, deadline_s):
        entered.set()
        release.wait(30)
        return GradingRun(assignment, "cpu", tmp_path / "work" / assignment.id, None)

    server = serving(GradingService({"pbb": PBB}, slow_run, TOKEN, queue=0))
    try:
        first = threading.Thread(target=post, args=(server, "/grade?assignment=pbb", tar_gz({"x": "y"})))
        first.start()
        assert entered.wait(30)
        status, answer = post(server, "/grade?assignment=pbb", tar_gz({"x": "y"}))
        assert (status, answer["error"]) == (503, "the grading queue is full; try again later")
        release.set()
        first.join(60)
    finally:
        server.shutdown()
        server.server_close()


def test_the_client_says_why_the_host_gave_no_grade(pbb_service, tmp_path):
    server, _ = pbb_service
    submission = tmp_path / "alice"
    shutil.copytree(REAL_ROOT / "skeleton/pbb", submission)
    with socket.socket() as closed:
        closed.bind(("127.0.0.1", 0))
        port = closed.getsockname()[1]
    with pytest.raises(RemoteUnavailable, match=rf"http://127.0.0.1:{port} could not be reached: .*refused"):
        grade_remotely(f"http://127.0.0.1:{port}", TOKEN, submission, PBB, "alice", 10, None)
    url = "http://{}:{}".format(*server.server_address[:2])
    with pytest.raises(RemoteUnavailable, match="answered 401 Unauthorized: .*missing or wrong token"):
        grade_remotely(url, "wrong", submission, PBB, "alice", 10, None)
    (submission / "pbbKernels.cu.h").unlink()
    with pytest.raises(SubmissionRejected, match="pbbKernels.cu.h"):
        grade_remotely(url, TOKEN, submission, PBB, "alice", 10, None)


def test_a_grade_made_here_instead_says_so_first():
    grade = Grade(student="alice", assignment="pbb", backend="cpu", status="graded", message="a finding")
    assert noted(grade, "host down").message.startswith(
        "Graded on this platform's CPU backend, without speed points: the GPU grading host gave no grade (host down).\na finding"
    )
    out_of_time = replace(grade, status="not graded", message="the grading deadline (60 s) ran out before the tests could run")
    assert noted(out_of_time, "host down").message == (
        "The GPU grading host gave no grade (host down), and this platform's CPU backend could not grade it either:\n"
        "the grading deadline (60 s) ran out before the tests could run")


@pytest.mark.parametrize("text, address", [(":8750", ("127.0.0.1", 8750)), ("0.0.0.0:80", ("0.0.0.0", 80)), ("[::1]:9000", ("::1", 9000))])
def test_listen_addresses(text, address):
    assert parse_address(text) == address


def test_a_listen_address_without_a_port_is_refused():
    with pytest.raises(ValueError, match="expected HOST:PORT"):
        parse_address("localhost")



@pytest.mark.slow
def test_grade_remote_gets_the_host_s_grade_and_falls_back_to_the_cpu_backend_with_a_note(tmp_path):
    try:
        machine_sandbox()
    except SandboxUnavailable as why:
        pytest.skip(f"no sandbox here: {why}")
    root = Path("/tmp") / f"kernellab-serve-test-{os.getpid()}"
    shutil.rmtree(root, ignore_errors=True)
    try:
        copy_build_system(root)
        scaffold(root, "starter", None)
        for folder in (root, *(path for path in root.rglob("*") if path.is_dir())):
            folder.chmod(0o755)
        token = tmp_path / "token"
        token.write_text(TOKEN)
        options = ["--assignment", "starter", "--backend", "cpu", "--work", str(root / "work")]

        def make_run(assignment, deadline_s):
            return open_run(root, assignment.id, "cpu", None, root / "work", False, [], deadline_s=deadline_s)

        server = serving(GradingService({"starter": load_assignment(root, "starter")}, make_run, TOKEN, queue=1))
        url = "http://{}:{}".format(*server.server_address[:2])
        try:
            assert main(["--root", str(root), "grade", str(root / "reference/starter"), "--out", str(tmp_path / "remote"),
                         "--remote", url, "--token-file", str(token), *options]) == 0
        finally:
            server.shutdown()
            server.server_close()
        assert main(["--root", str(root), "grade", str(root / "reference/starter"), "--out", str(tmp_path / "fallback"),
                     "--remote", url, "--token-file", str(token), *options]) == 0
    finally:
        shutil.rmtree(root, ignore_errors=True)
    remote = json.loads((tmp_path / "remote/results.json").read_text())
    fallback = json.loads((tmp_path / "fallback/results.json").read_text())
    assert remote["score"] == fallback["score"] == 100
    assert "GPU grading host gave no grade" not in remote["output"]
    assert f"the GPU grading host gave no grade ({url} could not be reached" in fallback["output"], fallback["output"]


def test_a_host_that_cannot_grade_gives_no_grade_so_the_platform_grades_itself(tmp_path):
    root = tmp_path / "repo"
    (root / "assignments").mkdir(parents=True)
    (root / "CMakeLists.txt").write_text("cmake_minimum_required(VERSION 3.24)\nproject(broken NONE)\n")  # builds nothing
    scaffold(root, "starter", None)
    starter = load_assignment(root, "starter")
    server = serving(GradingService(
        {"starter": starter}, lambda assignment, _: GradingRun(assignment, "cpu", tmp_path / "work" / assignment.id, None), TOKEN, 1
    ))
    url = "http://{}:{}".format(*server.server_address[:2])
    try:
        with pytest.raises(RemoteUnavailable, match=rf"{url} could not grade it: the reference does not build"):
            grade_remotely(url, TOKEN, root / "reference/starter", starter, "alice", 300, None)
    finally:
        server.shutdown()
        server.server_close()


def test_a_slow_submission_holds_up_no_other_and_a_wait_counts_against_the_deadline(tmp_path):
    # Issue 25: serve graded one submission at a time, so one slow submission held up every other
    # student sent to the host, and a request's deadline did not count the time it waited.
    release, started = threading.Event(), threading.Semaphore(0)
    deadlines = []

    def slow_run(assignment, deadline_s):
        deadlines.append(deadline_s)
        started.release()
        release.wait(30)
        return GradingRun(assignment, "cpu", tmp_path / "work" / assignment.id, None)

    server = serving(GradingService({"pbb": PBB}, slow_run, TOKEN, queue=1, parallel=2, grade_limit_s=600))
    try:
        answers = []
        requests = [threading.Thread(target=lambda: answers.append(post(server, "/grade?assignment=pbb", tar_gz({"x": "y"}))))
                    for _ in range(2)]
        for request in requests:
            request.start()
        assert started.acquire(timeout=30) and started.acquire(timeout=30), "both graded at once"
        # A third waits for a slot; its deadline passes while it waits.
        waiting = threading.Thread(target=lambda: answers.append(post(server, "/grade?assignment=pbb&deadline=0.5",
                                                                      tar_gz({"x": "y"}))))
        waiting.start()
        time.sleep(1.5)
        release.set()
        for request in (*requests, waiting):
            request.join(60)
        assert sorted(deadlines)[:2] == [600, 600], "no request deadline: the service's limit per grade"
        late = [answer for status, answer in answers if answer.get("status") == "not graded"]
        assert len(late) == 1 and "deadline of 0.5 s passed while it waited" in late[0]["message"], answers
    finally:
        server.shutdown()
        server.server_close()
