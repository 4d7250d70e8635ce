"""EnricherConfig: how much memory to add to a turn, from where, and how sure it must be."""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field

from ..errors import InvalidInputError
from ..validation import check_min_score
from .plan import SOURCES
from .render import HEADER

#: Seconds a source may take (its query embedding included) before it is dropped.
DEFAULT_TIMEOUT = 2.0
#: Per-source ``min_score`` defaults; see :class:`EnricherConfig` for how they were chosen.
DEFAULT_MIN_SCORE: dict[str, float] = {"kb": 0.02, "events": 0.04, "code": 0.01}


@dataclass
class EnricherConfig:
    """Settings for :class:`ContextEnricher`; change them (or ``enabled``) at run time.

    - ``enabled``: off means ``enrich_context`` returns "" at once, without searching.
    - ``sources``: which layers to search, in the order their sections appear.
    - ``timeout``: seconds each source may take, one number or a mapping per
      source; sources run in parallel, so the longest one is the worst-case
      wait. A source that has not answered by then is dropped (and logged).
      2 s covers the local embedder under load and a remote embedding call;
      the searches themselves take milliseconds.
    - ``min_score``: a source adds context only when its best hit's score (in
      [0, 1]) reaches this; its other hits then need half of it
      (:data:`ITEM_FLOOR`). One number for every source or a mapping per source.
      Defaults kb 0.02, events 0.04, code 0.01, measured with the default local
      embedder (docs/enrichment.md, ``benchmarks/bench_gate.py``): unrelated
      prompts' best hits scored at most kb 0.0084 and code 0.0017 (the labelled
      memory of tests/relevance with up to 5,000 unrelated chunks, and four
      projects' docs and code), events 0.031 (the labelled memory); of the real
      docs and code questions whose answer ranks in the top 3, the best hit reached
      the gate for 100 of 105 (docs) and 115 of 116 (code); on the LoCoMo
      development conversations the events gate keeps the answering turn for 92 %
      of the questions whose answer search ranks in its top 5.
    - ``max_chars`` / ``section_chars`` / ``item_chars``: budgets in characters for
      the whole block, each source's section, and one item before fitting. 6000
      characters is about 1500 tokens: enough for a few precise hits without
      drowning the user's own prompt. Items of 1000 characters let a section hold
      three: more answers reached the block than at 1500 (docs/enrichment.md).
    - ``max_tokens`` / ``section_tokens``: the same budgets in tokens, checked with
      ``tokenizer`` (a callable returning the token count of a string) when given.
    - ``previous_turn``: show a matched conversation turn with the turn another
      speaker said just before it (the question a reply answers), cut to 200
      characters. On the LoCoMo development conversations it lost no evidence
      turn within the same budgets and put an evidence turn's text in the block
      for 585 questions instead of 569; the median block grew from 1,084 to
      1,574 characters (benchmarks/results/locomo.md).
    - ``header``: the first line of the block ("" for none).
    - ``max_workers``: threads for the parallel searches, shared by all callers.
    """

    enabled: bool = True
    sources: tuple[str, ...] = SOURCES
    timeout: float | Mapping[str, float] = 2.0
    min_score: float | Mapping[str, float] = field(default_factory=lambda: dict(DEFAULT_MIN_SCORE))
    max_chars: int | None = 6000
    section_chars: int | Mapping[str, int | None] | None = 3000
    item_chars: int | None = 1000
    max_tokens: int | None = None
    section_tokens: int | Mapping[str, int | None] | None = None
    tokenizer: Callable[[str], int] | None = None
    header: str = HEADER
    max_workers: int = 16
    previous_turn: bool = True

    def __post_init__(self) -> None:
        self.sources = tuple(self.sources)
        for source in self.sources:
            if source not in SOURCES:
                raise InvalidInputError(
                    f"unknown enrichment source {source!r}; use some of {', '.join(SOURCES)}"
                )
        for source in SOURCES:
            timeout = self.timeout_for(source)
            if not _positive_number(timeout):
                raise InvalidInputError(
                    f"timeout for {source!r} must be a positive number of seconds, not {timeout!r}"
                )
        for source in SOURCES:
            check_min_score(self.min_score_for(source), f"min_score for {source!r}")
        for name in ("max_chars", "item_chars", "max_tokens"):
            _check_budget(getattr(self, name), name)
        for name in ("section_chars", "section_tokens"):
            for source in SOURCES:
                _check_budget(self._per_source(getattr(self, name), source), f"{name}[{source!r}]")
        if self.tokenizer is not None and not callable(self.tokenizer):
            raise InvalidInputError("tokenizer must be a callable that returns a token count")
        if (
            isinstance(self.max_workers, bool)
            or not isinstance(self.max_workers, int)
            or (self.max_workers < 1)
        ):
            raise InvalidInputError("max_workers must be a positive integer")

    def timeout_for(self, source: str) -> float:
        if isinstance(self.timeout, Mapping):
            return self.timeout.get(source, DEFAULT_TIMEOUT)
        return self.timeout

    def min_score_for(self, source: str) -> float:
        if isinstance(self.min_score, Mapping):
            return self.min_score.get(source, DEFAULT_MIN_SCORE.get(source, 0.0))
        return self.min_score

    def section_chars_for(self, source: str) -> int | None:
        return self._per_source(self.section_chars, source)

    def section_tokens_for(self, source: str) -> int | None:
        return self._per_source(self.section_tokens, source)

    @staticmethod
    def _per_source(value: int | Mapping[str, int | None] | None, source: str) -> int | None:
        if isinstance(value, Mapping):
            return value.get(source)
        return value


def _positive_number(value: object) -> bool:
    return (
        isinstance(value, int | float)
        and not isinstance(value, bool)
        and math.isfinite(value)
        and value > 0
    )


def _check_budget(value: object, name: str) -> None:
    if value is None:
        return
    if isinstance(value, bool) or not isinstance(value, int) or value < 1:
        raise InvalidInputError(f"{name} must be a positive integer or None, not {value!r}")
