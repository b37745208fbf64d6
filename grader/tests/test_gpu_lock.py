"""The GPU lock of a batch: correctness runs share the GPU, a speed measurement or a run confirmed
alone has it alone, and an exclusive holder that waits is not starved by later shared ones. Runs
hold it run by run, so that a measurement waits for the runs in flight, not for whole stages. And a
batch's grade slots: a grade waiting for the GPU alone leaves its share of the cores to another."""

import fcntl
import threading
import time
from pathlib import Path

from kernellab.grading.groups import run_group, run_groups
from kernellab.grading.resources import GpuLock, GradeSlots, OrderedSlots
from kernellab.grading.run import GradingRun
from kernellab.grading.targets import executable
from kernellab.manifest import load_assignment
from kernellab.scaffold import TEMPLATE_ID, TEMPLATE_ROOT


def holders_in_order(lock: GpuLock, asking: list[tuple[str, str]]) -> list[str]:
    """The order in which `asking` (name, "shared" or "exclusive"), each asking 0.3 s after the one
    before while a run in flight holds the GPU shared, held the lock once that run ended."""
    done: list[str] = []
    run_holds, run_may_end = threading.Event(), threading.Event()

    def run_in_flight() -> None:
        with lock.shared():
            run_holds.set()
            run_may_end.wait(10)

    def hold(name: str, kind: str) -> None:
        with getattr(lock, kind)():
            done.append(name)
            time.sleep(0.05)

    threads = [threading.Thread(target=run_in_flight)]
    threads[0].start()
    run_holds.wait(10)
    for name, kind in asking:
        threads.append(threading.Thread(target=hold, args=(name, kind)))
        threads[-1].start()
        time.sleep(0.3)
    assert done == [], "a holder got in while the run in flight held the GPU shared and a measurement waited"
    run_may_end.set()
    for thread in threads:
        thread.join(10)
    return done


def test_a_waiting_exclusive_holder_goes_before_shared_holders_that_came_after_it(tmp_path):
    assert holders_in_order(GpuLock(tmp_path / "gpu.lock"), [("measurement", "exclusive"), ("later run", "shared")]) == [
        "measurement", "later run"]


def test_grades_waiting_for_the_gpu_alone_have_it_in_turn_in_one_drain(tmp_path):
    # Each wait for the GPU alone drains it of the runs in flight: a shared run let in between two
    # measurements queued together would cost the second a drain of its own.
    asking = [("first measurement", "exclusive"), ("later run", "shared"),
              ("second measurement", "exclusive"), ("third measurement", "exclusive")]
    assert holders_in_order(GpuLock(tmp_path / "gpu.lock"), asking) == [
        "first measurement", "second measurement", "third measurement", "later run"]


def test_the_gpu_is_free_to_share_while_another_holder_passes_the_turnstile_and_not_while_one_has_it_alone(tmp_path):
    lock = GpuLock(tmp_path / "gpu.lock")
    turnstile = tmp_path / "gpu.lock.turnstile"
    with open(turnstile, "a") as passing:
        fcntl.flock(passing, fcntl.LOCK_EX)  # a shared holder passing through, for a moment
        passed = threading.Timer(0.02, fcntl.flock, (passing, fcntl.LOCK_UN))
        passed.start()
        with lock.shared_if_free() as free:
            passed.join()
            assert free, "a holder passing the turnstile made the GPU look taken"
    with lock.exclusive():
        with GpuLock(tmp_path / "gpu.lock").shared_if_free() as free:  # another grader process's
            assert not free


def test_shared_holders_hold_the_gpu_together(tmp_path):
    lock = GpuLock(tmp_path / "gpu.lock")
    second_holds = threading.Event()

    def second_shared() -> None:
        with lock.shared():
            second_holds.set()

    with lock.shared():
        threading.Thread(target=second_shared).start()
        assert second_holds.wait(5)


def test_a_batch_grade_waiting_for_the_gpu_alone_leaves_its_slot_to_another_grade():
    slots = GradeSlots(1)
    order: list[str] = []
    speed_may_end, second_started = threading.Event(), threading.Event()

    def waits_for_the_gpu() -> None:
        with slots.held():
            order.append("first builds")
            with slots.left():
                order.append("first waits for the GPU")
                speed_may_end.wait(10)
            order.append("first back on the cores")

    def second() -> None:
        with slots.held():
            order.append("second builds")
            second_started.set()

    first = threading.Thread(target=waits_for_the_gpu)
    first.start()
    while "first waits for the GPU" not in order:
        time.sleep(0.01)
    other = threading.Thread(target=second)
    other.start()
    assert second_started.wait(10), "the slot the first grade left stayed taken"
    speed_may_end.set()
    for thread in (first, other):
        thread.join(10)
    assert order == ["first builds", "first waits for the GPU", "second builds", "first back on the cores"]


def test_a_grade_back_from_the_gpu_goes_before_grades_that_started_later():
    slots = GradeSlots(1)
    order: list[str] = []
    on_the_gpu, may_come_back, holder_may_end, later_may_end = (threading.Event() for _ in range(4))

    def hold(name: str, until: threading.Event) -> None:
        with slots.held():
            order.append(name)
            until.wait(10)

    def comes_back() -> None:
        with slots.held():
            with slots.left():
                on_the_gpu.set()
                may_come_back.wait(10)
            order.append("back from the GPU")

    returning = threading.Thread(target=comes_back)
    returning.start()
    on_the_gpu.wait(10)
    holder = threading.Thread(target=hold, args=("holder", holder_may_end))
    holder.start()
    while order != ["holder"]:
        time.sleep(0.01)
    later = threading.Thread(target=hold, args=("started later", later_may_end))
    later.start()
    time.sleep(0.2)  # the later grade waits for the slot before the returning one asks again
    may_come_back.set()
    time.sleep(0.2)
    holder_may_end.set()
    later_may_end.set()
    for thread in (returning, holder, later):
        thread.join(10)
    assert order == ["holder", "back from the GPU", "started later"]


def test_at_most_as_many_grades_as_slots_hold_the_cores_and_a_grade_alone_never_waits():
    slots, unlimited = GradeSlots(2), GradeSlots()
    inside, most = 0, 0
    guard = threading.Lock()

    def grade() -> None:
        nonlocal inside, most
        with slots.held(), unlimited.held():
            with guard:
                inside += 1
                most = max(most, inside)
            time.sleep(0.05)
            with guard:
                inside -= 1

    threads = [threading.Thread(target=grade) for _ in range(6)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(10)
    assert most == 2
    with unlimited.left():  # no slot in this thread: nothing to leave
        pass


def test_the_gpu_alone_of_a_grading_run_leaves_the_grades_slot_while_it_waits_and_holds(tmp_path):
    run = GradingRun(load_assignment(TEMPLATE_ROOT, TEMPLATE_ID), "cpu", tmp_path / "work", sandbox=None, seed=1)
    run.gpu_lock, run.grade_slots = GpuLock(tmp_path / "gpu.lock"), GradeSlots(1)
    on_the_gpu, other_got_a_slot = threading.Event(), threading.Event()
    while_on_the_gpu: list[bool] = []

    def measures_speed() -> None:
        with run.grade_slots.held(), run.gpu_alone():
            on_the_gpu.set()
            while_on_the_gpu.append(other_got_a_slot.wait(5))

    def builds() -> None:
        on_the_gpu.wait(10)
        with run.grade_slots.held():
            other_got_a_slot.set()

    threads = [threading.Thread(target=measures_speed), threading.Thread(target=builds)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(10)
    assert while_on_the_gpu == [True]


def test_a_batch_grade_waiting_for_a_build_turn_leaves_its_slot_to_a_grade_back_from_the_gpu(tmp_path):
    # In a batch of sixteen on an H200, up to twelve grades held their slots while they waited for
    # one of two build turns, and grades back from the GPU waited up to 110 s for a slot.
    run = GradingRun(load_assignment(TEMPLATE_ROOT, TEMPLATE_ID), "cpu", tmp_path / "work", sandbox=None, seed=1)
    run.gpu_lock, run.grade_slots, run.build_turns = GpuLock(tmp_path / "gpu.lock"), GradeSlots(1), OrderedSlots(1)
    builder_ticket, waiter_ticket = run.build_turns.ticket(), run.build_turns.ticket()
    building, may_end, back_on_the_cores = threading.Event(), threading.Event(), threading.Event()

    def builds() -> None:
        with run.build_turn(builder_ticket):
            building.set()
            may_end.wait(10)

    def waits_for_a_turn() -> None:
        building.wait(10)
        with run.grade_slots.held(), run.build_turn(waiter_ticket):
            pass

    def back_from_the_gpu() -> None:
        with run.grade_slots.held():
            back_on_the_cores.set()

    threads = [threading.Thread(target=builds), threading.Thread(target=waits_for_a_turn)]
    for thread in threads:
        thread.start()
    building.wait(10)
    time.sleep(0.2)  # the second grade holds the one slot and waits for the turn
    threads.append(threading.Thread(target=back_from_the_gpu))
    threads[-1].start()
    assert back_on_the_cores.wait(5), "a grade waiting for a build turn kept the only slot"
    may_end.set()
    for thread in threads:
        thread.join(10)


def logging_program(tmp_path: Path, run: GradingRun, name: str) -> Path:
    """A test executable standing in: it logs its start and end around a sleep of 0.4 s."""
    program = executable(tmp_path / "job" / "build", run.assignment.id, name)
    program.parent.mkdir(parents=True, exist_ok=True)
    program.write_text(f"#!/bin/sh\necho start >> {tmp_path}/log\nsleep 0.4\necho end >> {tmp_path}/log\n")
    program.chmod(0o755)
    return program


def test_a_measurement_waits_for_the_runs_in_flight_not_for_the_rest_of_a_tests_stage(tmp_path):
    # Held for a whole stage, each wait for the GPU alone outlasted the tests and sanitizers of
    # every grade in flight, up to a minute each in a batch of sixteen, with no new run let in.
    run = GradingRun(load_assignment(TEMPLATE_ROOT, TEMPLATE_ID), "cpu", tmp_path / "work", sandbox=None, seed=1)
    run.gpu_lock, run.run_slots = GpuLock(tmp_path / "gpu.lock"), threading.BoundedSemaphore(1)
    programs = {name: logging_program(tmp_path, run, name) for name in ("first", "second")}
    stage = threading.Thread(target=run_groups, args=(run, tmp_path / "job", programs))
    stage.start()
    while not (tmp_path / "log").exists():
        time.sleep(0.01)
    with run.gpu_alone():
        with open(tmp_path / "log", "a") as log:
            log.write("measured\n")
    stage.join(10)
    # Four runs, one slot: the measurement came after the one run in flight, before the other three.
    assert (tmp_path / "log").read_text().split() == ["start", "end", "measured"] + ["start", "end"] * 3


def test_a_run_confirmed_alone_needs_no_slot_from_the_runs_that_wait_for_it(tmp_path):
    run = GradingRun(load_assignment(TEMPLATE_ROOT, TEMPLATE_ID), "cpu", tmp_path / "work", sandbox=None, seed=1)
    run.gpu_lock, run.run_slots = GpuLock(tmp_path / "gpu.lock"), threading.BoundedSemaphore(1)
    program = logging_program(tmp_path, run, "saxpy")
    confirmed = threading.Event()

    def confirms_alone() -> None:
        with run.gpu_alone():
            waiting.start()
            time.sleep(0.3)  # the other run has taken the one slot and waits for the GPU
            run_group(run, tmp_path / "job", program, "saxpy", "public")
            confirmed.set()

    waiting = threading.Thread(target=run_group, args=(run, tmp_path / "job", program, "saxpy", "hidden"))
    alone = threading.Thread(target=confirms_alone)
    alone.start()
    assert confirmed.wait(10), "the run alone waited for a slot that a run waiting for the GPU held"
    for thread in (alone, waiting):
        thread.join(10)
    assert (tmp_path / "log").read_text().split() == ["start", "end"] * 2
