"""Timing helper shared by the benchmark scripts (run as ``python benchmarks/<name>.py``)."""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import Any


def best_of(fn: Callable[[], Any], repeats: int) -> tuple[float, Any]:
    """The fastest of ``repeats`` calls of ``fn`` (seconds) and the last result."""
    best, out = float("inf"), None
    for _ in range(repeats):
        t = time.perf_counter()
        out = fn()
        best = min(best, time.perf_counter() - t)
    return best, out
