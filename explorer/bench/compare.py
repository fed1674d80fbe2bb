"""The comparison's cost in `python main.py bench` (issue 18): the default config's causal
toggle with a reference A pinned and every panel comparing (heads and qkv in B − A, the
histograms, lines and paired bars of A), beside the same toggle with nothing pinned.

The two are measured interleaved in one window: short alternating chunks of each, so a
machine whose load changes during the run (other processes on a shared 2-core box) shifts
both the same way. Each row has the bench's usual stats over all its chunks' changes.
"""

from __future__ import annotations

import statistics

from engine import AttentionConfig

PLAIN = "default: toggle causal (interleaved)"
PINNED = "default, reference pinned, B − A: toggle causal"


def compare_benchmarks(window, n: int, chunk: int = 10) -> list[dict]:
    """Two rows (plain, pinned) of n changes each, measured in alternating chunks of `chunk`."""
    from .window import Scenario, measure_window, stats

    d = AttentionConfig()
    plain = Scenario(PLAIN, "default", d, d.replace(causal=True), "same shapes, nothing pinned")
    pinned = Scenario(PINNED, "default", d, d.replace(causal=True), "A pinned, heads and qkv in B − A")
    samples: dict[str, dict[str, list[float]]] = {s.name: {"latency": [], "compute": [], "render": [], "wall": []}
                                                  for s in (plain, pinned)}
    try:
        done = 0
        while done < n:
            k = min(chunk, n - done)
            for sc in (plain, pinned):
                window.clear_reference()
                if sc is pinned:
                    window.render_sync(d)  # A: the default config, as shown
                    window.pin_reference()
                    for name in ("heads", "qkv"):
                        window.panel(name).view.setCurrentIndex(2)  # B − A
                row = measure_window(window, sc, k, warmup=2)
                s = samples[sc.name]
                s["latency"] += row["samples_ms"]["latency"]
                s["compute"] += row["samples_ms"]["compute"]
                s["render"] += row["samples_ms"]["render"]
                s["wall"].append(row["wall_ms_per_change"])
            done += k
    finally:
        window.clear_reference()
    return [{"scenario": sc.name, "size": sc.size, "what": sc.what, "n": n,
             "latency_ms": stats(samples[sc.name]["latency"]), "compute_ms": stats(samples[sc.name]["compute"]),
             "render_ms": stats(samples[sc.name]["render"]),
             "wall_ms_per_change": statistics.mean(samples[sc.name]["wall"])} for sc in (plain, pinned)]


def ratio_line(rows: list[dict]) -> str:
    """"reference pinned, B − A: median X ms vs Y ms plain (interleaved), ×R"; "" without both rows."""
    by = {r["scenario"]: r for r in rows}
    if PLAIN not in by or PINNED not in by:
        return ""
    a, b = by[PLAIN]["latency_ms"]["median"], by[PINNED]["latency_ms"]["median"]
    return (f"reference pinned, B − A: median {b:.1f} ms vs {a:.1f} ms plain (interleaved, "
            f"{by[PINNED]['n']} changes each), ×{b / a:.2f}")
