"""`kernellab serve`: grade submissions over HTTP on a course GPU host, for the run scripts of
platforms without GPUs (`kernellab grade --remote URL`, remote.py).

One POST /grade?assignment=ID&student=NAME[&deadline=SECONDS] per submission (the files as a
.tar.gz, `Authorization: Bearer TOKEN`); the answer is the grade as grade.json writes it. Up to
`parallel` grades run at once, each a grading run of its own (a fresh secret seed, the reference
built once and kept in the work folder), so that one slow submission does not hold up the rest;
the others wait in arrival order, and beyond `queue` waiting submissions the service answers 503
so that a platform script falls back at once instead of waiting past its deadline. The time a
submission waited counts against its own deadline, and no grade runs longer than the service's
limit per grade. Every grade holds the machine's GPU lock as any grade does (the tests share the
GPU, speed runs have it alone), so they and a `kernellab batch` on the same host share it correctly.

The service listens on the loopback interface unless told otherwise; on another interface give
it a certificate (--tls-cert, --tls-key), or put it behind a reverse proxy with TLS: the token
travels in every request.
"""

import hmac
import http.server
import json
import re
import shutil
import ssl
import tempfile
import threading
import time
import uuid
from collections.abc import Callable
from pathlib import Path
from urllib.parse import parse_qs, urlparse

from kernellab import stopping
from kernellab.grading.model import Grade
from kernellab.verdict import Status
from kernellab.grading.pipeline import grade_submission
from kernellab.grading.run import GradingRun
from kernellab.manifest import Assignment

# A submission's accepted files together (intake allows 4 MiB a file): far more is no submission.
MAX_BODY_BYTES = 64 << 20
STUDENT_NAME = re.compile(r"[A-Za-z0-9._-]{1,64}")


class GradingService:
    """Grades `parallel` submissions at a time; `make_run(assignment, deadline_s)` makes each its
    grading run (deadline_s: what the platform's script has left once the grade starts, at most
    `grade_limit_s`)."""

    def __init__(
        self, assignments: dict[str, Assignment], make_run: Callable[[Assignment, float | None], GradingRun], token: str, queue: int,
        parallel: int = 1, grade_limit_s: float | None = None,
    ):
        self.assignments = assignments
        self._make_run = make_run
        self._token = token.encode()
        self._grading = threading.BoundedSemaphore(parallel)
        self._admitted = threading.BoundedSemaphore(queue + parallel)  # the queue, and those being graded
        self._grade_limit_s = grade_limit_s

    def authorized(self, header: str | None) -> bool:
        scheme, _, token = (header or "").partition(" ")
        return scheme == "Bearer" and hmac.compare_digest(token.strip().encode(), self._token)

    def grade(self, assignment: Assignment, archive: bytes, student: str, deadline_s: float | None) -> Grade | None:
        """The grade of the submitted files, or None when the queue is full."""
        if not self._admitted.acquire(blocking=False):
            return None
        arrived = time.monotonic()
        try:
            with self._grading, tempfile.TemporaryDirectory(prefix="kernellab-serve-") as folder:
                submission = Path(folder) / "submission.tar.gz"
                submission.write_bytes(archive)
                left = None if deadline_s is None else deadline_s - (time.monotonic() - arrived)
                if left is not None and left <= 0:
                    return Grade(student=student, assignment=assignment.id, backend="", status=Status.NOT_GRADED,
                                 message=f"not graded: its deadline of {deadline_s:g} s passed while it waited for a "
                                         "free grading slot on the GPU host")
                limits = [limit for limit in (left, self._grade_limit_s) if limit is not None]
                run = self._make_run(assignment, min(limits) if limits else None)
                job = run.work / "jobs" / f"remote-{uuid.uuid4().hex[:12]}"
                try:
                    grade = grade_submission(run, submission, student, job)
                finally:
                    shutil.rmtree(job, ignore_errors=True)
                # A stop of the service kills the runs of the grade in progress: it is never answered.
                stopping.hold_if_stopping()
                return grade
        finally:
            self._admitted.release()


class _Handler(http.server.BaseHTTPRequestHandler):
    service: GradingService  # set on the subclass make_server creates
    server_version = "kernellab-serve"

    def do_POST(self) -> None:
        url = urlparse(self.path)
        if url.path != "/grade":
            return self._answer(404, {"error": f"no such endpoint {url.path}; POST /grade"})
        if not self.service.authorized(self.headers.get("Authorization")):
            return self._answer(401, {"error": "missing or wrong token"})
        query = {key: values[0] for key, values in parse_qs(url.query).items()}
        assignment = self.service.assignments.get(query.get("assignment", ""))
        if assignment is None:
            known = ", ".join(sorted(self.service.assignments))
            return self._answer(400, {"error": f"unknown assignment {query.get('assignment')!r}; this service grades {known}"})
        student = query.get("student", "remote")
        if not STUDENT_NAME.fullmatch(student):
            return self._answer(400, {"error": f"student name {student!r} does not match {STUDENT_NAME.pattern}"})
        try:
            deadline_s = float(query["deadline"]) if "deadline" in query else None
        except ValueError:
            return self._answer(400, {"error": f"deadline {query['deadline']!r} is not a number of seconds"})
        length = int(self.headers.get("Content-Length") or 0)
        if not 0 < length <= MAX_BODY_BYTES:
            return self._answer(413, {"error": f"a submission is 1 to {MAX_BODY_BYTES} bytes, got {length}"})
        grade = self.service.grade(assignment, self.rfile.read(length), student, deadline_s)
        if grade is None:
            return self._answer(503, {"error": "the grading queue is full; try again later"})
        self._answer(200, text=grade.to_json())

    def _answer(self, status: int, document: dict | None = None, text: str = "") -> None:
        body = (text or json.dumps(document) + "\n").encode()
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)


def make_server(address: tuple[str, int], service: GradingService, tls: tuple[Path, Path] | None = None) -> http.server.ThreadingHTTPServer:
    """The HTTP(S) server of `service` on `address` (host, port; port 0 picks a free one)."""
    handler = type("Handler", (_Handler,), {"service": service})
    server = http.server.ThreadingHTTPServer(address, handler)
    if tls is not None:
        context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
        context.load_cert_chain(*map(str, tls))
        server.socket = context.wrap_socket(server.socket, server_side=True)
    return server


def parse_address(text: str) -> tuple[str, int]:
    """'HOST:PORT' (or ':PORT', the loopback interface) as (host, port)."""
    host, colon, port = text.rpartition(":")
    if not colon or not port.isdigit() or not 0 <= int(port) < 65536:
        raise ValueError(f"{text!r}: expected HOST:PORT, e.g. 127.0.0.1:8750")
    return host.strip("[]") or "127.0.0.1", int(port)
