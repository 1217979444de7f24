"""bparallel.book.section4.training: chapter 07's tables and recorded values."""

import json
from pathlib import Path

import pytest

from bparallel.book.section4 import training
from bparallel.transformer.design import HEADS

ROOT = Path(__file__).resolve().parents[3]


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
            "epoch": 2}


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


def test_model_settings_are_the_ones_the_code_trains_with():
    """What chapter 07 and the reproducibility page quote: Section 4.1's model (the paper's
    numbers) and each profile's training settings, read from the code."""
    from bparallel.transformer.design import PROFILES, model_config

    paper = training.model_settings("paper")
    assert paper == {"model.vocab_size": 256, "model.seq_len": 100, "model.d_model": 64,
                     "model.n_layers": 4, "model.d_mlp": 128, "model.dropout": 0.1,
                     "training.num_train": 5000, "training.epochs": 200,
                     "training.batch_size": 50, "training.lr": 1e-3}  # Section 4.1
    quick = training.model_settings("quick")
    assert quick["training.num_train"] == PROFILES["quick"].num_train
    assert quick["training.epochs"] == PROFILES["quick"].epochs
    assert quick["model.d_model"] == model_config("quick", 4).d_model


def _manifest(folder: Path, models: dict) -> None:
    folder.mkdir()
    (folder / "manifest.json").write_text(json.dumps({"models": models}))


def test_machine_rows_group_the_models_by_seed_kernel_and_machine(tmp_path):
    cpu, gpu = "Linux x86_64, 2 cores, torch threads 1", "Linux x86_64, 16 cores, NVIDIA H100"
    _manifest(tmp_path / "induction", {
        "induction-h01": {"seed": 42, "attention_path": "fused", "hardware": cpu,
                          "torch_version": "2.13.0+cpu"}})
    _manifest(tmp_path / "paper", {
        "copy-h01": {"seed": 42, "hardware": cpu, "torch_version": "2.13.0+cpu"},  # legacy
        "copy-h04": {"seed": 42, "attention_path": "fused", "hardware": cpu,
                     "torch_version": "2.13.0+cpu"},
        "copy-h04-s43": {"seed": 43, "attention_path": "fused", "hardware": gpu,
                         "torch_version": "2.11.0+cu130"},
        "cycle-h01-s43": {"seed": 43, "attention_path": "fused", "hardware": gpu,
                          "torch_version": "2.11.0+cu130"}})
    (tmp_path / "notes").mkdir()  # no manifest: not a model folder
    rows = training.machine_rows(tmp_path)
    assert [(r["folder"], r["seed"], r["attention kernel"], r["models"]) for r in rows] == [
        ("models/paper", 42, "fused", "copy-h04"),
        ("models/paper", 42, "sdpa", "copy-h01"),  # older than the field: trained with sdpa
        ("models/paper", 43, "fused", "copy-h04, cycle-h01"),  # named without the seed
        ("models/induction", 42, "fused", "induction-h01"),
    ]
    assert rows[2]["machine"] == gpu and rows[2]["torch"] == "2.11.0+cu130"


def test_machine_rows_list_every_shipped_model_once():
    rows = training.machine_rows(ROOT / "models")
    listed = sum(len(r["models"].split(", ")) for r in rows)
    shipped = sum(len(json.loads(p.read_text())["models"])
                  for p in (ROOT / "models").glob("*/manifest.json"))
    assert listed == shipped and rows[0]["folder"] == "models/paper"
    assert all(r["attention kernel"] in ("fused", "sdpa") and r["machine"] for r in rows)


def test_status_rows_of_the_shipped_paper_models():
    rows = training.status_rows(ROOT / "models" / "paper")
    assert len(rows) == 8 and all(r["status"] == "shipped" for r in rows)
    assert "hardware" not in rows[0]  # the machines are on the reproducibility page
    assert all(r["epochs"].split(" of ")[0] == r["epochs"].split(" of ")[1] for r in rows)
