"""The papermill regression runner: ``python -m bparallel regress``.

Each text notebook in ``notebooks/`` is converted with jupytext, executed by papermill (in a
subprocess, so a per-notebook timeout can stop it) with the profile's parameters plus any
``-p KEY VALUE`` overrides, and its results JSON is compared key by key with
``reference/<profile>/<notebook>.json`` (:data:`REFERENCE_FOLDER`). References store every
value with its own tolerance; ``--update`` rewrites them and says what changed. Nothing
rewrites them silently.

Reference file format::

    {"example_3_13.phi_min.multi": {"value": 0.49999, "abs": 1e-12, "rel": 1e-09}, ...}

A value passes when ``|value - reference| <= abs + rel * |reference|``. Tolerances for new
keys come from ``reference/tolerances.json``: an ordered list of
``{"notebook": GLOB, "key": GLOB, "abs": A, "rel": R, "why": TEXT}``, first match wins; a
rule with ``"profile"`` applies to that profile's references only. A tolerance at least the
value it guards cannot notice the value going to zero or changing sign: the recorded forms
below keep every tolerance under its value (the test suite checks every reference, outside a
list of at most 10 keys each with its reason). ``retolerance`` re-applies the rules to stored
references, keeping every value.

Recorded forms (p-values as log10 p, values within their tolerance of zero as 0):
:mod:`.recorded`.

A chapter of one's own: ``--root DIR`` runs the notebooks of any folder laid out as this
repository is, ``DIR/notebooks/<name>.md`` (a text notebook whose cell tagged
``parameters`` declares ``profile`` and ``results_dir`` and which ends by writing its
results with :func:`bparallel.book.render.results.save_results`) and its references in
``DIR/reference/<profile>/<name>.json`` (tolerance rules, optional, in
``DIR/reference/tolerances.json``); the kernels import from ``DIR`` first. It works
from an installed copy of the package, outside any checkout (:func:`chosen_root`).
"""

from __future__ import annotations

import argparse
import ast
import contextlib
import json
import math
import os
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor, as_completed
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ..._io import atomic_write_text
from ..render.results import PROFILES, load_results
from .recorded import (
    DEFAULT_TOLERANCE,
    LOG10_P_FLOOR,
    P_VALUE_WORDS,
    ZERO_GUARD,
    RegressError,
    matching_rule,
    recorded_form,
    recorded_key,
    recorded_value,
    recorded_values,
    tolerance_for,
)

__all__ = ["ROOT", "REFERENCE_FOLDER", "DEFAULT_TOLERANCE", "P_VALUE_WORDS", "LOG10_P_FLOOR",
           "ZERO_GUARD", "recorded_key", "recorded_value", "recorded_values", "recorded_form",
           "STAGGER_S", "KERNEL_START_TIMEOUT_S",
           "KERNEL_START_FAILURES", "RegressError", "chosen_root", "notebooks_dir",
           "reference_dir", "available_notebooks", "resolve_notebooks", "TRAIN_FIRST", "run_order",
           "check_profile", "declared_parameters", "parse_value", "Row", "load_reference",
           "load_tolerance_rules", "matching_rule", "tolerance_for", "retolerance", "compare",
           "updated_reference", "Outcome", "run_notebook", "format_table", "add_arguments",
           "SHARED_VARS", "share_of_cores", "run", "main"]

ROOT = Path(__file__).resolve().parents[3]  # the repository
#: The book's recorded results, a folder of the repository beside ``notebooks/`` and
#: ``models/`` (and of any ``--root DIR``): per profile the chapters' regression references
#: (``<profile>/<notebook>.json``, from which the intro's and the README's verdicts are
#: written, :mod:`~bparallel.book.tools.findings`), their tolerance rules
#: (``tolerances.json``) and the measured cross-CPU noise the rules rest on
#: (``noise/<profile>.json``, :mod:`.noise`). Product
#: data, not test fixtures: every reader finds it through :func:`reference_dir`.
REFERENCE_FOLDER = "reference"
STAGGER_S = 2.0
KERNEL_START_TIMEOUT_S = 180  # papermill's default, 60 s, is short on a loaded 2-core machine
# What papermill/nbclient print when a kernel never came up (then the run is retried).
KERNEL_START_FAILURES = ("Kernel didn't respond", "Kernel died before replying",
                         "Address already in use")


# ------------------------------------------------------------------------ discovery
def chosen_root(args: argparse.Namespace, default: Path = ROOT) -> Path:
    """The folder ``--root`` names (absolute), or ``default`` (this repository) without it;
    a ``RegressError`` when the folder has no ``notebooks/``."""
    given = getattr(args, "root", None)
    root = Path(given).expanduser().resolve() if given else default
    if not notebooks_dir(root).is_dir():
        raise RegressError(f"root {given or str(root)!r} has no notebooks/ folder: --root names "
                           f"a folder with notebooks/<name>.md and {REFERENCE_FOLDER}/<profile>/")
    return root


def notebooks_dir(root: Path = ROOT) -> Path:
    return root / "notebooks"


def reference_dir(root: Path = ROOT) -> Path:
    """The recorded results of ``root`` (:data:`REFERENCE_FOLDER`)."""
    return root / REFERENCE_FOLDER


def available_notebooks(root: Path = ROOT) -> list[str]:
    """Names (file stems) of the text notebooks, in order."""
    folder = notebooks_dir(root)
    return sorted(p.stem for p in folder.glob("*.md") if not p.name.startswith("_"))


def resolve_notebooks(names: list[str] | None, root: Path = ROOT) -> list[str]:
    valid = available_notebooks(root)
    if not names:
        return valid
    out = []
    for name in names:
        stem = Path(name).stem
        if stem not in valid:
            raise RegressError(f"unknown notebook {name!r}; valid: {', '.join(valid)}")
        out.append(stem)
    return out


#: The notebooks that take longest: chapter 07 trains the quick profile's paper-task models
#: into ``runs/quick/`` (minutes; the chapters that measure read the committed ones in
#: ``models/quick/``), chapter 12 measures the most models. They start first, side by side,
#: so that the long runs share the cores instead of queueing behind the short ones.
TRAIN_FIRST = ("12_graph_tasks", "07_training")


def run_order(names: list[str]) -> list[str]:
    """``names`` in the order they are started: :data:`TRAIN_FIRST` first, then the rest
    in their own order."""
    first = [n for n in TRAIN_FIRST if n in names]
    return first + [n for n in names if n not in first]


def check_profile(profile: str) -> str:
    if profile not in PROFILES:
        raise RegressError(f"unknown profile {profile!r}; valid: {', '.join(PROFILES)}")
    return profile


def declared_parameters(path: Path) -> dict[str, Any]:
    """Names and literal defaults of the cell tagged ``parameters`` (parsed, never run)."""
    import jupytext

    nb = jupytext.read(path)
    for cell in nb.cells:
        if cell.cell_type == "code" and "parameters" in cell.metadata.get("tags", []):
            out: dict[str, Any] = {}
            for node in ast.parse(cell.source).body:
                if isinstance(node, ast.Assign) and len(node.targets) == 1:
                    target = node.targets[0]
                    if isinstance(target, ast.Name):
                        out[target.id] = ast.literal_eval(node.value)
            return out
    raise RegressError(f"notebook {path.name} has no cell tagged 'parameters'")


def parse_value(text: str) -> Any:
    """A ``-p`` value: a Python literal (number, string, list...) or else the plain string.

    Uses ``ast.literal_eval``, which evaluates literals only (never code).
    """
    try:
        return ast.literal_eval(text)
    except (ValueError, SyntaxError):
        return text


# ----------------------------------------------------------------------- references
@dataclass
class Row:
    key: str
    reference: float | None
    value: float | None
    abs_tol: float
    rel_tol: float

    @property
    def difference(self) -> float | None:
        if self.reference is None or self.value is None:
            return None
        return self.value - self.reference

    @property
    def tolerance(self) -> float:
        return self.abs_tol + self.rel_tol * abs(self.reference or 0.0)

    @property
    def verdict(self) -> str:
        if self.reference is None:
            return "NEW"
        if self.value is None:
            return "MISSING"
        diff = self.difference
        assert diff is not None
        return "PASS" if math.isfinite(diff) and abs(diff) <= self.tolerance else "FAIL"


def load_reference(path: Path) -> dict[str, dict[str, float]]:
    if not path.is_file():
        return {}
    try:
        data = json.loads(path.read_text())
    except json.JSONDecodeError as err:
        raise RegressError(f"reference {path} is not valid JSON: {err}") from err
    for key, entry in data.items():
        if not isinstance(entry, dict) or "value" not in entry:
            raise RegressError(f"reference {path}: entry {key!r} needs a 'value'")
    return data


def load_tolerance_rules(root: Path = ROOT) -> list[dict[str, Any]]:
    path = reference_dir(root) / "tolerances.json"
    if not path.is_file():
        return []
    rules = json.loads(path.read_text())
    for rule in rules:
        if not {"notebook", "key"} <= set(rule) or not ({"abs", "rel"} & set(rule)):
            raise RegressError(f"{path}: each rule needs notebook, key and abs and/or rel")
    return rules


def retolerance(profile: str, root: Path = ROOT) -> list[str]:
    """Rewrite every stored reference of ``profile`` in its recorded form
    (:func:`recorded_form`) with the tolerances of the current rules, keeping every value
    (a p-value as its logarithm, a value within its tolerance of zero as 0); returns the
    keys whose tolerance or recorded form changed."""
    rules = load_tolerance_rules(root)
    changed = []
    for path in sorted((reference_dir(root) / check_profile(profile)).glob("*.json")):
        data = load_reference(path)
        values = recorded_form({k: e["value"] for k, e in data.items()}, path.stem, rules,
                               profile)
        new = {}
        for key, entry in data.items():
            name = recorded_key(key)
            tol = tolerance_for(path.stem, name, rules, profile, values[name])
            new[name] = {"value": values[name], **tol}
            if name != key or values[name] != entry["value"] or (
                    entry.get("abs"), entry.get("rel")) != (tol["abs"], tol["rel"]):
                changed.append(f"{path.stem}:{key}" + (f" -> {name}" if name != key else ""))
        atomic_write_text(path, json.dumps(new, indent=1, sort_keys=True) + "\n")
    return changed


def compare(
    results: dict[str, float], reference: dict[str, dict[str, float]],
    notebook: str = "", rules: list[dict[str, Any]] | None = None,
    profile: str | None = None,
) -> list[Row]:
    """Rows for every key in either side, sorted by key."""
    rows = []
    for key in sorted(set(results) | set(reference)):
        ref = reference.get(key)
        tol = (
            {"abs": ref.get("abs", 0.0), "rel": ref.get("rel", 0.0)} if ref
            else tolerance_for(notebook, key, rules or [], profile, results.get(key))
        )
        rows.append(Row(key, ref["value"] if ref else None, results.get(key),
                        float(tol["abs"]), float(tol["rel"])))
    return rows


def updated_reference(
    results: dict[str, float], reference: dict[str, dict[str, float]],
    notebook: str, rules: list[dict[str, Any]], profile: str | None = None,
) -> tuple[dict[str, dict[str, float]], list[str]]:
    """New reference content and a list of human-readable changes. ``results`` in their
    recorded form (:func:`recorded_form`); an existing key keeps its tolerance unless its
    value went to zero or left it (then its rule's, :func:`tolerance_for`)."""
    new: dict[str, dict[str, float]] = {}
    changes = []
    for key in sorted(results):
        old = reference.get(key)
        kept = old is not None and (old["value"] == 0) == (results[key] == 0)
        tol = {"abs": old.get("abs", 0.0), "rel": old.get("rel", 0.0)} if kept else tolerance_for(
            notebook, key, rules, profile, results[key])
        new[key] = {"value": results[key], **tol}
        if old is None:
            changes.append(f"  added    {key} = {results[key]!r}")
        elif old["value"] != results[key]:
            changes.append(f"  changed  {key}: {old['value']!r} -> {results[key]!r}")
    for key in sorted(set(reference) - set(results)):
        changes.append(f"  removed  {key} (was {reference[key]['value']!r})")
    return new, changes


# ------------------------------------------------------------------------ execution
@dataclass
class Outcome:
    notebook: str
    seconds: float
    ok: bool
    results: dict[str, float] = field(default_factory=dict)
    error: str = ""
    retryable: bool = False  # the kernel never started, or the run timed out


def _failing_cell(executed: Path) -> str:
    """The failing cell's source and error of a papermill-executed notebook."""
    try:
        nb = json.loads(executed.read_text())
    except (OSError, json.JSONDecodeError):
        return ""
    for k, cell in enumerate(nb.get("cells", [])):
        for out in cell.get("outputs", []):
            if out.get("output_type") == "error":
                src = "".join(cell.get("source", ""))
                return (f"failing cell #{k}:\n{_indent(src)}\n"
                        f"{out.get('ename')}: {out.get('evalue')}")
    return ""


def _indent(text: str) -> str:
    return "\n".join("    | " + line for line in text.splitlines())


def run_notebook(
    name: str, parameters: dict[str, Any], output_dir: Path, *, timeout: float,
    root: Path = ROOT, retries: int = 2,
) -> Outcome:
    """Execute one notebook with papermill in a subprocess; collect its results JSON.

    A run whose kernel never started, or that timed out, is retried up to ``retries``
    times: kernels started at the same moment by parallel runs can race for TCP ports and
    hang at start-up ("Kernel didn't respond"), and a loaded machine can start one slowly.
    A notebook that raises is never retried; one that is merely slow times out again and
    is reported with the number of attempts.
    """
    outcome = _run_notebook_once(name, parameters, output_dir, timeout=timeout, root=root)
    attempts = 1
    while not outcome.ok and outcome.retryable and attempts <= retries:
        again = _run_notebook_once(name, parameters, output_dir, timeout=timeout, root=root)
        again.seconds += outcome.seconds
        attempts += 1
        outcome = again
    if not outcome.ok and outcome.retryable and attempts > 1:
        outcome.error += f" ({attempts} attempts)"
    return outcome


def _run_notebook_once(
    name: str, parameters: dict[str, Any], output_dir: Path, *, timeout: float, root: Path,
) -> Outcome:
    import jupytext

    src = notebooks_dir(root) / f"{name}.md"
    output_dir.mkdir(parents=True, exist_ok=True)
    results_dir = (output_dir / "results").resolve()
    params = {**parameters, "results_dir": str(results_dir)}
    executed = output_dir / f"{name}.ipynb"
    result_file = results_dir / f"{name}.json"
    result_file.unlink(missing_ok=True)
    nb = jupytext.read(src)
    nb.metadata["kernelspec"] = {"name": "python3", "display_name": "Python 3",
                                 "language": "python"}
    start = time.perf_counter()
    with tempfile.TemporaryDirectory() as tmp:
        inp = Path(tmp) / f"{name}.ipynb"
        jupytext.write(nb, inp, fmt="ipynb")
        ppath = Path(tmp) / "params.json"
        ppath.write_text(json.dumps(params))
        cmd = [sys.executable, "-m", "papermill", str(inp), str(executed), "-f", str(ppath),
               "--cwd", str(src.parent), "-k", "python3", "--no-progress-bar", "--log-level",
               "ERROR", "--start-timeout", str(KERNEL_START_TIMEOUT_S)]
        env = {**os.environ, "PYTHONPATH": str(root) + os.pathsep + os.environ.get(
            "PYTHONPATH", "")}
        try:
            proc = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout, env=env)
        except subprocess.TimeoutExpired:
            return Outcome(name, time.perf_counter() - start, False, retryable=True,
                           error=f"timed out after {timeout:.0f} s (raise --timeout)")
    seconds = time.perf_counter() - start
    if proc.returncode != 0 and any(m in proc.stderr for m in KERNEL_START_FAILURES):
        tail = proc.stderr.strip().splitlines()[-1:]
        return Outcome(name, seconds, False, retryable=True,
                       error=f"the kernel did not start: {' '.join(tail)}")
    if proc.returncode != 0:
        detail = _failing_cell(executed) or proc.stderr.strip()[-2000:]
        return Outcome(name, seconds, False, error=f"notebook raised\n{detail}")
    try:
        return Outcome(name, seconds, True, results=load_results(result_file))
    except (FileNotFoundError, ValueError) as err:
        return Outcome(name, seconds, False, error=f"no usable results JSON: {err}")


# -------------------------------------------------------------------------- reports
def format_table(notebook: str, rows: list[Row], *, only_problems: bool = False) -> str:
    head = (f"{'key':<44} {'reference':>14} {'value':>14} {'difference':>11} "
            f"{'tolerance':>10}  verdict")
    lines = [f"== {notebook}", head, "-" * len(head)]

    def num(x: float | None) -> str:
        return "-" if x is None else f"{x:.8g}"

    for r in rows:
        if only_problems and r.verdict == "PASS":
            continue
        diff = r.difference
        lines.append(
            f"{r.key:<44} {num(r.reference):>14} {num(r.value):>14} "
            f"{'-' if diff is None else f'{diff:.2e}':>11} {r.tolerance:>10.2e}  {r.verdict}"
        )
    return "\n".join(lines)


def add_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("--profile", default="quick", help=f"one of {', '.join(PROFILES)}")
    p.add_argument("--root", metavar="DIR", default=None,
                   help="run the chapters of DIR instead of this repository's: "
                        f"DIR/notebooks/<name>.md, references in DIR/{REFERENCE_FOLDER}/<profile>/")
    p.add_argument("--notebooks", nargs="+", metavar="NAME", help="notebook names (default all)")
    p.add_argument("-p", "--parameter", nargs=2, action="append", default=[],
                   metavar=("KEY", "VALUE"), help="override a notebook parameter")
    p.add_argument("--output-dir", default="regress-out", help="executed notebooks go here")
    p.add_argument("--update", action="store_true",
                   help="rewrite the references and say what changed")
    p.add_argument("--retolerance", action="store_true",
                   help="run nothing: rewrite the stored references' tolerances from "
                        f"{REFERENCE_FOLDER}/tolerances.json, keeping every value")
    p.add_argument("--noise", nargs="+", metavar="SETTING", default=None,
                   help="run nothing against the references: run the notebooks under each "
                        "setting (native, avx2, scalar, one-thread: "
                        "bparallel.book.tools.noise.NOISE_SETTINGS) and record each key's "
                        f"spread in {REFERENCE_FOLDER}/noise/<profile>.json")
    p.add_argument("--no-cache", action="store_true",
                   help="compute what the notebooks do not read from recorded measures "
                        "(their metrics_cache off): what CI does under AVX2 kernels")
    p.add_argument("--timeout", type=float, default=1800, help="seconds per notebook")
    p.add_argument("--retries", type=int, default=2,
                   help="re-runs of a notebook whose kernel did not start or that timed out")
    p.add_argument("--jobs", type=int, default=None, help="notebooks run in parallel")
    p.add_argument("--verbose", action="store_true", help="show passing keys too")


#: What each kernel of notebooks run side by side is given: its metrics workers
#: (:func:`bparallel.transformer.metrics_cache.default_workers`) and its own torch and BLAS
#: threads (torch sizes its thread pool from ``OMP_NUM_THREADS`` when it starts).
SHARED_VARS = ("BPARALLEL_WORKERS", "OMP_NUM_THREADS", "MKL_NUM_THREADS",
               "OPENBLAS_NUM_THREADS")


@contextlib.contextmanager
def share_of_cores(jobs: int) -> Iterator[None]:
    """Notebooks run side by side share the cores: while they run, each kernel gets
    ``cores // jobs`` metrics workers and torch/BLAS threads through :data:`SHARED_VARS`
    (each one the caller has not set). Without it two kernels each start a thread per core,
    and on 2 cores their spinning threads wait on each other: a chapter that measures in
    its own process ran several times slower (a 10-minute timeout and a retry in CI)."""
    share = str(max(1, (os.cpu_count() or 1) // jobs))
    set_here = [v for v in SHARED_VARS if v not in os.environ]
    os.environ.update(dict.fromkeys(set_here, share))
    try:
        yield
    finally:
        for var in set_here:
            os.environ.pop(var, None)


def _execute(names: list[str], params: dict[str, Any], output_dir: Path, *, jobs: int,
             timeout: float, retries: int, root: Path, out, label: str,
             per_notebook: dict[str, dict[str, Any]] | None = None) -> dict[str, Outcome]:
    """Run ``names`` side by side (``jobs`` at once, sharing the cores) with ``params``
    (and ``per_notebook[name]`` on top); their outcomes by name."""
    from tqdm import tqdm

    outcomes: dict[str, Outcome] = {}
    with share_of_cores(jobs), ThreadPoolExecutor(max_workers=jobs) as pool:
        futures = {}
        for k, n in enumerate(run_order(names)):
            if 0 < k < jobs:
                time.sleep(STAGGER_S)  # kernels of the first wave start apart (port race)
            mine = {**params, **(per_notebook or {}).get(n, {})}
            futures[pool.submit(run_notebook, n, mine, output_dir, timeout=timeout,
                                root=root, retries=retries)] = n
        bar = tqdm(total=len(names), desc=label, unit="nb", file=sys.stderr,
                   disable=not sys.stderr.isatty())
        for fut in as_completed(futures):
            o = fut.result()
            outcomes[o.notebook] = o
            bar.update()
            print(f"[{'ok' if o.ok else 'FAILED'}] {o.notebook} ({o.seconds:.1f} s)", file=out)
        bar.close()
    return outcomes


def _uncached(names: list[str], root: Path) -> dict[str, dict[str, Any]]:
    """Per notebook, the parameter that turns its metrics cache off (where it has one)."""
    out = {}
    for name in names:
        declared = declared_parameters(notebooks_dir(root) / f"{name}.md")
        out[name] = {"metrics_cache": None} if "metrics_cache" in declared else {}
    return out


def run(args: argparse.Namespace, root: Path = ROOT, out=sys.stdout) -> int:
    """The ``regress`` command; returns the exit status (0 only when all pass)."""
    profile = check_profile(args.profile)
    if getattr(args, "retolerance", False):
        changed = retolerance(profile, root)
        print(f"regress --retolerance ({profile}): {len(changed)} tolerance(s) rewritten"
              + "".join(f"\n  {k}" for k in changed), file=out)
        return 0
    names = resolve_notebooks(args.notebooks, root)
    overrides = {k: parse_value(v) for k, v in args.parameter}
    for name in names:
        declared = declared_parameters(notebooks_dir(root) / f"{name}.md")
        unknown = sorted(set(overrides) - set(declared))
        if unknown:
            raise RegressError(
                f"notebook {name} does not declare parameter(s) {', '.join(unknown)}; "
                f"it declares: {', '.join(sorted(declared))}"
            )
    params = {"profile": profile, **overrides}
    output_dir = Path(args.output_dir) / profile
    jobs = args.jobs or max(1, min(len(names), (os.cpu_count() or 1)))
    outcomes = _execute(names, params, output_dir, jobs=jobs, timeout=args.timeout,
                        retries=getattr(args, "retries", 2), root=root, out=out,
                        label=f"regress ({profile})",
                        per_notebook=_uncached(names, root)
                        if getattr(args, "no_cache", False) else None)
    rules = load_tolerance_rules(root)
    ref_root = reference_dir(root) / profile
    counts = {"PASS": 0, "FAIL": 0, "MISSING": 0, "NEW": 0}
    failed_nbs = []
    for name in names:
        o = outcomes[name]
        if not o.ok:
            failed_nbs.append(name)
            print(f"== {name}: {o.error}", file=out)
            continue
        ref_path = ref_root / f"{name}.json"
        reference = load_reference(ref_path)
        results = recorded_values(o.results, name)  # compared as they are, p-values as log10
        if args.update:
            new, changes = updated_reference(recorded_form(results, name, rules, profile),
                                             reference, name, rules, profile)
            atomic_write_text(ref_path, json.dumps(new, indent=1, sort_keys=True) + "\n")
            shown = ref_path.relative_to(root) if ref_path.is_relative_to(root) else ref_path
            print(f"== {name}: reference {shown} "
                  + ("updated:\n" + "\n".join(changes) if changes else "unchanged"), file=out)
            continue
        if not reference:
            print(f"== {name}: no reference at {ref_path}; run with --update to create it",
                  file=out)
        rows = compare(results, reference, name, rules, profile)
        for r in rows:
            counts[r.verdict] += 1
        print(format_table(name, rows, only_problems=not args.verbose), file=out)
    timing = ", ".join(f"{n} {outcomes[n].seconds:.1f}s" for n in names)
    if args.update:
        print(f"regress --update: {len(names) - len(failed_nbs)} reference file(s) written; "
              f"{len(failed_nbs)} notebook(s) failed; timings: {timing}", file=out)
        return 1 if failed_nbs else 0
    ok = not failed_nbs and counts["FAIL"] == counts["MISSING"] == counts["NEW"] == 0
    print(
        f"regress ({profile}): {len(names)} notebook(s), {len(failed_nbs)} raised; "
        f"{counts['PASS']} passed, {counts['FAIL']} failed, {counts['MISSING']} missing, "
        f"{counts['NEW']} new -> {'PASS' if ok else 'FAIL'}; timings: {timing}", file=out)
    if counts["NEW"] and not counts["FAIL"]:
        print("new keys have no reference yet: review them, then run with --update", file=out)
    return 0 if ok else 1


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m bparallel regress")
    add_arguments(parser)
    args = parser.parse_args(argv)
    try:
        return run(args, chosen_root(args))
    except RegressError as err:
        parser.error(str(err))
        return 2
