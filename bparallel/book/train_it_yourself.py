"""Chapter 15, the training page: the facts its prose states and the benchmark it shows.

The page itself is JavaScript (:mod:`bparallel.book.render.js_trainer`); what the chapter
says about it comes from here: :func:`page_facts`, the tiny model's settings (the
``induction-tiny`` profile) beside chapter 12's (``induction-fresh``) and the learning rule,
and :func:`benchmark_table`, the last record of ``benchmarks/bench_trainer.py`` (the median
learning steps of the package and the page over seeds, and the page's speed).
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from ..transformer.design import get_profile
from ..transformer.learning import LEARNED_IN_A_ROW

__all__ = ["TINY_PROFILE", "CH12_PROFILE", "BENCHMARK_RECORD", "page_facts", "benchmark_table"]

TINY_PROFILE = "induction-tiny"
CH12_PROFILE = "induction-fresh"
#: The benchmark's record, written by ``benchmarks/bench_trainer.py``, under the repository.
BENCHMARK_RECORD = Path("benchmarks") / "records" / "bench_trainer.json"
_ROOT = Path(__file__).resolve().parents[2]
_FIELDS = ("d_model", "n_layers", "seq_len", "vocab_size", "batch_size", "dropout", "lr")


def page_facts() -> dict[str, float]:
    """The numbers chapter 15's prose states: ``tiny.*`` (the training page's model and
    schedule, the ``induction-tiny`` profile, with the learning rule's threshold and run
    of evaluations) and ``ch12.*`` (chapter 12's ``induction-fresh`` profile)."""
    tiny, ch12 = get_profile(TINY_PROFILE), get_profile(CH12_PROFILE)
    facts: dict[str, float] = {}
    for field in _FIELDS:
        facts[f"tiny.{field}"] = getattr(tiny, field)
        facts[f"ch12.{field}"] = getattr(ch12, field)
    facts.update({"tiny.steps": tiny.steps, "tiny.eval_every": tiny.eval_every,
                  "tiny.heldout": tiny.num_heldout, "tiny.in_a_row": LEARNED_IN_A_ROW,
                  "tiny.threshold": tiny.threshold_of("induction")})
    return facts


def benchmark_table(path: str | Path | None = None) -> list[dict[str, Any]]:
    """One row per head count of the benchmark's record at ``path`` (default
    :data:`BENCHMARK_RECORD`): the median learning step of the package and of the page, the
    page's milliseconds a step and median seconds to the threshold, its backend and the
    seeds; one row saying so where no record exists yet."""
    path = _ROOT / BENCHMARK_RECORD if path is None else Path(path)
    if not path.is_file():
        return [{"heads": "not measured yet: run benchmarks/bench_trainer.py"}]
    record = json.loads(path.read_text(encoding="utf-8"))
    rows = []
    for heads, row in record["per_heads"].items():
        never = row["page_median_s"] is None
        rows.append({
            "heads": int(heads),
            "package median step": row["package_median"],
            "page median step": row["page_median"],
            "page ms a step": row["page_ms_per_step"],
            "page s to threshold": "never" if never else row["page_median_s"],
            "backend": row["page_backend"].upper(),
            "seeds": len(record["seeds"]),
            "measured": record["date"],
        })
    return rows
