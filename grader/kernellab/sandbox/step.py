"""What one sandboxed step sees and may use, a step ready to start, and the sandbox's failures."""

import functools
import shutil
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from pathlib import Path


class SandboxUnavailable(Exception):
    """Student code cannot be sandboxed here; the message says why and what to do."""


class SandboxFailure(Exception):
    """bubblewrap could not set up a step's sandbox, so the program never ran: a problem of the
    grading machine (a bind source it cannot reach...), never the student's."""


# A build's compilers, whose time decides no verdict, yield the cores to runs whose time limits
# do. In a batch the compilers of sixteen grades filled an H100 host's 16 cores, the tests beside
# them ran out of time, and each such run was confirmed alone, with the GPU to itself, while every
# other grade's runs waited.
BUILD_NICENESS = 15
# A correctness run (a test group, a sanitizer, the race check), whose time decides only whether it
# keeps within its limit, yields the cores to a speed measurement's programs, which hold the GPU
# alone for every grade of a batch: on a busy H200 host a speed stage held it 10 to 22 s, against
# 9 s alone (docs/performance.md). Builds keep to their share beside these runs (weights of about
# 9 to 1, as at 10 against 0).
CORRECTNESS_NICENESS = 5


@dataclass(frozen=True)
class Step:
    """What one sandboxed step sees and may use."""

    readable: tuple[Path, ...]
    writable: tuple[Path, ...] = ()
    # Read by this step alone, for as long as it runs: a task's folder, which holds the
    # reference's code of the other tasks' functions (grading/building.py).
    readable_alone: tuple[Path, ...] = ()
    gpu: bool = False
    # Memory of the whole step (all its processes) and its processes and threads together.
    memory_bytes: int = 8 << 30
    processes: int = 256
    # Device memory of the step's processes together (a GPU step, where a cgroup tells which
    # processes are the step's): a CUDA context takes about 0.5 GiB, a pbb speed case about 4.
    gpu_memory_bytes: int = 16 << 30
    # The tmpfs /tmp, and the largest file the step may write anywhere.
    tmp_bytes: int = 1 << 30
    file_bytes: int = 1 << 30
    # Folders of the system the step must not see, covered by an empty tmpfs.
    hidden: tuple[Path, ...] = ()
    # Whether all of the step ends once it hits its memory or process limit (a run, whose verdict
    # that decides) or goes on (a build: ninja -k 0 still builds the targets whose compilers did
    # not hit it). Only where a cgroup bounds the step: a per-process rlimit hit is no event.
    ends_at_limit: bool = False
    # Added to the step's scheduling niceness (BUILD_NICENESS, CORRECTNESS_NICENESS): the steps
    # whose time decides less yield the cores to those whose time decides more.
    niceness: int = 0

    @property
    def reads(self) -> tuple[Path, ...]:
        """Everything the step reads (a sandbox with namespaces of its own needs no difference)."""
        return (*self.readable, *self.readable_alone)


def build_step(readable: Iterable[Path], build_dir: Path, alone: Iterable[Path] = ()) -> Step:
    """A build: compilers with their temporaries, writing only into `build_dir`, reading `alone`
    alone. Memory is counted per compiler where no cgroup bounds the whole build (RLIMIT_DATA is
    per process)."""
    return Step(tuple(readable), (build_dir,), tuple(alone), processes=1024, tmp_bytes=4 << 30, file_bytes=2 << 30,
                niceness=BUILD_NICENESS)


def fresh_output(path: Path) -> Path:
    """`path` as a new empty file: what a sandboxed run may write is created by the grader first,
    and it is the only file the run may write."""
    path.parent.mkdir(parents=True, exist_ok=True)
    path.unlink(missing_ok=True)
    path.touch()
    return path


def run_step(program: Path, outputs: Iterable[Path], gpu: bool, memory_bytes: int = Step.memory_bytes,
             niceness: int = 0) -> Step:
    """One run of a built program: it sees itself and writes only its `outputs` (files the
    grader created beforehand), and not the CUDA toolkit's libraries: a program linked with the
    static CUDA runtime needs only the driver, so a `dlopen` of cuBLAS finds nothing."""
    return Step((program,), tuple(outputs), gpu=gpu, memory_bytes=memory_bytes, hidden=toolkit_libraries(), ends_at_limit=True,
                niceness=niceness)


@functools.cache
def toolkit_libraries() -> tuple[Path, ...]:
    """The library folders of the CUDA toolkit whose nvcc is on PATH (none without one)."""
    nvcc = shutil.which("nvcc")
    if nvcc is None:
        return ()
    toolkit = Path(nvcc).resolve().parent.parent
    candidates = [toolkit / "lib64", toolkit / "lib", *sorted((toolkit / "targets").glob("*/lib"))]
    return tuple(dict.fromkeys(path.resolve() for path in candidates if path.is_dir()))


@dataclass
class Confined:
    """One step, ready to start: the command line, the function the child runs before exec,
    and after the run, which limit (if any) stopped it."""

    argv: list[str]
    cwd: Path
    preexec: Callable[[], None] | None
    limit_hit: Callable[[], str]
    # File descriptors the child keeps, and after the run, whether the program ever started.
    pass_fds: tuple[int, ...] = ()
    started: Callable[[], bool] = lambda: True
