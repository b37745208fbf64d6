"""Where the reference's public records are kept between grading runs: one file per executable's
exact contents and device, so a rebuilt reference or another GPU never reuses stale results."""

from helpers import REAL_ROOT
from kernellab.grading import GradingRun
from kernellab.manifest import load_assignment


def testkept_public_records_are_named_by_the_executables_contents_and_the_device(tmp_path):
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
