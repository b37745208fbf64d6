"""The reference's records: where its public records are kept between grading runs (one file per
executable's exact contents and device, so a rebuilt reference or another GPU never reuses stale
results), and a run of it that fails out of time beside other runs, which runs again alone.

The test programs of the last tests are shell scripts standing in for the reference's test
executables, writing records made with helpers.record_bytes."""

import stat
from pathlib import Path

import numpy as np
import pytest

from helpers import record_bytes
from kernellab.grading.model import GradingError
from kernellab.grading.reference import kept_public_records, record_all
from kernellab.grading.run import GradingRun
from kernellab.grading.targets import executable
from kernellab.manifest import load_assignment
from kernellab.scaffold import TEMPLATE_ID, TEMPLATE_ROOT

STARTER = load_assignment(TEMPLATE_ROOT, TEMPLATE_ID)


def test_kept_public_records_are_named_by_the_executables_contents_and_the_device(tmp_path):
    run = GradingRun(STARTER, "cpu", tmp_path / "work", sandbox=None, seed=1)
    program = tmp_path / "starter_test_saxpy"
    program.write_bytes(b"one build")
    kept = kept_public_records(run, program)
    assert kept.parent == tmp_path / "work" / "reference-public-records" and kept.name.startswith("starter_test_saxpy.")
    assert kept_public_records(run, program) == kept
    program.write_bytes(b"another build")
    assert kept_public_records(run, program) != kept
    program.write_bytes(b"one build")
    run.environment = {**run.environment, "gpu": "another GPU"}
    assert kept_public_records(run, program) != kept


def stand_in_reference(tmp_path: Path, first_run: str, later_runs: str) -> tuple[GradingRun, Path]:
    """A grading run of the starter assignment with its test executable as a script standing in
    for the reference's: `first_run` the first time, `later_runs` after ('records' or 'hangs')."""
    run = GradingRun(STARTER, "cpu", tmp_path / "work", sandbox=None, seed=1)
    run.hidden_sizes = ()  # the public group only
    values = np.arange(1, 6, dtype=np.int32)
    (tmp_path / "expected.rec").write_bytes(record_bytes(values, "expected") + record_bytes(values, "device"))
    behaviours = {"records": f'cp {tmp_path}/expected.rec "$KERNELLAB_RECORD"', "hangs": "sleep 5"}
    build_dir = tmp_path / "build"
    program = executable(build_dir, run.assignment.id, "saxpy")
    program.parent.mkdir(parents=True)
    program.write_text(
        "#!/bin/sh\n"
        f"echo run >> {tmp_path}/runs\n"
        f'if [ "$(wc -l < {tmp_path}/runs)" -eq 1 ]; then {behaviours[first_run]}; exit; fi\n'
        f"{behaviours[later_runs]}\n"
    )
    program.chmod(program.stat().st_mode | stat.S_IXUSR)
    return run, build_dir


def test_a_reference_run_out_of_time_beside_others_is_run_again_alone_and_that_run_decides(tmp_path, monkeypatch):
    monkeypatch.setattr(GradingRun, "timeout_s", property(lambda run: 1))
    run, build_dir = stand_in_reference(tmp_path, "hangs", "records")
    record_all(run, build_dir)
    assert (tmp_path / "runs").read_text().split() == ["run", "run"]
    assert (tmp_path / "work" / "reference-records" / "saxpy.public.rec").read_bytes() == (tmp_path / "expected.rec").read_bytes()


def test_a_reference_run_out_of_time_alone_too_is_a_grading_failure(tmp_path, monkeypatch):
    monkeypatch.setattr(GradingRun, "timeout_s", property(lambda run: 1))
    run, build_dir = stand_in_reference(tmp_path, "hangs", "hangs")
    with pytest.raises(GradingError, match=r"the reference fails its own saxpy tests \(public\): .*time"):
        record_all(run, build_dir)
    assert (tmp_path / "runs").read_text().split() == ["run", "run"]
