"""Memory: the estimates that guard quadratic steps, and peak RSS (``benchmarks/README.md``)."""
