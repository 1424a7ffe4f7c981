"""git-memex benchmarks (speed: `python -m bench`; retrieval quality: `python -m bench.retrieval`)."""
