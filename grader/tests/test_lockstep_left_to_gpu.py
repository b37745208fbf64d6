"""On the CPU backend, where a task accepts the lockstep idiom, the tests' operators keep a warp's
lanes in step at each application (kernellab/lockstep.hpp): a run that is right so passes, with
the warning. A run that warned and failed is left to a GPU (lockstep needed elsewhere): its end
record says so where the run's own checks failed (needs_gpu), the warning beside wrong records
where the judge found them. A GPU grade's race check counts such failures all the same, since
only the run itself says that it warned. The judge reads how the run ended from the end record
that the harness's main writes, never from the exit status or the output, which the student's
code controls.

The test program is a shell script standing in for the starter's test executable: it writes
the records the harness would (helpers.record_bytes), the end record as the CPU backend's main
writes it, and exits as that main would.
"""

import numpy as np
import pytest

from helpers import STAND_IN_WARNING, judge_stand_in, record_bytes
from kernellab.records import read_records
from kernellab.verdict import LOCKSTEP_RIGHT, LOCKSTEP_WRONG, NO_GPU_EXIT_CODE, RunEnd, Verdict, decide

VALUES = np.arange(1, 6, dtype=np.int32)
# The warning's message, as the CPU runtime gives it to the end record.
WARNING = STAND_IN_WARNING.split(": warning: ", 1)[1]


def end_record(warning: str = WARNING, needs_gpu: bool = False) -> bytes:
    return record_bytes(np.zeros(0, dtype=np.uint8), "end", test="", case="", check="", fmt="bytes",
                        ending=dict(lockstep_warning=warning, needs_gpu=needs_gpu))


def judged(tmp_path, backend: str, values: np.ndarray, exit_code: int, failures_left_to_gpu: bool = True,
           warns: bool = True):
    """The run as the CPU backend's main ends it: the warning in its end record (if `warns`), and
    needs_gpu where it exits with 77."""
    ending = end_record(WARNING if warns else "", warns and exit_code == NO_GPU_EXIT_CODE)
    return judge_stand_in(tmp_path, backend, record_bytes(VALUES, "expected"), record_bytes(values, "device") + ending,
                          exit_code, failures_left_to_gpu=failures_left_to_gpu, warns=warns)


def test_a_run_right_in_lockstep_passes_with_the_warning(tmp_path):
    result = judged(tmp_path, "cpu", VALUES, 0)
    assert result.verdict == Verdict.PASSED
    assert result.detail == "warning: " + WARNING


def test_a_warned_run_with_right_results_is_left_to_a_gpu(tmp_path):
    result = judged(tmp_path, "cpu", VALUES, NO_GPU_EXIT_CODE)
    assert result.verdict == Verdict.NEEDS_GPU
    assert result.detail == LOCKSTEP_RIGHT


def test_a_warned_run_with_wrong_results_is_left_to_a_gpu_and_says_what_the_cpu_computed(tmp_path):
    result = judged(tmp_path, "cpu", VALUES + 1, NO_GPU_EXIT_CODE)
    assert result.verdict == Verdict.NEEDS_GPU
    assert result.detail.startswith(LOCKSTEP_WRONG)
    assert "index 0" in result.detail and "device 2" in result.detail, result.detail


def test_a_grades_warned_run_whose_records_are_wrong_is_left_to_a_gpu(tmp_path):
    # In a grade the run's own checks see nothing (the judge has the expected values), so it
    # exits 0; its warning beside wrong records says what exit status 77 says in `test`.
    result = judged(tmp_path, "cpu", VALUES + 1, 0)
    assert result.verdict == Verdict.NEEDS_GPU
    assert result.detail.startswith(LOCKSTEP_WRONG)


@pytest.mark.parametrize("exit_code", [0, NO_GPU_EXIT_CODE])
def test_the_race_check_counts_wrong_results_beside_the_warning(tmp_path, exit_code):
    assert judged(tmp_path, "cpu", VALUES + 1, exit_code, failures_left_to_gpu=False).verdict == Verdict.FAILED


def test_wrong_results_without_the_warning_fail(tmp_path):
    assert judged(tmp_path, "cpu", VALUES + 1, 0, warns=False).verdict == Verdict.FAILED


def test_a_run_whose_own_checks_failed_without_exit_status_77_fails(tmp_path):
    assert judged(tmp_path, "cpu", VALUES + 1, 1).verdict == Verdict.FAILED


def test_on_a_gpu_the_exit_status_of_the_cpu_backends_warning_means_nothing(tmp_path):
    assert judged(tmp_path, "cuda", VALUES + 1, NO_GPU_EXIT_CODE).verdict == Verdict.FAILED
    assert judged(tmp_path / "right", "cuda", VALUES, NO_GPU_EXIT_CODE).verdict == Verdict.FAILED


def test_a_crash_or_a_timeout_is_never_left_to_a_gpu():
    crashed = RunEnd(-11, failed=True, has_results=True, needs_gpu=True, failures_left_to_gpu=True)
    assert decide(crashed) == "crashed (SIGSEGV)"
    assert decide(RunEnd(None, timed_out=True, has_results=True, needs_gpu=True, failures_left_to_gpu=True)) == Verdict.TIMED_OUT


def _stand_in(tmp_path, values: np.ndarray, exit_code: int, ending: bytes):
    return judge_stand_in(tmp_path, "cpu", record_bytes(VALUES, "expected"), record_bytes(values, "device") + ending,
                          exit_code)


def test_a_warning_the_run_only_prints_adds_nothing(tmp_path):
    # Student code can print the runtime's words: without them in the end record they are no warning,
    # and wrong records beside them fail.
    assert _stand_in(tmp_path / "wrong", VALUES + 1, 0, end_record("")).verdict == Verdict.FAILED
    right = _stand_in(tmp_path / "right", VALUES, 0, end_record(""))
    assert (right.verdict, right.detail) == (Verdict.PASSED, "")


def test_exit_status_77_is_not_the_end_records_word(tmp_path):
    # Right or wrong records, a run that exits 77 (as any process can) is left to a GPU only
    # where its end record says so; without the end record (a run that exited early) never.
    assert _stand_in(tmp_path / "wrong", VALUES + 1, NO_GPU_EXIT_CODE, end_record()).verdict == Verdict.FAILED
    assert _stand_in(tmp_path / "right", VALUES, NO_GPU_EXIT_CODE, end_record("")).verdict == Verdict.FAILED
    assert _stand_in(tmp_path / "early", VALUES + 1, NO_GPU_EXIT_CODE, b"").verdict == Verdict.FAILED
    assert _stand_in(tmp_path / "said", VALUES + 1, NO_GPU_EXIT_CODE, end_record(needs_gpu=True)).verdict == Verdict.NEEDS_GPU


def test_only_the_end_record_carries_how_the_run_ended(tmp_path):
    # A device record that claims needs_gpu is malformed: the reading stops there.
    path = tmp_path / "forged.rec"
    path.write_bytes(record_bytes(VALUES, "device", ending=dict(needs_gpu=True)))
    read = read_records(path)
    assert read.records == () and "needs_gpu in a record of role 'device'" in read.problem
