"""`kernellab calibrate`: time the reference's speed program on this GPU and record the
reference's speed, relative to the copy kernel's, in the assignment's calibration file
(kernellab/grading/speed/calibration.py), which the handout ships for `kernellab test`'s
preview of speed points. An instructor's act, in the repository: the handout has no reference."""

import subprocess
from datetime import datetime, timezone
from pathlib import Path

from kernellab import cmake, environment
from kernellab.errors import InputError, display_path
from kernellab.grading.speed import calibration, timing
from kernellab.manifest import load_assignment
from kernellab.public_tests import build_speed_program, built_for_cpu
from kernellab.table import format_columns

# What the commit is recorded as where git cannot say.
UNKNOWN_COMMIT = "unknown"


def calibrate(root: Path, assignment_id: str, build_dir: Path | None, cmake_args: list[str]) -> Path:
    """Build the reference's speed program, time every [[speed]] case and size with the copy
    kernel on this GPU, and write this GPU model's entry of the calibration file (the other
    models' entries kept); its path. An InputError without a GPU, on the CPU backend or where the
    file is malformed; a timing.SpeedError where the speed program does not build or run."""
    assignment = load_assignment(root, assignment_id)
    if not assignment.speed:
        raise InputError(f"{assignment.id} has no [[speed]] cases: there is no speed to calibrate")
    gpu = environment.first_gpu()
    if gpu is None:
        raise InputError("kernellab calibrate times the reference on a GPU, and nvidia-smi finds none here")
    path = calibration.calibration_path(assignment)
    # Read before building: a malformed file stops the verb before its minutes of work, not after.
    calibrations = calibration.read_calibrations(path) if path.exists() else {}
    build_dir = (build_dir or root / "build" / f"calibrate-{assignment.id}").resolve()
    print(f"{assignment.id}: timing the reference on {gpu['name']} in {display_path(build_dir)}", flush=True)
    cmake.configure(assignment.root, build_dir, assignment.id, assignment.reference_dir,
                    build_dir / "logs" / "configure.log", cmake_args)
    if built_for_cpu(build_dir):
        raise InputError("the CPU backend gives no speed: calibrate on a GPU, without -DKERNELLAB_BACKEND=cpu")
    program = build_speed_program(assignment.id, build_dir)
    times = timing.reference_and_copy_times(assignment.speed, program, build_dir / "speed")
    entry = calibration.Calibration(
        gpu["name"], datetime.now(timezone.utc).replace(microsecond=0), gpu["driver_version"],
        environment.cuda_version(), kernellab_commit(root),
        {key: reference_us / copy_us for key, (reference_us, copy_us) in times.items()},
    )
    path.write_text(calibration.format_calibrations({**calibrations, entry.gpu: entry}), encoding="utf-8")
    print("\n".join(format_columns(times_cells(times))))
    print(f"\nwrote the reference's speed on {entry.gpu} to {display_path(path)}; commit it: the handout ships it")
    return path


def times_cells(times: dict[tuple[str, int], tuple[float, float]]) -> list[tuple[str, ...]]:
    """The table of what was measured: per case and size the reference's time, the copy kernel's
    and the ratio recorded."""
    cells = [("case", "size", "reference (us)", "copy (us)", "reference / copy")]
    cells += [(case, str(size), f"{reference_us:.1f}", f"{copy_us:.1f}", f"{reference_us / copy_us:.3f}")
              for (case, size), (reference_us, copy_us) in times.items()]
    return cells


def kernellab_commit(root: Path) -> str:
    """The commit of the repository's checkout, "-dirty" where its tracked files differ from it:
    the reference and the speed program the ratios were measured with."""
    try:
        described = subprocess.run(
            ["git", "-C", str(root), "describe", "--always", "--dirty", "--abbrev=40", "--exclude=*"],
            capture_output=True, text=True, timeout=30,
        )
    except (OSError, subprocess.TimeoutExpired):
        return UNKNOWN_COMMIT
    return described.stdout.strip() if described.returncode == 0 else UNKNOWN_COMMIT
