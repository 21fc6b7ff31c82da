"""What a request may cost: its text's length in tokens, and its compute budget.

The routes call these before any embedding or generation starts: a question or query over
`api_max_query_tokens` is refused with 422 naming its field, and one its key's or tenant's
budget cannot cover with 429 (see budget.py).
"""

from __future__ import annotations

import time
from collections.abc import Iterator
from typing import TypeVar

from fastapi.exceptions import RequestValidationError

from ..errors import ComputeBudgetError
from .budget import Buckets, Charge
from .deps import Caller
from .state import AppState

T = TypeVar("T")
CHARS_PER_TOKEN = 16  # no real text has longer tokens: longer texts are refused untokenized


def query_tokens(state: AppState, text: str, field: tuple[str, ...]) -> int:
    """The tokens of `text` by the embedding model's tokenizer, or 422 when over the cap."""
    limit = state.settings.api_max_query_tokens
    tokens = (limit * CHARS_PER_TOKEN + 1 if len(text) > limit * CHARS_PER_TOKEN
              else state.workspace.embedder.token_count(text))
    if tokens > limit:
        shown = f"{tokens} tokens" if len(text) <= limit * CHARS_PER_TOKEN else (
            f"{len(text)} characters")
        raise RequestValidationError([{
            "type": "too_long", "loc": field, "input": None,
            "msg": f"{shown} is over the limit of {limit} tokens (api_max_query_tokens)"}])
    return tokens


def reserve(state: AppState, caller: Caller, kind: str, tokens: int) -> Charge:
    """Reserve the estimated cost of a `kind` request in the budgets of the caller's key (its
    student, for a student key) and tenant."""
    try:
        # a student's keys share the student's budget, as they share its rate limits
        return state.budget.reserve(Buckets.of(state.settings, caller.limits_key,
                                               caller.tenant), kind, tokens)
    except ComputeBudgetError as exc:
        state.metrics.budget_refused.labels(kind, exc.bucket).inc()
        raise


def metered(events: Iterator[T], charge: Charge, spent: float) -> Iterator[T]:
    """`events`, charging the seconds they took (plus `spent` before them) when they end."""
    started = time.perf_counter()
    try:
        yield from events
    finally:
        charge.settle(spent + time.perf_counter() - started)
