"""Context enrichment: turn a raw prompt into the memory that helps with it.

``ContextEnricher.enrich_context(prompt)`` plans per-source queries (with
:class:`HeuristicPlanner` or :class:`LLMPlanner`), searches the knowledge base,
the event log and the code index in parallel, and returns one compact, budgeted
block, or "" when nothing relevant is found. See docs/enrichment.md.
"""

from __future__ import annotations

from .chat import ChatModel, ChatUnavailableError, GoogleChat, OpenAIChat
from .config import DEFAULT_MIN_SCORE, EnricherConfig
from .enricher import ContextEnricher, Enrichment
from .heuristic import HeuristicPlanner
from .llm_planner import LLMPlanner
from .plan import (
    PLAN_SCHEMA,
    EnrichmentPlan,
    PartQueries,
    PlanError,
    QueryPlanner,
    plan_from_json,
)
from .sources import ContextItem

__all__ = [
    "DEFAULT_MIN_SCORE",
    "PLAN_SCHEMA",
    "ChatModel",
    "ChatUnavailableError",
    "ContextEnricher",
    "ContextItem",
    "EnricherConfig",
    "Enrichment",
    "EnrichmentPlan",
    "GoogleChat",
    "HeuristicPlanner",
    "LLMPlanner",
    "OpenAIChat",
    "PartQueries",
    "PlanError",
    "QueryPlanner",
    "plan_from_json",
]
