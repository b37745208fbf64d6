"""Whether the device was nearly full during a run: the grader's own answer, from nvidia-smi's
(here a stand-in script's), decides if a run out of GPU memory may owe it to the runs beside it."""

import stat
import time
from pathlib import Path

from kernellab import gpu_memory
from kernellab.gpu_memory import DeviceMemoryUse

# An nvidia-smi of an 80 GiB device whose processes hold the MiB in its `used` file.
SMI = """#!/bin/sh
case "$1" in
  --query-gpu=memory.total) echo 81920 ;;
  *) echo "101, $(cat {used})"; echo "102, [N/A]" ;;
esac
"""


def device(tmp_path: Path, used_mib: int) -> tuple[DeviceMemoryUse, Path]:
    used = tmp_path / "used"
    used.write_text(str(used_mib))
    script = tmp_path / "nvidia-smi"
    script.write_text(SMI.replace("{used}", str(used)))
    script.chmod(script.stat().st_mode | stat.S_IXUSR)
    return DeviceMemoryUse(str(script)), used


def test_a_device_seen_nearly_full_during_the_run_may_have_starved_it(tmp_path):
    use, used = device(tmp_path, 78_000)
    start = time.monotonic()
    assert use.held_by([101]) == 78_000 * gpu_memory.MIB
    assert use.nearly_full(start, time.monotonic()) is True


def test_a_run_that_says_out_of_memory_on_a_roomy_device_owes_it_to_nobody(tmp_path):
    use, used = device(tmp_path, 2_000)
    start = time.monotonic()
    use.held_by([101])
    assert use.nearly_full(start, time.monotonic()) is False


def test_without_an_answer_during_the_run_nothing_is_known(tmp_path):
    use, used = device(tmp_path, 78_000)
    use.held_by([101])
    later = time.monotonic() + 1
    assert use.nearly_full(later, later + 1) is None
