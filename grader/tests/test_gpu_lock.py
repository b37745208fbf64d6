"""The GPU lock of a batch: correctness runs share the GPU, a speed measurement or a run confirmed
alone has it alone, and an exclusive holder that waits is not starved by later shared ones. And a
batch's grade slots: a grade waiting for the GPU alone leaves its share of the cores to another."""

import threading
import time

from kernellab.grading.resources import GpuLock, GradeSlots
from kernellab.grading.run import GradingRun
from kernellab.manifest import load_assignment
from kernellab.scaffold import TEMPLATE_ID, TEMPLATE_ROOT


def test_a_waiting_exclusive_holder_goes_before_shared_holders_that_came_after_it(tmp_path):
    lock = GpuLock(tmp_path / "gpu.lock")
    done: list[str] = []
    first_holds, first_may_end = threading.Event(), threading.Event()

    def first_shared() -> None:
        with lock.shared():
            first_holds.set()
            first_may_end.wait(10)
            done.append("first shared")

    def hold(kind: str) -> None:
        with getattr(lock, kind)():
            done.append(kind)

    threads = [threading.Thread(target=first_shared)]
    threads[0].start()
    first_holds.wait(10)
    for kind in ("exclusive", "shared"):
        threads.append(threading.Thread(target=hold, args=(kind,)))
        threads[-1].start()
        time.sleep(0.3)  # the exclusive holder is waiting before the later shared one asks
    assert done == [], "a shared holder got in while the first still held the lock and an exclusive one waited"
    first_may_end.set()
    for thread in threads:
        thread.join(10)
    assert done == ["first shared", "exclusive", "shared"]


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
