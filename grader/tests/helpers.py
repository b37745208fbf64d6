"""Helpers that build fixture repositories (a manifest, a reference tree and a CMakeLists.txt) and
records as the harness writes them."""

import json
import shutil
import struct
from pathlib import Path

import numpy as np

from kernellab.environment import gpus

REAL_ROOT = Path(__file__).resolve().parents[2]


def manifest_text(assignment_id: str = "x", task_ids: tuple[str, ...] = ("alpha", "beta")) -> str:
    tasks = "".join(
        f'\n[[tasks]]\nid = "{task_id}"\ntitle = "Task {task_id}"\npoints = 10\n'
        f'tests = "{task_id.replace("-", "_")}"\nskeleton_fails = true\n'
        for task_id in task_ids
    )
    return (
        f'id = "{assignment_id}"\n'
        'title = "A fixture assignment"\n'
        "\n[files]\n"
        'required = ["kernels.cu.h", "host.cu.h"]\n'
        'optional = ["constants.cu.h"]\n'
        'entry = "host.cu.h"\n'
        "\n[files.aliases]\n"
        '"kernels.cuh" = "kernels.cu.h"\n'
        "\n[build]\n"
        f'reference = "reference/{assignment_id}"\n'
        f'skeleton = "skeleton/{assignment_id}"\n'
        f"{tasks}"
    )


def write_files(directory: Path, files: dict[str, str | bytes]) -> None:
    for name, content in files.items():
        path = directory / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(content if isinstance(content, bytes) else content.encode())


def copy_build_system(root: Path) -> Path:
    """`root` holding the real build system, harness, CPU backend and the manifest reader that
    CMake runs (grader/kernellab, with its pyproject.toml: the exports bundle both), ready for an
    assignment."""
    for name in ("CMakeLists.txt", "grader/harness", "grader/cpu", "grader/kernellab", "grader/pyproject.toml"):
        source, target = REAL_ROOT / name, root / name
        target.parent.mkdir(parents=True, exist_ok=True)
        if source.is_dir():
            shutil.copytree(source, target, ignore=shutil.ignore_patterns("__pycache__"))
        else:
            shutil.copy(source, target)
    return root


def has_nvcc() -> bool:
    # CMake looks in the default CUDA location too.
    return shutil.which("nvcc") is not None or Path("/usr/local/cuda/bin/nvcc").is_file()


def has_gpu() -> bool:
    return bool(gpus())


def record_bytes(
    values: np.ndarray,
    role: str,
    *,
    test: str = "scanInc scans - Add<int>",
    case: str = "n := 5, block := 32",
    check: str = "d_out.download()",
    ordinal: int = 0,
    fmt: str = "int32",
    whole: bool = True,
    chunk: int = 4096,
    layout: tuple[int, int, int] = (32, 32, 1),
    ending: dict | None = None,
) -> bytes:
    """One record as the harness (kernellab/record.hpp) writes it; `ending`: an end record's own
    fields (lockstep_warning, needs_gpu)."""
    element_size = values.dtype.itemsize * (values.shape[1] if values.ndim == 2 else 1)
    count = values.shape[0]
    if whole:
        payload = values.tobytes()
    else:
        raw = values.tobytes()
        hashes = []
        for first in range(0, count, chunk):
            block = raw[first * element_size : (first + chunk) * element_size]
            value = 0xCBF29CE484222325
            for byte in block:
                value = ((value ^ byte) * 0x100000001B3) % (1 << 64)
            hashes.append(value)
        payload = np.array(hashes, dtype="<u8").tobytes()
    header = json.dumps(
        dict(test=test, case=case, check=check, ordinal=ordinal, role=role, format=fmt, count=count,
             element_size=element_size, whole=whole, chunk=chunk, block_size=layout[0],
             elems_per_block=layout[1], elems_per_thread=layout[2], **(ending or {}))
    ).encode()
    return b"KLR1" + struct.pack("<I", len(header)) + header + struct.pack("<Q", len(payload)) + payload


# What the CPU backend's runtime prints of a warp-synchronous race that it only warns of.
STAND_IN_WARNING = "k.cu:12: warning: warp-synchronous race in kernel scan launched at k.cu:12: add __syncwarp()"


def judge_stand_in(tmp_path: Path, backend: str, expected: bytes, produced: bytes, exit_code: int,
                   not_applicable: tuple = (), failures_left_to_gpu: bool = True, warns: bool = True):
    """The verdict on one public-group run of a shell script standing in for the starter's test
    executable: the reference's records are `expected`; the script writes `produced` (records as
    the harness writes them), prints the CPU backend's warning on its output (if `warns`: what any
    student code can print, which the judge does not read) and exits with `exit_code`."""
    from kernellab.grading.groups import judge_group, run_group
    from kernellab.grading.resources import GpuLock
    from kernellab.grading.run import GradingRun
    from kernellab.grading.targets import executable
    from kernellab.manifest import load_assignment
    from kernellab.runner import RECORD_DESCRIPTOR
    from kernellab.scaffold import TEMPLATE_ID, TEMPLATE_ROOT

    run = GradingRun(load_assignment(TEMPLATE_ROOT, TEMPLATE_ID), backend, tmp_path / "work", sandbox=None, seed=1)
    run.reference.recorded = True
    run.gpu_lock = GpuLock(tmp_path / "gpu.lock")
    reference_records = tmp_path / "work" / "reference-records" / "saxpy.public.rec"
    reference_records.parent.mkdir(parents=True)
    reference_records.write_bytes(expected)
    (tmp_path / "produced.rec").write_bytes(produced)
    program = executable(tmp_path / "job" / "build", run.assignment.id, "saxpy")
    program.parent.mkdir(parents=True)
    program.write_text(f'#!/bin/bash\ncat {tmp_path / "produced.rec"} >&{RECORD_DESCRIPTOR}\n'
                       + (f"echo '{STAND_IN_WARNING}' >&2\n" if warns else "")
                       + f"exit {exit_code}\n")
    program.chmod(0o755)
    return judge_group(run, run_group(run, tmp_path / "job", program, "saxpy", "public", not_applicable), failures_left_to_gpu)
