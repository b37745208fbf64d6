"""grade_submission as its declared stage list (grading/pipeline.py): the docstring's order is the
code's, and each stage declares what it holds of the machine."""

import re

from kernellab.grading import pipeline
from kernellab.grading.pipeline import STAGES, Holds


def test_the_docstrings_order_is_the_stage_lists():
    flow = re.search(r"^\s+(intake -> .*?the Grade)$", pipeline.__doc__, re.MULTILINE | re.DOTALL)[1]
    named = [name.strip() for name in re.sub(r"\([^)]*\)", "", " ".join(flow.split())).split("->")]
    assert named == ["intake", *(stage.name for stage in STAGES), "the Grade"]


def test_each_stage_is_named_once_and_the_gpu_alone_is_never_held_with_the_gpu_shared():
    assert len({stage.name for stage in STAGES}) == len(STAGES)
    assert not [stage.name for stage in STAGES if {Holds.GPU_ALONE, Holds.GPU_SHARED} <= stage.holds]


def test_the_stages_that_run_student_code_hold_what_it_runs_on():
    holds = {stage.name: stage.holds for stage in STAGES}
    assert holds["build"] == {Holds.CPU}
    assert Holds.GPU_SHARED in holds["tests"] and Holds.CPU in holds["tests"]  # the race check runs beside, on the CPU
    assert holds["speed"] == {Holds.GPU_ALONE}
    assert holds["judge and score"] == holds["feedback"] == frozenset()  # the grader's own process
