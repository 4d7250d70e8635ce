"""A small memory whose right answers are known: documents, events and a code project."""

from __future__ import annotations

from datetime import UTC, datetime
from pathlib import Path
from typing import Any

NOW = datetime(2026, 11, 21, 15, 30, tzinfo=UTC)

DOCUMENTS = {
    "runbooks/retries.md": (
        "Retry policy",
        """# Retry policy

## Backoff for rate limits

When an upstream API answers HTTP 429 (too many requests), wait and retry with
exponential backoff: start at 500 ms, double each attempt, add full jitter, and
give up after 6 attempts. Always honour the Retry-After header when it is sent.

## Idempotency

Only retry idempotent requests. POST requests carry an Idempotency-Key header so
that a retried payment is never charged twice.
""",
    ),
    "runbooks/database.md": (
        "Database migrations",
        """# Database migrations

## Running migrations

Schema migrations are numbered SQL files applied in order at startup. Each one
runs inside a single transaction; a failed migration rolls back and the service
refuses to start until it is fixed.

## Rollbacks

We never edit an applied migration. To undo a change, write a new migration that
reverses it, and test it against a copy of the production snapshot first.
""",
    ),
    "handbook/vacation.md": (
        "Vacation policy",
        """# Vacation policy

Employees get 28 days of paid leave per year. Requests go to your manager at
least two weeks ahead; unused days carry over until the end of March.
""",
    ),
    "handbook/onboarding.md": (
        "Onboarding",
        """# Onboarding

## First week

New engineers pair with a buddy, set up their laptop with the bootstrap script,
and ship a small change to production before Friday.
""",
    ),
}

EVENTS: list[dict[str, Any]] = [
    {
        "subject": "deploy",
        "content": "Deployed checkout service v2.14 to production; payment latency rose to 900 ms.",
        "at": datetime(2026, 11, 20, 14, 5, tzinfo=UTC),
    },
    {
        "subject": "incident",
        "content": "Payment provider returned HTTP 429 for 20 minutes; retries with backoff recovered.",
        "at": datetime(2026, 11, 20, 16, 40, tzinfo=UTC),
    },
    {
        "subject": "decision",
        "content": "Decided to move the orders table migration to the weekend maintenance window.",
        "at": datetime(2026, 11, 19, 10, 0, tzinfo=UTC),
    },
    {
        "subject": "meeting",
        "content": "Quarterly planning: the team will focus on search quality next quarter.",
        "at": datetime(2026, 11, 2, 9, 0, tzinfo=UTC),
    },
    {
        "subject": "chore",
        "content": "Renewed the TLS certificate for the status page.",
        "at": datetime(2026, 10, 15, 8, 0, tzinfo=UTC),
    },
]

CODE_FILES = {
    "shop/retry.py": '''"""Retrying calls to flaky upstream services."""

import random
import time


class RetryPolicy:
    """How often and how long to retry a failed request."""

    def __init__(self, attempts: int = 6, base_delay: float = 0.5) -> None:
        self.attempts = attempts
        self.base_delay = base_delay

    def delay(self, attempt: int) -> float:
        """Exponential backoff with full jitter."""
        return random.uniform(0, self.base_delay * 2**attempt)


def fetch_with_retry(client, url, policy=None):
    """GET ``url``, retrying on HTTP 429 and 503 according to ``policy``."""
    policy = policy or RetryPolicy()
    for attempt in range(policy.attempts):
        response = client.get(url)
        if response.status not in (429, 503):
            return response
        time.sleep(policy.delay(attempt))
    raise TimeoutError(f"gave up on {url} after {policy.attempts} attempts")
''',
    "shop/orders.py": '''"""Orders and their totals."""

from dataclasses import dataclass


@dataclass
class Order:
    id: int
    items: list


def order_total(order: Order) -> float:
    """Sum of item prices times quantities, in cents."""
    return sum(item.price * item.quantity for item in order.items)


def apply_discount(total: float, percent: float) -> float:
    """The total after a percentage discount, never below zero."""
    return max(total * (1 - percent / 100), 0.0)
''',
    "web/cart.js": """// The shopping cart in the browser.

export function addToCart(cart, product, quantity = 1) {
  const line = cart.lines.find((l) => l.productId === product.id);
  if (line) {
    line.quantity += quantity;
  } else {
    cart.lines.push({ productId: product.id, quantity });
  }
  return cart;
}
""",
}


def write_code(root: Path) -> Path:
    for relative, text in CODE_FILES.items():
        path = root / relative
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)
    return root


def populate(service: Any, code_root: Path | None) -> None:
    """Fill ``service`` with the corpus; the code project only when ``code_root`` is given."""
    for source, (title, text) in DOCUMENTS.items():
        service.kb.add(text, source=source, title=title)
    service.events.log_many(EVENTS)
    if code_root is not None:
        service.code.index(write_code(code_root), project="shop")
