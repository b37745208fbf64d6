"""`kernellab grade --remote URL`: have a course GPU host (`kernellab serve`) grade a submission,
for platforms whose containers have no GPU (Gradescope, PrairieLearn): the grade then has its
speed points. The submission goes through intake here first, and only the files it takes are
sent; the host runs intake, the build and every run again in its own sandbox. When the host
cannot be reached or does not answer with a grade, the caller grades here on the CPU backend and
says so in the grade (`noted`).

Protocol: serve.py.
"""

import io
import json
import os
import tarfile
import tempfile
import urllib.error
import urllib.parse
import urllib.request
from dataclasses import dataclass, replace
from pathlib import Path
from typing import TYPE_CHECKING

from kernellab.errors import InputError, display_path
from kernellab.grading.model import Grade
from kernellab.intake import SubmissionRejected, take
from kernellab.manifest import Assignment
from kernellab.verdict import Status

if TYPE_CHECKING:
    from kernellab.grading.run import GradingRun

TOKEN_VARIABLE = "KERNELLAB_TOKEN"
# How long a grade may take on the host, its queue included (a pbb grade on an H100 takes 40-50 s).
REMOTE_TIMEOUT_S = 1800
# Of a deadline's remaining time, the share the host may take: the rest is for the CPU backend
# should the host not answer.
REMOTE_SHARE_OF_DEADLINE = 0.5


class RemoteUnavailable(Exception):
    """The host gave no grade; the message says why (unreachable, refused the token, ...)."""


def read_token(path: Path | None) -> str:
    """The service's token: the first line of `path`, else $KERNELLAB_TOKEN."""
    if path is not None:
        try:
            token = path.read_text(encoding="utf-8").strip()
        except OSError as error:
            raise InputError(f"--token-file {path}: {error.strerror}") from None
    else:
        token = os.environ.get(TOKEN_VARIABLE, "").strip()
    if not token:
        raise InputError(f"--remote needs the service's token: --token-file FILE or ${TOKEN_VARIABLE}")
    return token


def packed_submission(submission: Path, assignment: Assignment) -> bytes:
    """The files intake takes from `submission`, as a .tar.gz (SubmissionRejected when it refuses)."""
    with tempfile.TemporaryDirectory(prefix="kernellab-remote-") as folder:
        taken = Path(folder) / "submission"
        take(submission, assignment, taken)
        buffer = io.BytesIO()
        with tarfile.open(fileobj=buffer, mode="w:gz") as archive:
            for path in sorted(taken.iterdir()):
                archive.add(path, arcname=path.name, recursive=False)
        return buffer.getvalue()


def grade_remotely(
    url: str, token: str, submission: Path, assignment: Assignment, student: str, timeout_s: float, deadline_s: float | None
) -> Grade:
    """The host's grade of `submission` (within `deadline_s` there, when given); RemoteUnavailable
    when it gives none, SubmissionRejected when intake here refuses the submission."""
    body = packed_submission(submission, assignment)
    fields = {"assignment": assignment.id, "student": student, **({"deadline": f"{deadline_s:.0f}"} if deadline_s else {})}
    query = urllib.parse.urlencode(fields)
    request = urllib.request.Request(
        f"{url.rstrip('/')}/grade?{query}",
        data=body,
        method="POST",
        headers={"Authorization": f"Bearer {token}", "Content-Type": "application/gzip"},
    )
    try:
        with urllib.request.urlopen(request, timeout=timeout_s) as response:
            answer = response.read()
    except urllib.error.HTTPError as error:
        detail = error.read(2000).decode("utf-8", errors="replace").strip()
        raise RemoteUnavailable(f"{url} answered {error.code} {error.reason}: {detail}") from None
    except (urllib.error.URLError, OSError) as error:
        reason = getattr(error, "reason", error)
        raise RemoteUnavailable(f"{url} could not be reached: {reason}") from None
    try:
        grade = Grade.from_json(answer.decode("utf-8"))
    except (UnicodeDecodeError, json.JSONDecodeError, KeyError, TypeError) as error:
        raise RemoteUnavailable(f"{url} did not answer with a grade: {error}") from None
    if grade.status == Status.NOT_GRADED:  # the host's own problem: the CPU backend here may still grade it
        raise RemoteUnavailable(f"{url} could not grade it: {grade.message.splitlines()[0] if grade.message else 'no reason given'}")
    return grade


@dataclass(frozen=True)
class RemoteHost:
    """A GPU host's grading service (`--remote URL`) and its token."""

    url: str
    token: str

    def grade(self, grading: "GradingRun", submission: Path, student: str) -> tuple[Grade | None, str]:
        """The host's grade, or None and why there is none ('' when intake refuses the submission
        here: grading it here gives the same refusal at once)."""
        print(f"{grading.assignment.id}: grading {display_path(submission)} on {self.url}", flush=True)
        remaining = grading.deadline.remaining()
        try:
            return grade_remotely(self.url, self.token, submission, grading.assignment, student, timeout_within(remaining),
                                  remaining if grading.deadline.seconds else None), ""
        except RemoteUnavailable as why:
            print(f"warning: {why}; grading here instead", flush=True)
            return None, str(why)
        except SubmissionRejected:
            return None, ""


def timeout_within(remaining_s: float) -> float:
    """How long to wait for the host, leaving time to grade here should it not answer."""
    return min(REMOTE_TIMEOUT_S, max(10.0, remaining_s * REMOTE_SHARE_OF_DEADLINE))


def noted(grade: Grade, why: str) -> Grade:
    """`grade`, made here instead of on the GPU host, saying why (first thing the student reads)."""
    note = (f"Graded on this platform's CPU backend, without speed points: the GPU grading host gave no grade ({why})."
            if grade.status != Status.NOT_GRADED else
            f"The GPU grading host gave no grade ({why}), and this platform's CPU backend could not grade it either:")
    return replace(grade, message="\n".join(filter(None, (note, grade.message))))
