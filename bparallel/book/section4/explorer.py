"""The model explorer: the shipped Transformers run in the page, with live head ablation and
the paper's graph measures.

The page runs each model in JavaScript (``bparallel/book/render/js/transformer.mjs``, the
forward pass and the measures; ``explorer.mjs`` and ``explorer.css``, the interface), with
no kernel and no network, from ``file://`` too. What it needs of Python is written once, at
build time, by :func:`export_models`: one JavaScript data file per model,
``<out_dir>/<task>-hNN.js``, which a ``<script>`` element loads when the reader picks the
model (``fetch`` and wasm are refused on ``file://``; a script is not). A data file assigns
one object into ``window.BPARALLEL_MODELS["<task>-hNN"]`` (:func:`model_data`):

- ``config`` (layers, heads, head size, widths, the RMSNorm's ``eps``) and every tensor of
  the state dict as little-endian float16 in one base64 string, ``tensors`` giving each
  one's offset and shape. Half precision keeps the data of every model the page offers
  within its budget: the page runs the model with its weights rounded to float16, and every
  value recorded for it below is computed on that rounded model (:func:`half_rounded`);
- ``head_means`` (not for a step through training, whose heads the page removes by zero
  ablation): the per-position mean head outputs ``(L, T, A)`` of mean ablation
  (:func:`bparallel.transformer.ablation.head_means` over ``reference_sequences`` held-out
  sequences that the page does not show), float16 too;
- ``sequences``: the first ``num_sequences`` held-out sequences of the task
  (:func:`bparallel.transformer.design.evaluation_inputs`), their targets and predictable
  positions (:mod:`bparallel.transformer.data`);
- ``recorded``: for the first sequence, what the package computes, for the page's tests to
  compare with (:func:`recorded_values`): accuracy and mean logit margin on the predictable
  positions, the learned head weights, and per layer Algorithms 1-2 in both modes,
  Definition 2.7, node fidelities, the rollout's sink row and each head's minimax fidelity.
  They are computed on a float64 copy of the model (the page computes in float64), so the
  page agrees with them to rounding; the book's tables use the float32 model, whose
  patterns differ by about ``1e-6``;
- ``head_effects``: per layer and head, the drop of the mean logit margin on the predictable
  positions when that head alone is removed by mean ablation (the exported ``head_means``),
  mean over the shown sequences (:func:`recorded_head_effects`): the causal effect the
  chapters measure, shown beside each head's heatmap.

:func:`page_html` is the page itself: one HTML fragment with the stylesheet and the three
modules inlined in one ``<script type="module">`` (Chromium refuses ES modules from
``file://``; the inlining is :mod:`bparallel.book.render.js_playground`'s), the catalogue of
models, and where the data files lie relative to the page.
"""

from __future__ import annotations

import argparse
import base64
import copy
import hashlib
import html
import json
import os
import re
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np
import torch

from ... import proxies
from ..._checks import positive_int
from ..._io import atomic_write_text
from ...transformer.ablation import ablated, head_means, logit_margin
from ...transformer.checkpoints import sha256_file
from ...transformer.data import make_targets, predictable
from ...transformer.design import DEFAULT_SEED, HEADS, evaluation_inputs, run_name
from ...transformer.measure import defined_metrics, sequence_metrics
from ...transformer.model import Transformer
from ...transformer.patterns import model_head_weights
from ...transformer.shipped import MODELS_ROOT, load_shipped, load_weights
from ..render.js_playground import inline_modules, module_var, style_block
from .explorer_catalogue import EXPLORER_FRESH_TASKS, EXPLORER_TASKS, explorer_models
from .explorer_steps import STEP_RUNS, step_scores

__all__ = [
    "FORMAT",
    "DATA_GLOBAL",
    "MAX_DATA_BYTES",
    "MAX_FILE_BYTES",
    "MAX_PAGE_BYTES",
    "NUM_SEQUENCES",
    "REFERENCE_SEQUENCES",
    "SOURCES",
    "NAME",
    "half_rounded",
    "page_head_means",
    "model_data",
    "recorded_values",
    "recorded_head_effects",
    "data_script",
    "read_data_script",
    "export_models",
    "EXPORT_INDEX",
    "export_key",
    "read_export",
    "cached_export",
    "inline_script",
    "page_html",
]

#: The data-file format (``FORMAT`` in ``transformer.mjs``).
FORMAT = 2
#: The global object the data files assign into.
DATA_GLOBAL = "BPARALLEL_MODELS"
#: A data file's model name: ``<task>-hNN`` (finite data), ``<task>-fresh-hNN[-hsS]`` or a
#: step of a run through training, ``<task>-circuit-hNN[-hsS]-tSSSSS`` (:mod:`.explorer_steps`).
NAME = re.compile(r"[a-z]+(?:-fresh|-circuit)?-h\d\d(?:-hs\d{2,3})?(?:-t\d{5})?")
#: What a data file's ``manifest`` copies from the model's manifest entry, each required:
#: the page's status line reads the held-out accuracy, and the hash names the weights.
MANIFEST_FIELDS = ("heldout_accuracy", "heldout_accuracy_predictable", "sha256")
#: Budgets: every data file together, any one of them, and the page before a model is chosen.
MAX_DATA_BYTES = 45 * 2**20
MAX_FILE_BYTES = 2 * 2**20
MAX_PAGE_BYTES = 2**20
#: The page's sources, in inlining order (each imports only those before it).
SOURCES = ("toydag.mjs", "random.mjs", "state.mjs", "python.mjs", "transformer.mjs",
           "explorer.mjs", "widget.css", "explorer.css")
#: The measures' settings, as the book's tables use them (``transformer.mjs`` defaults).
#: Held-out sequences a data file shows, and the further ones that average the head
#: outputs of mean ablation.
NUM_SEQUENCES = 8
REFERENCE_SEQUENCES = 100
MEASURE_OPTIONS = {"max_steps": 100, "horizon": 100, "eps": 0.25, "residual": 0.5}
_BLOCK_TENSORS = (
    "norm1.weight", "attn.q.weight", "attn.q.bias", "attn.k.weight", "attn.k.bias",
    "attn.v.weight", "attn.v.bias", "attn.out.weight", "attn.out.bias", "norm2.weight",
    "mlp.fc.weight", "mlp.fc.bias", "mlp.proj.weight", "mlp.proj.bias",
)


# --------------------------------------------------------------------------- one model


def _float16_base64(values: Any) -> str:
    """``values`` as little-endian float16 in base64 (values beyond float16's range are an
    error, never silently infinite)."""
    a = np.asarray(values, dtype=np.float64)
    if np.abs(a).max(initial=0.0) > np.finfo(np.float16).max:
        raise ValueError("a value exceeds float16's range: it cannot be exported")
    a = np.ascontiguousarray(a.astype("<f2"))
    return base64.b64encode(a.tobytes()).decode("ascii")


def half_rounded(model: Transformer) -> Transformer:
    """A copy of ``model`` (eval mode) with every parameter rounded to float16 and back: the
    model the page runs, and the one every recorded value of its data file is computed on."""
    twin = copy.deepcopy(model).eval()
    with torch.no_grad():
        for p in twin.parameters():
            p.copy_(p.to(torch.float16).to(p.dtype))
    return twin


def page_head_means(model: Transformer, reference: torch.Tensor) -> torch.Tensor:
    """The head means of mean ablation as the page reads them:
    :func:`~bparallel.transformer.ablation.head_means` of ``model`` over the ``reference``
    sequences, rounded to float16 (float32 tensor ``(L, T, A)``)."""
    return head_means(model, reference).to(torch.float16).to(torch.float32)


def _norm_eps(model: Transformer) -> float:
    """The ``eps`` every RMSNorm of ``model`` adds (``None``: float32's machine epsilon, what
    ``torch.nn.RMSNorm`` uses for float32 inputs)."""
    eps = {b.norm1.eps for b in model.blocks} | {b.norm2.eps for b in model.blocks}
    eps = {float(torch.finfo(torch.float32).eps) if e is None else float(e) for e in eps}
    if len(eps) != 1:
        raise ValueError(f"the model's RMSNorms use different eps {sorted(eps)}")
    return eps.pop()


def _config(model: Transformer) -> dict[str, Any]:
    cfg = model.config
    attn = model.blocks[0].attn
    return {"n_layers": cfg.n_layers, "n_heads": attn.n_heads, "head_dim": attn.head_dim,
            "d_model": cfg.d_model, "d_mlp": cfg.d_mlp, "vocab_size": cfg.vocab_size,
            "seq_len": cfg.seq_len, "norm_eps": _norm_eps(model)}


def _tensors(model: Transformer) -> tuple[dict[str, dict[str, Any]], str]:
    """Every state-dict tensor, ``{name: {offset, shape}}`` into one float16 base64 string;
    a state dict with other tensors than ``transformer.mjs`` reads is refused."""
    state = model.state_dict()
    want = ["tok_emb.weight", "pos_emb.weight", "head.weight", "head.bias"]
    want += [f"blocks.{layer}.{n}" for layer in range(model.config.n_layers)
             for n in _BLOCK_TENSORS]
    if sorted(state) != sorted(want):
        extra, missing = sorted(set(state) - set(want)), sorted(set(want) - set(state))
        raise ValueError(f"the model's state dict does not match what transformer.mjs runs: "
                         f"unexpected {extra}, missing {missing}")
    index, parts, offset = {}, [], 0
    for name in want:
        t = state[name].detach().to(torch.float32).cpu().numpy()
        index[name] = {"offset": offset, "shape": list(t.shape)}
        parts.append(t.reshape(-1))
        offset += t.size
    return index, _float16_base64(np.concatenate(parts))


def _float64_copy(model: Transformer) -> Transformer:
    """``model`` in float64, eval mode, its RMSNorms adding the same ``eps`` as in float32
    (``nn.RMSNorm(eps=None)`` would switch to float64's)."""
    eps = _norm_eps(model)
    twin = copy.deepcopy(model).double().eval()
    for block in twin.blocks:
        block.norm1.eps = block.norm2.eps = eps
    return twin


def recorded_values(model: Transformer, inputs: torch.Tensor, task: str) -> dict[str, Any]:
    """What the package computes on one sequence ``inputs`` ``(T,)``, for the page's tests:
    ``accuracy`` and ``margin`` (mean :func:`~bparallel.transformer.ablation.logit_margin`)
    on the predictable positions, ``predictions``, ``head_weights`` ``(L, H)`` and per layer
    the measures of :func:`~bparallel.transformer.measure.sequence_metrics` and
    :func:`~bparallel.transformer.measure.defined_metrics` (heads weighted by ``w_h``):
    ``mixing_time.<mode>``, ``fidelity.<mode>``, ``worst_case.<mode>`` (``Infinity``: never
    mixes), ``fidelity.node``, ``rollout.weighted``, ``rollout.uniform``, and each head's
    minimax fidelity alone, ``head_fidelity.<mode>``
    (:func:`bparallel.proxies.best_head_vs_combined`). On a float64 copy of the model."""
    if inputs.ndim != 1:
        raise ValueError(f"inputs has shape {tuple(inputs.shape)}: expected one sequence (T,)")
    twin = _float64_copy(model)
    x = inputs[None]  # (1, T)
    opts = MEASURE_OPTIONS
    with torch.no_grad():
        logits = twin(x)  # (1, T, V) float64
    targets = make_targets(x, task)
    mask = predictable(x, task)[0]
    margin = logit_margin(logits, targets)[0]  # (T,)
    hits = logits.argmax(-1)[0] == targets[0]
    count = int(mask.sum())
    seq = sequence_metrics(twin, x, max_steps=opts["max_steps"], horizon=opts["horizon"],
                           best_head=False)
    dfn = defined_metrics(twin, x, eps=opts["eps"], max_steps=opts["max_steps"],
                          horizon=opts["horizon"])
    w = model_head_weights(twin)  # (L, H)
    with torch.no_grad():
        _, patterns = twin(x, return_attention=True)  # (L, 1, H, T, T)
    pattern = patterns[:, 0].numpy()  # (L, H, T, T)
    layers = []
    for layer in range(pattern.shape[0]):
        row: dict[str, Any] = {}
        for mode in proxies.MODES:
            row[f"mixing_time.{mode}"] = float(seq[f"mixing_time.{mode}"][layer, 0])
            row[f"fidelity.{mode}"] = float(seq[f"fidelity.{mode}"][layer, 0])
            row[f"worst_case.{mode}"] = float(dfn[f"worst_case.{mode}"][layer, 0])
            per_head = proxies.best_head_vs_combined(pattern[layer], w[layer], mode=mode,
                                                     horizon=opts["horizon"])["per_head"]
            row[f"head_fidelity.{mode}"] = per_head.tolist()
        row["fidelity.node"] = dfn["fidelity.node"][layer, 0].tolist()
        row["rollout.weighted"] = dfn["rollout.weighted"][layer, 0].tolist()
        row["rollout.uniform"] = dfn["rollout.uniform"][layer, 0].tolist()
        layers.append(row)
    return {
        "sequence": 0, "precision": "float64",
        "accuracy": float(hits[mask].sum()) / count if count else None,
        "margin": float(margin[mask].mean()) if count else None,
        "predictions": logits.argmax(-1)[0].tolist(),
        "head_weights": w.tolist(),
        "layers": layers,
    }


def recorded_head_effects(model: Transformer, inputs: torch.Tensor, task: str,
                          fill: torch.Tensor) -> list[list[float]]:
    """Each head's causal effect on ``inputs`` ``(N, T)``, ``(L, H)`` as nested lists: the
    drop of the mean logit margin on the predictable positions when the head alone is
    removed by mean ablation with ``fill`` (:func:`~bparallel.transformer.ablation.head_means`
    ``(L, T, A)``), intact minus ablated, mean over the ``N`` sequences
    (the ``margin`` effect of :func:`bparallel.transformer.importance.head_effects`, chapter
    10's measure, here on a float64 copy of the model, as the page computes it: that
    function's evaluation is float32's)."""
    if inputs.ndim != 2:
        raise ValueError(f"inputs has shape {tuple(inputs.shape)}: expected (N, T)")
    twin = _float64_copy(model)
    targets, mask = make_targets(inputs, task), predictable(inputs, task)
    fill64 = fill.to(torch.float64)

    def margins(keep: torch.Tensor | None) -> torch.Tensor:  # (N,) mean over predictable
        with torch.no_grad():
            if keep is None:
                logits = twin(inputs)
            else:
                with ablated(twin, keep, fill64):
                    logits = twin(inputs)
        m = logit_margin(logits, targets)
        return (m * mask).sum(-1) / mask.sum(-1)

    L, H = twin.config.n_layers, twin.config.n_heads
    intact = margins(None)
    out = np.empty((L, H))
    for layer in range(L):
        for h in range(H):
            keep = torch.ones(L, H, dtype=torch.float64)
            keep[layer, h] = 0
            out[layer, h] = float((intact - margins(keep)).mean())
    return out.tolist()


def model_data(
    model: Transformer, meta: dict[str, Any], *, num_sequences: int = NUM_SEQUENCES,
    reference_sequences: int = REFERENCE_SEQUENCES, means: bool = True,
) -> dict[str, Any]:
    """The object one data file holds (the module docstring lists its fields) for a shipped
    ``model`` and its manifest entry ``meta`` (``task``, ``heads``, ``seed``, ``profile``,
    and the ``folder`` that ships it, which the page's "Export as Python" loads from;
    a fresh-data model's catalogue entry adds ``name``, ``data``, ``arms`` and ``outcome``),
    rounded to float16 first (:func:`half_rounded`).

    The held-out stream of the model's training profile gives ``num_sequences +
    reference_sequences`` sequences: the first ``num_sequences`` are shown, the others
    average the head outputs of mean ablation (rounded to float16 as the page reads them).
    ``means=False`` leaves out the head means and the head effects they give (a step through
    training: the page removes its heads by zero ablation; a fifth of the file)."""
    positive_int(num_sequences, "num_sequences")
    positive_int(reference_sequences, "reference_sequences")
    # a step through training has no held-out evaluation: its status reads its own scores
    missing = [k for k in (("sha256",) if "series" in meta else MANIFEST_FIELDS)
               if meta.get(k) is None]
    if missing:
        raise ValueError(f"meta: {meta.get('name', 'the model')} has no {', '.join(missing)} "
                         "(the page states them from the model's manifest entry)")
    task, seed = meta["task"], int(meta.get("seed", DEFAULT_SEED))
    profile = meta.get("profile") or "paper"
    total = num_sequences + reference_sequences
    inputs = evaluation_inputs(task, "heldout", profile, seed=seed, num_sequences=total)
    shown, reference = inputs[:num_sequences], inputs[num_sequences:]
    model = half_rounded(model)
    index, weights = _tensors(model)
    fill = page_head_means(model, reference) if means else None
    data = {
        "format": FORMAT,
        "name": meta.get("name") or run_name(task, int(meta["heads"])),
        "data": meta.get("data", "finite"),
        "task": task, "heads": int(meta["heads"]), "seed": seed, "profile": profile,
        "manifest": {"epochs": meta.get("epochs"),
                     **{k: meta[k] for k in (*MANIFEST_FIELDS, "arms", "outcome", "head_size",
                                             "weights", "folder") if k in meta},
                     # a step through training (a checkpoint's own "step" is not one)
                     **({k: meta[k] for k in ("series", "step", "steps")}
                        if "series" in meta else {})},
        "config": _config(model),
        "tensors": index,
        "weights": weights,
        "sequences": {
            "protocol": "heldout", "num_drawn": total,
            "reference": [num_sequences, total],
            "inputs": shown.tolist(),
            "targets": make_targets(shown, task).tolist(),
            "predictable": predictable(shown, task).to(torch.int8).tolist(),
        },
        "options": dict(MEASURE_OPTIONS),
        "recorded": recorded_values(model, shown[0], task),
    }
    if fill is not None:
        data["head_means"] = _float16_base64(fill.numpy())
        data["head_effects"] = recorded_head_effects(model, shown, task, fill)
    return data


def data_script(data: dict[str, Any]) -> str:
    """A data file's text: ``(window.BPARALLEL_MODELS = ...)["<name>"] = {...};``. The object
    is JSON (``Infinity`` allowed, a JavaScript global); nothing else is executed."""
    name = data.get("name")
    if not isinstance(name, str) or not NAME.fullmatch(name):
        raise ValueError(f"data name {name!r}: expected '<task>-hNN' or "
                         "'<task>-fresh-hNN[-hsS]'")
    body = json.dumps(data, separators=(",", ":"), allow_nan=True)
    target = f"window.{DATA_GLOBAL}"
    return f"({target} = {target} || {{}})[{json.dumps(name)}] = {body};\n"


def read_data_script(path: str | os.PathLike) -> dict[str, Any]:
    """The object a data file written by :func:`data_script` holds (tests, tools)."""
    text = Path(path).read_text(encoding="utf-8")
    m = re.match(r'\(window\.\w+ = window\.\w+ \|\| \{\}\)\["(' + NAME.pattern + r')"\] = ', text)
    if m is None or not text.endswith(";\n"):
        raise ValueError(f"{path} is not an explorer data file")
    return json.loads(text[m.end() : -2])


def export_models(
    out_dir: str | os.PathLike,
    *,
    tasks: Sequence[str] = EXPLORER_TASKS,
    heads: Sequence[int] = HEADS,
    seed: int = DEFAULT_SEED,
    fresh_tasks: Sequence[str] = EXPLORER_FRESH_TASKS,
    step_runs: Sequence[Sequence[int]] = STEP_RUNS,
    models_root: str | os.PathLike = MODELS_ROOT,
    num_sequences: int = NUM_SEQUENCES,
    reference_sequences: int = REFERENCE_SEQUENCES,
    max_bytes: int = MAX_DATA_BYTES,
) -> list[dict[str, Any]]:
    """Write one data file per model the explorer offers
    (:func:`~.explorer_catalogue.explorer_models`; by default every task and head count of
    the first seed, and the fresh-data models of
    :data:`~.explorer_catalogue.EXPLORER_FRESH_TASKS`, and the steps of the runs through
    training of ``step_runs``, :mod:`.explorer_steps`) into ``out_dir``, as ``<name>.js``
    (:func:`model_data`, :func:`data_script`; a step's with its heads' scores,
    :func:`~.explorer_steps.step_scores`); returns the catalogue, one dict per model with
    its ``file``, ``bytes`` and ``layers`` (what :func:`page_html` takes). Each model is
    loaded hash-checked (:func:`~bparallel.transformer.shipped.load_shipped`). Files are
    written atomically, readable by all (they are served with the book); ``ValueError`` if
    one exceeds :data:`MAX_FILE_BYTES` (the page loads one at a time) or together they
    exceed ``max_bytes`` (45 MB)."""
    positive_int(max_bytes, "max_bytes")
    catalogue = explorer_models(tasks=tasks, heads=heads, seed=seed, fresh_tasks=fresh_tasks,
                                step_runs=step_runs, models_root=models_root)
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    root = Path(models_root)
    loaded: dict[str, tuple[dict, dict]] = {}
    total = 0
    for entry in catalogue:
        task = entry["task"]
        if entry["data"] == "fresh":  # one file, hash-checked
            model, meta = load_weights(root / entry["folder"] / entry["weights"],
                                       sha256=entry["sha256"])
            # the catalogue's fields are the manifest's: the checkpoint's own metadata is
            # written before the run is evaluated and holds no held-out accuracy or hash
            meta = {**meta, **{k: entry[k] for k in ("name", "data", "task", "heads", "seed",
                                                     "profile", "arms", "outcome",
                                                     "head_size", "weights", "folder",
                                                     "series", "step", "steps",
                                                     *MANIFEST_FIELDS) if k in entry}}
        else:
            if task not in loaded:  # every head count of the task, each hash-checked
                loaded[task] = load_shipped(root / entry["folder"], seed, tasks=(task,))
            models, metas = loaded[task]
            model, meta = models[(task, entry["heads"])], metas[(task, entry["heads"])]
            meta = {**meta, "folder": entry["folder"]}
        data = model_data(model, meta, num_sequences=num_sequences,
                          reference_sequences=reference_sequences,
                          means="series" not in entry)
        if "series" in entry:
            data["head_scores"] = step_scores(model, entry["profile"])
        text = data_script(data)
        file, size = f"{entry['name']}.js", len(text.encode("utf-8"))
        if size > MAX_FILE_BYTES:
            raise ValueError(f"the explorer's data file {file} takes {size:,} bytes, over "
                             f"MAX_FILE_BYTES={MAX_FILE_BYTES:,}")
        atomic_write_text(out / file, text).chmod(0o644)  # served with the book
        entry.update(file=file, bytes=size, layers=data["config"]["n_layers"])
        total += entry["bytes"]
    if total > max_bytes:
        raise ValueError(f"the explorer's data files take {total:,} bytes, over the budget "
                         f"max_bytes={max_bytes:,}")
    key = export_key(tasks=tasks, heads=heads, seed=seed, fresh_tasks=fresh_tasks,
                     step_runs=step_runs, models_root=models_root,
                     num_sequences=num_sequences, reference_sequences=reference_sequences)
    atomic_write_text(out / EXPORT_INDEX, json.dumps({"key": key, "catalogue": catalogue}))
    return catalogue


#: The file in which :func:`export_models` leaves its catalogue and the key of what it was
#: made from (:func:`export_key`), written last: a folder without it holds no finished export.
EXPORT_INDEX = "catalogue.json"
_PACKAGE_ROOT = Path(__file__).resolve().parents[2]


def export_key(**choices: Any) -> str:
    """SHA-256 over everything :func:`export_models` reads: every file of the package (its
    Python, the pages' JavaScript and CSS), every file under its ``models_root`` (the shipped
    weights and manifests), its other arguments, ``choices`` over the defaults (with
    :data:`FORMAT`; ``max_bytes`` changes no file), and the CPU kernels it computes with
    (:func:`_kernels`). Two exports with one key write the same files."""
    defaults = {"tasks": EXPLORER_TASKS, "heads": HEADS, "seed": DEFAULT_SEED,
                "fresh_tasks": EXPLORER_FRESH_TASKS, "step_runs": STEP_RUNS,
                "models_root": MODELS_ROOT,
                "num_sequences": NUM_SEQUENCES, "reference_sequences": REFERENCE_SEQUENCES}
    unknown = set(choices) - set(defaults) - {"max_bytes"}
    if unknown:
        raise ValueError(f"choices: {sorted(unknown)} are not arguments of export_models")
    keyed = {**defaults, **choices, "format": FORMAT, "kernels": _kernels()}
    keyed["step_runs"] = [list(r) for r in keyed["step_runs"]]  # tuples and lists alike
    keyed.pop("max_bytes", None)
    models_root = Path(keyed.pop("models_root"))
    h = hashlib.sha256(json.dumps(keyed, sort_keys=True).encode())
    for top in (_PACKAGE_ROOT, models_root):
        for path in sorted(p for p in top.rglob("*")
                           if p.is_file() and "__pycache__" not in p.parts):
            h.update(path.relative_to(top).as_posix().encode() + b"\0")
            h.update(bytes.fromhex(sha256_file(path)))
    return h.hexdigest()


def _kernels() -> dict[str, str | None]:
    """The CPU kernels this process computes with: torch's (its capability) and those the
    environment chooses for numpy and OpenBLAS. An export is a float computation: under
    other kernels its last bits can differ (``make test-avx2`` measures with AVX2 kernels
    on an AVX-512 machine), so it is another export."""
    return {"torch": torch.backends.cpu.get_cpu_capability(),
            **{v: os.environ.get(v) for v in ("NPY_DISABLE_CPU_FEATURES", "OPENBLAS_CORETYPE")}}


def read_export(folder: str | os.PathLike, key: str) -> list[dict[str, Any]] | None:
    """The catalogue of the export in ``folder`` (:data:`EXPORT_INDEX`) if it was made with
    ``key`` and every data file it names is there at its size; ``None`` otherwise."""
    try:
        held = json.loads((Path(folder) / EXPORT_INDEX).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    if not isinstance(held, dict) or held.get("key") != key:
        return None
    catalogue = held.get("catalogue")
    if not isinstance(catalogue, list):
        return None
    for entry in catalogue:
        file = Path(folder) / str(entry.get("file"))
        if not file.is_file() or file.stat().st_size != entry.get("bytes"):
            return None
    return catalogue


def cached_export(out_dir: str | os.PathLike, **choices: Any) -> list[dict[str, Any]]:
    """:func:`export_models` into ``out_dir`` with the arguments ``choices``, unless the
    folder holds an export made from the same package, models and arguments already
    (:func:`read_export`): then its catalogue, and nothing is measured again."""
    held = read_export(out_dir, export_key(**choices))
    return held if held is not None else export_models(out_dir, **choices)


# --------------------------------------------------------------------------- the page


def inline_script(catalogue: Sequence[dict[str, Any]], data_url: str,
                  element_id: str = "bp-explorer") -> str:
    """The JavaScript of the page's one ``<script type="module">``: the modules of
    :data:`SOURCES` each as a closure (:func:`~bparallel.book.render.js_playground.inline_modules`),
    then the mount call with the catalogue and the data files' address (relative to the
    page)."""
    modules = [n for n in SOURCES if n.endswith(".mjs")]
    parts = [f"// bparallel model explorer: {' + '.join(modules)}, inlined",
             *inline_modules(modules)]
    options = {"models": list(catalogue), "dataUrl": data_url}
    parts.append(f"{module_var('explorer')}.mountExplorer(document.getElementById("
                 f"{json.dumps(element_id)}), {json.dumps(options)});")
    script = "\n".join(parts)
    if re.search(r"</script|<!--", script, re.I):
        raise ValueError("the explorer's sources contain '</script' or '<!--'")
    return script


def page_html(
    data_url: str = "explorer-data/",
    *,
    catalogue: Sequence[dict[str, Any]] | None = None,
    element_id: str = "bp-explorer",
) -> str:
    """The explorer as one self-contained HTML fragment (styles, container, module script)
    for a chapter to display; ``data_url`` is where :func:`export_models` wrote the data
    files, relative to the page (or absolute), ending in ``/``; ``catalogue`` the models
    offered (default: :func:`~.explorer_catalogue.explorer_models`). Nothing is loaded until
    a model is chosen, and then only its data file, by a ``<script>`` element."""
    if not re.fullmatch(r"[A-Za-z0-9_./:-]*/", data_url):
        raise ValueError(f"data_url={data_url!r}: expected a folder address ending in '/' "
                         "(letters, digits, '_', '.', '/', ':', '-')")
    if not re.fullmatch(r"[A-Za-z][\w-]*", element_id):
        raise ValueError(f"element_id={element_id!r}: expected an HTML id")
    models = explorer_models() if catalogue is None else catalogue
    keep = ("name", "data", "task", "heads", "head_size", "seed", "profile", "arms",
            "outcome", "heldout_accuracy", "heldout_accuracy_predictable", "bytes", "layers",
            "series", "step", "steps")
    models = [{k: m[k] for k in keep if k in m} for m in models]
    noscript = ("<noscript>The model explorer runs the Transformers in the page and needs "
                "JavaScript.</noscript>")
    return (
        f"{style_block('explorer.css')}"
        f'<div id="{html.escape(element_id)}" class="bp-widget bp-ex" role="group" '
        f'aria-label="model explorer">{noscript}</div>\n'
        f'<script type="module">\n{inline_script(models, data_url, element_id)}\n</script>\n'
    )


#: Where the book build writes the data files (scripts/build_book.sh; git-ignored, served as
#: ``_static/explorer-data/`` by ``html_static_path``), and that folder from a chapter page.
BUILD_DIR = Path(__file__).resolve().parents[3] / "book" / "_explorer" / "explorer-data"
PAGE_DATA_URL = "../_static/explorer-data/"


def main(argv: Sequence[str] | None = None) -> int:
    """``python -m bparallel.book.section4.explorer [OUT_DIR]``: export the explorer's data files
    (:func:`export_models`) into ``OUT_DIR`` (default :data:`BUILD_DIR`), as the book build
    does before it runs Jupyter Book; a folder that holds the export of the same package,
    models and settings already is kept as it is (:func:`cached_export`)."""
    p = argparse.ArgumentParser(prog="python -m bparallel.book.section4.explorer",
                                description="write the model explorer's data files")
    p.add_argument("out_dir", nargs="?", default=str(BUILD_DIR))
    args = p.parse_args(argv)
    catalogue = cached_export(args.out_dir)
    total = sum(c["bytes"] for c in catalogue)
    print(f"[explorer] {len(catalogue)} models, {total / 2**20:.1f} MiB -> {args.out_dir}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
