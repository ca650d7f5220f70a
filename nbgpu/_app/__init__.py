"""The application: the ``nbgpu`` command, its file readers, comparisons and benchmarks."""
