"""grade_submission as its declared stage list (grading/pipeline.py): the docstring's order is the
code's, each stage declares what it holds of the machine, and the stages of one step run at once."""

import re
import threading
import time
from dataclasses import replace
from pathlib import Path

import pytest

from kernellab.grading import pipeline
from kernellab.grading.pipeline import STAGES, Holds, Stage, Submission, run_step
from kernellab.grading.resources import OrderedSlots
from kernellab.grading.run import GradingRun
from kernellab.manifest import load_assignment
from kernellab.scaffold import TEMPLATE_ID, TEMPLATE_ROOT

ALL_STAGES = [stage for step in STAGES for stage in step]


def test_the_docstrings_order_is_the_stage_lists():
    flow = re.search(r"^\s+(intake -> .*?the Grade)$", pipeline.__doc__, re.MULTILINE | re.DOTALL)[1]
    named = [name.strip() for name in re.sub(r"\([^)]*\)", "", " ".join(flow.split())).split("->")]
    assert named == ["intake", *(" | ".join(stage.name for stage in step) for step in STAGES), "the Grade"]


def test_each_stage_is_named_once_and_the_gpu_alone_is_never_held_with_the_gpu_shared():
    assert len({stage.name for stage in ALL_STAGES}) == len(ALL_STAGES)
    for step in STAGES:
        held = set().union(*(stage.holds for stage in step))
        assert not {Holds.GPU_ALONE, Holds.GPU_SHARED} <= held, [stage.name for stage in step]


def test_the_stages_that_run_student_code_hold_what_it_runs_on():
    holds = {stage.name: stage.holds for stage in ALL_STAGES}
    assert holds["build"] == holds["race-check build"] == {Holds.BUILD_TURN} and holds["race check"] == {Holds.CPU}
    assert Holds.GPU_SHARED in holds["tests"] and Holds.GPU_SHARED in holds["sanitizers"]
    assert holds["speed"] == {Holds.GPU_ALONE}
    assert holds["judge and score"] == holds["feedback"] == frozenset()  # the grader's own process


def test_the_race_check_builds_beside_the_build_and_runs_beside_the_tests():
    step_of = {stage.name: index for index, step in enumerate(STAGES) for stage in step}
    assert step_of["race-check build"] == step_of["build"]
    assert step_of["race check"] == step_of["tests"] == step_of["program checks"] > step_of["build"]
    assert step_of["judge and score"] > step_of["program checks"]
    # Instrumented kernels beside the tests slow them past their limits (docs/performance.md).
    assert step_of["sanitizers"] > step_of["speed"] > step_of["tests"]


def test_stages_of_one_step_run_at_once_and_each_adds_its_own_fields(tmp_path: Path):
    both_started = threading.Barrier(2, timeout=10)  # each waits for the other: they fail unless at once

    def races(grading, state):
        both_started.wait()
        return replace(state, races={"scan": "passed"})

    def runs(grading, state):
        both_started.wait()
        return replace(state, runs=["run"])

    state = Submission(tmp_path, progress=None, turn_ticket=0)
    step = (Stage("a", frozenset(), races), Stage("b", frozenset(), runs))
    made = run_step(None, state, step)
    assert made.races == {"scan": "passed"} and made.runs == ["run"]


def test_two_stages_of_one_step_that_make_the_same_field_are_a_mistake(tmp_path: Path):
    step = (Stage("a", frozenset(), lambda grading, state: replace(state, runs=["a"])),
            Stage("b", frozenset(), lambda grading, state: replace(state, runs=["b"])))
    with pytest.raises(AssertionError, match="two stages beside each other made the submission's runs"):
        run_step(None, Submission(tmp_path, progress=None, turn_ticket=0), step)


def test_steps_that_build_take_turns_in_the_order_the_grades_started(tmp_path: Path):
    # Sixteen grades that built at once each took 218 s, and none reached the GPU meanwhile.
    grading = GradingRun(load_assignment(TEMPLATE_ROOT, TEMPLATE_ID), "cpu", tmp_path / "work", sandbox=None, seed=1)
    grading.build_turns = OrderedSlots(1)
    tickets = [grading.build_turns.ticket() for _ in range(3)]
    first_builds, order, building, most = threading.Event(), [], [0], [0]
    lock = threading.Lock()

    def build(grading, state):
        with lock:
            building[0] += 1
            most[0] = max(most[0], building[0])
            order.append(state.turn_ticket)
        first_builds.set()
        time.sleep(0.2)
        with lock:
            building[0] -= 1
        return state

    step = (Stage("build", frozenset({Holds.BUILD_TURN}), build), Stage("race-check build", frozenset({Holds.BUILD_TURN}), lambda g, s: s))
    grades = [threading.Thread(target=run_step, args=(grading, Submission(tmp_path, progress=None, turn_ticket=ticket), step))
              for ticket in tickets]
    grades[0].start()
    first_builds.wait(10)
    for grade in reversed(grades[1:]):  # the later grade asks first
        grade.start()
        time.sleep(0.05)
    for grade in grades:
        grade.join(10)
    assert order == tickets and most[0] == 1
