"""The held-out metrics of the model as evaluated and as trained
(bparallel.transformer.as_trained)."""

from __future__ import annotations

import dataclasses

import pytest
import torch

from bparallel.transformer.as_trained import evaluate_as_trained
from bparallel.transformer.data import make_dataset
from bparallel.transformer.evaluation import TokenScores, evaluate_accuracy
from bparallel.transformer.model import Transformer

from .tiny import T, tiny_model

pytestmark = pytest.mark.usefixtures("one_torch_thread")


def test_the_model_as_trained_is_scored_with_its_dropout_on(model, dataset):
    """evaluate_as_trained: ``evaluated`` is evaluate_accuracy's; the as-trained accuracy is
    the mean over the draws of the masks, each draw recomputed here by hand in training mode
    with the seed it names; a function of the seed; the caller's random state and the
    model's mode are left as they were."""
    model.eval()
    torch.manual_seed(123)
    before = torch.random.get_rng_state()
    r = evaluate_as_trained(model, dataset, draws=3, seed=5, batch_size=7)
    assert torch.equal(torch.random.get_rng_state(), before)  # the caller's draws untouched
    assert not model.training
    assert r["evaluated"] == evaluate_accuracy(model, dataset)["accuracy_predictable"]
    by_hand = []
    model.train()
    with torch.no_grad():
        for d in range(3):
            torch.manual_seed(5 + d)
            scores = TokenScores(dataset.task, T)
            for start in range(0, len(dataset), 7):
                scores.add(model(dataset.inputs[start:start + 7]),
                           dataset.targets[start:start + 7], dataset.mask[start:start + 7])
            by_hand.append(scores.result())
    model.eval()
    acc = [h["accuracy_predictable"] for h in by_hand]
    assert r["accuracy_predictable"] == pytest.approx(sum(acc) / 3, abs=1e-12)
    assert r["spread"] == pytest.approx(max(acc) - min(acc), abs=1e-12)
    assert r["loss_predictable"] == pytest.approx(
        sum(h["loss_predictable"] for h in by_hand) / 3, rel=1e-12)
    with torch.no_grad():  # not vacuous: the draws score another function than eval mode
        torch.manual_seed(5)
        assert not torch.equal(model.train()(dataset.inputs), model.eval()(dataset.inputs))
    assert evaluate_as_trained(model, dataset, draws=3, seed=5, batch_size=7) == r
    other = evaluate_as_trained(model, dataset, draws=3, seed=6, batch_size=7)
    assert other["loss_predictable"] != r["loss_predictable"]  # other masks
    model.train()
    evaluate_as_trained(model, dataset, draws=1)
    assert model.training  # a model handed over in training mode stays there
    model.eval()


def test_without_dropout_the_model_as_trained_is_the_model_evaluated(dataset):
    """Dropout 0: every draw is the evaluated model, to the bit (same operations)."""
    base = tiny_model()
    model = Transformer(dataclasses.replace(base.config, dropout=0.0))
    model.load_state_dict(base.state_dict())
    r = evaluate_as_trained(model.eval(), dataset, draws=2)
    assert r["accuracy_predictable"] == r["evaluated"] and r["spread"] == 0.0
    ev = evaluate_accuracy(model, dataset)
    assert r["loss_predictable"] == ev["loss_predictable"]
    # so no mask is drawn for it (the model never enters training mode) ...
    assert model.config.dropout == 0 and base.config.dropout > 0
    modes = []
    model.train = lambda mode=True: modes.append(mode) or model
    assert evaluate_as_trained(model, dataset, draws=2) == r and True not in modes
    # ... and drawing them anyway gives the same bits (training mode at rate 0)
    del model.train
    with torch.no_grad():
        torch.manual_seed(0)
        assert torch.equal(model.train()(dataset.inputs), model.eval()(dataset.inputs))


@pytest.mark.parametrize(("kw", "match"), [({"draws": 0}, "draws"), ({"seed": -1}, "seed"),
                                           ({"seed": 1.5}, "seed"), ({"seed": True}, "seed"),
                                           ({"batch_size": 0}, "batch_size")])
def test_bad_arguments_are_refused(model, kw, match):
    data = make_dataset("cycle", 4, seed=1, seq_len=T)
    with pytest.raises(ValueError, match=match):
        evaluate_as_trained(model, data, **kw)
