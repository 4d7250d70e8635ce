"""The turn before a matched one in ``enrich_context``'s block: does it cost evidence?

Question (issue 21): a reply ("Yeah, I made it in class yesterday.") means little
without the question it answers, so the enricher shows each matched turn with the
turn another speaker said just before it (``EnricherConfig.previous_turn``). Kept
only if, within the same budgets, no question loses its evidence turn.

Setup: the LoCoMo development conversations logged as ``bench_locomo.py`` does
(same embedding cache), each question enriched twice on the same store, with
``previous_turn`` off and on. Counted per question: an evidence turn among the
block's items (what ``bench_locomo.py`` counts), among them for the questions
whose evidence ``events.search`` ranks in its top 5, and an evidence turn's text
anywhere in the block (as an item or as the turn before one).

Run from the repository root: ``.venv/bin/python -m benchmarks.bench_locomo_context``
"""

from __future__ import annotations

import argparse
import statistics
import sys
import tempfile
import time
from pathlib import Path

from benchmarks.bench_locomo import DATA, CachedEmbedder
from remembrances import RemembrancesService, Store
from remembrances.conversation_eval import load
from remembrances.embeddings import create


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--data", type=Path, default=DATA)
    parser.add_argument("--cache", type=Path, default=Path.home() / ".cache" / "remembrances-bench")
    parser.add_argument("--quick", action="store_true", help="accepted for make bench; no effect")
    args = parser.parse_args()
    if not args.data.exists():
        print(f"skipped: {args.data} not found (see ../shared/eval/README.md)")
        return 0
    embedder = CachedEmbedder(create(None), args.cache / "locomo-vectors.sqlite")
    conversations = load(args.data)
    counts = {v: {"items": 0, "kept": 0, "text": 0} for v in (False, True)}
    sizes: dict[bool, list[int]] = {False: [], True: []}
    in_search = 0
    started = time.perf_counter()
    with tempfile.TemporaryDirectory(prefix="remembrances-bench-") as scratch:
        for conv in conversations:
            svc = RemembrancesService(Store(Path(scratch) / "m.db", embedder=embedder))
            try:
                for session, at, messages in conv.sessions:
                    svc.events.log_conversation(messages, session=session, at=at)
                ids, said = {}, {}
                for session, _, _ in conv.sessions:
                    for event in svc.events.turns(session):
                        ids[str(event.id)] = str(event.metadata.get("id"))
                        said[str(event.metadata.get("id"))] = event.content
                for question in conv.questions:
                    top = {ids.get(str(h.id)) for h in svc.events.search(question.text, limit=5)}
                    found = bool(question.evidence & top)
                    in_search += found
                    for previous in (False, True):
                        svc.enricher.config.previous_turn = previous
                        result = svc.enricher.enrich(question.text)
                        shown = {
                            ids.get(i.key.removeprefix("events:"))
                            for i in result.items.get("events", [])
                        }
                        hit = bool(question.evidence & shown)
                        count = counts[previous]
                        count["items"] += hit
                        count["kept"] += hit and found
                        count["text"] += any(
                            said[e] in result.text for e in question.evidence if e in said
                        )
                        sizes[previous].append(len(result.text))
            finally:
                svc.close()
            (Path(scratch) / "m.db").unlink()
            print(f"{conv.name} done", file=sys.stderr, flush=True)
    questions = sum(len(c.questions) for c in conversations)
    print(
        f"LoCoMo dev: {questions} questions, {in_search} with evidence in events.search's "
        f"top 5; {embedder.embedded} texts embedded; {time.perf_counter() - started:.0f} s"
    )
    print("| previous turn | evidence turn among the items | of search's top-5 ones | "
          "evidence text in the block | median block chars |")  # fmt: skip
    print("|---|---|---|---|---|")
    for previous in (False, True):
        c = counts[previous]
        print(
            f"| {'on' if previous else 'off'} | {c['items']} | {c['kept']} / {in_search} | "
            f"{c['text']} | {statistics.median(sizes[previous]):,.0f} |"
        )
    return 0


if __name__ == "__main__":
    sys.exit(main())
