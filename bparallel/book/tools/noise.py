"""Last-bit noise of the regression: ``python -m bparallel regress --noise SETTING ...``.

A regression compares fixed inputs (committed models, seeded sequences), so what can still move
a value between machines is the order in which floats are added: the CPU's vector width and
the thread count. :func:`measure_noise` runs the chapters under each setting of
:data:`NOISE_SETTINGS` and records every key's spread, which the tolerances of
``reference/tolerances.json`` must cover :data:`NOISE_FACTOR` times (tested).
"""

from __future__ import annotations

import argparse
import contextlib
import json
import math
import os
import shutil
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from ..._io import atomic_write_text
from .regress import (
    LOG10_P_FLOOR,
    ROOT,
    RegressError,
    _execute,
    _uncached,
    check_profile,
    declared_parameters,
    load_reference,
    notebooks_dir,
    recorded_key,
    recorded_value,
    reference_dir,
    resolve_notebooks,
)

__all__ = ["NOISE_SETTINGS", "MEASURING", "NOISE_FACTOR", "environment", "noise_path",
           "load_noise", "spreads", "merged_spreads", "log10_spread", "recorded_noise",
           "measure_noise"]

#: The sources of last-bit noise a regression may meet on another machine, each as the
#: environment that reproduces it here: the CPU's kernels (torch's ATen, numpy's SIMD
#: dispatch and OpenBLAS) at the AVX2 width, at no vector width at all, and the thread
#: counts the runner may give a kernel. AVX-512 cannot be forced on a machine without it;
#: the AVX2 and scalar kernels add in two other orders, and the references (recorded on
#: whichever machine last updated them) are a third.
NOISE_SETTINGS: dict[str, dict[str, str]] = {
    "native": {},
    "avx2": {"ATEN_CPU_CAPABILITY": "avx2",
             "NPY_DISABLE_CPU_FEATURES": "X86_V4 AVX512_ICL AVX512_SPR",
             "OPENBLAS_CORETYPE": "Haswell"},
    "scalar": {"ATEN_CPU_CAPABILITY": "default",
               "NPY_DISABLE_CPU_FEATURES": "X86_V3 X86_V4 AVX512_ICL AVX512_SPR",
               "OPENBLAS_CORETYPE": "Nehalem"},
    "one-thread": {"OMP_NUM_THREADS": "1", "MKL_NUM_THREADS": "1",
                   "OPENBLAS_NUM_THREADS": "1", "BPARALLEL_WORKERS": "1"},
}

#: The chapters that measure trained models again, whose results the CPU's kernels can move
#: in their last bits: on a machine with AVX-512, the suite's quick regression runs them under
#: the AVX2 setting with their metrics cache off (``tests/book/tools/quick_regression.py``),
#: while the book build ran them natively at the paper profile (the Makefile's ``MEASURING``).
MEASURING = ("08_proxies", "09_amplification", "10_section4_as_defined", "11_across_seeds",
             "12_graph_tasks", "12a_graph_runs", "12b_graph_tests", "12c_graph_pilots",
             "12d_graph_dropout", "12e_graph_horse_race", "12f_graph_heads", "12g_graph_finite",
             "12h_graph_controls", "13_circuit", "14_explorer")

#: A tolerance must be at least this many times the key's measured spread
#: (``tests/book/tools/test_regress.py`` checks every reference against ``reference/noise/``).
NOISE_FACTOR = 4.0


def noise_path(profile: str, root: Path = ROOT) -> Path:
    return reference_dir(root) / "noise" / f"{check_profile(profile)}.json"


def load_noise(profile: str, root: Path = ROOT) -> dict[str, Any]:
    """The recorded noise of ``profile`` (``{"settings": ..., "notebooks": {nb: {key:
    spread}}}``), empty when none is recorded."""
    path = noise_path(profile, root)
    if not path.is_file():
        return {"settings": {}, "notebooks": {}}
    return json.loads(path.read_text())


@contextlib.contextmanager
def environment(values: dict[str, str]) -> Iterator[None]:
    """``os.environ`` with ``values`` set inside the block (the processes started there,
    notebook kernels too, inherit them), restored after."""
    before = {k: os.environ.get(k) for k in values}
    os.environ.update(values)
    try:
        yield
    finally:
        for k, v in before.items():
            if v is None:
                os.environ.pop(k, None)
            else:
                os.environ[k] = v


def spreads(values: dict[str, list[float]]) -> dict[str, float]:
    """Per key, the largest minus the smallest of its finite values (0 for one value);
    a key that is not finite everywhere gets ``inf``."""
    out = {}
    for key, vs in values.items():
        nums = [float(v) for v in vs if isinstance(v, (int, float)) and not isinstance(v, bool)]
        if len(nums) != len(vs):
            continue  # not a number (a label): compared exactly, no noise to measure
        out[key] = (max(nums) - min(nums)) if all(map(math.isfinite, nums)) else math.inf
    return out


def merged_spreads(before: dict[str, float], now: dict[str, float]) -> dict[str, float]:
    """Per key of ``now``, the larger of its spread measured now and the one recorded
    ``before`` (another machine's kernels, whose noise a run here cannot reproduce): the
    noise record only grows with the machines measured. A key no longer computed is
    dropped."""
    return dict(sorted((k, max(v, before.get(k, 0.0))) for k, v in now.items()))


def log10_spread(p: float, spread: float) -> float:
    """The spread of ``log10 p`` over p-values within ``spread`` of ``p`` (in [0, 1]): an
    upper bound, ``log10 min(1, p + spread) - log10 max(p - spread, 10 ** LOG10_P_FLOOR)``,
    for a spread measured on the p-value itself."""
    if spread == 0:
        return 0.0
    if not math.isfinite(spread):
        return math.inf
    low = max(p - spread, 10.0 ** LOG10_P_FLOOR)
    return math.log10(min(1.0, p + spread)) - math.log10(low)


def recorded_noise(profile: str, root: Path = ROOT) -> list[str]:
    """Rewrite ``reference/noise/<profile>.json`` under the keys the references record
    (:func:`~.regress.recorded_key`): a p-value's spread becomes the spread of its logarithm
    (:func:`log10_spread`, about the reference's p-value, read raw or as its logarithm).
    Idempotent; returns the keys renamed. Run before the references are rewritten by
    ``--retolerance`` (``python -m bparallel regress --retolerance`` does both)."""
    record = load_noise(profile, root)
    renamed = []
    for n, spread in record["notebooks"].items():
        reference = load_reference(reference_dir(root) / profile / f"{n}.json")
        out = {}
        for key, s in spread.items():
            name = recorded_key(key)
            if name != key:
                if key in reference:
                    p = reference[key]["value"]
                else:
                    p = 10.0 ** reference[name]["value"] if name in reference else 1.0
                s = log10_spread(p, s)
                renamed.append(f"{n}:{key}")
            out[name] = max(s, out.get(name, 0.0))
        record["notebooks"][n] = dict(sorted(out.items()))
    if renamed:
        atomic_write_text(noise_path(profile, root), json.dumps(record, indent=1,
                                                                sort_keys=True) + "\n")
    return renamed


def measure_noise(args: argparse.Namespace, root: Path = ROOT, out=sys.stdout) -> int:
    """``regress --noise S [S ...]``: run the notebooks under each setting of
    :data:`NOISE_SETTINGS` (the metrics cache off, so each computes what it does not read
    from recorded measures), and record per key the spread of its values across the
    settings and the committed reference in ``reference/noise/<profile>.json``
    (merged with what is there: other notebooks' keys are kept, and a key's spread is the
    largest recorded on any machine, :func:`merged_spreads`). Values enter as the references
    record them (a p-value as its logarithm, :func:`~.regress.recorded_value`), the committed
    reference in its recorded form: a value recorded as 0 (within its tolerance of zero)
    adds its distance from zero to its spread, so that its rule's resolution must hold the
    value itself :data:`NOISE_FACTOR` times over (tested), not only its noise."""
    profile = check_profile(args.profile)
    names = resolve_notebooks(args.notebooks, root)
    unknown = sorted(set(args.noise) - set(NOISE_SETTINGS))
    if unknown:
        raise RegressError(f"unknown noise setting(s) {', '.join(unknown)}; valid: "
                           f"{', '.join(NOISE_SETTINGS)}")
    per_notebook = _uncached(names, root)
    declared = {n: declared_parameters(notebooks_dir(root) / f"{n}.md") for n in names}
    jobs = args.jobs or max(1, min(len(names), (os.cpu_count() or 1)))
    values: dict[str, dict[str, list[float]]] = {n: {} for n in names}
    for setting in args.noise:
        folder = (Path(args.output_dir) / f"noise-{setting}" / profile).resolve()
        # a run folder of its own per setting: a notebook that trains (chapter 07) trains
        # afresh under each setting instead of resuming what another setting trained
        runs = folder / "runs"
        shutil.rmtree(runs, ignore_errors=True)
        mine = {n: {**extra, **({"runs_dir": str(runs)} if "runs_dir" in declared[n] else {})}
                for n, extra in per_notebook.items()}
        with environment(NOISE_SETTINGS[setting]):
            outcomes = _execute(names, {"profile": profile}, folder,
                                jobs=jobs, timeout=args.timeout, retries=args.retries,
                                root=root, out=out, label=f"noise ({setting})",
                                per_notebook=mine)
        failed = [n for n, o in outcomes.items() if not o.ok]
        if failed:
            for n in failed:
                print(f"== {n} ({setting}): {outcomes[n].error}", file=out)
            return 1
        for n, o in outcomes.items():
            for key, v in o.results.items():
                name, v = recorded_value(key, v)  # a p-value's noise is its logarithm's
                values[n].setdefault(name, []).append(v)
    record = load_noise(profile, root)
    record["settings"] = {**record.get("settings", {}),
                          **{s: NOISE_SETTINGS[s] for s in args.noise}}
    for n in names:
        for key, entry in load_reference(reference_dir(root) / profile / f"{n}.json").items():
            if key in values[n]:
                values[n][key].append(entry["value"])
        record["notebooks"][n] = merged_spreads(record["notebooks"].get(n, {}),
                                                spreads(values[n]))
        moving = {k: v for k, v in record["notebooks"][n].items() if v}
        print(f"== {n}: {len(moving)} of {len(record['notebooks'][n])} keys move"
              + "".join(f"\n  {k}: {v:.3g}" for k, v in sorted(moving.items())), file=out)
    path = noise_path(profile, root)
    path.parent.mkdir(parents=True, exist_ok=True)
    record["notebooks"] = dict(sorted(record["notebooks"].items()))
    atomic_write_text(path, json.dumps(record, indent=1, sort_keys=True) + "\n")
    return 0


