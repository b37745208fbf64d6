"""Where kernels run: a GPU ("cuda") or kernellab's CPU backend ("cpu"), and what follows from it.

Every difference between the two that the grader or a verb acts on is a property here, so that no
module tests the backend's name. A Backend is its name as a string too (StrEnum): it reads and
writes as "cuda" or "cpu" in JSON, and `Backend("cpu")` turns a name into one.
"""

from dataclasses import dataclass
from enum import StrEnum

@dataclass(frozen=True)
class _Traits:
    # Whether kernels run on a GPU: test runs need the GPU device, the build its architecture;
    # speed is timed and scored, and compute-sanitizer runs, only there.
    on_gpu: bool
    # How much longer a test executable may run than on a GPU, unless the manifest says
    # (cpu_timeout): on the CPU backend each CUDA thread is a fiber, and every launch runs under
    # several thread orders.
    time_factor: float
    # Environment for a run of the reference, whose results are the same under any thread order.
    reference_environment: tuple[tuple[str, str], ...]


class Backend(StrEnum):
    CUDA = "cuda"
    CPU = "cpu"

    @property
    def _traits(self) -> _Traits:
        return _TRAITS[self]

    @property
    def on_gpu(self) -> bool:
        return self._traits.on_gpu

    @property
    def times_speed(self) -> bool:
        return self._traits.on_gpu

    @property
    def runs_sanitizers(self) -> bool:
        return self._traits.on_gpu

    @property
    def warns_warp_synchronous(self) -> bool:
        """Whether NO_GPU_EXIT_CODE after right results means that the CPU backend warned of
        warp-synchronous code (which only a GPU can confirm), not that there was no GPU."""
        return not self._traits.on_gpu

    @property
    def reference_environment(self) -> dict[str, str]:
        return dict(self._traits.reference_environment)

    @property
    def cmake_args(self) -> tuple[str, ...]:
        """The CMake arguments that select this backend."""
        return (f"-DKERNELLAB_BACKEND={self.value}",)

    def timeout_s(self, gpu_timeout_s: float, own_timeout_s: float | None = None) -> float:
        """Seconds one run may take here: on a GPU `gpu_timeout_s`; elsewhere `own_timeout_s`
        (the manifest's for this backend) when given, else `gpu_timeout_s` times the backend's factor."""
        if self.on_gpu:
            return gpu_timeout_s
        return own_timeout_s or gpu_timeout_s * self._traits.time_factor


_TRAITS = {
    Backend.CUDA: _Traits(on_gpu=True, time_factor=1, reference_environment=()),
    Backend.CPU: _Traits(on_gpu=False, time_factor=10, reference_environment=(("KERNELLAB_CPU_ORDERS", "1"),)),
}
