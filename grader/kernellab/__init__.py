"""kernellab: instructor tools and autograder for CUDA course labs."""
