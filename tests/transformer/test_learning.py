"""The learning measures that count failures (bparallel.transformer.learning): steps to a
threshold (censored), the area under the learning curve, the convergence rule, the probes."""

from __future__ import annotations

import numpy as np
import pytest
import torch

from bparallel.transformer import learning as lr
from bparallel.transformer import measure
from bparallel.transformer.data import heldout_dataset
from bparallel.transformer.measure import (
    PROBE_LAYER_KEYS,
    PROBE_SCALAR_KEYS,
    defined_metrics,
    sequence_metrics,
    training_probe,
)
from bparallel.transformer.model import ModelConfig, Transformer

pytestmark = pytest.mark.usefixtures("one_torch_thread")

STEPS = [0, 100, 200, 300, 400]


def test_steps_to_threshold_is_the_first_step_reaching_it():
    acc = [0.0, 0.5, 0.9, 0.95, 0.8]
    assert lr.steps_to_threshold(STEPS, acc, 0.9, in_a_row=1) == 200  # reached exactly counts
    assert lr.steps_to_threshold(STEPS, acc, 0.94, in_a_row=1) == 300
    assert lr.steps_to_threshold(STEPS, acc, 0.0, in_a_row=1) == 0
    assert lr.steps_to_threshold(STEPS, acc, 0.95, budget=200, in_a_row=1) is None  # at the budget


def test_one_noisy_evaluation_neither_makes_nor_breaks_a_learning_time():
    """The default rule: the first of LEARNED_IN_A_ROW (3) evaluations in a row at the
    threshold. A single touch followed by a fall is not learning; a later steady run is."""
    assert lr.LEARNED_IN_A_ROW == 3
    steps = list(range(0, 1000, 100))
    touch = [0.1, 0.5, 0.91, 0.88, 0.9, 0.92, 0.93, 0.89, 0.95, 0.96]
    assert lr.steps_to_threshold(steps, touch, 0.9) == 400  # 0.9, 0.92, 0.93
    assert lr.steps_to_threshold(steps, touch, 0.9, in_a_row=1) == 200
    assert lr.steps_to_threshold(steps, touch, 0.9, in_a_row=4) is None  # never 4 in a row
    # the last two evaluations cannot start a time at the budget ...
    end = [0.1, 0.2, 0.3, 0.4, 0.5, 0.6, 0.7, 0.8, 0.95, 0.96]
    assert lr.steps_to_threshold(steps, end, 0.9) is None
    # ... but can when the convergence rule stopped the run there (its accuracy holds)
    assert lr.steps_to_threshold(steps, end, 0.9, held=True) == 800
    s = lr.learning_summary(steps, touch, threshold=0.9, budget=900, patience=5)
    assert (s["outcome"], s["steps_to_threshold"], s["in_a_row"]) == ("budget reached", 400, 3)
    s = lr.learning_summary(steps, end, threshold=0.9, budget=900)
    assert (s["outcome"], s["steps_to_threshold"]) == ("not learned", None)
    with pytest.raises(ValueError, match="in_a_row=0"):
        lr.steps_to_threshold(steps, touch, 0.9, in_a_row=0)


@pytest.mark.parametrize("acc", [[0.0] * 5, [0.01, 0.2, 0.5, 0.89, 0.899999], [0.013] * 5])
def test_a_model_below_the_threshold_never_gets_a_learning_time(acc):
    """Censoring: a curve that stays below the threshold has no steps to threshold (not a
    number: not the budget, not the step of its best), and its outcome says so."""
    assert lr.steps_to_threshold(STEPS, acc, 0.9) is None
    s = lr.learning_summary(STEPS, acc, threshold=0.9, budget=400)
    assert s["outcome"] == "not learned" and s["steps_to_threshold"] is None
    assert s["converged_at"] is None
    # the same curve, cut before the budget: still running, still no time
    s = lr.learning_summary(STEPS[:3], acc[:3], threshold=0.9, budget=400)
    assert (s["outcome"], s["steps_to_threshold"], s["curve_area"]) == ("running", None, None)


def test_learning_curve_area_closed_forms():
    assert lr.learning_curve_area([0, 400], [1.0, 1.0], 400) == 1.0
    assert lr.learning_curve_area([0, 400], [0.0, 1.0], 400) == 0.5  # a straight line
    assert lr.learning_curve_area([0, 100], [0.0, 1.0], 400) == pytest.approx(0.875)  # held
    assert lr.learning_curve_area([0, 800], [0.0, 1.0], 400) == pytest.approx(0.25)  # cut
    # trapezoids: (0 + .5)/2 * 100 + (.5 + .9)/2 * 100 + (.9 + .95)/2 * 100 + (.95 + .8)/2 * 100
    area = (0.25 + 0.7 + 0.925 + 0.875) * 100 / 400
    assert lr.learning_curve_area(STEPS, [0.0, 0.5, 0.9, 0.95, 0.8], 400) == pytest.approx(area)
    with pytest.raises(ValueError, match="must start at step 0"):
        lr.learning_curve_area([100, 200], [0.1, 0.2], 400)


def test_convergence_rule():
    # within 0.5 points of the best for 3 evaluations, after reaching 0.9
    acc = [0.1, 0.5, 0.91, 0.95, 0.953, 0.951, 0.952, 0.96]
    assert lr.converged_at(acc, 0.9, patience=3) == 5  # 0.95, 0.953, 0.951 vs best 0.953
    assert lr.converged_at(acc, 0.9, patience=4) == 6
    assert lr.converged_at(acc, 0.97, patience=1) is None  # never reaches the threshold
    # a plateau below the threshold never converges, however flat
    assert lr.converged_at([0.6] * 10, 0.9, patience=3) is None
    # a fall of more than 0.5 points below the best restarts the count
    assert lr.converged_at([0.95, 0.95, 0.94, 0.95, 0.95, 0.95], 0.9, patience=3) == 5
    # the window never reaches back before the threshold was first reached
    assert lr.converged_at([0.899, 0.9, 0.9], 0.9, patience=3) is None
    s = lr.learning_summary(list(range(0, 800, 100)), acc, threshold=0.9, budget=2000,
                            patience=3)
    assert s["outcome"] == "converged" and s["converged_at"] == 500
    assert s["steps_to_threshold"] == 200  # 0.91, 0.95, 0.953
    # the converged curve is held at its last value (0.951 from step 500) to the budget
    held = lr.learning_curve_area([0, 100, 200, 300, 400, 500], acc[:6], 2000)
    assert s["curve_area"] == held
    s = lr.learning_summary(STEPS, [0.1, 0.5, 0.91, 0.95, 0.99], threshold=0.9, budget=400)
    assert s["outcome"] == "budget reached" and s["steps_to_threshold"] == 200
    s = lr.learning_summary(STEPS, [0.1, 0.5, 0.6, 0.95, 0.99], threshold=0.9, budget=400)
    assert s["outcome"] == "not learned" and s["steps_to_threshold"] is None  # 2 in a row


def test_curve_validation_names_the_problem():
    with pytest.raises(ValueError, match="strictly increasing"):
        lr.steps_to_threshold([0, 200, 100], [0.1, 0.2, 0.3], 0.5)
    with pytest.raises(ValueError, match="same length"):
        lr.steps_to_threshold([0, 100], [0.1], 0.5)
    with pytest.raises(ValueError, match=r"fractions, not percent"):
        lr.steps_to_threshold([0, 100], [10.0, 90.0], 0.5)
    with pytest.raises(ValueError, match="finite"):
        lr.learning_curve_area([0, 100], [0.1, float("nan")], 100)
    with pytest.raises(ValueError, match="non-negative integers"):
        lr.steps_to_threshold([0.0, 0.5], [0.1, 0.2], 0.5)
    with pytest.raises(ValueError, match=r"threshold=1.5"):
        lr.steps_to_threshold([0], [0.1], 1.5)
    with pytest.raises(ValueError, match="patience=0"):
        lr.converged_at([0.9], 0.5, patience=0)
    with pytest.raises(ValueError, match="budget=0"):
        lr.learning_curve_area([0], [0.1], 0)


def test_probe_steps_double_from_fifty():
    assert lr.probe_steps(1000) == [0, 50, 100, 200, 400, 800, 1000]
    assert lr.probe_steps(800) == [0, 50, 100, 200, 400, 800]
    assert lr.probe_steps(12, first=2) == [0, 2, 4, 8, 12]
    assert lr.LEARNING_THRESHOLD == {"first": 0.9, "induction": 0.9, "majority": 0.9,
                                     "histogram": 0.9}


def test_training_probe_agrees_with_the_chapters_measures():
    """The per-layer probes are the chapters' measures: Algorithm 2's minimax fidelity taken
    from the node fidelities equals sequence_metrics' own, Algorithm 1 is the same mean,
    Definition 2.7 the median over sequences, rollout_min T times the smallest share."""
    torch.manual_seed(0)
    model = Transformer(ModelConfig(n_heads=8, head_size=16, seq_len=30)).eval()
    probes = heldout_dataset("induction", 6, seed=42, seq_len=30)
    out = training_probe(model, probes)
    assert set(out) == set(PROBE_SCALAR_KEYS) | set(PROBE_LAYER_KEYS)
    seq = sequence_metrics(model, probes.inputs, best_head=False)
    d = defined_metrics(model, probes.inputs)
    for mode in ("paper", "definition"):
        np.testing.assert_allclose(out[f"fidelity.{mode}"], seq[f"fidelity.{mode}"].mean(-1),
                                   rtol=1e-12)
        np.testing.assert_allclose(out[f"mixing_time.{mode}"],
                                   seq[f"mixing_time.{mode}"].mean(-1), rtol=1e-12)
        worst = np.median(d[f"worst_case.{mode}"], axis=-1)
        assert out[f"worst_case.{mode}"] == [None if np.isinf(v) else float(v) for v in worst]
    share = d["rollout.weighted"]  # (L, N, T)
    np.testing.assert_allclose(out["rollout_min.weighted"], 30 * share.min(-1).mean(-1))
    assert all(len(out[k]) == 4 for k in PROBE_LAYER_KEYS)
    assert 0 <= out["accuracy_predictable"] <= 1 and out["loss"] > 0


def test_training_probe_measures_a_gpu_model_as_a_cpu_copy():
    """A model on the CPU is measured as it is; one on another device as a CPU copy (the graph
    proxies are numpy), and the model itself stays where it was. (The GPU case runs only
    where CUDA is; it was the bug of the first GPU sweep.)"""
    model = Transformer(ModelConfig(n_heads=2, head_size=8, seq_len=20)).eval()
    assert measure._on_cpu(model) is model
    if not torch.cuda.is_available():
        return
    probes = heldout_dataset("induction", 4, seed=42, seq_len=20)
    on_cpu = training_probe(model, probes)
    gpu = model.to("cuda")
    on_gpu = training_probe(gpu, probes)
    assert next(gpu.parameters()).device.type == "cuda"
    for key in PROBE_LAYER_KEYS:
        if key.startswith(("fidelity.", "mixing_time.", "rollout_min.")):  # worst_case: None
            np.testing.assert_allclose(on_gpu[key], on_cpu[key], rtol=1e-4, atol=1e-6)
