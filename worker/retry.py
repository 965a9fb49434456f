"""The retry schedule as a pure function: capped exponential backoff with full jitter."""

from __future__ import annotations

import random


def backoff_seconds(attempt: int, *, base: float, cap: float, rng: random.Random | None = None) -> float:
    """Delay before retry number ``attempt`` (1-based): uniform in [0, min(cap, base * 2**(attempt-1))].

    Full jitter spreads retries of a burst that failed together (AWS architecture blog's
    "Exponential Backoff And Jitter"); the cap bounds the wait however many attempts failed.
    """
    if attempt < 1:
        raise ValueError("attempt is 1-based")
    ceiling = min(cap, base * (2 ** (attempt - 1)))
    return (rng or random).uniform(0.0, ceiling)
