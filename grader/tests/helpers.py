"""Helpers that build fixture repositories: a manifest, a reference tree and a CMakeLists.txt."""

import shutil
from pathlib import Path

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


def has_nvcc() -> bool:
    # CMake looks in the default CUDA location too.
    return shutil.which("nvcc") is not None or Path("/usr/local/cuda/bin/nvcc").is_file()


def has_gpu() -> bool:
    return bool(gpus())
