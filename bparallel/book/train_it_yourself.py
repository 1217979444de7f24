"""Chapter 15, the training page: the facts its prose states and the benchmark it shows.

The page itself is JavaScript (:mod:`bparallel.book.render.js_trainer`); what the chapter
says about it comes from here: :func:`page_facts`, the tiny model's settings (the
``induction-tiny`` profile) beside chapter 12's (``induction-fresh``) and the learning rule,
and :func:`benchmark_table`, the last record of ``benchmarks/bench_trainer.py`` (the median
learning steps of the package and the page over seeds, and the page's speed), and
:func:`ordering_facts`, whether the benchmark's ordering of head counts, in the page and in
the package, agrees with chapter 12's over its seeds.
"""

from __future__ import annotations

import json
import math
from pathlib import Path
from typing import Any

from ..transformer.design import get_profile
from ..transformer.learning import LEARNED_IN_A_ROW

__all__ = ["TINY_PROFILE", "CH12_PROFILE", "BENCHMARK_RECORD", "page_facts", "benchmark_table",
           "ch12_medians", "ordering_facts", "agreement_words"]

TINY_PROFILE = "induction-tiny"
CH12_PROFILE = "induction-fresh"
#: The benchmark's record, written by ``benchmarks/bench_trainer.py``, under the repository.
BENCHMARK_RECORD = Path("benchmarks") / "records" / "bench_trainer.json"
#: The page's speed goal: the default comparison reaches the learning threshold
#: within this many seconds of wall time per configuration, in headless Chromium.
GOAL_S = 60.0
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


def ch12_medians(models_root: str | Path | None = None) -> dict[int, float | None]:
    """Chapter 12's censored median learning step of induction in the fixed-width arm, per
    head count (:func:`~bparallel.book.section4.graph_learning.learning_rows` of the shipped
    ``induction-fresh`` runs; ``None`` where the median run did not learn)."""
    from .section4 import graph_learning, models

    kwargs = {} if models_root is None else {"models_root": models_root}
    runs = models.fresh_runs(tasks=("induction",), **kwargs)
    return {r["heads"]: r["median_time"] for r in graph_learning.learning_rows(runs, "induction")
            if r["arm"] == "width"}


def _order(fewer: float | None, more: float | None) -> int:
    """-1: the fewer heads learn first, 1: the more heads first, 0: the same step (``None``,
    not learned, is later than every step)."""
    a, b = (math.inf if x is None else x for x in (fewer, more))
    return (a > b) - (a < b)


def ordering_facts(path: str | Path | None = None,
                   ch12: dict[int, float | None] | None = None) -> dict[str, Any]:
    """Whether the benchmark's record (at ``path``, default :data:`BENCHMARK_RECORD`) orders
    its fewest and most head counts as chapter 12 does (``ch12``: its medians per head
    count, default :func:`ch12_medians`): ``bench.heads.{fewer,more}``, ``bench.seeds``, per
    side (``page``, ``package``) the medians ``bench.<side>.{fewer,more}`` (of the fewest
    and the most heads), the seeds in which the
    fewer heads learned first, at the same evaluation or later
    (``bench.<side>.seeds.{fewer_first,same,more_first}``, seed by seed) and
    ``bench.<side>.agrees`` (1 when its order of the medians is chapter 12's, else 0);
    ``bench.ch12.{fewer,more}``, chapter 12's medians; the page's speed,
    ``bench.page.seconds.{fewer,more}`` (median seconds from Train to the learning step) and
    ``bench.page.ms.{fewer,more}`` (milliseconds a step), where every one of its runs
    learned, beside ``bench.goal_s`` (:data:`GOAL_S`), and how many times faster a step runs
    on TensorFlow.js's WASM backend than on its CPU backend in Node,
    ``bench.node.speedup.{low,high}`` (the least and the most over the head counts).
    ``{}`` where the record is missing, has no two head counts, or chapter 12 has no median
    for them."""
    path = _ROOT / BENCHMARK_RECORD if path is None else Path(path)
    if not path.is_file():
        return {}
    record = json.loads(path.read_text(encoding="utf-8"))
    heads = sorted(int(h) for h in record["per_heads"])
    ch12 = ch12_medians() if ch12 is None else ch12
    if len(heads) < 2 or any(ch12.get(h) is None for h in (heads[0], heads[-1])):
        return {}
    fewer, more = heads[0], heads[-1]
    budget = int(record["budget"])
    facts: dict[str, Any] = {"bench.heads.fewer": fewer, "bench.heads.more": more,
                             "bench.seeds": len(record["seeds"]),
                             "bench.ch12.fewer": ch12[fewer], "bench.ch12.more": ch12[more]}
    ch12_order = _order(ch12[fewer], ch12[more])
    for side in ("page", "package"):
        rows = [record["per_heads"][str(h)] for h in (fewer, more)]
        if any(f"{side}_steps" not in r for r in rows):
            continue
        medians = [r[f"{side}_median"] for r in rows]
        facts[f"bench.{side}.fewer"], facts[f"bench.{side}.more"] = medians
        late = budget + 1  # a run that never learned: later than every learning step
        pairs = zip(*([late if s is None else s for s in r[f"{side}_steps"]] for r in rows),
                    strict=True)
        orders = [_order(a, b) for a, b in pairs]
        facts[f"bench.{side}.seeds.fewer_first"] = orders.count(-1)
        facts[f"bench.{side}.seeds.same"] = orders.count(0)
        facts[f"bench.{side}.seeds.more_first"] = orders.count(1)
        facts[f"bench.{side}.agrees"] = int(_order(*medians) == ch12_order)
    rows = [record["per_heads"][str(h)] for h in (fewer, more)]
    if all(r.get("page_median_s") is not None for r in rows):
        facts["bench.goal_s"] = GOAL_S
        for which, r in zip(("fewer", "more"), rows, strict=True):
            facts[f"bench.page.seconds.{which}"] = float(r["page_median_s"])
            facts[f"bench.page.ms.{which}"] = float(r["page_ms_per_step"])
    node = record.get("node_step_ms", {})
    ratios = [node[f"cpu.h{h}"] / node[f"wasm.h{h}"] for h in heads
              if node.get(f"wasm.h{h}") and node.get(f"cpu.h{h}")]
    if ratios:
        facts["bench.node.speedup.low"], facts["bench.node.speedup.high"] = (min(ratios),
                                                                            max(ratios))
    return facts


def agreement_words(facts: dict[str, Any], side: str) -> str:
    """``"the same as chapter 12's"`` or ``"not chapter 12's"``: whether ``side``'s
    (``"page"``, ``"package"``) ordering of the medians in :func:`ordering_facts` is
    chapter 12's. Raises ``ValueError`` where ``facts`` has no such ordering."""
    key = f"bench.{side}.agrees"
    if key not in facts:
        raise ValueError(f"side={side!r}: no ordering of the benchmark's record for it "
                         "(run benchmarks/bench_trainer.py)")
    return "the same as chapter 12's" if facts[key] else "not chapter 12's"
