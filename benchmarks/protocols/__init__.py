"""The papers' protocols, the leaderboards and the atlas, on the harness ``_protocol``
(``benchmarks/README.md``)."""
