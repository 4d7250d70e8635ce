"""The results as markdown: a summary per half (nDCG@10 by set and system, and whether
the default hybrid beats the three naive systems), then every metric."""

from __future__ import annotations

from .suite import NAIVE_SYSTEMS, Results, Row

METRICS = ("hit@1", "hit@3", "hit@5", "MRR", "nDCG@10")
HALVES = ("fit", "test")


def _halves(results: Results) -> list[str]:
    return [h for h in HALVES if any(r.half == h for r in results.rows)]


def summary(results: Results, metric: str = "nDCG@10") -> str:
    """One table per half: a row per set, a column per system, plus per-kind means."""
    out: list[str] = []
    systems = list(dict.fromkeys(r.system for r in results.rows))
    sets = list(dict.fromkeys(r.set for r in results.rows))
    for half in _halves(results):
        out.append(f"#### {metric}, {half} half\n")
        out.append("| set | n | " + " | ".join(systems) + " | rem-hybrid > bm25, embed, rrf |")
        out.append("|---|---|" + "---|" * len(systems) + "---|")
        by: dict[tuple[str, str], Row] = {
            (r.set, r.system): r for r in results.rows if r.half == half
        }
        kinds: dict[str, list[str]] = {}
        for name in sets:
            kinds.setdefault(name.split("-", 1)[0], []).append(name)
            out.append(_line(name, [by.get((name, s)) for s in systems], systems, metric))
        for kind, names in kinds.items():
            if len(names) < 2:
                continue
            means: list[Row | None] = []
            for s in systems:
                rows = [by[(n, s)] for n in names if (n, s) in by]
                if len(rows) != len(names):
                    means.append(None)
                    continue
                means.append(
                    Row(
                        f"{kind} (mean)",
                        half,
                        s,
                        {
                            "n": sum(r.metrics["n"] for r in rows),
                            metric: sum(r.metrics[metric] for r in rows) / len(rows),
                        },
                    )
                )
            out.append(_line(f"**{kind} (mean of sets)**", means, systems, metric))
        out.append("")
    return "\n".join(out)


def _line(name: str, rows: list[Row | None], systems: list[str], metric: str) -> str:
    values = {s: r.metrics[metric] for s, r in zip(systems, rows, strict=True) if r is not None}
    n = next((int(r.metrics["n"]) for r in rows if r is not None), 0)
    best = max(values.values(), default=None)
    cells = []
    for s in systems:
        if s not in values:
            cells.append("-")
        elif values[s] == best:
            cells.append(f"**{values[s]:.3f}**")
        else:
            cells.append(f"{values[s]:.3f}")
    if "rem-hybrid" in values and all(s in values for s in NAIVE_SYSTEMS):
        wins = all(values["rem-hybrid"] > values[s] for s in NAIVE_SYSTEMS)
        verdict = "yes" if wins else "**no**"
    else:
        verdict = "-"
    return f"| {name} | {n} | " + " | ".join(cells) + f" | {verdict} |"


def markdown(results: Results) -> str:
    out = [summary(results)]
    for half in _halves(results):
        out.append(f"#### All metrics, {half} half\n")
        out.append("| set | n | system | " + " | ".join(METRICS) + " |")
        out.append("|---|---|---|" + "---|" * len(METRICS))
        rows = results.table(half)
        for r in rows:
            best = max(x.metrics["nDCG@10"] for x in rows if x.set == r.set)
            cells = [f"{r.metrics[m]:.3f}" for m in METRICS]
            if r.metrics["nDCG@10"] == best:
                cells[-1] = f"**{cells[-1]}**"
            out.append(
                f"| {r.set} | {int(r.metrics['n'])} | {r.system} | " + " | ".join(cells) + " |"
            )
        out.append("")
    return "\n".join(out)


def corpus_table(results: Results) -> str:
    out = ["| set | corpus (under the cache's corpora/) | files | naive chunks | store chunks "]
    out[0] += "| questions fit / test | answers no store chunk holds |"
    out.append("|---|---|---|---|---|---|---|")
    for name, c in results.corpora.items():
        q = c["questions"]
        out.append(
            f"| {name} | {c['corpus']} | {c['files']} | {c['naive chunks']} | "
            f"{c.get('store chunks', '-')} | {q['fit']} / {q['test']} | "
            f"{', '.join(c['unreachable']) if c.get('unreachable') else '-'} |"
        )
    return "\n".join(out)
