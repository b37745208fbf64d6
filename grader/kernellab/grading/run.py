"""What the submissions of one grading run share: the assignment, the backend, the sandbox, the
secret seed and hidden sizes, the machine's resources, and the reference's build (reference.py)."""

import random
import secrets
import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import TypeVar

from kernellab import compile_cache, environment
from kernellab.backend import Backend
from kernellab.cpus import available_cpus
from kernellab.deadline import Deadline
from kernellab.errors import InputError
from kernellab.grading.isolation.parse import libclang_problem
from kernellab.grading.resources import GpuLock, GradeSlots, OrderedSlots, run_slots
from kernellab.manifest import Assignment
from kernellab.sandbox.bubblewrap import Sandbox
from kernellab.sandbox.container import ContainerSandbox
from kernellab.sandbox.step import Step

GROUPS = ("public", "hidden")
T = TypeVar("T")


@dataclass
class ReferenceState:
    """How far the reference's build and records are (reference.py makes them, once per run)."""

    lock: threading.Lock = field(default_factory=threading.Lock)
    recorded: bool = False
    # Set once the reference build has ended, built or not (see reference.prebuilt_mains).
    built: threading.Event = field(default_factory=threading.Event)
    # Whether the harness warm-up (reference.warm_harness) has filled the compile cache.
    harness_lock: threading.Lock = field(default_factory=threading.Lock)
    harness_warmed: bool = False


class GradingRun:
    """What one grading run shares between its submissions; the reference is built and run once."""

    def __init__(
        self,
        assignment: Assignment,
        backend: Backend | str,
        work: Path,
        sandbox: Sandbox | ContainerSandbox | None,
        seed: int | None = None,
        cmake_args: tuple[str, ...] = (),
        deadline: Deadline | None = None,
        caches_in: Path | None = None,
    ):
        """`sandbox` None runs student code without one: only for trusted code, or where the TA
        said so explicitly (--unsandboxed). `deadline`: the run's time budget (deadline.py).
        `caches_in`: the work folder whose compile caches the run's builds use (default `work`).
        An assignment whose tasks own functions needs libclang: without it, no grade is made."""
        if any(task.functions for task in assignment.tasks) and (problem := libclang_problem()):
            raise InputError(f"{assignment.id}: {problem}")
        self.assignment = assignment
        self.backend = Backend(backend)
        self.sandbox = sandbox
        self.work = work
        self.seed = seed if seed is not None else secrets.randbits(62) + 1
        self.hidden_sizes = draw_hidden_sizes(assignment, self.seed)
        self.large_size = draw_large_size(assignment, self.backend, self.seed)
        self.cmake_args = (*architecture_args(self.backend, cmake_args), *cmake_args, *self.backend.cmake_args)
        self.deadline = deadline or Deadline(None)
        self.gpu_lock = GpuLock()
        self.run_slots = run_slots()
        # A batch limits them to its --jobs (batch.py).
        self.grade_slots = GradeSlots()
        # The grades whose builds go on at once (pipeline.run_step): one per 8 cores, as a grade's
        # build offers some thirty translation units at once, so that the builds end one after
        # another and each grade goes on to the GPU's stages while the next builds.
        self.build_turns = OrderedSlots(max(1, available_cpus() // 8))
        self.reference = ReferenceState()
        self._shared: dict[str, object] = {}
        self._shared_lock = threading.Lock()
        # The harness's objects, read by student builds; the reference's, the grader's alone (compile_cache.py).
        self.compile_cache = compile_cache.for_work(caches_in or work, compile_cache.HARNESS)
        self.reference_compile_cache = compile_cache.for_work(caches_in or work, compile_cache.REFERENCE)
        self.environment = {
            **environment.describe(self.backend),
            "sandbox": sandbox.describe() if sandbox else "none: graded with --unsandboxed",
        }

    def shared(self, name: str, make: Callable[[], T]) -> T:
        """What the submissions of this run share under `name` (a stage's own state: the race
        check's run), made by `make` for the first that asks."""
        with self._shared_lock:
            if name not in self._shared:
                self._shared[name] = make()
            return self._shared[name]

    @contextmanager
    def run_slot(self) -> Iterator[None]:
        """What one run of student or reference code holds while it runs: a run slot and the GPU
        shared, run by run. A measurement waiting for the GPU alone then waits for the runs in
        flight, not for whole stages: held for a tests or sanitizer stage, each wait for the GPU
        alone outlasted other grades' stages of up to a minute in a batch, with no new run let in
        (docs/performance.md, issue 26). A thread with the GPU alone takes neither: no other run
        of this grading run is in flight, and the runs waiting with slots wait for it."""
        if self.gpu_lock.held_alone():
            yield
            return
        with self.run_slots, self.gpu_lock.shared():
            yield

    @contextmanager
    def run_slot_if_free(self) -> Iterator[bool]:
        """A run slot and the GPU shared for the block if both are free now (True), else at once
        False, holding neither: for runs that may as well wait for later."""
        if not self.run_slots.acquire(blocking=False):
            yield False
            return
        try:
            with self.gpu_lock.shared_if_free() as free:
                yield free
        finally:
            self.run_slots.release()

    @contextmanager
    def build_turn(self, ticket: int) -> Iterator[None]:
        """A build turn for this thread's grade, in `ticket`'s order, its grade slot left to another
        grade meanwhile (resources.GradeSlots): a build's compilers take the machine's compiler
        slots, and a grade queued for a turn uses no core. Holding their slots, grades queued for a
        turn (up to 12 of a batch's 16) kept grades back from the GPU alone from their sanitizers
        for up to 110 s (docs/performance.md, issue 26)."""
        with self.grade_slots.left(), self.build_turns.held(ticket):
            yield

    @contextmanager
    def gpu_alone(self) -> Iterator[None]:
        """The GPU to this thread alone (a speed measurement, a run confirmed alone), its grade's
        slot left to another grade of the batch meanwhile (resources.GradeSlots)."""
        with self.grade_slots.left(), self.gpu_lock.exclusive():
            yield

    def group_environment(self, group: str) -> dict[str, str]:
        """What a test executable reads for one group: the hidden group's seed and sizes."""
        if group == "public":
            return {}
        large = {"KERNELLAB_LARGE_SIZE": str(self.large_size)} if self.large_size else {}
        return {"KERNELLAB_SEED": str(self.seed), "KERNELLAB_SIZES": ",".join(map(str, self.hidden_sizes)), **large}

    def group_command(self, program: Path, tests: str, group: str) -> list[str]:
        """How test executable `tests` runs one group: in declaration order (its records' order),
        and in the hidden group, where a size was drawn for them, its hidden [large] cases too."""
        large = group == "hidden" and self.large_size is not None and tests in self.assignment.large_tests
        return [str(program), "--order", "decl", *(["~[.],[large]"] if large else [])]

    @property
    def times_speed(self) -> bool:
        return self.backend.times_speed and bool(self.assignment.speed)

    @property
    def reference_build(self) -> Path:
        return self.work / f"reference-{self.assignment.id}-{self.backend}"

    @property
    def reference_records(self) -> Path:
        return self.work / "reference-records"

    @property
    def timeout_s(self) -> float:
        """Seconds one run of a test executable may take: the manifest's for this backend."""
        limits = self.assignment.grading
        return self.backend.timeout_s(limits.timeout_s, limits.cpu_timeout_s)

    @property
    def run_memory_bytes(self) -> int:
        """Memory one run of a test executable may hold: the manifest's on the CPU backend, the
        sandbox's on a GPU."""
        return Step.memory_bytes if self.backend.on_gpu else self.assignment.grading.cpu_run_memory_gib << 30

    @property
    def run_timeout_s(self) -> float:
        """The limit of a student's run started now: `timeout_s`, cut to what the deadline leaves."""
        return self.deadline.timeout_for(self.timeout_s)

    def active_groups(self) -> tuple[str, ...]:
        return GROUPS if self.hidden_sizes else ("public",)


def architecture_args(backend: Backend, cmake_args: tuple[str, ...]) -> tuple[str, ...]:
    """The GPU's architecture for CMake, unless the TA chose one: the build's sandbox has no GPU,
    so nvcc's -arch=native there would fall back to a default and JIT-compile at run time."""
    if not backend.on_gpu or any(arg.startswith("-DCMAKE_CUDA_ARCHITECTURES") for arg in cmake_args):
        return ()
    found = environment.gpus()
    if not found or not found[0].get("compute_cap"):
        return ()
    return (f"-DCMAKE_CUDA_ARCHITECTURES={found[0]['compute_cap'].replace('.', '')}",)


def draw_large_size(assignment: Assignment, backend: Backend, seed: int) -> int | None:
    """The size of the [large] cases in this run, drawn from the secret seed; None where none run:
    the manifest has no range, or the backend is not a GPU (the CPU backend would take hours)."""
    if assignment.grading.large_size_range is None or not backend.on_gpu:
        return None
    return random.Random(f"large {seed}").randint(*assignment.grading.large_size_range)


def draw_hidden_sizes(assignment: Assignment, seed: int) -> tuple[int, ...]:
    """One size from each of the manifest's hidden ranges, drawn from the run's secret seed."""
    chooser = random.Random(seed)
    return tuple(chooser.randint(low, high) for low, high in assignment.grading.hidden_size_ranges)
