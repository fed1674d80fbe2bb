"""`python main.py bench`: the window's latency benchmarks (`window`), the A/B compare
(`compare`) and the step-throughs (`stepthrough`)."""
