"""What machine a grade was made on (GPU model, driver, CUDA, clocks), and which backend to use."""

import platform
import re
import shutil
import subprocess
from pathlib import Path

from kernellab.backend import Backend
from kernellab.errors import InputError

# What --backend accepts: a backend's name, or "auto" (the GPU when there is one).
BACKEND_CHOICES = ("auto", *Backend)
# The CPU backend's sources, relative to the repository root; it exists once they do.
CPU_BACKEND_DIR = Path("grader") / "cpu"


def _output(command: list[str]) -> str:
    if shutil.which(command[0]) is None:
        return ""
    try:
        completed = subprocess.run(command, capture_output=True, text=True, timeout=30)
    except (OSError, subprocess.TimeoutExpired):
        return ""
    return completed.stdout if completed.returncode == 0 else ""


def gpus() -> list[dict[str, str]]:
    """The machine's NVIDIA GPUs as nvidia-smi reports them; none without a driver."""
    fields = ("name", "driver_version", "compute_cap", "clocks.sm", "clocks.mem", "clocks.max.sm")
    text = _output(["nvidia-smi", f"--query-gpu={','.join(fields)}", "--format=csv,noheader"])
    return [dict(zip(fields, (cell.strip() for cell in line.split(",")))) for line in text.splitlines() if line.strip()]


def first_gpu() -> dict[str, str] | None:
    """The GPU whose facts a grade records, and that names this machine's model: nvidia-smi's
    first (CUDA's first device, unless CUDA_VISIBLE_DEVICES picks another); None without one."""
    found = gpus()
    return found[0] if found else None


def cuda_version() -> str:
    match = re.search(r"release (\S+),", _output(["nvcc", "--version"]))
    return match[1] if match else ""


def choose_backend(requested: str, root: Path) -> Backend:
    """'auto' is the GPU when there is one, else the CPU backend; an impossible choice is an error."""
    if requested not in BACKEND_CHOICES:
        raise InputError(f"--backend {requested}: expected one of {', '.join(BACKEND_CHOICES)}")
    has_cpu_backend = (root / CPU_BACKEND_DIR / "CMakeLists.txt").is_file()
    if requested == Backend.CPU and not has_cpu_backend:
        raise InputError(f"--backend cpu: this kernellab has no CPU backend ({CPU_BACKEND_DIR} is missing)")
    if requested != "auto":
        return Backend(requested)
    if gpus() or not has_cpu_backend:
        return Backend.CUDA
    return Backend.CPU


def describe(backend: Backend) -> dict[str, str]:
    """The facts a grade records about where it was made."""
    facts = {"backend": backend, "host": platform.node(), "cuda": cuda_version()}
    if not backend.on_gpu:
        facts["gpu"] = "none: kernels ran on the CPU backend (correctness only, no speed scores)"
        return facts
    gpu = first_gpu()
    if gpu is None:
        facts["gpu"] = "none found"
        return facts
    facts.update(
        gpu=gpu["name"],
        driver=gpu["driver_version"],
        compute_capability=gpu["compute_cap"],
        sm_clock=gpu["clocks.sm"],
        memory_clock=gpu["clocks.mem"],
        max_sm_clock=gpu["clocks.max.sm"],
    )
    return facts
