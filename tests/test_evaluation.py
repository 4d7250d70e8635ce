"""The metric code on hand-made rankings with known values, the BEIR loader, and
evaluate() end to end on a tiny folder (real store, real SQLite, hashing embedder)."""

from __future__ import annotations

import json
import math
from pathlib import Path

import pytest

from remembrances.embeddings import HashEmbedder
from remembrances.errors import InvalidInputError
from remembrances.evaluation import (
    evaluate,
    load_beir,
    mrr_at_k,
    ndcg_at_k,
    recall_at_k,
    score_rankings,
)

LOG3 = math.log2(3)


def test_one_relevant_at_rank_two() -> None:
    ranked = ["a", "b", "c"]
    relevant = {"b": 1}
    assert ndcg_at_k(ranked, relevant) == pytest.approx(1 / LOG3)
    assert recall_at_k(ranked, relevant) == 1.0
    assert mrr_at_k(ranked, relevant) == 0.5


def test_two_relevant_one_found() -> None:
    ranked = ["x", "a", "y"]
    relevant = {"a": 1, "d": 1}
    assert ndcg_at_k(ranked, relevant) == pytest.approx((1 / LOG3) / (1 + 1 / LOG3))
    assert recall_at_k(ranked, relevant) == 0.5
    assert mrr_at_k(ranked, relevant) == 0.5


def test_graded_judgments_use_linear_gain() -> None:
    # trec_eval's nDCG (which BEIR reports) uses the grade itself as the gain.
    relevant = {"a": 2, "b": 1}
    assert ndcg_at_k(["b", "a"], relevant) == pytest.approx((1 + 2 / LOG3) / (2 + 1 / LOG3))
    assert ndcg_at_k(["a", "b"], relevant) == pytest.approx(1.0)


def test_perfect_and_empty_rankings() -> None:
    relevant = {"a": 1, "b": 1}
    assert ndcg_at_k(["a", "b", "z"], relevant) == pytest.approx(1.0)
    assert ndcg_at_k(["b", "a"], relevant) == pytest.approx(1.0)
    assert ndcg_at_k([], relevant) == 0.0
    assert recall_at_k([], relevant) == 0.0
    assert mrr_at_k([], relevant) == 0.0


def test_cutoff_at_k() -> None:
    ranked = [f"x{i}" for i in range(10)] + ["a"]
    relevant = {"a": 1}
    assert ndcg_at_k(ranked, relevant, k=10) == 0.0
    assert recall_at_k(ranked, relevant, k=10) == 0.0
    assert mrr_at_k(ranked, relevant, k=10) == 0.0
    assert mrr_at_k(ranked, relevant, k=11) == pytest.approx(1 / 11)
    assert ndcg_at_k(ranked, relevant, k=11) == pytest.approx(1 / math.log2(12))


def test_zero_grades_are_not_relevant() -> None:
    relevant = {"a": 0, "b": 1}
    assert mrr_at_k(["a", "b"], relevant) == 0.5
    assert recall_at_k(["a"], relevant) == 0.0
    assert ndcg_at_k(["a", "b"], {"a": 0}) == 0.0


def test_a_document_counts_once() -> None:
    # Two chunks of one relevant document must not earn more than the ideal.
    assert ndcg_at_k(["a", "a"], {"a": 1}) == pytest.approx(1.0)


def test_mean_over_queries_counts_missing_rankings_as_zero() -> None:
    qrels = {"q1": {"a": 1}, "q2": {"b": 1}, "q3": {"c": 0}}
    metrics = score_rankings({"q1": ["a"], "q3": ["c"]}, qrels)
    assert metrics.queries == 2  # q3 has no relevant document: not judged
    assert metrics.ndcg == pytest.approx(0.5)
    assert metrics.recall == pytest.approx(0.5)
    assert metrics.mrr == pytest.approx(0.5)


def test_no_judged_query_is_an_error() -> None:
    with pytest.raises(InvalidInputError):
        score_rankings({"q": ["a"]}, {"q": {"a": 0}})


def _write_beir(root: Path, docs: list[dict], queries: list[dict], qrels: list[tuple]) -> Path:
    root.mkdir(parents=True, exist_ok=True)
    (root / "qrels").mkdir(exist_ok=True)
    (root / "corpus.jsonl").write_text(
        "\n".join(json.dumps(d) for d in docs) + "\n", encoding="utf-8"
    )
    (root / "queries.jsonl").write_text(
        "\n".join(json.dumps(q) for q in queries) + "\n", encoding="utf-8"
    )
    lines = ["query-id\tcorpus-id\tscore"] + [f"{q}\t{d}\t{s}" for q, d, s in qrels]
    (root / "qrels" / "test.tsv").write_text("\n".join(lines) + "\n", encoding="utf-8")
    return root


@pytest.fixture
def tiny(tmp_path: Path) -> Path:
    docs = [
        {"_id": "d1", "title": "Volcanoes", "text": "Magma rises through the crust."},
        {"_id": "d2", "title": "", "text": "def parse_config(path): return toml.load(path)"},
        {"_id": "d3", "title": "Tides", "text": "The moon pulls the oceans."},
    ]
    queries = [
        {"_id": "q1", "text": "where does magma come from?"},
        {"_id": "q2", "text": "parse a toml config"},
        {"_id": "q3", "text": "unjudged query"},
    ]
    return _write_beir(tmp_path / "tiny", docs, queries, [("q1", "d1", 1), ("q2", "d2", 1)])


def test_load_beir_keeps_judged_queries(tiny: Path) -> None:
    data = load_beir(tiny)
    assert data.name == "tiny"
    assert [d.id for d in data.corpus] == ["d1", "d2", "d3"]
    assert data.corpus[0].title == "Volcanoes"
    assert data.queries == {"q1": "where does magma come from?", "q2": "parse a toml config"}
    assert data.qrels == {"q1": {"d1": 1}, "q2": {"d2": 1}}


def test_load_beir_missing_split_names_the_splits(tiny: Path) -> None:
    with pytest.raises(InvalidInputError, match="splits found: test"):
        load_beir(tiny, split="dev")


def test_load_beir_rejects_broken_files(tmp_path: Path) -> None:
    with pytest.raises(InvalidInputError, match=r"corpus\.jsonl not found"):
        load_beir(tmp_path)
    root = _write_beir(tmp_path / "bad", [{"_id": "d"}], [{"_id": "q", "text": "x"}], [])
    (root / "corpus.jsonl").write_text('{"_id": "d"}\nnot json\n', encoding="utf-8")
    (root / "qrels" / "test.tsv").write_text("q\td\t1\n", encoding="utf-8")
    with pytest.raises(InvalidInputError, match=r"corpus\.jsonl:2"):
        load_beir(root)
    (root / "qrels" / "test.tsv").write_text("q\td\tmany\n", encoding="utf-8")
    with pytest.raises(InvalidInputError, match="not a number"):
        load_beir(root)
    (root / "qrels" / "test.tsv").write_text("missing\td\t1\n", encoding="utf-8")
    with pytest.raises(InvalidInputError, match=r"not in queries\.jsonl"):
        load_beir(root)


def test_evaluate_end_to_end(tiny: Path, tmp_path: Path) -> None:
    result = evaluate(tiny, embedder=HashEmbedder(64), db_path=tmp_path / "eval.db")
    assert result.dataset == "tiny"
    assert result.embedder == HashEmbedder(64).name
    assert result.documents == 3
    assert result.queries == 2
    assert set(result.metrics) == {"text", "vector", "hybrid"}
    # Each query shares a rare word with exactly its document: BM25 puts it first.
    assert result.metrics["text"].ndcg == pytest.approx(1.0)
    assert result.metrics["text"].mrr == pytest.approx(1.0)
    for metrics in result.metrics.values():
        assert 0.0 <= metrics.ndcg <= 1.0
    assert "| hybrid |" in result.table()
    assert json.loads(json.dumps(result.to_dict()))["metrics"]["text"]["queries"] == 2


def test_evaluate_rejects_bad_arguments(tiny: Path) -> None:
    with pytest.raises(InvalidInputError):
        evaluate(tiny, embedder=HashEmbedder(8), modes=["fuzzy"])  # type: ignore[list-item]
    with pytest.raises(InvalidInputError):
        evaluate(tiny, embedder=HashEmbedder(8), k=0)
    with pytest.raises(InvalidInputError):
        evaluate(tiny, embedder=HashEmbedder(8), kind="events")  # type: ignore[arg-type]


def test_evaluate_code_goes_through_the_code_indexer(tmp_path: Path) -> None:
    docs = [
        {
            "_id": "f1",
            "title": "",
            "text": "def read_toml_config(path):\n    return toml.load(path)",
        },
        {
            "_id": "f2",
            "title": "",
            "text": "def sortByKey(items):\n    return list(reversed(items))",
        },
    ]
    queries = [{"_id": "q1", "text": "sort by key"}, {"_id": "q2", "text": "read toml config"}]
    root = _write_beir(tmp_path / "code", docs, queries, [("q1", "f2", 1), ("q2", "f1", 1)])
    result = evaluate(root, embedder=HashEmbedder(64), kind="code", modes=["text"])
    assert result.documents == 2
    # "sort by key" finds sortByKey only through the code indexer's identifier split.
    assert result.metrics["text"].mrr == pytest.approx(1.0)
