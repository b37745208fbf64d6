"""The GPU lock of a batch: correctness runs share the GPU, a speed measurement or a run confirmed
alone has it alone, and an exclusive holder that waits is not starved by later shared ones."""

import threading
import time

from kernellab.grading.resources import GpuLock


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
