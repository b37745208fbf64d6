"""A test group that failed out of GPU memory or out of time is confirmed by a run alone before it
counts: another program on the GPU can take a run's memory or time, never change what it
computed or make it crash. And runs beyond the grading run's slots wait to start, so that many
grades at once do not slow each other's runs past their time limits.

The test programs are shell scripts standing in for a test executable: they write the records
the harness would (made with helpers.record_bytes), or stop before writing any.
"""

import re
import stat
import threading
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import numpy as np

from helpers import record_bytes
from kernellab import gpu_memory, properties, runner
from kernellab.grading.groups import confirm_alone, judge_group, run_group
from kernellab.grading.resources import GpuLock
from kernellab.grading.run import GradingRun
from kernellab.grading.sanitizers import compute_sanitizer
from kernellab.grading.targets import executable
from kernellab.manifest import Requirement, load_assignment
from kernellab.runner import RECORD_DESCRIPTOR
from kernellab.sandbox.step import build_step, run_step
from kernellab.scaffold import TEMPLATE_ID, TEMPLATE_ROOT
from kernellab.verdict import Verdict

VALUES = np.arange(1, 6, dtype=np.int32)


def grading_run(tmp_path: Path) -> GradingRun:
    """A run of the starter assignment whose reference records are written by the test, not by a
    reference build."""
    run = GradingRun(load_assignment(TEMPLATE_ROOT, TEMPLATE_ID), "cpu", tmp_path / "work", sandbox=None, seed=1)
    run.reference.recorded = True
    run.gpu_lock = GpuLock(tmp_path / "gpu.lock")
    records = tmp_path / "work" / "reference-records"
    records.mkdir(parents=True)
    (records / "saxpy.public.rec").write_bytes(record_bytes(VALUES, "expected"))
    return run


def stand_in_program(tmp_path: Path, run: GradingRun, first_run: str, later_runs: str) -> Path:
    """the starter's saxpy test executable as a script: `first_run` the first time, `later_runs` after;
    each is 'out of GPU memory' or 'crashes' (no records), 'right' or 'wrong' (records)."""
    results = {"right": VALUES, "wrong": VALUES + 1}
    behaviours = {}
    for name, values in results.items():
        (tmp_path / f"{name}.rec").write_bytes(record_bytes(values, "device"))
        behaviours[name] = f'cat {tmp_path}/{name}.rec >&{RECORD_DESCRIPTOR}; exit {int(name == "wrong")}'
    behaviours["out of GPU memory"] = "echo 'cudaMalloc(&data_, bytes()) failed: cudaErrorMemoryAllocation (out of memory)'; exit 1"
    behaviours["crashes"] = "kill -SEGV $$"
    behaviours["exits"] = "echo 'Broken Assumption: number of blocks 1366 exceeds maximal block size: 1024. Exiting!'; exit 1"
    program = executable(tmp_path / "job" / "build", run.assignment.id, "saxpy")
    program.parent.mkdir(parents=True)
    program.write_text(
        "#!/bin/bash\n"
        f"echo run >> {tmp_path}/runs\n"
        f'if [ "$(wc -l < {tmp_path}/runs)" -eq 1 ]; then {behaviours[first_run]}; fi\n'
        f"{behaviours[later_runs]}\n"
    )
    program.chmod(program.stat().st_mode | stat.S_IXUSR)
    return tmp_path / "runs"


def graded(tmp_path: Path, first_run: str, later_runs: str):
    run = grading_run(tmp_path)
    runs = stand_in_program(tmp_path, run, first_run, later_runs)
    job = tmp_path / "job"
    program = executable(job / "build", run.assignment.id, "saxpy")
    first = judge_group(run, run_group(run, job, program, "saxpy", "public"))
    confirmed = confirm_alone(run, job, {"saxpy": program}, {("saxpy", "public"): first})
    return first, confirmed, len(runs.read_text().splitlines())


def test_a_run_out_of_gpu_memory_is_run_again_alone_and_that_run_decides(tmp_path):
    first, confirmed, runs = graded(tmp_path, "out of GPU memory", "right")
    assert first.verdict == Verdict.FAILED and not first.conclusive
    assert runs == 2
    again = confirmed[("saxpy", "public")]
    assert again.verdict == Verdict.PASSED
    # The stand-in's run is the CPU backend's: alone, it shares the machine's cores with no other run.
    assert "run again with no other test run beside it: the first run, beside other runs, ran out of GPU memory" in again.detail
    logs = tmp_path / "job" / "logs"
    assert "cudaErrorMemoryAllocation" in (logs / "saxpy.public.beside-others.log").read_text(), "the first run's log is kept"
    assert "cudaErrorMemoryAllocation" not in (logs / "saxpy.public.log").read_text()


def test_a_run_out_of_gpu_memory_alone_too_fails(tmp_path):
    _, confirmed, runs = graded(tmp_path, "out of GPU memory", "out of GPU memory")
    assert runs == 2
    assert confirmed[("saxpy", "public")].verdict == Verdict.FAILED


def test_a_crash_is_the_runs_own_and_final_without_a_second_run(tmp_path):
    first, confirmed, runs = graded(tmp_path, "crashes", "right")
    assert first.verdict.startswith("crashed") and first.conclusive
    assert (confirmed, runs) == ({}, 1)


def test_a_run_that_exits_before_its_end_shows_its_last_output(tmp_path):
    first, confirmed, runs = graded(tmp_path, "exits", "right")
    assert first.verdict == Verdict.FAILED and first.conclusive
    assert "no result" in first.detail
    assert "last output:\n  Broken Assumption: number of blocks 1366 exceeds maximal block size: 1024. Exiting!" in first.detail
    assert (confirmed, runs) == ({}, 1)


def test_a_wrong_result_is_final_without_a_second_run(tmp_path):
    first, confirmed, runs = graded(tmp_path, "wrong", "right")
    assert first.verdict == Verdict.FAILED and first.conclusive
    assert "first mismatch at index 0" in first.detail
    assert (confirmed, runs) == ({}, 1)


def test_a_passed_group_is_not_run_again(tmp_path):
    first, confirmed, runs = graded(tmp_path, "right", "wrong")
    assert first.verdict == Verdict.PASSED
    assert (confirmed, runs) == ({}, 1)


def test_runs_beyond_the_slots_wait_to_start_and_their_time_limit_with_them(tmp_path, monkeypatch):
    monkeypatch.setattr(GradingRun, "timeout_s", property(lambda run: 1.5))
    run = grading_run(tmp_path)
    run.run_slots = threading.BoundedSemaphore(1)
    program = executable(tmp_path / "job" / "build", run.assignment.id, "saxpy")
    program.parent.mkdir(parents=True)
    program.write_text(f"#!/bin/sh\necho start >> {tmp_path}/runs\nsleep 1\necho end >> {tmp_path}/runs\n")
    program.chmod(program.stat().st_mode | stat.S_IXUSR)
    with ThreadPoolExecutor(3) as pool:
        ran = list(pool.map(lambda group: run_group(run, tmp_path / "job", program, "saxpy", group), ["public", "hidden", "public"]))
    assert (tmp_path / "runs").read_text().split() == ["start", "end"] * 3
    assert not any(one.outcome.timed_out for one in ran)


class DeviceWithRoom:
    """The grader's watch of the device: never nearly full during any run."""

    def nearly_full(self, start: float, end: float) -> bool:
        return False


def test_a_run_that_only_says_out_of_gpu_memory_is_final_where_the_grader_saw_room(tmp_path, monkeypatch):
    # Its words are the student's to print: the grader's own watch of the device decides.
    monkeypatch.setattr(gpu_memory, "machine_use", lambda: DeviceWithRoom())
    first, confirmed, runs = graded(tmp_path, "out of GPU memory", "right")
    assert first.verdict == Verdict.FAILED and first.conclusive
    assert (confirmed, runs) == ({}, 1)


def test_a_group_confirmed_alone_measures_its_task_properties_in_that_run(tmp_path):
    # Seen on the H100, a batch of 8: the copy group of two right submissions ran out of time beside
    # the others, passed alone, and the task still lost its points to "sectors not measured": the
    # properties were read before the confirming run. The run alone writes the records the
    # grader reads (the pipeline reads the properties again after confirming).
    run = grading_run(tmp_path)
    stand_in_program(tmp_path, run, "out of GPU memory", "right")
    measured = record_bytes(np.array([4], dtype=np.int64), "property", check="copyFromGlb2ShrMem: sectors", fmt="int64")
    (tmp_path / "right.rec").write_bytes((tmp_path / "right.rec").read_bytes() + measured)
    sectors = Requirement("sectors", "copyFromGlb2ShrMem", at_most=4)
    job = tmp_path / "job"
    program = executable(job / "build", run.assignment.id, "saxpy")
    ran = run_group(run, job, program, "saxpy", "public")
    (tmp_path / "other.rec").write_bytes(record_bytes(VALUES, "device"))
    assert properties.unmet_requirements((sectors,), [ran.records, tmp_path / "other.rec"]) == (
        "copyFromGlb2ShrMem: sectors not measured (the run stopped before it?), required at most 4",)
    confirm_alone(run, job, {"saxpy": program}, {("saxpy", "public"): judge_group(run, ran)})
    assert properties.unmet_requirements((sectors,), [ran.records]) == ()


def test_correctness_runs_yield_the_cores_to_speed_runs_and_builds_to_both(tmp_path):
    # A speed stage holds the GPU alone for every grade of a batch; on a busy host its programs
    # took twice their time beside test programs of the same priority.
    run = grading_run(tmp_path)
    program = executable(tmp_path / "job" / "build", run.assignment.id, "saxpy")
    program.parent.mkdir(parents=True)
    program.write_text("#!/bin/sh\necho niceness $(nice)\n")
    program.chmod(0o755)
    tool = tmp_path / "compute-sanitizer"
    tool.write_text('#!/bin/sh\necho "========= niceness $(nice)" > "$4"\necho "========= ERROR SUMMARY: 0 errors" >> "$4"\n')
    tool.chmod(0o755)

    def niceness(output: str) -> int:
        return int(re.search(r"niceness (\d+)", output)[1])

    test_run = niceness(run_group(run, tmp_path / "job", program, "saxpy", "public").outcome.output)
    report = compute_sanitizer.sanitize(str(tool), "memcheck", program, "saxpy", tmp_path / "memcheck.log", 10, None, (1025,), (32,))
    sanitizer_run = niceness((tmp_path / "memcheck.log").read_text())
    speed_run = niceness(runner.run_program([str(program)], tmp_path, 10, step=run_step(program, [], gpu=True)).output)
    build = niceness(runner.run_program([str(program)], tmp_path, 10, step=build_step([program.parent], tmp_path)).output)
    assert report.errors == 0
    assert speed_run < test_run == sanitizer_run < build
