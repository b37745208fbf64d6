"""Property requirements (issue 15): the manifest's [[tasks.requires]], the property records the
tests write, and the verdict and feedback line that grading gives a task from them."""

from pathlib import Path
from types import SimpleNamespace

import numpy as np
import pytest

from helpers import REAL_ROOT, manifest_text, record_bytes
from kernellab.grading.model import GroupResult
from kernellab.grading.pipeline import add_unmet_requirements
from kernellab.manifest import ManifestError, Requirement, load_assignment
from kernellab.properties import judge_requirements, measured_lines, measurements, unmet_requirements
from kernellab.records import read_records
from kernellab.verdict import LOCKSTEP_MEASUREMENT, Verdict

DEPTH = Requirement("depth", "scanIncWarp", at_most=5, why="lg(WARP) steps")
READS = Requirement("reads", "copyFromGlb2ShrMem", at_most=1, at_least=1)


def property_record(function: str, name: str, value: int, case: str = "block := 32, n := 64") -> bytes:
    """A property record as kernellab/property.hpp writes it."""
    return record_bytes(np.array([value], dtype="<i8"), "property", test="a test", case=case,
                        check=f"{function}: {name}", fmt="int64", layout=(0, 0, 0))


def records_of(tmp_path: Path, *records: bytes, name: str = "run.rec") -> Path:
    path = tmp_path / name
    path.write_bytes(b"".join(records))
    return path


def verdict_lines(tmp_path: Path, requirements, *records: bytes) -> list[tuple[bool, str]]:
    found = read_records(records_of(tmp_path, *records)).records
    return [(verdict.met, verdict.line) for verdict in judge_requirements(requirements, found)]


def test_a_measurement_past_the_bound_fails_and_names_the_value_the_bound_and_the_case(tmp_path: Path):
    lines = verdict_lines(tmp_path, [DEPTH], property_record("scanIncWarp", "depth", 5),
                          property_record("scanIncWarp", "depth", 31, case="block := 1024, n := 2048"))
    assert lines == [
        (False, "scanIncWarp: depth 31, required at most 5 (block := 1024, n := 2048)")
    ]


def test_measurements_within_the_bound_pass_and_show_the_one_nearest_to_it(tmp_path: Path):
    lines = verdict_lines(tmp_path, [DEPTH], property_record("scanIncWarp", "depth", 4),
                          property_record("scanIncWarp", "depth", 5))
    assert lines == [(True, "scanIncWarp: depth 5, required at most 5")]


@pytest.mark.parametrize("reads", [0, 2])
def test_exactly_once_fails_on_an_element_read_never_or_twice(tmp_path: Path, reads: int):
    [(met, line)] = verdict_lines(tmp_path, [READS], property_record("copyFromGlb2ShrMem", "reads", reads))
    assert not met and line.startswith(f"copyFromGlb2ShrMem: reads {reads}, required exactly 1")


def test_a_requirement_never_measured_is_not_met(tmp_path: Path):
    # A measurement of another function or property does not count for this one.
    lines = verdict_lines(tmp_path, [DEPTH], property_record("scanIncBlock", "depth", 5),
                          property_record("scanIncWarp", "applies", 129))
    assert lines == [(False, "scanIncWarp: depth not measured (the run stopped before it?), required at most 5")]


def test_records_of_other_roles_and_malformed_property_records_measure_nothing(tmp_path: Path):
    wrong_format = record_bytes(np.array([3], dtype="<i4"), "property", check="scanIncWarp: depth", fmt="int32")
    unnamed = record_bytes(np.array([3], dtype="<i8"), "property", check="scanIncWarp depth", fmt="int64")
    device = record_bytes(np.array([3], dtype="<i8"), "device", check="scanIncWarp: depth", fmt="int64")
    found = read_records(records_of(tmp_path, wrong_format, unnamed, device)).records
    assert len(found) == 3  # the reader keeps them all: property is a role it knows
    assert measurements(found) == []


def test_unmet_requirements_read_every_group_s_records(tmp_path: Path):
    public = records_of(tmp_path, property_record("scanIncWarp", "depth", 5), name="public.rec")
    hidden = records_of(tmp_path, property_record("scanIncWarp", "depth", 6), name="hidden.rec")
    assert unmet_requirements((DEPTH,), [public]) == ()
    assert unmet_requirements((DEPTH,), [public, hidden]) == (
        "scanIncWarp: depth 6, required at most 5 (block := 32, n := 64)",
    )


def test_no_records_at_all_leave_the_verdict_to_the_missing_results(tmp_path: Path):
    # Every check of such a run fails already ("no result"); a property line would only repeat it.
    assert unmet_requirements((DEPTH,), [tmp_path / "never-written.rec"]) == ()
    device = records_of(tmp_path, record_bytes(np.array([1, 2], dtype="<i4"), "device"))
    assert unmet_requirements((DEPTH,), [device]) == (
        "scanIncWarp: depth not measured (the run stopped before it?), required at most 5",
    )


def test_measured_lines_keep_one_line_per_property_the_first_outside_its_bound():
    output = "\n".join([
        "Filters: [property]",
        "kernellab property: scanIncWarp: depth 5, required at most 5",
        "kernellab property: scanIncWarp: applies 129, required at most 160",
        "kernellab property: scanIncWarp: depth 31, required at most 5",
        "kernellab property: scanIncWarp: depth 30, required at most 5",
        "  kernellab property: copyFromShr2GlbMem: writes 1, required exactly 1",
        "kernellab property: garbage",
    ])
    assert measured_lines(output) == [
        "scanIncWarp: depth 31, required at most 5",
        "scanIncWarp: applies 129, required at most 160",
        "copyFromShr2GlbMem: writes 1, required exactly 1",
    ]


def with_requirement(text: str) -> str:
    """A valid manifest whose last task declares `text` as a [[tasks.requires]] table."""
    return manifest_text() + "\n[[tasks.requires]]\n" + text


def load(tmp_path: Path, text: str):
    directory = tmp_path / "assignments" / "x"
    directory.mkdir(parents=True, exist_ok=True)
    (directory / "assignment.toml").write_text(text)
    return load_assignment(tmp_path, "x")


def test_a_requirement_loads_onto_its_task(tmp_path: Path):
    assignment = load(tmp_path, with_requirement('property = "depth"\nfunction = "scanIncWarp"\nat_most = 5\nwhy = "lg"\n'))
    assert assignment.tasks[-1].requires == (Requirement("depth", "scanIncWarp", at_most=5, why="lg"),)
    assert assignment.tasks[0].requires == ()


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ('property = "depth"\nfunction = "scanIncWarp"\n', "needs `at_most`, `at_least` or both"),
        ('property = "depth"\nfunction = "scanIncWarp"\nat_least = 2\nat_most = 1\n', "expected at_least <= at_most"),
        ('property = "depth"\nfunction = "scanIncWarp"\nat_most = 5.0\n', "at_most: expected an integer"),
        ('property = "Depth"\nfunction = "scanIncWarp"\nat_most = 5\n', "property: 'Depth' does not match"),
        ('property = "depth"\nfunction = "scan warp"\nat_most = 5\n', "function: 'scan warp' is not a function name"),
        ('property = "depth"\nfunction = "f"\nat_most = 5\nbound = 3\n', "bound: unknown key"),
        ('property = "depth"\nfunction = "f"\nat_most = 5\n[[tasks.requires]]\nproperty = "depth"\nfunction = "f"\n'
         "at_most = 6\n", "requires the same property of the same function twice"),
    ],
)
def test_requirement_errors_name_the_field(tmp_path: Path, text: str, message: str):
    with pytest.raises(ManifestError) as caught:
        load(tmp_path, with_requirement(text))
    assert message in caught.value.message and "requires" in caught.value.message


def test_the_real_assignments_grade_their_correct_but_slow_stubs_on_what_the_task_teaches():
    # Issue 15: each stub that is correct but slow fails the property of its task, so the
    # skeleton must fail those tasks.
    expected = {
        "pbb": {"copy": {("copyFromGlb2ShrMem", "sectors"), ("copyFromGlb2ShrMem", "reads"),
                         ("copyFromShr2GlbMem", "sectors"), ("copyFromShr2GlbMem", "writes")},
                "scan-warp": {("scanIncWarp", "depth"), ("scanIncWarp", "applies")}},
        "reduce": {"warp-shuffle": {("warpReduceShuffle", "depth"), ("blockReduceShuffle", "depth")},
                   "ordered": {("reduceOrderedKernel", "sectors"), ("reduceOrderedKernel", "reads")}},
    }
    # Issue 16: each host function that owns multi-block work keeps it on the device.
    on_device = {
        "pbb": {"reduce-block": "mapReduce", "scan-multi": "scanInc", "sgm-scan": "sgmScanInc"},
        "reduce": {"compact": "reduceCompact", "interleaved": "reduceInterleaved", "shared-memory": "reduceShared",
                   "warp-tail": "reduceWarpTail", "warp-shuffle": "reduceShuffle", "coarsened": "reduceCoarsened",
                   "ordered": "reduceOrdered"},
    }
    # Issue 25: a rule of the task text, measured: scan-block's race fixed without adding a barrier.
    expected["pbb"]["scan-block"] = {("scanIncBlock", "barriers")}
    for assignment_id, tasks in expected.items():
        for task_id, function in on_device[assignment_id].items():
            tasks.setdefault(task_id, set()).add((function, "bytes-to-host"))
        assignment = load_assignment(REAL_ROOT, assignment_id)
        declared = {task.id: {(r.function, r.property) for r in task.requires} for task in assignment.tasks if task.requires}
        assert declared == tasks
        assert all(task.skeleton_fails for task in assignment.tasks if task.requires)
        assert all(task.skeleton_fails for task in assignment.tasks if task.tests is not None), assignment_id


@pytest.mark.parametrize("verdict", [Verdict.NEEDS_GPU, Verdict.FAILED])
def test_a_requirement_unmet_where_the_task_was_left_to_a_gpu_says_whose_measurement_it_is(tmp_path: Path, verdict):
    # The CPU backend runs a warp's lanes one after another: lockstep code measures depth 129 there.
    assignment = load_assignment(REAL_ROOT, "pmph-w2")
    records = records_of(tmp_path, property_record("scanIncWarp", "depth", 129),
                         property_record("scanIncWarp", "applies", 129))
    runs = [SimpleNamespace(tests="scan_warp", records=records)]
    results = {("scan_warp", "public"): GroupResult("public", verdict)}
    found = add_unmet_requirements(assignment, runs, results, {task.id: () for task in assignment.tested_tasks})
    line = "scanIncWarp: depth 129, required at most 5 (block := 32, n := 64)"
    assert found["scan-warp"] == ((f"{line} ({LOCKSTEP_MEASUREMENT})",) if verdict == Verdict.NEEDS_GPU else (line,))
    assert found["copy"] == ()
