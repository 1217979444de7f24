"""Held-out metrics of Section 4: loss and token accuracy, over every position and over
the positions a causal model can predict (the one definition, used by training, by the
tables and by the head ablations)."""

from __future__ import annotations

import math
from typing import TYPE_CHECKING

import torch
import torch.nn.functional as F

from .._checks import positive_int
from .data import SequenceDataset, predictable_mask

__all__ = [
    "TokenScores", "evaluate_accuracy",
]

if TYPE_CHECKING:
    from .model import Transformer


class TokenScores:
    """Running sums of held-out loss and token accuracy over batches of logits.

    The one definition of the held-out metrics, used by :func:`evaluate_accuracy` and by the
    head ablations of :mod:`bparallel.transformer.ablation`: mean cross-entropy per token
    (``loss``), the fraction of tokens whose argmax is the target (``accuracy``), and both
    over the positions a causal model can predict (``loss_predictable``,
    ``accuracy_predictable``; the mask of :func:`~bparallel.transformer.data.predictable`,
    carried by each :class:`~bparallel.transformer.data.SequenceDataset`). For cycle,
    position 0 (an unpredictable token, about ``8`` nats for a trained model) carries most
    of ``loss``; ``loss_predictable`` leaves it out.

    ``loss_dtype``: the dtype of the cross-entropy. A float32 cross-entropy rounds a token's
    loss ``log(1 + eps)`` to 0 or ``2^-23`` below ``eps = 2^-24`` (``6e-8``); the trained
    models of Section 4.1 sit there (median token loss ``1e-10`` and less), so comparing
    their losses needs ``torch.float64`` (several times slower).
    """

    def __init__(self, task: str, seq_len: int, *, loss_dtype: torch.dtype = torch.float32
                 ) -> None:
        self.task, self.seq_len = task, positive_int(seq_len, "seq_len")
        self.loss_dtype = loss_dtype
        self.loss_sum, self.loss_pred, self.correct, self.correct_pred = 0.0, 0.0, 0, 0
        self.n, self.n_pred = 0, 0

    def add(self, logits: torch.Tensor, targets: torch.Tensor,
            mask: torch.Tensor | None = None, *, token_loss: torch.Tensor | None = None
            ) -> None:
        """Add one batch: ``logits`` ``(B, T, V)``, ``targets`` ``(B, T)`` and the boolean
        ``mask`` ``(B, T)`` of predictable positions (default: the task's
        :func:`~bparallel.transformer.data.predictable_mask`, for the tasks that have one).

        ``token_loss`` ``(B, T)``: the per-token cross-entropy in ``loss_dtype`` when the
        caller has it already (``-log_softmax(logits).gather(targets)``, bitwise what
        :func:`~torch.nn.functional.cross_entropy` computes); only for a ``loss_dtype``
        other than the logits'."""
        if mask is None:
            mask = predictable_mask(self.task, self.seq_len).expand(targets.shape)
        mask = mask.to(targets.device)
        if token_loss is not None:
            if logits.dtype == self.loss_dtype or token_loss.dtype != self.loss_dtype:
                raise ValueError("token_loss: only for a loss_dtype other than the logits', "
                                 "computed in loss_dtype")
            loss, loss_pred = token_loss.sum().item(), token_loss[mask].sum().item()
        else:
            loss, loss_pred = self._losses(logits, targets, mask)
        self.loss_sum += loss
        self.loss_pred += loss_pred
        hit = logits.argmax(-1) == targets  # (B, T)
        self.correct += int(hit.sum())
        self.correct_pred += int(hit[mask].sum())
        self.n += targets.numel()
        self.n_pred += int(mask.sum())

    def _losses(self, logits: torch.Tensor, targets: torch.Tensor, mask: torch.Tensor
                ) -> tuple[float, float]:
        """Summed cross-entropy over all positions and over the predictable ones."""
        if logits.dtype != self.loss_dtype:
            per_token = F.cross_entropy(logits.to(self.loss_dtype).flatten(0, 1),
                                        targets.flatten(), reduction="none")
            per_token = per_token.view(targets.shape)  # (B, T)
            return per_token.sum().item(), per_token[mask].sum().item()
        # in the logits' dtype: the summed reduction evaluate_accuracy has always used (bitwise)
        loss = F.cross_entropy(logits.flatten(0, 1), targets.flatten(), reduction="sum").item()
        if mask.all():
            return loss, loss
        return loss, F.cross_entropy(logits[mask], targets[mask], reduction="sum").item()

    def result(self) -> dict[str, float]:
        """``loss``, ``accuracy``, ``loss_predictable`` and ``accuracy_predictable`` so far
        (NaN for the predictable ones when no position was predictable)."""
        n_pred = self.n_pred or math.nan
        return {
            "loss": self.loss_sum / self.n,
            "accuracy": self.correct / self.n,
            "loss_predictable": self.loss_pred / n_pred,
            "accuracy_predictable": self.correct_pred / n_pred,
        }


@torch.no_grad()
def evaluate_accuracy(
    model: Transformer,
    dataset: SequenceDataset,
    batch_size: int = 250,
    *,
    loss_dtype: torch.dtype = torch.float32,
) -> dict[str, float]:
    """Held-out loss and token accuracy (all positions, and predictable positions only).

    For cycle, position 0 (target ``x_T``) is unpredictable under causal attention, so
    ``accuracy`` tops out near ``(T-1)/T``; ``accuracy_predictable`` and
    ``loss_predictable`` leave it out (definitions and ``loss_dtype``: :class:`TokenScores`).
    """
    was_training = model.training
    model.eval()
    scores = TokenScores(dataset.task, dataset.inputs.shape[1], loss_dtype=loss_dtype)
    device = next((q.device for q in model.parameters()), torch.device("cpu"))
    for start in range(0, len(dataset), batch_size):
        x = dataset.inputs[start : start + batch_size].to(device)
        y = dataset.targets[start : start + batch_size].to(device)
        scores.add(model(x), y, dataset.mask[start : start + batch_size])  # logits (B, T, V)
    model.train(was_training)
    return scores.result()
