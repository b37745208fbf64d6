"""A grade that runs out of time is never a zero for the student. A test run whose time limit the
grading deadline cut and that then ran out of it, or that the deadline left no time to start,
gives no verdict: the grade is "not graded" (exit status 3, no results.json), and its message
names the stage the deadline ran out in. A run that used its full limit and ran out has timed
out: that is the code's, and costs its task.

The test executable is a shell script standing in for the starter's saxpy tests (as in
test_confirm_alone.py), and the stages that compile (isolation, the build, the probes) are
replaced, so nothing is built."""

import json
import stat
from pathlib import Path

import numpy as np
import pytest

from helpers import record_bytes
from kernellab import reports
from kernellab.deadline import Deadline, StageCost
from kernellab.grading import groups, pipeline
from kernellab.grading.groups import confirm_alone, judge_group, run_group
from kernellab.grading.isolation import stage as isolation
from kernellab.grading.model import GradingError
from kernellab.grading.pipeline import grade_submission
from kernellab.grading.resources import GpuLock
from kernellab.grading.run import GradingRun
from kernellab.grading.targets import executable
from kernellab.manifest import load_assignment
from kernellab.runner import RECORD_DESCRIPTOR, RunOutcome
from kernellab.scaffold import TEMPLATE_ID, TEMPLATE_ROOT
from kernellab.verdict import Status, Verdict

STARTER = load_assignment(TEMPLATE_ROOT, TEMPLATE_ID)
VALUES = np.arange(1, 6, dtype=np.int32)
BEHAVIOURS = {"hangs": "sleep 60", "passes": f'cat "$RIGHT" >&{RECORD_DESCRIPTOR}'}


class Clock:
    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


def starter_run(tmp_path: Path, deadline: Deadline) -> GradingRun:
    """A CPU-backend run of the starter whose reference records the test writes (no reference build)."""
    run = GradingRun(STARTER, "cpu", tmp_path / "work", sandbox=None, seed=1, deadline=deadline)
    run.reference.recorded = True
    run.gpu_lock = GpuLock(tmp_path / "gpu.lock")
    run.reference_records.mkdir(parents=True)
    for group in run.active_groups():
        (run.reference_records / f"saxpy.{group}.rec").write_bytes(record_bytes(VALUES, "expected"))
    (tmp_path / "right.rec").write_bytes(record_bytes(VALUES, "device"))
    return run


def stand_in(tmp_path: Path, build_dir: Path, behaviour: str) -> Path:
    """The saxpy test executable as a script that `behaviour`s, and counts its runs in <tmp>/runs."""
    program = executable(build_dir, STARTER.id, "saxpy")
    program.parent.mkdir(parents=True, exist_ok=True)
    program.write_text(f"#!/bin/bash\necho run >> {tmp_path}/runs\nRIGHT={tmp_path}/right.rec\n{BEHAVIOURS[behaviour]}\n")
    program.chmod(program.stat().st_mode | stat.S_IXUSR)
    return program


def runs_made(tmp_path: Path) -> int:
    runs = tmp_path / "runs"
    return len(runs.read_text().splitlines()) if runs.exists() else 0


@pytest.fixture
def compiled_nothing(monkeypatch):
    """grade_submission with its compiling stages replaced: no isolation, no probes, no symbols;
    the build makes the stand-in named by `compiled_nothing(behaviour)`, in the job's build folder."""
    chosen = {}
    monkeypatch.setattr(isolation, "isolate_tasks", lambda assignment, solution, job: ({}, ""))
    monkeypatch.setattr(pipeline, "unmet_conditions", lambda *args, **kwargs: ())
    monkeypatch.setattr(pipeline, "symbols_in_binaries", lambda *args, **kwargs: {})

    def build(grading, solution, build_dir, isolations, targets=None, so_far=None):
        stand_in(chosen["tmp"], build_dir, chosen["behaviour"])
        return {"saxpy": None}

    monkeypatch.setattr(pipeline, "build_solution", build)

    def choose(tmp_path: Path, behaviour: str) -> None:
        chosen.update(tmp=tmp_path, behaviour=behaviour)

    return choose


def grade(tmp_path: Path, run: GradingRun) -> tuple:
    """The grade of a one-file submission, and the grades published on the way."""
    submission = tmp_path / "submission"
    submission.mkdir()
    (submission / "kernels.cuh").write_text("// the stand-in program is what runs\n")
    published = []
    return grade_submission(run, submission, "ana", tmp_path / "job", published.append), published


def test_a_hang_whose_limit_the_deadline_cut_is_not_graded_never_a_zero(tmp_path, compiled_nothing):
    compiled_nothing(tmp_path, "hangs")
    run = starter_run(tmp_path, Deadline(3))
    assert run.timeout_s == 3000, "the starter's own limit on the CPU backend: far past the deadline"
    graded, published = grade(tmp_path, run)
    assert graded.status == Status.NOT_GRADED and not graded.is_final, graded.message
    assert graded.score == 0 and not graded.tasks, "no verdict, no points: nothing that reads as a zero"
    assert graded.message.startswith("the grading deadline (3 s) ran out in the tests stage: of 2 test runs, 2 had their "
                                     "time limit of 3000 s cut by it and ran out of time (saxpy (public) after "), graded.message
    assert "nothing here is the submission's doing; grade it again with a longer deadline" in graded.message
    assert runs_made(tmp_path) == 2, "no run again alone: the deadline has passed"
    assert published == [], "no partial grade of the tests is published: there is none"
    reports.write_all(graded, tmp_path / "out")
    assert not (tmp_path / "out" / reports.GRADESCOPE_FILE).exists(), "Gradescope shows a failed run, not a score"
    assert json.loads((tmp_path / "out" / reports.PRAIRIELEARN_FILE).read_text())["gradable"] is False


def test_a_hang_with_its_full_limit_has_timed_out_and_costs_its_task(tmp_path, compiled_nothing, monkeypatch):
    compiled_nothing(tmp_path, "hangs")
    monkeypatch.setattr(GradingRun, "timeout_s", property(lambda run: 1.5))
    graded, published = grade(tmp_path, starter_run(tmp_path, Deadline(None)))
    assert graded.status == Status.GRADED and graded.score == 0
    [saxpy] = graded.tasks
    assert [group.verdict for group in saxpy.groups] == [Verdict.TIMED_OUT, Verdict.TIMED_OUT]
    for group in saxpy.groups:
        assert "no result after 1.5 s, its full time limit (a kernel that never finishes?)" in group.detail
        assert "run again with no other test run beside it: the first run, beside other runs, ran out of time" in group.detail
        assert "GPU" not in group.detail, "the CPU backend's runs share cores, not a GPU"
    assert runs_made(tmp_path) == 4, "each group once beside the other, then alone"
    assert published[0].score == 0 and published[0].status == Status.GRADED


def test_a_deadline_that_passed_before_the_tests_starts_none_and_names_the_stages_before(tmp_path, compiled_nothing):
    compiled_nothing(tmp_path, "passes")
    clock = Clock()
    run = starter_run(tmp_path, Deadline(60, clock))
    clock.now += 61  # the build took it all
    graded, published = grade(tmp_path, run)
    assert graded.status == Status.NOT_GRADED and published == []
    assert graded.message.startswith("the grading deadline (60 s) ran out before the tests could run: the stages before "
                                     "them (intake, isolation, the build) took all of it"), graded.message
    assert runs_made(tmp_path) == 0


def test_a_run_whose_cut_limit_was_enough_keeps_its_verdict(tmp_path, compiled_nothing):
    compiled_nothing(tmp_path, "passes")
    run = starter_run(tmp_path, Deadline(120))
    graded, _ = grade(tmp_path, run)
    assert graded.status == Status.GRADED and graded.score == graded.max_score == 100, graded.message
    assert run.run_timeout_s < run.timeout_s, "its runs' limits were cut, and the runs ended within them"


def test_runs_in_the_tests_stage_that_could_not_start_are_counted_apart(tmp_path):
    run = starter_run(tmp_path, Deadline(540))
    ran_out = RunOutcome(None, True, 12.4, "")

    def ran(group: str, limit_s: float) -> groups.GroupRun:
        return groups.GroupRun("saxpy", group, tmp_path / f"{group}.rec", ran_out, None, limit_s=limit_s)

    cut, unstarted = ran("public", 12.4), ran("hidden", 0.0)
    assert groups.out_of_time(run, [cut, unstarted]) == (
        "the grading deadline (540 s) ran out in the tests stage: of 2 test runs, 1 had their time limit of 3000 s cut by "
        "it and ran out of time (saxpy (public) after 12 s) and 1 could not start; no verdict came of them, and nothing "
        "here is the submission's doing; grade it again with a longer deadline (--deadline, or the platform's time "
        "limit) or on a faster machine")
    assert groups.out_of_time(run, [ran("hidden", run.timeout_s)]) == "", "a run that used its full limit timed out: the code's"
    with pytest.raises(GradingError, match="could not start"):
        groups.judge_groups(run, {"saxpy": None}, [cut, unstarted])


def test_a_confirmation_alone_that_the_deadline_cut_leaves_the_first_verdict_and_says_so(tmp_path, monkeypatch):
    monkeypatch.setattr(GradingRun, "timeout_s", property(lambda run: 2.0))
    clock = Clock()
    run = starter_run(tmp_path, Deadline(100, clock))
    job = tmp_path / "job"
    program = stand_in(tmp_path, job / "build", "hangs")
    first = judge_group(run, run_group(run, job, program, "saxpy", "public"))
    assert first.verdict == Verdict.TIMED_OUT and not first.conclusive, "its full limit: the code's, unless neighbours slowed it"
    clock.now += 98.8  # 1.2 s left: the run alone would get less than its limit
    confirmed = confirm_alone(run, job, {"saxpy": program}, {("saxpy", "public"): first})[("saxpy", "public")]
    assert confirmed.verdict == Verdict.TIMED_OUT
    assert confirmed.detail.endswith("its run with no other test run beside it ran out of the grading deadline: "
                                     "this verdict is the first run's, beside other runs"), confirmed.detail
    assert runs_made(tmp_path) == 2


def test_a_stage_of_many_full_limits_is_said_in_hours():
    deadline = Deadline(540, Clock())
    note = deadline.skip_note(StageCost("confirming failures alone", 12 * 1800, "a run of 12 groups alone"))
    assert "(it needs about 6.0 h, 540 s were left of 540 s)" in note, note
