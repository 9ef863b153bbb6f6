"""Scale: width, samples, single-cell sizes, Dask and the federation under load
(``benchmarks/README.md``)."""
