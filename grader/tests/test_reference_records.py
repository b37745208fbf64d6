"""The reference's records: where its public records are kept between grading runs (one file per
executable's exact contents and device, so a rebuilt reference or another GPU never reuses stale
results), and a run of it that fails out of time beside other runs, which runs again alone.

The test programs of the last tests are shell scripts standing in for the reference's test
executables, writing records made with helpers.record_bytes."""

import stat
from pathlib import Path

import numpy as np
import pytest

from helpers import REAL_ROOT, record_bytes
from kernellab import grading
from kernellab.grading import GradingError, GradingRun, executable
from kernellab.manifest import load_assignment


def test_kept_public_records_are_named_by_the_executables_contents_and_the_device(tmp_path):
    run = GradingRun(load_assignment(REAL_ROOT, "pbb"), "cpu", tmp_path / "work", sandbox=None, seed=1)
    program = tmp_path / "pbb_test_copy"
    program.write_bytes(b"one build")
    kept = run.kept_public_records(program)
    assert kept.parent == tmp_path / "work" / "reference-public-records" and kept.name.startswith("pbb_test_copy.")
    assert run.kept_public_records(program) == kept
    program.write_bytes(b"another build")
    assert run.kept_public_records(program) != kept
    program.write_bytes(b"one build")
    run.environment = {**run.environment, "gpu": "another GPU"}
    assert run.kept_public_records(program) != kept


def stand_in_reference(tmp_path: Path, first_run: str, later_runs: str) -> tuple[GradingRun, Path]:
    """A grading run of pbb with one test executable, copy's, as a script standing in for the
    reference's: `first_run` the first time, `later_runs` after ('records' or 'hangs')."""
    run = GradingRun(load_assignment(REAL_ROOT, "pbb"), "cpu", tmp_path / "work", sandbox=None, seed=1)
    run.hidden_sizes = ()  # the public group only
    values = np.arange(1, 6, dtype=np.int32)
    (tmp_path / "expected.rec").write_bytes(record_bytes(values, "expected") + record_bytes(values, "device"))
    behaviours = {"records": f'cp {tmp_path}/expected.rec "$KERNELLAB_RECORD"', "hangs": "sleep 5"}
    build_dir = tmp_path / "build"
    for tests in grading.tested(run.assignment):
        program = executable(build_dir, run.assignment.id, tests)
        program.parent.mkdir(parents=True, exist_ok=True)
        if tests == "copy":
            program.write_text(
                "#!/bin/sh\n"
                f"echo run >> {tmp_path}/runs\n"
                f'if [ "$(wc -l < {tmp_path}/runs)" -eq 1 ]; then {behaviours[first_run]}; exit; fi\n'
                f"{behaviours[later_runs]}\n"
            )
        else:
            program.write_text(f"#!/bin/sh\n{behaviours['records']}\n")
        program.chmod(program.stat().st_mode | stat.S_IXUSR)
    return run, build_dir


def test_a_reference_run_out_of_time_beside_others_is_run_again_alone_and_that_run_decides(tmp_path, monkeypatch):
    monkeypatch.setattr(GradingRun, "timeout_s", property(lambda run: 1))
    run, build_dir = stand_in_reference(tmp_path, "hangs", "records")
    run._record_reference(build_dir)
    assert (tmp_path / "runs").read_text().split() == ["run", "run"]
    assert (tmp_path / "work" / "reference-records" / "copy.public.rec").read_bytes() == (tmp_path / "expected.rec").read_bytes()


def test_a_reference_run_out_of_time_alone_too_is_a_grading_failure(tmp_path, monkeypatch):
    monkeypatch.setattr(GradingRun, "timeout_s", property(lambda run: 1))
    run, build_dir = stand_in_reference(tmp_path, "hangs", "hangs")
    with pytest.raises(GradingError, match=r"the reference fails its own copy tests \(public\): .*time"):
        run._record_reference(build_dir)
    assert (tmp_path / "runs").read_text().split() == ["run", "run"]
