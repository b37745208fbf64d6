from dataclasses import FrozenInstanceError
from pathlib import Path

import pytest

from helpers import REAL_ROOT, manifest_text
from kernellab.grading.run import GradingRun
from kernellab.manifest import ManifestError, list_assignments, load_assignment


def write_manifest(root: Path, text: str, assignment_id: str = "x") -> None:
    directory = root / "assignments" / assignment_id
    directory.mkdir(parents=True, exist_ok=True)
    (directory / "assignment.toml").write_text(text)


def test_a_valid_manifest_loads_into_frozen_dataclasses(tmp_path: Path):
    write_manifest(tmp_path, manifest_text(task_ids=("alpha", "beta-2")))
    assignment = load_assignment(tmp_path, "x")
    assert assignment.task_ids == ("alpha", "beta-2")
    assert assignment.tasks[1].tests == "beta_2"
    assert assignment.files.entry == "host.cu.h"
    assert assignment.files.aliases == {"kernels.cuh": "kernels.cu.h"}
    assert assignment.reference_dir == tmp_path / "reference" / "x"
    assert assignment.skeleton_dir == tmp_path / "skeleton" / "x"
    with pytest.raises(FrozenInstanceError):
        assignment.tasks[0].points = 3


def test_the_real_pbb_manifest_loads():
    assignment = load_assignment(REAL_ROOT, "pbb")
    assert "scan-warp" in assignment.task_ids
    assert next(task for task in assignment.tasks if task.id == "scan-warp").warp_synchronous == "fail"
    race_checked = {task.id: task.race_check for task in assignment.tasks if task.race_check is not None}
    assert race_checked == {"scan-block": "fail", "reduce-block": "fail", "scan-multi": "fail", "sgm-scan": "fail"}


def test_race_check_is_a_policy_of_a_tested_task(tmp_path: Path):
    write_manifest(tmp_path, _replace_last('tests = "beta"', 'tests = "beta"\nrace_check = "warn"'))
    assignment = load_assignment(tmp_path, "x")
    assert [task.race_check for task in assignment.tasks] == [None, "warn"]


def test_list_assignments_finds_every_manifest(tmp_path: Path):
    write_manifest(tmp_path, manifest_text("b"), "b")
    write_manifest(tmp_path, manifest_text("a"), "a")
    (tmp_path / "assignments" / "not-one").mkdir()
    assert list_assignments(tmp_path) == ["a", "b"]


def test_an_unknown_assignment_is_an_error_listing_the_known_ones(tmp_path: Path):
    write_manifest(tmp_path, manifest_text())
    with pytest.raises(ManifestError, match="known assignments: x"):
        load_assignment(tmp_path, "y")


def test_invalid_toml_is_an_error_with_its_line(tmp_path: Path):
    write_manifest(tmp_path, manifest_text() + "points = = 3\n")
    with pytest.raises(ManifestError) as caught:
        load_assignment(tmp_path, "x")
    assert caught.value.line == manifest_text().count("\n") + 1
    assert str(caught.value).startswith(str(tmp_path / "assignments" / "x" / "assignment.toml"))


VALID = manifest_text()


@pytest.mark.parametrize(
    ("old", "new", "message"),
    [
        ('id = "x"\n', "", "id: missing"),
        ('id = "x"\n', 'id = "y"\n', "does not match the assignment's directory name"),
        ('id = "x"\n', 'id = "x"\ncolour = "red"\n', "colour: unknown key"),
        ('id = "beta"', 'id = "alpha"', "tasks[1].id: duplicate task id 'alpha'"),
        ('id = "alpha"', 'id = "Alpha"', "tasks[0].id: 'Alpha' does not match"),
        ('id = "alpha"', 'id = "1st"', "tasks[0].id: '1st' does not match"),
        ("points = 10\ntests = \"alpha\"", "points = -5\ntests = \"alpha\"", "tasks[0].points: expected a non-negative"),
        ("points = 10\ntests = \"alpha\"", "points = true\ntests = \"alpha\"", "tasks[0].points: expected an integer"),
        ("points = 10\ntests = \"alpha\"", "points = \"10\"\ntests = \"alpha\"", "tasks[0].points: expected an int"),
        ("points = 10\ntests = \"alpha\"", "tests = \"alpha\"", "tasks[0].points: missing"),
        ('tests = "beta"', 'tests = "beta"\nweight = 2', "tasks[1].weight: unknown key"),
        ('tests = "beta"', 'tests = "beta test"', "tasks[1].tests: 'beta test' does not match"),
        ('tests = "beta"', 'tests = "beta"\nwarp_synchronous = "maybe"', "tasks[1].warp_synchronous"),
        ('tests = "beta"', 'tests = "beta"\nrace_check = "deduct"', "tasks[1].race_check: expected one of"),
        ('tests = "beta"', 'tests = "beta"\nrace_check = true', "tasks[1].race_check: expected a str"),
        ('tests = "beta"', 'tests = "beta"\nlarge_cases = 1', "tasks[1].large_cases: expected true or false"),
        ('tests = "beta"', 'tests = "beta"\nlarge_cases = true', "grading.large_size_range: is needed exactly when"),
        ("skeleton_fails = true\n", "skeleton_fails = 1\n", "skeleton_fails: expected true or false"),
        ('"kernels.cuh" = "kernels.cu.h"', '"kernels.cuh" = "kernel.cu.h"', "files.aliases.'kernels.cuh'"),
        ('entry = "host.cu.h"', 'entry = "main.cu"', "files.entry: 'main.cu' is not in files.required"),
        ('optional = ["constants.cu.h"]', 'optional = ["host.cu.h"]', "files.optional: 'host.cu.h' is also"),
        ('required = ["kernels.cu.h", "host.cu.h"]', "required = []", "files.required: must name"),
        ('skeleton = "skeleton/x"', 'skeleton = "reference"', "build.skeleton: must not contain or lie inside"),
        ('skeleton = "skeleton/x"', 'skeleton = "."', "build.skeleton"),
        ('skeleton = "skeleton/x"', 'skeleton = "../elsewhere"', "build.skeleton: '../elsewhere' must be"),
        ('skeleton = "skeleton/x"\n', "", "build.skeleton: missing"),
        ('skeleton = "skeleton/x"\n', 'skeleton = "skeleton/x"\ntests = "/abs/tests"\n', "build.tests: '/abs/tests' must be"),
        ('skeleton = "skeleton/x"\n', 'skeleton = "skeleton/x"\ntests = 3\n', "build.tests: expected a str"),
    ],
)
def test_manifest_errors_name_the_file_and_the_field(tmp_path: Path, old: str, new: str, message: str):
    assert old in VALID
    write_manifest(tmp_path, _replace_last(old, new))
    with pytest.raises(ManifestError) as caught:
        load_assignment(tmp_path, "x")
    assert message in caught.value.message
    assert caught.value.path == tmp_path / "assignments" / "x" / "assignment.toml"


@pytest.mark.parametrize(
    ("grading", "message"),
    [
        ("large_size_range = [67108865, 100003565]", "grading.large_size_range: is set, but no task has large_cases"),
        ("large_size_range = [5, 3]", "grading.large_size_range: expected [low, high] with 1 <= low <= high"),
        ("large_size_range = [1, 4294967296]", "grading.large_size_range: expected [low, high]"),
        ("cpu_run_memory = 0", "grading.cpu_run_memory: expected a positive number of GiB, got 0"),
        ("cpu_run_memory = 2.5", "grading.cpu_run_memory: expected an int"),
    ],
)
def test_grading_values_out_of_range_are_errors_that_name_the_field(tmp_path: Path, grading: str, message: str):
    write_manifest(tmp_path, VALID + f"\n[grading]\n{grading}\n")
    with pytest.raises(ManifestError) as caught:
        load_assignment(tmp_path, "x")
    assert message in caught.value.message


def test_a_cpu_backend_runs_memory_is_the_manifests_cpu_run_memory_and_a_gpu_runs_the_sandboxs(tmp_path: Path):
    # The runs' steps get it: the adversarial suite's host-memory-bomb is stopped at its fixture's 2 GiB.
    write_manifest(tmp_path, VALID + "\n[grading]\ncpu_run_memory = 3\n")
    assignment = load_assignment(tmp_path, "x")
    assert GradingRun(assignment, "cpu", tmp_path / "work", None).run_memory_bytes == 3 << 30
    assert GradingRun(assignment, "cuda", tmp_path / "work", None).run_memory_bytes == 8 << 30
    write_manifest(tmp_path, VALID)
    assert load_assignment(tmp_path, "x").grading.cpu_run_memory_gib == 8


def _replace_last(old: str, new: str) -> str:
    """VALID with the last occurrence of `old` replaced: task edits land in the last task."""
    head, _, tail = VALID.rpartition(old)
    return head + new + tail


def test_a_manifest_with_an_empty_task_list_is_an_error(tmp_path: Path):
    write_manifest(tmp_path, "tasks = []\n" + manifest_text(task_ids=()))
    with pytest.raises(ManifestError, match="tasks: an assignment needs at least one"):
        load_assignment(tmp_path, "x")
