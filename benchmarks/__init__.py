"""The project's benchmarks: scripts that measure speed, memory, scale and the papers'
protocols against a baseline run beside them, and print ratios (``benchmarks/README.md``
is the index). Not part of the installed package: run them from the repository root as
``python -m benchmarks.<folder>.<script>``."""
