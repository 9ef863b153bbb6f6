"""Robustness: bad inputs and rankings with uncertainty (``benchmarks/README.md``)."""
