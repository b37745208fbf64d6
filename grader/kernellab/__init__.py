"""kernellab: instructor tools and autograder for CUDA course labs."""

from pathlib import Path

# The one place the version is written: pyproject.toml reads it, `kernellab --version` prints it.
__version__ = "0.1.0"
# The folder that holds this package: the PYTHONPATH of the grader's own child processes (the
# speed clock, the libclang parse, Slurm's jobs), which must import this very code.
PACKAGE_PARENT = Path(__file__).resolve().parent.parent
