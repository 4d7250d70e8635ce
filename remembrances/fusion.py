"""Turning the vector and text legs' evidence into one ranking with scores in [0, 1].

The default, :func:`pointwise`, scores each candidate from two numbers that mean
the same in any store: its cosine similarity to the query and its coverage of
the query's words (:mod:`remembrances.storage.text_match`). The score is a logistic
function of the two, fitted per kind, so it depends neither on the other
candidates nor on how big the store is, and ``min_score`` means the same thing
on an agent's first note and on its ten-thousandth. :func:`rrf` (rank-only
fusion, rescaled so 1.0 means first in both legs) stays for comparison. How
scores are computed and what they mean: docs/search.md.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace

import numpy as np

from .fts_query import STOP_WORDS, query_terms

RRF_K = 60


@dataclass
class Fused:
    id: int
    score: float
    vector_score: float | None = None
    text_score: float | None = None
    vector_rank: int | None = None
    text_rank: int | None = None


def vector_score(cosine: float) -> float:
    """Cosine similarity clipped to [0, 1]: unrelated text sits near 0."""
    return float(min(max(cosine, 0.0), 1.0))


def rrf(
    vector_hits: Sequence[tuple[int, float]],
    text_hits: Sequence[tuple[int, float]],
    *,
    k: int = RRF_K,
) -> list[Fused]:
    """Reciprocal rank fusion of two best-first lists of ``(id, leg score)``.

    Kept for comparison (benchmarks/bench_quality.py): it ignores how far apart
    the scores are, so a weak leg pulls good hits down as much as a strong one.
    """
    fused: dict[int, Fused] = {}
    for rank, (chunk_id, score) in enumerate(vector_hits, start=1):
        item = fused.setdefault(chunk_id, Fused(chunk_id, 0.0))
        item.vector_rank, item.vector_score = rank, score
        item.score += 1.0 / (k + rank)
    for rank, (chunk_id, score) in enumerate(text_hits, start=1):
        item = fused.setdefault(chunk_id, Fused(chunk_id, 0.0))
        item.text_rank, item.text_score = rank, score
        item.score += 1.0 / (k + rank)
    best = 2.0 / (k + 1)
    for item in fused.values():
        item.score = min(item.score / best, 1.0)
    return sorted(fused.values(), key=lambda f: (-f.score, f.id))


@dataclass(frozen=True)
class FusionParams:
    """``score = sigmoid(bias + cosine_weight * cosine + text_weight * coverage
    + name_weight * name + parameter_weight * parameter + enclosing_weight * enclosing)``.

    The ratio of the weights sets the ranking; ``bias`` and their size set what a
    score means (docs/search.md shows the fit and the measurement). ``name`` and
    ``parameter`` are evidence a layer adds on top of the store's two numbers: for
    code, how many of the query's words the symbol's name, its enclosing names and
    its file's path hold, less one, over the query's words, and 1 when the query
    writes one of the function's parameters as code, and how much closer to the query
    (in cosine) the chunk enclosing a symbol (a method's class, a function's file) is
    than the symbol itself (``code/ranking.py``); 0 elsewhere.

    A long question's coverage says more than a short one's: a third of three words
    is one shared word, half of twelve is six. Past ``long_question_words`` words, each
    word adds ``text_weight_per_word`` to ``text_weight``, at most
    ``max_added_text_weight`` (:meth:`for_question`).
    """

    bias: float
    cosine_weight: float
    text_weight: float
    name_weight: float = 0.0
    parameter_weight: float = 0.0
    enclosing_weight: float = 0.0
    #: Whether an identifier the query writes joined (``send_file``) counts fully only in
    #: chunks that write it so (``storage/text_match.py``).
    joined_names: bool = True
    long_question_words: int = 0
    text_weight_per_word: float = 0.0
    max_added_text_weight: float = 0.0

    def for_question(self, words: int) -> FusionParams:
        """These settings for a question of ``words`` words (``params_for`` counts them)."""
        added = self.text_weight_per_word * max(words - self.long_question_words, 0)
        added = min(added, self.max_added_text_weight)
        return replace(self, text_weight=self.text_weight + added) if added > 0 else self

    def score(
        self,
        cosine: float,
        coverage: float,
        name: float = 0.0,
        parameter: float = 0.0,
        enclosing: float = 0.0,
    ) -> float:
        z = (
            self.bias
            + self.cosine_weight * cosine
            + self.text_weight * coverage
            + self.name_weight * name
            + self.parameter_weight * parameter
            + self.enclosing_weight * enclosing
        )
        return 1.0 / (1.0 + math.exp(-min(max(z, -50.0), 50.0)))


def with_added_logit(score: float, added: float) -> float:
    """``score`` (a calibrated probability) with ``added`` on its log-odds: evidence a
    layer has beyond the store's two numbers (a KB passage's title), weighed as
    :class:`FusionParams` weighs it, on top of whatever the store's score holds."""
    score = min(max(score, 1e-12), 1.0 - 1e-12)
    return 1.0 / (1.0 + math.exp(-(math.log(score / (1.0 - score)) + added)))


#: Prose (SciFact train): words count about 0.6 as much as cosine.
_PROSE = FusionParams(bias=-8.36, cosine_weight=7.67, text_weight=4.6)
#: For searches across kinds and kinds without a benchmark of their own: prose's.
DEFAULT_PARAMS = _PROSE

#: Per kind, fitted on training data only: kb on SciFact train and code on CoSQA
#: dev (``bench_quality.py --fit``), events on three of the five LoCoMo development
#: conversations (``bench_locomo.py --fit``). Short conversational turns share
#: fewer words with a question than documents do, so words weigh more for events.
KIND_PARAMS: dict[str, FusionParams] = {
    # A passage whose document's title or heading path holds two or more of the
    # question's words gets the code layer's name weight (kb/knowledge_base.py): a notes
    # vault's file name is often a note's only title ("what's on my packing list?" and
    # "✈️ Packing list.md": at weight 1 the enricher still left it out). On the
    # development suite's docs fit halves nDCG@10 stayed 0.795 (0.798 at 1, 0.792 at 3).
    "kb": replace(_PROSE, name_weight=2.0),
    "event": FusionParams(bias=-5.25, cosine_weight=2.77, text_weight=4.16),
    # Web-style questions rarely share words with the function: cosine decides.
    # A question whose words name the symbol (its name, class, file) is strong
    # evidence: name_weight is the best on the development suite's code and
    # self-supervised fit halves that keeps CoSQA dev where it was
    # (benchmarks/results/devsuite.md, code/ranking.py). A parameter the query writes
    # as code (``*val*``, `timeout`) weighs as much: fitted on the same fit halves.
    # A method (function) whose class (file) reads closer to the question than itself
    # takes 6 / 9.72 of the difference as cosine (its context): same fit halves.
    # A name the query writes (``send_file``) is in every caller and in docstrings
    # pointing to it ("Like :meth:`url_defaults`, but ..."): it says less in code than in
    # prose, and the name and parameter matches already use it (joined_names off:
    # self-supervised sets -0.002 nDCG@10 with it on, benchmarks/RESULTS.md).
    # Words weigh more in questions of more than 7 words (up to +1.5 from 10): on the
    # hand-written code sets' fit halves the best coverage weight was 1-1.5 for up to 6
    # words, 2 for 7-9 and 3 from 10 (benchmarks/RESULTS.md, "Long code questions"); CoSQA's
    # web queries (4-6 words) are unchanged.
    "code": FusionParams(
        bias=-9.3,
        cosine_weight=9.72,
        text_weight=1.46,
        name_weight=2.0,
        parameter_weight=2.0,
        enclosing_weight=6.0,
        joined_names=False,
        long_question_words=7,
        text_weight_per_word=0.6,
        max_added_text_weight=1.5,
    ),
}


def params_for(kind: str | Sequence[str] | None, question: str | None = None) -> FusionParams:
    """The fusion settings for a search filtered to ``kind`` (one kind), else the default;
    with ``question``, for its length (:meth:`FusionParams.for_question`): its words
    that are not stop words, a camelCase name as one, a snake_case or dotted one as its
    parts (as the text index splits them)."""
    if isinstance(kind, str):
        params = KIND_PARAMS.get(kind, DEFAULT_PARAMS)
    elif kind is not None and len(kind) == 1:
        params = KIND_PARAMS.get(next(iter(kind)), DEFAULT_PARAMS)
    else:
        params = DEFAULT_PARAMS
    if question is None:
        return params
    words = [t for t in query_terms(question, split_identifiers=False) if t not in STOP_WORDS]
    return params.for_question(len(words))


def pointwise(
    vector_hits: Sequence[tuple[int, float]],
    text_hits: Sequence[tuple[int, float]],
    cosines: Mapping[int, float],
    coverages: Mapping[int, float],
    *,
    params: FusionParams = DEFAULT_PARAMS,
) -> list[Fused]:
    """Every candidate of either leg scored from its own cosine and word coverage.

    ``cosines`` and ``coverages`` hold the evidence for every candidate (a
    chunk missing from ``coverages`` holds none of the query's words; one
    missing from ``cosines`` has no vector yet). The legs only propose
    candidates and record their ranks.
    """
    fused: dict[int, Fused] = {}
    for rank, (chunk_id, _) in enumerate(vector_hits, start=1):
        fused.setdefault(chunk_id, Fused(chunk_id, 0.0)).vector_rank = rank
    for rank, (chunk_id, _) in enumerate(text_hits, start=1):
        fused.setdefault(chunk_id, Fused(chunk_id, 0.0)).text_rank = rank
    for chunk_id, item in fused.items():
        item.vector_score = vector_score(cosines.get(chunk_id, 0.0))
        item.text_score = coverages.get(chunk_id, 0.0)
        item.score = params.score(item.vector_score, item.text_score)
    return sorted(fused.values(), key=lambda f: (-f.score, f.id))


def mmr(
    candidates: Sequence[tuple[int, np.ndarray | None, float]],
    *,
    lambda_: float,
    limit: int,
) -> list[int]:
    """Maximal marginal relevance: trade relevance for novelty with weight ``lambda_``.

    ``candidates`` are ``(id, unit vector or None, relevance in [0, 1])``; a
    candidate without a vector counts as similar to nothing.
    """
    chosen: list[int] = []
    chosen_vectors: list[np.ndarray] = []
    remaining = list(candidates)
    while remaining and len(chosen) < limit:
        best_index, best_value = 0, -np.inf
        for index, (_, vector, relevance) in enumerate(remaining):
            redundancy = 0.0
            if vector is not None and chosen_vectors:
                redundancy = float(max(float(v @ vector) for v in chosen_vectors))
            value = lambda_ * relevance - (1.0 - lambda_) * redundancy
            if value > best_value:
                best_index, best_value = index, value
        chunk_id, vector, _ = remaining.pop(best_index)
        chosen.append(chunk_id)
        if vector is not None:
            chosen_vectors.append(vector)
    return chosen
