"""kernellab: instructor tools and autograder for CUDA course labs."""

# The one place the version is written: pyproject.toml reads it, `kernellab --version` prints it.
__version__ = "0.1.0"
