"""The sandbox the TA's `--sandbox` names (options.SANDBOX_KINDS), proven to work here."""

from pathlib import Path

from kernellab.sandbox.bubblewrap import Sandbox, machine_sandbox
from kernellab.sandbox.container import ContainerSandbox
from kernellab.sandbox.step import SandboxUnavailable


def choose_sandbox(kind: str, root: Path, work: Path) -> Sandbox | ContainerSandbox:
    """The sandbox `kind` names, proven to work here; SandboxUnavailable says why not."""
    if kind == "container":
        return ContainerSandbox.find(root, work)
    try:
        return machine_sandbox()
    except SandboxUnavailable as why:
        raise SandboxUnavailable(f"{why}; in a platform's container, where bubblewrap cannot run, use --sandbox container") from None
