"""The model as the optimiser saw it: held-out accuracy with its dropout on.

Training runs the Section 4.1 model in training mode, dropout 0.1 on the attention pattern
and in the MLP; every held-out curve (:func:`~.evaluation.evaluate_accuracy`) scores it in
evaluation mode, dropout off, as the published code does. The two are different functions
of the same weights: :func:`evaluate_as_trained` scores the first on the held-out sequences,
beside the second, so a chapter can say where they part (chapter 12: histogram).

It is one part of :func:`~.measure.measure_model` (``"as_trained"``), so a chapter reads it
through the metrics cache and the recorded measures (``python -m bparallel record``) as it
reads the proxies: computed once per model, weights and sequences.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import torch

from .._checks import positive_int
from .data import SequenceDataset
from .evaluation import TokenScores, evaluate_accuracy

if TYPE_CHECKING:
    from .model import Transformer


@torch.no_grad()
def evaluate_as_trained(
    model: Transformer,
    dataset: SequenceDataset,
    *,
    draws: int = 2,
    seed: int = 0,
    batch_size: int = 250,
) -> dict[str, float]:
    """Held-out token accuracy of the model the optimiser saw: in training mode, its dropout
    on (the attention pattern's and the MLP's, Section 4.1's 0.1), beside
    :func:`evaluate_accuracy`'s model in evaluation mode. ``accuracy_predictable``: the mean
    over ``draws`` sets of dropout masks; ``spread``: their largest less smallest (what one
    draw of the masks moves it); ``loss_predictable``: the mean loss over the draws;
    ``evaluated``: the same model's accuracy in evaluation mode. The masks
    are drawn from the global generator seeded with ``seed, seed + 1, ...`` inside a forked
    random state, so the caller's random numbers are left as they were and the result is a
    function of the weights, the sequences and ``seed``. A model without dropout (every
    dropout rate 0) is the evaluated model, the one its optimiser saw: its scores in
    evaluation mode are returned as they are (``spread`` 0), with no mask drawn."""
    positive_int(draws, "draws")
    positive_int(batch_size, "batch_size")
    if isinstance(seed, bool) or not isinstance(seed, int) or seed < 0:
        raise ValueError(f"seed={seed!r}: must be a non-negative integer")
    full = evaluate_accuracy(model, dataset, batch_size)
    evaluated = full["accuracy_predictable"]
    if model.config.dropout == 0:  # every dropout of the model takes its config's rate
        return {"accuracy_predictable": evaluated, "spread": 0.0,
                "loss_predictable": full["loss_predictable"], "evaluated": evaluated}
    was_training = model.training
    device = next((q.device for q in model.parameters()), torch.device("cpu"))
    per_draw = []
    model.train()
    try:
        with torch.random.fork_rng(devices=[device] if device.type == "cuda" else []):
            for d in range(draws):
                torch.manual_seed(seed + d)
                scores = TokenScores(dataset.task, dataset.inputs.shape[1])
                for start in range(0, len(dataset), batch_size):
                    x = dataset.inputs[start : start + batch_size].to(device)
                    y = dataset.targets[start : start + batch_size].to(device)
                    scores.add(model(x), y, dataset.mask[start : start + batch_size])
                per_draw.append(scores.result())
    finally:
        model.train(was_training)
    acc = [r["accuracy_predictable"] for r in per_draw]
    return {"accuracy_predictable": sum(acc) / draws, "spread": max(acc) - min(acc),
            "loss_predictable": sum(r["loss_predictable"] for r in per_draw) / draws,
            "evaluated": evaluated}


__all__ = ["evaluate_as_trained"]
