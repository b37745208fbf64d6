"""Run each test executable on each group's inputs in a fresh process, judge its records against
the reference's, and run again alone the groups that may have failed through their neighbours.

A run that the grading deadline gave less than its full time limit and that ran out of time (or
that the deadline left no time to start) says nothing of the code: the grade is then "not
graded" (`out_of_time`), never a zero. Only a run that used its whole limit has timed out."""

import re
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, replace
from pathlib import Path

from kernellab import applicability, runner
from kernellab.applicability import Condition
from kernellab.deadline import StageCost, duration
from kernellab.grading import reference
from kernellab.grading.building import Built
from kernellab.grading.model import GradingError, GroupResult, TestCaseResult
from kernellab.grading.resources import PARALLEL_RUNS
from kernellab.grading.run import GradingRun
from kernellab.grading.targets import Programs
from kernellab.judge import by_test_case, judge
from kernellab.records import end_record, read_records
from kernellab.sandbox.step import CORRECTNESS_NICENESS, Step, fresh_output, run_step
from kernellab.verdict import LOCKSTEP_RIGHT, LOCKSTEP_WRONG, NO_GPU_EXIT_CODE, NOT_RUN, Verdict, decide

OUTPUT_TAIL_LINES = 6
# Catch2's words for an exception that ended a test case: a CUDA error, or a finding of the CPU
# backend (a race, barrier divergence...) thrown from the launch that made it. With captured
# values ("messages"), those come first, one `name := value` per line, then the exception's text.
_UNEXPECTED_EXCEPTION = re.compile(r"due to unexpected exception with messages?:$")
_CAPTURED_VALUE = re.compile(r"^\w+ := ")

# (tests, group): one test executable on one group's inputs.
GroupKey = tuple[str, str]


@dataclass(frozen=True)
class GroupRun:
    """One run of a test executable on one group's inputs: what the student's process left."""

    tests: str
    group: str
    records: Path
    outcome: runner.RunOutcome
    step: Step
    # The conditions of the submission's code whose cases are not applicable (applicability.py).
    not_applicable: tuple[Condition, ...] = ()
    # The run's time limit: the manifest's, or less where the grading deadline cut it; 0 when the
    # deadline had passed before the run could start (it did not run).
    limit_s: float = 0.0


def run_groups(grading: GradingRun, job: Path, programs: Programs, not_applicable: tuple[Condition, ...] = ()) -> list[GroupRun]:
    """Every group of every test executable in `programs` (by its `tests` name: the build's), several
    at once on the shared GPU; `not_applicable`: what the submission's code does not promise
    (applicability.py)."""
    runnable = [(tests, group) for group in grading.active_groups() for tests in programs]
    with ThreadPoolExecutor(PARALLEL_RUNS) as pool:
        return list(pool.map(lambda key: run_group(grading, job, programs[key[0]], *key, not_applicable), runnable))


def run_group(grading: GradingRun, job: Path, program: Path, tests: str, group: str,
              not_applicable: tuple[Condition, ...] = ()) -> GroupRun:
    """Run `program`, the test executable `tests`, on one group's inputs in a fresh process; its
    records are judged later."""
    records = job / "records" / f"{tests}.{group}.rec"
    fresh_output(records)
    # The run never sees its records file: the harness writes them to the grader's socket
    # (runner.RECORD_DESCRIPTOR), and the grader writes the file.
    step = run_step(program, [], gpu=grading.backend.on_gpu, memory_bytes=grading.run_memory_bytes, niceness=CORRECTNESS_NICENESS)
    with grading.run_slot():
        if grading.deadline.over():
            # No verdict can come of it (out_of_time): the tests stage waits for no run of it.
            limit_s, outcome = 0.0, runner.RunOutcome(None, True, 0.0, "not started: the grading deadline had passed")
        else:
            limit_s = grading.run_timeout_s
            outcome = runner.run_program(
                grading.group_command(program, tests, group),
                cwd=records.parent,
                timeout_s=limit_s,
                environment=grading.group_environment(group),
                sandbox=grading.sandbox,
                step=step,
                records_to=records,
            )
    log = run_log(job, tests, group)
    log.parent.mkdir(exist_ok=True)
    log.write_text(outcome.output, encoding="utf-8")
    return GroupRun(tests, group, records, outcome, step, not_applicable, limit_s)


def warned_lockstep(ran: GroupRun) -> str:
    """The CPU backend's first warning of warp-synchronous code in `ran`, from its end record ("" without)."""
    ending = end_record(read_records(ran.records))
    return ending.lockstep_warning if ending else ""


def run_log(job: Path, tests: str, group: str) -> Path:
    """Where the output of one group's run is kept."""
    return job / "logs" / f"{tests}.{group}.log"


def judge_groups(grading: GradingRun, built: Built, runs: list[GroupRun]) -> dict[GroupKey, GroupResult]:
    """The verdict on every group: 'build failed' for the test executables that did not build.
    GradingError (the grade is "not graded") when the deadline left a run without its verdict."""
    if why := out_of_time(grading, runs):
        raise GradingError(why)
    results = {(tests, group): GroupResult(group, Verdict.BUILD_FAILED, errors)
               for tests, errors in built.items() if errors is not None for group in grading.active_groups()}
    return results | {(ran.tests, ran.group): judge_group(grading, ran) for ran in runs}


def judge_group(grading: GradingRun, ran: GroupRun, failures_left_to_gpu: bool = True) -> GroupResult:
    """The verdict on one group's run: its records against the reference's, then how the run ended.
    `failures_left_to_gpu`: whether failed cases beside the CPU backend's warning of warp-synchronous
    code are left to a GPU (verdict.RunEnd), as in a grade, where that gives no points either."""
    group, outcome = ran.group, ran.outcome
    expected = read_records(reference.expected_records(grading, ran.tests, group))
    if not expected.records:
        return GroupResult(group, Verdict.NO_GPU, "no CUDA device: the reference could not run either", seconds=outcome.seconds)
    produced = read_records(ran.records)
    # The cases beyond what the submission's code promises: the tests skip them, the judge too,
    # unless the tests, deciding the same question from the student's own code, ran them (the
    # probe was told apart).
    conditions = applicability.believed(ran.not_applicable, ran.tests, produced.records)
    applicable, not_applicable = applicability.without_not_applicable(expected.records, ran.tests, conditions)
    # And the run's own records of them: a task's isolated build may hold the reference's helpers
    # (the reference's chunk choice beside the course's host wrappers), so its tests can run a
    # case that the submission's own code does not promise; what that case did is no result.
    own, _ = applicability.without_not_applicable(produced.records, ran.tests, conditions)
    checks = judge(applicable, own)
    cases = tuple(by_test_case(checks))
    failed = [case for case in cases if not case.passed]
    # How the run ended, as the harness's main wrote it in the end record once the tests had run
    # (none where the run did not reach it): on the CPU backend, its warning of warp-synchronous
    # code, and whether its failed cases beside the warning leave the verdict to a GPU. A grade's
    # run checks nothing itself (the judge has the expected values) and exits 0: its warning
    # beside records the judge finds wrong says the same, and no more than the end record could.
    ending = end_record(produced)
    warning = ending.lockstep_warning if ending else ""
    judged_failed = bool(failed or produced.problem)
    needs_gpu = grading.backend.warns_warp_synchronous and ending is not None and (
        ending.needs_gpu or (judged_failed and bool(warning) and outcome.exit_code == 0))
    end = outcome.end(judged_failed, bool(produced.records), needs_gpu, failures_left_to_gpu)
    reached_end = ending is not None
    if not_applicable and end.exit_code in (1, NO_GPU_EXIT_CODE) and reached_end and not end.failed:
        # A case the submission's code does not promise may fail in the run (the course's host
        # wrappers cannot launch it); its records are left out, and a run that reached its end
        # says no more by its exit status than by its records.
        end = replace(end, exit_code=0, needs_gpu=False)
    verdict = decide(end)
    if verdict == Verdict.PASSED:
        detail = f"warning: {warning}" if warning else ""
    elif verdict == Verdict.NO_GPU:
        detail = "no CUDA device"
    elif verdict == Verdict.NEEDS_GPU and not end.failed:
        detail = LOCKSTEP_RIGHT
    elif verdict == Verdict.NEEDS_GPU:
        detail = "\n".join((LOCKSTEP_WRONG, _failure_detail(ran, failed, produced.problem, len(checks), reached_end)))
    else:
        detail = _failure_detail(ran, failed, produced.problem, len(checks), reached_end)
    detail = "\n".join(filter(None, (detail, *not_applicable)))
    # What other runs on the GPU can do to this one: take the memory it needs, or slow it past
    # its time limit. A crash, a wrong result or a sandbox limit (the step's own) is the run's.
    return GroupResult(group, verdict, detail, cases, outcome.seconds, conclusive=not outcome.may_owe_to_neighbours())


def confirm_alone(grading: GradingRun, job: Path, programs: Programs, results: dict[GroupKey, GroupResult],
                  not_applicable: tuple[Condition, ...] = ()) -> dict[GroupKey, GroupResult]:
    """The groups that failed out of time or out of GPU memory, each run again alone (no other
    test program beside it, the GPU its own): their verdicts come from that run. Runs that share
    the machine (this submission's other groups, other submissions' runs in a batch) can take the
    GPU's memory or slow a run past its time limit; a student must not lose points to that, so
    only such a failure seen alone counts."""
    confirmed = {}
    for key, result in results.items():
        if not needs_confirming(result):
            continue
        # The first run's log stays beside the one the verdict comes from, for whoever wonders why.
        first_log = run_log(job, *key)
        if first_log.exists():
            first_log.replace(first_log.with_suffix(".beside-others.log"))
        with grading.gpu_alone():
            ran = run_group(grading, job, programs[key[0]], *key, not_applicable)
        if out_of_time(grading, [ran]):
            # As when the deadline skips this stage: the first verdict stands, and says so.
            note = f"its run {alone(grading)} ran out of the grading deadline: this verdict is the first run's, beside other runs"
            confirmed[key] = replace(result, detail="\n".join(filter(None, (result.detail, note))))
            continue
        again = judge_group(grading, ran)
        reason = "out of time" if result.verdict == Verdict.TIMED_OUT else "out of GPU memory"
        note = f"run again {alone(grading)}: the first run, beside other runs, ran {reason}"
        confirmed[key] = replace(again, detail="\n".join(filter(None, (again.detail, note))))
    return confirmed


def alone(grading: GradingRun) -> str:
    """How confirm_alone runs a group: the GPU's memory and time its own, or on the CPU backend the
    machine's cores (no other test run beside it)."""
    return "with the GPU to itself" if grading.backend.on_gpu else "with no other test run beside it"


def out_of_time(grading: GradingRun, runs: list[GroupRun]) -> str:
    """Why `runs` give no verdict, or "" when each had the time for one. A run whose time limit the
    deadline cut and that ran out of it may have needed no more than its full limit, and a run
    the deadline left no time to start did not run: neither says anything of the code, and
    grading them as timed out would be a zero for the grader's lack of time. A run that used its
    full limit (the manifest's) and ran out has timed out: that is the code's."""
    late = [ran for ran in runs if ran.outcome.timed_out and not ran.outcome.limit_hit and ran.limit_s < grading.timeout_s]
    if not late:
        return ""
    deadline = f"the grading deadline ({grading.deadline.seconds:g} s)"
    again = ("no verdict came of them, and nothing here is the submission's doing; grade it again with a longer "
             "deadline (--deadline, or the platform's time limit) or on a faster machine")
    unstarted = [ran for ran in late if not ran.limit_s]
    if len(unstarted) == len(runs):
        return f"{deadline} ran out before the tests could run: the stages before them (intake, isolation, the build) took all of it; {again}"
    cut = [ran for ran in late if ran.limit_s]
    parts = [f"{len(cut)} had their time limit of {duration(grading.timeout_s)} cut by it and ran out of time ("
             + ", ".join(f"{ran.tests} ({ran.group}) after {duration(ran.limit_s)}" for ran in cut) + ")"] if cut else []
    parts += [f"{len(unstarted)} could not start"] if unstarted else []
    return f"{deadline} ran out in the tests stage: of {len(runs)} test runs, {' and '.join(parts)}; {again}"


def needs_confirming(result: GroupResult) -> bool:
    """Whether a group failed in a way its neighbours may have caused (confirm_alone runs it again)."""
    return result.verdict not in (Verdict.PASSED, *NOT_RUN, Verdict.BUILD_FAILED) and not result.conclusive


def confirming_cost(grading: GradingRun, results: dict[GroupKey, GroupResult]) -> StageCost | None:
    """What confirm_alone would take (a timed-out group may take its whole limit again) and give;
    None when no group needs it."""
    keys = [key for key, result in results.items() if needs_confirming(result)]
    if not keys:
        return None
    estimate = sum(grading.timeout_s if results[key].verdict == Verdict.TIMED_OUT else max(1.0, results[key].seconds)
                   for key in keys)
    groups = ", ".join(f"{tests} ({group})" for tests, group in keys)
    memory = " or of GPU memory" if grading.backend.on_gpu else ""
    return StageCost("confirming failures alone", estimate,
                     f"a run of {groups} {alone(grading)}, whose verdict would have replaced a failure "
                     f"that the runs beside it may have caused (out of time{memory})",
                     tuple(task.id for task in grading.assignment.tested_tasks if any(task.tests == tests for tests, _ in keys)))


def _failure_detail(ran: GroupRun, failed: list[TestCaseResult], problem: str, checks: int, reached_end: bool) -> str:
    outcome = ran.outcome
    lines = []
    if outcome.limit_hit:
        lines.append(f"stopped by the sandbox's {runner.limit_words(outcome.limit_hit, ran.step)}")
    elif outcome.timed_out:
        # Only a run with its full limit gets here (out_of_time).
        lines.append(f"no result after {ran.limit_s:g} s, its full time limit (a kernel that never finishes?)")
    if failed:
        first = failed[0]
        lines += [first.name, first.first_failure]
        if len(failed) > 1:
            lines.append(f"{len(failed) - 1} more test case(s) failed")
    if problem:
        lines.append(f"its records end early: {problem}")
    if reported := first_reported_error(outcome.output):
        lines.append(f"the run reported: {reported}")
    if not failed and outcome.exit_code not in (0, None) and not outcome.signal_name:
        lines.append(f"the test executable exited with status {outcome.exit_code} after its {checks} checks")
    # A run that ended before the harness's last record (a crash, the time limit, an exit() in the
    # submission's code) says why in its last lines: "Broken Assumption: ... Exiting!".
    tail = [line for line in outcome.output.splitlines() if line.strip()][-OUTPUT_TAIL_LINES:]
    if tail and (not reached_end or not failed):
        lines += ["last output:", *(f"  {line}" for line in tail)]
    return "\n".join(lines)


def first_reported_error(output: str) -> str:
    """The message of the first exception that ended a test case, as the run printed it (it
    explains a missing result; it is feedback, never a verdict)."""
    return next(reported_errors(output), "")


def reported_errors(output: str) -> Iterator[str]:
    """The messages of the exceptions that ended test cases, in the order the run printed them."""
    lines = output.splitlines()
    for index, line in enumerate(lines):
        if _UNEXPECTED_EXCEPTION.search(line):
            message = []
            for following in lines[index + 1 :]:
                if not following.strip() or following.startswith(("---", "===", "...")):
                    break
                if not _CAPTURED_VALUE.match(following.strip()):
                    message.append(following.strip())
            yield " ".join(message)
