"""The enricher's KB gate on real docs: do answers reach it while unrelated prompts stay out?

Question: ``enrich_context`` adds KB context only when the best hit's score reaches
``EnricherConfig.min_score["kb"]``. On the development suite's docs sets (real
projects' docs, hand-written questions), how many questions whose answer
``kb.search`` ranks in its top 3 have a best hit at or above each threshold, and
how high do unrelated prompts score on the same docs?

Setup: the development suite's cached docs stores (``benchmarks/devsuite``; built on
first use, which fetches the sdists and embeds). Per set, every question through
``kb.search`` (top 10, the suite's answer check), and twenty prompts no docs set
answers. Thresholds are counted on the fit and test halves apart.

Run: ``.venv/bin/python -m benchmarks.bench_gate [--cache DIR]``
"""

from __future__ import annotations

import argparse
from pathlib import Path

from benchmarks import devsuite
from benchmarks.devsuite.suite import Hit, _relative, all_sets, answer_rank
from remembrances.enrichment.config import DEFAULT_MIN_SCORE

THRESHOLDS = (0.01, 0.02, 0.03, 0.04, 0.05)
UNRELATED = [
    "what is the capital of Peru?",
    "write a haiku about autumn leaves",
    "how do I bake sourdough bread at home",
    "translate good morning into French",
    "who won the football world cup in 2018?",
    "recommend a good science fiction novel",
    "what's the weather like in Tokyo tomorrow",
    "how many calories are in a banana",
    "explain the rules of chess castling",
    "plan a three day trip to Rome",
    "what is the boiling point of water on Everest",
    "give me a recipe for vegetarian lasagna",
    "how do vaccines train the immune system",
    "summarise the plot of Hamlet",
    "best exercises for lower back pain",
    "how do I change a flat bicycle tire",
    "what year did the Berlin wall fall",
    "tips for a job interview",
    "how does compound interest work",
    "write a birthday message for my sister",
]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--cache", type=Path, help="the development suite's cache folder")
    parser.add_argument("--quick", action="store_true", help="accepted for `make bench`; no-op")
    args = parser.parse_args()
    kept = {half: dict.fromkeys(THRESHOLDS, 0) for half in ("fit", "test")}
    answered = dict.fromkeys(("fit", "test"), 0)
    unrelated: dict[str, float] = {}
    for name in sorted(s for s in all_sets() if s.startswith("docs-")):
        service, corpus = devsuite.open_store(name, cache=args.cache)
        try:
            for q in corpus.questions:
                hits = service.kb.search(q.text, limit=10, collection=corpus.id)
                found = [Hit(_relative(h.source, corpus.root), "", h.text) for h in hits]
                if not 0 < answer_rank(corpus, q, found) <= 3:
                    continue
                answered[q.half] += 1
                for threshold in THRESHOLDS:
                    kept[q.half][threshold] += hits[0].score >= threshold
            best = max(
                (h.score for p in UNRELATED for h in service.kb.search(p, limit=1)), default=0.0
            )
            unrelated[name] = best
        finally:
            service.close()
    print(f"KB gate now: {DEFAULT_MIN_SCORE['kb']}\n")
    print("| half | answer in the top 3 | " + " | ".join(f">= {t}" for t in THRESHOLDS) + " |")
    print("|---|---|" + "---|" * len(THRESHOLDS))
    for half, counts in kept.items():
        print(
            f"| {half} | {answered[half]} | "
            + " | ".join(str(counts[t]) for t in THRESHOLDS)
            + " |"
        )
    print(
        "\nunrelated prompts' best KB score, per set: "
        + ", ".join(f"{name} {score:.4f}" for name, score in unrelated.items())
    )


if __name__ == "__main__":
    main()
