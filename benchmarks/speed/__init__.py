"""Speed against peers, baselines and the plain-numpy floor (``benchmarks/README.md``)."""
