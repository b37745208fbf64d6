"""Checks of the repository's own assignments that need no GPU and no build."""

from pathlib import Path

import pytest

from helpers import REAL_ROOT
from kernellab.grading.speed.timing import COPY_BASELINE
from kernellab.known_wrong import find_wrong_versions, prepare_solution
from kernellab.manifest import list_assignments, load_assignment
from kernellab.patches import apply_patch, parse_patch

KNOWN_WRONG = [
    (assignment_id, task.id, patch_file)
    for assignment_id in list_assignments(REAL_ROOT)
    for task, patch_file in find_wrong_versions(load_assignment(REAL_ROOT, assignment_id), None)
]


@pytest.mark.parametrize(
    "assignment_id, task_id, patch_file", KNOWN_WRONG, ids=[f"{a}/{t}/{p.stem}" for a, t, p in KNOWN_WRONG]
)
def test_every_known_wrong_version_applies_to_the_current_reference_and_changes_it(
    assignment_id: str, task_id: str, patch_file: Path, tmp_path: Path
):
    # A reference edit can move or change the lines a patch expects; this finds that on any
    # machine, before a GPU run of `kernellab wrong` reports it as "patch failed".
    assignment = load_assignment(REAL_ROOT, assignment_id)
    prepare_solution(assignment.reference_dir, tmp_path / "solution")
    apply_patch(parse_patch(patch_file), tmp_path / "solution")
    changed = [
        path.name
        for path in sorted((tmp_path / "solution").iterdir())
        if path.read_bytes() != (assignment.reference_dir / path.name).read_bytes()
    ]
    assert changed, f"{patch_file} leaves the reference unchanged"


def test_each_task_of_each_assignment_has_at_least_three_known_wrong_versions():
    for assignment_id in list_assignments(REAL_ROOT):
        assignment = load_assignment(REAL_ROOT, assignment_id)
        for task in assignment.tested_tasks:
            count = sum(1 for a, t, _ in KNOWN_WRONG if a == assignment_id and t == task.id)
            assert count >= 3, f"{assignment_id}/{task.id} has {count} known-wrong versions"


@pytest.mark.parametrize("assignment_id", list_assignments(REAL_ROOT))
def test_every_speed_program_has_the_copy_kernel_and_each_case_and_baseline_the_manifest_names(assignment_id: str):
    # The grader times COPY_BASELINE beside every case (the plausibility bound): a speed program
    # without it fails every grade's speed stage on a GPU, which no CPU-backend run shows.
    assignment = load_assignment(REAL_ROOT, assignment_id)
    if not assignment.speed:
        return
    programs = "".join(path.read_text() for path in sorted((assignment.manifest_path.parent / "speed").glob("*.cu")))
    names = {COPY_BASELINE} | {case.case for case in assignment.speed} | {case.baseline for case in assignment.speed if case.baseline}
    missing = sorted(name for name in names if f'{{"{name}", ' not in programs)
    assert not missing, f"{assignment_id}'s speed program registers no case {missing}"
