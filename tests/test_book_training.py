"""bparallel.book.training: chapter 07's tables and recorded values."""

from pathlib import Path

import pytest

from bparallel.book import training
from bparallel.transformer.train import HEADS

ROOT = Path(__file__).resolve().parents[1]


def test_parameter_rows_same_count_at_every_head_count():
    rows = training.parameter_rows()
    assert [r["heads"] for r in rows] == list(HEADS)
    assert [r["head dim"] for r in rows] == [64, 16, 8, 4]
    assert {r["parameters"] for r in rows} == {172_800}  # Section 4.1: same parameter count


def test_profile_rows_are_the_visible_profiles():
    names = [r["profile"] for r in training.profile_rows()]
    assert names[:2] == ["paper", "quick"] and "induction" in names
    assert "tiny" not in names  # hidden: tests only


def _history(acc, loss, predictable):
    return {"history": {"epoch": [1, 2], "heldout_accuracy": [0.1, acc], "train_loss": [9.0, loss],
                        "heldout_accuracy_predictable": [0.1, predictable]},
            "epoch": 2, "attention_path": "fused", "hardware": "cpu"}


def test_final_rows_and_results_by_hand():
    metas = {(task, h): _history(acc, 0.5 / h, pred)
             for task, acc, pred in (("copy", 0.9, 0.9), ("cycle", 0.5, 0.6)) for h in HEADS}
    metas[("copy", 4)] = _history(0.8, 0.1, 0.8)
    metas[("cycle", 16)] = _history(0.7, 0.1, 0.75)
    rows = training.final_rows(metas)
    assert len(rows) == 8 and rows[0]["held-out accuracy (%)"] == pytest.approx(90.0)
    out = training.training_results(metas, "quick")
    assert out["copy.min_heldout_accuracy"] == pytest.approx(0.8)
    assert out["quick.copy.min_heldout_accuracy"] == out["copy.min_heldout_accuracy"]
    assert out["cycle.max_heldout_accuracy"] == pytest.approx(0.7)
    assert out["cycle.max_heldout_accuracy_predictable"] == pytest.approx(0.75)
    assert out["quick.copy.h4.train_loss"] == 0.1 and len(out) == 2 * 8 + 4
    runs = training.run_rows(metas)
    assert runs[0] == {"task": "copy", "heads": 1, "epochs": 2, "attention path": "fused",
                       "hardware": "cpu"}


def test_status_rows_of_the_shipped_paper_models():
    rows = training.status_rows(ROOT / "models" / "paper")
    assert len(rows) == 8 and all(r["status"] == "shipped" for r in rows)
    assert all(r["epochs"].split(" of ")[0] == r["epochs"].split(" of ")[1] for r in rows)
