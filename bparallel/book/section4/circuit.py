"""When each part of the induction circuit forms through training (chapter 13): formation
steps read off the per-head probes of a fresh-data run, and the hypotheses on what the
phase change waits for, tested over seeds.

Induction in a Transformer of two or more layers is a known circuit (Olsson et al. 2022): a
*previous-token head* (attention on position ``t - 1``) in an early layer, then an
*induction head* that matches the current token against that head's output and attends to
the token after its earlier occurrence. A run that records every head's scores
(:mod:`bparallel.transformer.head_probes`, in its manifest entry's ``head_probes``: the
previous-token and induction scores, one list of ``H`` floats per layer, at every probe
step) gives per run (:func:`formation`):

- the step a **previous-token head forms**: the first probe step that starts
  :data:`~bparallel.transformer.learning.LEARNED_IN_A_ROW` probes in a row at which some head
  of a layer below the last scores at least ``tau_prev`` (:data:`THRESHOLDS`, first value;
  a uniform causal head over ``T = 100`` positions scores 0.04, a head on ``t - 1`` 1);
- the step an **induction head forms**: the same rule on the induction score, over the
  layers above the first, at ``tau_ind`` (uniform: about 0.01, a perfect induction head 1);
- the step the **loss falls**: the book's learning rule
  (:func:`~bparallel.transformer.learning.steps_to_threshold`, the task's threshold of 0.9
  for ``LEARNED_IN_A_ROW`` evaluations in a row), on the probe set's accuracy on the
  predictable positions at the same probe steps, so that the three steps share one clock;
- which layer and head carry each part: the best-scoring head at its formation step, and
  how many heads are above the threshold at the last probe.

:func:`sensitivity` repeats the formation steps over every threshold of :data:`THRESHOLDS`.

The hypotheses (:func:`hypotheses`), each a change across seeds paired by seed (the same
seed trains every head count), with a t-interval, two-sided p-values and Holm's correction
over the chapter's family (:func:`~.statistics.family_verdicts`, which also gives the
smallest effect each test could find):

- **H1, the phase change waits for the previous-token head**: per configuration, the loss
  falls after the previous-token head forms (``loss - prev > 0``; a reversal fails it);
- **H2, the delay between head counts is that head's**: from 1 head to ``h`` heads at equal
  attention width, the previous-token head forms later (``delta prev > 0``), and the lag
  from it to the fall of the loss does not change (a significant change of the lag fails
  it: then part of the delay lies elsewhere);
- **H3, the delay follows head size or head count** (:func:`size_or_count`, on the learning
  times of chapter 12's runs, every arm): at a fixed head size of 16, more heads learn later;
  at a fixed head count, larger heads learn sooner.

The **scale control** (:func:`scale_tests`, its own family, stated before its runs): the
head size enters a head's computation through its width and through the scale ``1/sqrt(D)``
of its logits, under which an Adam step moves a logit by about ``sqrt(D)`` times the rate
(:mod:`bparallel.transformer.design`). With the scale ``sqrt(W)/D`` every head moves as one
head of the whole width: **S1**, sixteen heads learn sooner scaled than not; **S2**, scaled,
they learn when one head of the width does (a resolved delay either way fails it: then the
scale is not the whole of it).

A configuration with fewer than :data:`MIN_SEEDS` seeds shipped is *not testable*, never a
reason to withhold the verdict of those that are.
"""

from __future__ import annotations

import json
import math
import os
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import numpy as np

from ..._checks import one_of
from ...transformer.learning import LEARNING_THRESHOLD, steps_to_threshold
from ...transformer.shipped import MODELS_ROOT
from ..verdicts import Outcome, Verdict
from .statistics import claim_over_units, family_verdicts, paired_effect

#: The fresh-data profiles whose runs record per-head probes through training: the
#: learning-rate controls of chapter 12 and the settling recipe.
CIRCUIT_PROFILES = ("induction-fresh-lr3e-3", "induction-fresh-lr3e-4",
                    "induction-nodropout-cosine", "induction-scale-lr3e-3")
#: The scores whose thresholds mark a part as formed: the first value is the chapter's, the
#: others its sensitivity analysis (:func:`sensitivity`). Previous-token: about 7 times a
#: uniform head's 0.04; a formed head scores about 0.5 (it attends one back on the repeated
#: half). Induction: a formed head scores about 0.97.
THRESHOLDS = {"previous_token": (0.3, 0.2, 0.4), "induction": (0.5, 0.3, 0.7)}
#: The parts of the circuit, in the order a reader meets them, and the loss's fall.
PARTS = ("previous_token", "induction", "loss")
#: Seeds per configuration before its hypotheses can be tested (the design's three).
MIN_SEEDS = 3
#: The chapter's family, stated before the probed runs that complete it and unchanged by
#: them (:func:`planned_configurations`): the probed runs of the learning-rate control at
#: 3e-3, every configuration of chapter 12's fixed-attention-width arm (width 256) and of
#: its fixed-width arm (width 64). Probed runs of other profiles are exploratory.
PLANNED_PROFILE = "induction-fresh-lr3e-3"
PLANNED_CONFIGS = ((1, 256), (4, 64), (8, 32), (16, 16), (1, 64), (4, 16), (8, 8), (16, 4))
#: The scale control, a second family stated before its runs (:func:`scale_tests`): the
#: learning-rate control at 3e-3 with each head's logits scaled by ``sqrt(W)/D`` instead of
#: ``1/sqrt(D)`` (:meth:`~bparallel.transformer.design.Recipe.query_gain`: a step then moves
#: every head's logits as far as one head of the whole width ``W``'s), at 16 heads of both
#: arms; their one head of the same width has a gain of 1, the planned profile's run.
SCALE_PROFILE = "induction-scale-lr3e-3"
SCALE_CONFIGS = ((16, 16), (16, 4))
#: The families a test belongs to (``family`` of a test row); the first two stated before
#: their runs (:data:`STATED`).
FAMILIES = ("primary", "scale", "exploratory")
STATED = ("primary", "scale")
#: The tests of the scale family (the rest of the stated tests are the primary family's).
SCALE_TESTS = ("S1", "S2")
#: The tests that claim no change, tested two-sided: a resolved change either way
#: (:data:`RESOLVED`) is against the claim.
CLAIMS_NONE = ("H2b", "S2")
#: The outcomes of a change whose interval leaves 0 out, on either side.
RESOLVED = (Outcome.AS_CLAIMED, Outcome.AGAINST)
#: The graph measure read around the phase change (exploratory, :func:`graph_around`):
#: Algorithm 1 as defined, the layer's mixing time, as the runs' training probes record it.
GRAPH_MEASURE = "mixing_time.definition"


def _layers(part: str, n_layers: int) -> range:
    """The layers that can carry ``part``: a previous-token head feeds a later layer (not
    the last), an induction head reads an earlier one (not the first)."""
    return range(n_layers - 1) if part == "previous_token" else range(1, n_layers)


def _probes(entry: Mapping[str, Any]) -> Mapping[str, Any]:
    hp = entry.get("head_probes") if isinstance(entry, Mapping) else None
    if not isinstance(hp, Mapping) or not hp.get("step"):
        raise ValueError("entry: expected a manifest entry with per-head probes "
                         "(head_probes with steps)")
    return hp


def score_series(entry: Mapping[str, Any], part: str) -> tuple[np.ndarray, np.ndarray]:
    """The probe steps ``(S,)`` and ``part``'s scores ``(S, L, H)`` of a manifest entry
    (``part``: ``"previous_token"`` or ``"induction"``)."""
    one_of(part, "part", list(THRESHOLDS), "parts")
    hp = _probes(entry)
    scores = np.asarray(hp[part], dtype=np.float64)  # (S, L, H)
    steps = np.asarray(hp["step"], dtype=np.int64)
    if scores.ndim != 3 or len(scores) != len(steps):
        raise ValueError(f"entry's {part} scores have shape {scores.shape}: expected one "
                         f"(L, H) list per probe step ({len(steps)})")
    return steps, scores


def part_formed(entry: Mapping[str, Any], part: str, threshold: float | None = None
                ) -> dict[str, Any]:
    """When ``part`` (``"previous_token"``, ``"induction"``) forms in the run of ``entry``:
    ``step`` (the first probe step starting :data:`LEARNED_IN_A_ROW` probes in a row at
    which some head of its layers, :func:`_layers`, scores at least ``threshold``, default
    the chapter's; ``None``: never), the best head there (``layer``, ``head``, 0-based, and
    its ``score``), and ``heads_final``, how many heads of those layers are at the threshold
    at the last probe."""
    steps, scores = score_series(entry, part)
    tau = THRESHOLDS[part][0] if threshold is None else float(threshold)
    if not 0 < tau <= 1:
        raise ValueError(f"threshold={threshold!r}: expected a score in (0, 1]")
    layers = list(_layers(part, scores.shape[1]))
    if not layers:
        raise ValueError(f"entry has {scores.shape[1]} layer(s): the circuit needs two")
    mine = scores[:, layers]  # (S, L', H)
    best = mine.reshape(len(steps), -1).max(1)  # (S,)
    step = steps_to_threshold(steps.tolist(), np.clip(best, 0.0, 1.0).tolist(), tau)
    out: dict[str, Any] = {"step": step, "layer": None, "head": None, "score": None,
                           "heads_final": int((mine[-1] >= tau).sum()), "threshold": tau}
    if step is not None:
        at = int(np.searchsorted(steps, step))
        flat = int(mine[at].argmax())
        layer, head = divmod(flat, mine.shape[2])
        out.update(layer=layers[layer], head=head, score=float(mine[at].max()))
    return out


def loss_falls(entry: Mapping[str, Any]) -> int | None:
    """The step the loss falls: the book's learning rule on the probe set's accuracy on the
    predictable positions at the probe steps (:func:`~bparallel.transformer.learning.
    steps_to_threshold`, the task's threshold, :data:`LEARNED_IN_A_ROW` in a row); ``None``
    when it never does."""
    hp = _probes(entry)
    return steps_to_threshold(hp["step"], hp["accuracy_predictable"],
                              LEARNING_THRESHOLD[entry.get("task", "induction")])


def formation(entry: Mapping[str, Any]) -> dict[str, Any]:
    """Per run: each part's :func:`part_formed` at the chapter's thresholds and the step the
    loss falls (:func:`loss_falls`), with the run's ``heads``, ``head_size``, ``seed`` and
    ``profile``."""
    out = {k: entry.get(k) for k in ("heads", "head_size", "seed", "profile")}
    for part in THRESHOLDS:
        out[part] = part_formed(entry, part)
    out["loss"] = loss_falls(entry)
    return out


def sensitivity(entry: Mapping[str, Any]) -> dict[str, dict[float, int | None]]:
    """Per part, its formation step at every threshold of :data:`THRESHOLDS`."""
    return {part: {tau: part_formed(entry, part, tau)["step"] for tau in taus}
            for part, taus in THRESHOLDS.items()}


# --------------------------------------------------------------------------- runs


def probed_entries(models_root: str | os.PathLike = MODELS_ROOT,
                   profiles: Sequence[str] = CIRCUIT_PROFILES) -> list[dict[str, Any]]:
    """Every shipped run of ``profiles`` whose manifest entry holds per-head probes, with
    its ``profile``, sorted by profile, head count, head size and seed. A profile not
    shipped yet has none."""
    out = []
    for profile in profiles:
        path = Path(models_root) / profile / "manifest.json"
        if not path.is_file():
            continue
        with open(path, encoding="utf-8") as f:
            models = json.load(f)["models"]
        for entry in models.values():
            if entry.get("head_probes") and entry.get("head_probes", {}).get("step"):
                out.append({**entry, "profile": profile, "heads": int(entry["heads"]),
                            "head_size": int(entry["head_size"]), "seed": int(entry["seed"])})
    out.sort(key=lambda e: (list(profiles).index(e["profile"]), e["heads"], e["head_size"],
                            e["seed"]))
    return out


def graph_around(entry: Mapping[str, Any], f: Mapping[str, Any] | None = None
                 ) -> dict[str, Any] | None:
    """The graph of the layer that carries the previous-token head, around the phase change:
    :data:`GRAPH_MEASURE` of that layer (heads combined with their learned weights) at the
    last training probe before the head forms (``before``, at ``before_step``) and the first
    at or after the loss falls (``after``, at ``after_step``), from the entry's ``probes``
    (:func:`~bparallel.transformer.measure.training_probe`, a coarser schedule than the head
    probes'); ``None`` where a part never formed, no probe lies on a side, or a value is not
    finite. ``f``: the entry's :func:`formation`, if computed already."""
    f = formation(entry) if f is None else f
    prev, loss = f["previous_token"], f["loss"]
    probes = entry.get("probes") or {}
    steps = list(probes.get("step", []))
    if prev["step"] is None or loss is None or GRAPH_MEASURE not in probes:
        return None
    before = [s for s in steps if s < prev["step"]]
    after = [s for s in steps if s >= loss]
    if not before or not after:
        return None
    out = {"layer": prev["layer"], "before_step": before[-1], "after_step": after[0]}
    for side in ("before", "after"):
        value = probes[GRAPH_MEASURE][steps.index(out[f"{side}_step"])][prev["layer"]]
        if value is None or not math.isfinite(value):
            return None
        out[side] = float(value)
    return out


def formation_rows(entries: Sequence[Mapping[str, Any]]) -> list[dict[str, Any]]:
    """:func:`formation` of every entry, flat: ``prev``, ``ind``, ``loss`` (steps, ``None``:
    never), where each part sits (``prev_at``, ``ind_at``: ``(layer, head)``, 0-based) and
    the previous-token head's layer around the phase change (``graph``,
    :func:`graph_around`)."""
    rows = []
    for e in entries:
        f = formation(e)
        p, i = f["previous_token"], f["induction"]
        rows.append({"profile": f["profile"], "heads": f["heads"], "head_size": f["head_size"],
                     "seed": f["seed"], "prev": p["step"], "ind": i["step"], "loss": f["loss"],
                     "prev_at": None if p["step"] is None else (p["layer"], p["head"]),
                     "ind_at": None if i["step"] is None else (i["layer"], i["head"]),
                     "prev_heads": p["heads_final"], "ind_heads": i["heads_final"],
                     "graph": graph_around(e, f)})
    return rows


def graph_tests(rows: Sequence[Mapping[str, Any]]) -> list[dict[str, Any]]:
    """Exploratory (stated after the runs, so never a verdict): per configuration, the
    change of the previous-token head's layer's :data:`GRAPH_MEASURE` from before that head
    forms to after the loss falls (:func:`graph_around`), paired by seed; claimed ``< 0``,
    the paper's view that a layer that learns its task mixes faster (a previous-token head
    is a path, the slowest-mixing graph of its size)."""
    tests = []
    for profile, h, d in configurations(rows):
        mine = [r for r in rows if (r["profile"], r["heads"], r["head_size"]) == (profile, h, d)
                and r.get("graph") is not None]
        before = {r["seed"]: r["graph"]["before"] for r in mine}
        after = {r["seed"]: r["graph"]["after"] for r in mine}
        tests.append(_change("G", before, after, -1, profile=profile, heads=h, head_size=d,
                             family="exploratory"))
    return tests


def _by_seed(rows: Sequence[Mapping[str, Any]], profile: str, heads: int, head_size: int,
             key: str) -> dict[int, float]:
    return {r["seed"]: float(r[key]) for r in rows
            if (r["profile"], r["heads"], r["head_size"]) == (profile, heads, head_size)
            and r.get(key) is not None}


def _change(name: str, before: Mapping[int, float], after: Mapping[int, float],
            direction: int, **labels: Any) -> dict[str, Any]:
    """A paired change across seeds in the shape of chapter 12's rows (``seeds``, ``change``,
    ``low``, ``high``, ``p_value``), with its claimed ``direction`` and ``name``."""
    seeds = sorted(set(before) & set(after))
    row: dict[str, Any] = {"test": name, "direction": direction, "seeds": len(seeds),
                           "change": None, "low": None, "high": None, "p_value": None,
                           **labels}
    if seeds:
        pe = paired_effect([before[s] for s in seeds], [after[s] for s in seeds])
        row.update(change=pe.effect.mean, low=pe.effect.low, high=pe.effect.high,
                   p_value=pe.p_value)
    return row


def configurations(rows: Sequence[Mapping[str, Any]]) -> list[tuple[str, int, int]]:
    """The ``(profile, heads, head_size)`` of the rows, in their order."""
    return list(dict.fromkeys((r["profile"], r["heads"], r["head_size"]) for r in rows))


def planned_configurations() -> list[tuple[str, int, int]]:
    """The configurations of the chapter's family (:data:`PLANNED_CONFIGS` at
    :data:`PLANNED_PROFILE`), shipped or not."""
    return [(PLANNED_PROFILE, h, d) for h, d in PLANNED_CONFIGS]


def family_of(profile: str, heads: int, head_size: int) -> str:
    """``"primary"`` for a planned configuration, else ``"exploratory"``."""
    return "primary" if (profile, heads, head_size) in planned_configurations() \
        else "exploratory"


def formation_tests(rows: Sequence[Mapping[str, Any]]) -> list[dict[str, Any]]:
    """H1 and H2 (module docstring) as paired changes over seeds, for every planned
    configuration (:func:`planned_configurations`, with or without runs) and every other
    configuration of the rows: per configuration the lag ``loss - prev`` (H1, claimed
    ``> 0``); per profile and head count ``h > 1`` of the same attention width as its 1-head
    configuration, the change of ``prev`` from 1 to ``h`` heads (H2a, claimed ``> 0``) and of
    the lag (H2b, claimed 0, tested two-sided: the sign stated is the side that would fail
    it, ``+1``). Each test names its ``family`` (:func:`family_of`). Not yet tested:
    :func:`decide` adds ``p``, ``p_holm``, ``outcome``, ``smallest``."""
    tests = []
    lag = [{**r, "lag": None if r["loss"] is None or r["prev"] is None
            else r["loss"] - r["prev"]} for r in rows]
    configs = list(dict.fromkeys(planned_configurations() + configurations(rows)))
    for profile, h, d in configs:
        prev, loss = (_by_seed(rows, profile, h, d, k) for k in ("prev", "loss"))
        tests.append(_change("H1", prev, loss, +1, profile=profile, heads=h, head_size=d,
                             family=family_of(profile, h, d)))
    for profile, h, d in configs:
        if h == 1:
            continue
        ones = [c for c in configs if c[0] == profile and c[1] == 1 and c[2] == h * d]
        if not ones:
            continue
        _, _, d1 = ones[0]
        family = family_of(profile, h, d)
        tests.append(_change("H2a", _by_seed(rows, profile, 1, d1, "prev"),
                             _by_seed(rows, profile, h, d, "prev"), +1, profile=profile,
                             heads=h, head_size=d, family=family))
        tests.append(_change("H2b", _by_seed(lag, profile, 1, d1, "lag"),
                             _by_seed(lag, profile, h, d, "lag"), +1, profile=profile,
                             heads=h, head_size=d, family=family))
    return tests


def scale_tests(rows: Sequence[Mapping[str, Any]]) -> list[dict[str, Any]]:
    """The scale control (:data:`SCALE_CONFIGS`, family ``"scale"``), on the step the loss
    falls, paired by seed, for each configuration ``h x d``: **S1**, scaled, the ``h`` heads
    learn sooner than at ``1/sqrt(D)`` (``loss`` from :data:`PLANNED_PROFILE` to
    :data:`SCALE_PROFILE`, claimed ``< 0``); **S2**, scaled, they learn when one head of the
    same width does (``loss`` of ``1 x hd`` at :data:`PLANNED_PROFILE`, the same run at a
    gain of 1, to ``h x d`` scaled: claimed 0, two-sided as H2b, the side stated ``+1``)."""
    tests = []
    for h, d in SCALE_CONFIGS:
        scaled = _by_seed(rows, SCALE_PROFILE, h, d, "loss")
        tests.append(_change("S1", _by_seed(rows, PLANNED_PROFILE, h, d, "loss"), scaled, -1,
                             profile=SCALE_PROFILE, heads=h, head_size=d, family="scale"))
        tests.append(_change("S2", _by_seed(rows, PLANNED_PROFILE, 1, h * d, "loss"), scaled,
                             +1, profile=SCALE_PROFILE, heads=h, head_size=d, family="scale"))
    return tests


def size_or_count(times: Mapping[tuple[int, int, int], int | None]) -> list[dict[str, Any]]:
    """H3 (module docstring) on learning times ``times[(heads, head_size, seed)]`` (``None``:
    not learned, left out of its pair): at a fixed head size of 16, the change from 1 to
    16 heads (H3 count, claimed ``> 0``: later); at each fixed head count, from the
    smallest head size to the largest (H3 size, claimed ``< 0``: sooner)."""
    def of(h: int, d: int) -> dict[int, float]:
        return {s: float(t) for (hh, dd, s), t in times.items()
                if (hh, dd) == (h, d) and t is not None}

    configs = sorted({(h, d) for h, d, _ in times})
    tests = []
    if (1, 16) in configs and (16, 16) in configs:
        tests.append(_change("H3 count", of(1, 16), of(16, 16), +1, heads=16, head_size=16,
                             fewer=(1, 16), family="primary"))
    for h in sorted({h for h, _ in configs}):
        sizes = sorted(d for hh, d in configs if hh == h)
        if len(sizes) >= 2:
            tests.append(_change("H3 size", of(h, sizes[0]), of(h, sizes[-1]), -1, heads=h,
                                 head_size=sizes[-1], fewer=(h, sizes[0]), family="primary"))
    return tests


def _testable(t: Mapping[str, Any], min_seeds: int) -> bool:
    return t["seeds"] >= min_seeds and t["change"] is not None


def decide(tests: Sequence[dict[str, Any]], min_seeds: int = MIN_SEEDS) -> dict[str, int]:
    """Holm's correction over each family of ``tests`` (:func:`formation_tests` and
    :func:`size_or_count` together; ``family``: :data:`FAMILIES`), in place: each test with at
    least ``min_seeds`` seeds gets ``p``, ``p_holm``, ``outcome`` (in its claimed direction)
    and ``smallest`` (the smallest change it finds at 80% power at the level of Holm's first
    step); the others get ``outcome`` ``None`` (not testable). The primary and the scale
    family were stated before their runs (:data:`STATED`): their tests without their runs
    yet (*pending*) count as p = 1, so that a family's size is the stated one. Returns each
    family's size (the exploratory one's ``0`` with no test it can decide)."""
    for t in tests:
        one_of(t.get("family"), "tests' family", FAMILIES, "families")
        t.setdefault("outcome", None)
        t.setdefault("smallest", None)
    sizes = {}
    for family in FAMILIES:
        mine = [t for t in tests if t["family"] == family]
        stated = family in STATED
        decidable = bool(mine) and (stated or any(_testable(t, min_seeds) for t in mine))
        sizes[family] = (family_verdicts(mine, [], lambda t: t["direction"], min_seeds,
                                         stated=stated) if decidable else 0)
    return sizes


def pending_tests(tests: Sequence[Mapping[str, Any]], min_seeds: int = MIN_SEEDS,
                  family: str = "primary") -> int:
    """How many tests of a stated ``family`` wait for their runs."""
    one_of(family, "family", STATED, "stated families")
    return sum(t["family"] == family and not _testable(t, min_seeds) for t in tests)


def stated_family(name: str) -> str:
    """The stated family whose tests named ``name`` decide a verdict (:data:`STATED`)."""
    return "scale" if name in SCALE_TESTS else "primary"


def _tally(tests: Sequence[Mapping[str, Any]], name: str) -> Verdict:
    mine = [t for t in tests if t["test"] == name and t.get("outcome") is not None
            and t["family"] == stated_family(name)]
    if name in CLAIMS_NONE:  # claimed no change: a resolved change either way fails it
        against = sum(t["outcome"] in RESOLVED for t in mine)
        holding = len(mine) - against
        return claim_over_units(holding, against, len(mine))
    holding = sum(t["outcome"] is Outcome.AS_CLAIMED for t in mine)
    against = sum(t["outcome"] is Outcome.AGAINST for t in mine)
    return claim_over_units(holding, against, len(mine))


def hypotheses(tests: Sequence[Mapping[str, Any]]) -> dict[str, Verdict]:
    """The verdict of each hypothesis over its tests of the primary family (decided by
    :func:`decide`; exploratory tests carry no verdict), by the book's rule over units
    (:func:`~.statistics.claim_over_units`): ``H1``; ``H2``, the weaker of H2a and H2b
    (H2b fails on any resolved change of the lag, and holds where none is resolved: within
    the smallest change it could find); ``H3 count`` and ``H3 size``. *not testable* where
    no test had :data:`MIN_SEEDS` seeds."""
    order = [Verdict.FAILS, Verdict.NOT_SUPPORTED, Verdict.HOLDS_WITH_CONDITIONS,
             Verdict.HOLDS, Verdict.NOT_TESTABLE]
    h2a, h2b = _tally(tests, "H2a"), _tally(tests, "H2b")
    h2 = Verdict.NOT_TESTABLE if Verdict.NOT_TESTABLE in (h2a, h2b) else min(
        (h2a, h2b), key=order.index)
    return {"H1": _tally(tests, "H1"), "H2": h2, "H3 count": _tally(tests, "H3 count"),
            "H3 size": _tally(tests, "H3 size"), **{n: _tally(tests, n) for n in SCALE_TESTS}}


def run_counts(rows: Sequence[Mapping[str, Any]]) -> dict[tuple[str, int, int], int]:
    """Seeds shipped per ``(profile, heads, head_size)``."""
    out: dict[tuple[str, int, int], int] = {}
    for r in rows:
        k = (r["profile"], r["heads"], r["head_size"])
        out[k] = out.get(k, 0) + 1
    return out


def fmt_step(value: float | int | None) -> str:
    """A step for a table: ``"1,200"``; ``None``: ``"never"``; a mean to the step."""
    if value is None or (isinstance(value, float) and not math.isfinite(value)):
        return "never"
    return f"{round(value):,}"
