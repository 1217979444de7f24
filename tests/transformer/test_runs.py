"""A run as one value (:class:`bparallel.transformer.runs.Run`): its normalisation and checks,
the names of every shipped model and committed snapshot (unchanged by the move to one
naming rule), runs trained as the old loose-argument ``train`` trained them (fixed values),
models of another size, and training without probes."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import torch

from bparallel.transformer.arms import ARMS, arms_of
from bparallel.transformer.checkpoints import load_checkpoint, load_weights, read_torch_file
from bparallel.transformer.runs import Run, size_tag
from bparallel.transformer.shipped import ship
from bparallel.transformer.train import train

MODELS = Path(__file__).resolve().parents[2] / "models"
MANIFESTS = sorted(MODELS.glob("*/manifest.json"))
SNAPSHOTS = sorted(MODELS.glob("*/partial/**/*.ckpt.pt"))


# --------------------------------------------------------------------------- the value


def test_a_run_is_normalised_so_that_equal_runs_are_equal_values():
    """A head size of d_model / H, a data seed equal to the seed and a size equal to the
    profile's are the run without them: one value, one name."""
    plain = Run("induction", 4, "induction-fresh")
    assert Run("induction", 4, "induction-fresh", head_size=16, data_seed=42, n_layers=4,
               d_model=64, d_mlp=128) == plain
    assert plain.name == "induction-h04" and plain.arms == ["width", "head16"]
    assert Run.in_arm("induction", 4, "induction-fresh", "head16") == plain
    inner = Run.in_arm("induction", 1, "induction-fresh", "inner256", seed=44)
    assert (inner.head_size, inner.arms, inner.shipped_name) == (
        256, ["inner256"], "induction-h01-hs256-s44")
    assert hash(inner) == hash(Run("induction", 1, "induction-fresh", seed=44, head_size=256))


@pytest.mark.parametrize(("fields", "match"), [
    ({"task": "sort"}, "task='sort'"),
    ({"heads": 0}, "heads"),
    ({"heads": 3}, "n_heads=3 does not divide d_model=64"),
    ({"seed": -1}, "seed"),
    ({"data_seed": -2}, "data_seed"),
    ({"budget_factor": 0}, "budget_factor"),
    ({"n_layers": 0}, "n_layers"),
    ({"head_size": 0}, "head_size"),
    ({"profile": "nope"}, "profile='nope'"),
])
def test_bad_fields_are_refused_naming_the_field(fields, match):
    base = {"task": "induction", "heads": 4, "profile": "fresh-tiny"}
    with pytest.raises(ValueError, match=match):
        Run(**{**base, **fields})


def test_finite_data_runs_refuse_what_is_for_fresh_data():
    with pytest.raises(ValueError, match="data_seed=43: a finite-data profile"):
        Run("copy", 1, "tiny", data_seed=43)
    with pytest.raises(ValueError, match="head_size=16: head sizes"):
        Run("copy", 8, "tiny", head_size=16)
    with pytest.raises(ValueError, match="arm='head16': arms are for fresh-data profiles"):
        Run.in_arm("copy", 8, "tiny", "head16")
    with pytest.raises(ValueError, match="budget_factor=2"):
        Run("copy", 1, "tiny", budget_factor=2)
    with pytest.raises(ValueError, match="decays its learning rate"):
        Run("histogram", 1, "histogram-cosine", budget_factor=2)


def test_a_size_other_than_the_profiles_names_every_file():
    """Only a size that differs from the profile's enters the name (so every existing name
    is kept), in one order, and every file of the run carries it."""
    run = Run("induction", 4, "induction-fresh", n_layers=2, d_mlp=64, seed=43)
    assert size_tag(run.sizes) == "-L2-m64"
    assert run.name == "induction-h04-L2-m64" and run.shipped_name == "induction-h04-L2-m64-s43"
    folder = Path("runs")
    assert run.checkpoint_path(folder).name == "induction-h04-L2-m64.ckpt.pt"
    assert run.lock_path(folder).name == ".induction-h04-L2-m64.lock"
    assert run.weights_path(folder).name == "induction-h04-L2-m64.weights.pt"
    assert run.partial_path(folder) == folder / "partial/seed-43/induction-h04-L2-m64.ckpt.pt"
    assert run.config.n_layers == 2 and run.config.d_mlp == 64 and run.arms == []
    wide = Run("induction", 4, "induction-fresh", d_model=32)
    assert wide.name == "induction-h04-w32" and wide.config.head_dim == 8
    with pytest.raises(ValueError, match="sizes"):
        size_tag({"depth": 2})


# --------------------------------------------------------------------------- what is shipped


@pytest.mark.parametrize("manifest", MANIFESTS, ids=lambda p: p.parent.name)
def test_every_shipped_model_keeps_its_name_and_its_arms(manifest):
    """Each manifest entry read back as a run has the entry's key as its shipped name and
    its head size: the one naming rule renames no shipped file. Its arms are derived from
    its model (:attr:`Run.arms`), and contain those the entry recorded (an entry shipped
    before the inner256 arm existed lacks it: readers derive, never read, the arms)."""
    shipped = json.loads(manifest.read_text())
    entries = shipped["models"]
    assert entries
    for key, entry in entries.items():
        run = Run.from_record(entry, entry.get("profile", shipped["profile"]))
        assert run.shipped_name == key, (manifest, key)
        assert entry["file"] == f"{key}.weights.pt"
        if "arms" in entry:  # written before an arm existed: that arm missing
            assert set(entry["arms"]) <= set(run.arms), key
            assert entry["head_size"] == run.config.head_dim, key


@pytest.mark.parametrize("snapshot", SNAPSHOTS, ids=lambda p: str(p.relative_to(MODELS)))
def test_every_committed_snapshot_is_found_where_its_run_looks(snapshot):
    """A committed partial snapshot (a run another session resumes) is where its run's
    :meth:`Run.find_partial` looks, and its checkpoint passes the run's checks."""
    data = read_torch_file(snapshot, "checkpoint")
    models_dir = snapshot.parents[2] if snapshot.parent.name.startswith("seed-") \
        else snapshot.parents[1]
    run = Run.from_record(data)
    assert run.find_partial(models_dir) == snapshot
    assert load_checkpoint(snapshot, **run.expect()).position == data[run.unit]


# --------------------------------------------------------------------------- as before


#: What ``train`` returned for these runs before a run was one value (the loose-argument
#: call of each id, one torch thread): the final training and held-out loss. A run with
#: another seed, data seed, head size or budget moves them by more than 1e-3 relative
#: (copy-h01 at seeds 42 and 43: held-out 5.4671 and 5.4716); a tolerance of 1e-5 relative
#: leaves room for another CPU's rounding only.
BEFORE = {
    # train("copy", 1, "tiny", seed=43)
    "copy-tiny-43": (Run("copy", 1, "tiny", seed=43), {}, 2,
                     5.379889965057373, 5.471646118164062),
    # train("cycle", 4, "tiny", epochs=3)
    "cycle-tiny-h4-epochs3": (Run("cycle", 4, "tiny"), {"epochs": 3}, 3,
                              5.378138184547424, 5.854533386230469),
    # train("induction", 8, "fresh-tiny", arm="head16")
    "induction-h08-head16": (Run.in_arm("induction", 8, "fresh-tiny", "head16"), {}, 12,
                             5.883310914039612, 5.862095642089844),
    # train("induction", 4, "fresh-tiny", arm="inner256", data_seed=44, seed=43)
    "induction-h04-inner256-d44": (
        Run.in_arm("induction", 4, "fresh-tiny", "inner256", data_seed=44, seed=43), {}, 12,
        5.807778596878052, 5.806372833251953),
    # train("first", 1, "fresh-tiny", budget_factor=2, out_dir=...)
    "first-h01-x2": (Run("first", 1, "fresh-tiny", budget_factor=2), {"out": True}, 24,
                     5.777240872383118, 5.994358825683594),
}


@pytest.mark.parametrize("case", list(BEFORE))
def test_a_run_trains_as_the_loose_argument_call_trained_it(case, tmp_path):
    run, kw, position, train_loss, heldout_loss = BEFORE[case]
    kw = dict(kw)
    if kw.pop("out", False):
        kw["out_dir"] = tmp_path
    res = train(run, threads=1, progress=False, **kw)
    assert res.position == position and res.run == run
    assert res.history["train_loss"][-1] == pytest.approx(train_loss, rel=1e-5)
    assert res.history["heldout_loss"][-1] == pytest.approx(heldout_loss, rel=1e-5)
    if "out_dir" in kw:
        assert sorted(p.name for p in tmp_path.iterdir()) == [f"{run.name}.ckpt.pt"]


# --------------------------------------------------------------------------- sizes, probes


def test_a_two_layer_model_trains_ships_and_loads_under_its_own_name(tmp_path):
    run = Run("induction", 4, "fresh-tiny", n_layers=2, d_mlp=32, seed=43)
    res = train(run, out_dir=tmp_path / "runs", threads=1, progress=False)
    assert len(res.model.blocks) == 2 and res.model.config.d_mlp == 32
    assert res.checkpoint == tmp_path / "runs" / "induction-h04-L2-m32.ckpt.pt"
    ck = load_checkpoint(res.checkpoint, **run.expect())
    assert ck.run() == run and ck.data["sizes"] == {"n_layers": 2, "d_mlp": 32}
    entry = ship(res.checkpoint, tmp_path / "models", run=run)
    assert entry["file"] == "induction-h04-L2-m32-s43.weights.pt"
    assert entry["sizes"] == {"n_layers": 2, "d_mlp": 32} and entry["arms"] == []
    model, meta = load_weights(tmp_path / "models" / entry["file"], sha256=entry["sha256"])
    assert len(model.blocks) == 2 and Run.from_record(meta) == run
    assert Run.from_record(entry).shipped_name == "induction-h04-L2-m32-s43"
    with pytest.raises(ValueError, match="other settings"):  # the default-size run's check
        load_checkpoint(res.checkpoint, **Run("induction", 4, "fresh-tiny", seed=43).expect())


def test_probes_off_train_the_same_weights_without_the_probes(tmp_path):
    probed = train(Run.in_arm("induction", 4, "fresh-tiny", "inner256"), threads=1,
                   progress=False)
    bare = train(Run.in_arm("induction", 4, "fresh-tiny", "inner256"), threads=1,
                 progress=False, probes=False, out_dir=tmp_path, stop_after=6)
    assert probed.history["probe"]["step"] and bare.history["probe"]["step"] == []
    with pytest.raises(ValueError, match="probes=False; resuming it with probes=True"):
        train(bare.run, out_dir=tmp_path, progress=False)
    done = train(bare.run, out_dir=tmp_path, threads=1, progress=False, probes=False)
    assert done.resumed_from == 6 and done.history["probe"]["step"] == []
    for k, v in probed.model.state_dict().items():
        assert torch.equal(v, done.model.state_dict()[k]), k
    with pytest.raises(ValueError, match="probes=False: profile 'tiny'"):
        train(Run("copy", 1, "tiny"), probes=False, progress=False)


def test_train_takes_a_run_only():
    with pytest.raises(ValueError, match="give a Run"):
        train("copy", progress=False)


def test_arms_of_a_model_of_another_size_is_none():
    assert arms_of(Run("induction", 4, "fresh-tiny").config) == ["width", "head16"]
    assert arms_of(Run("induction", 4, "fresh-tiny", n_layers=2).config) == []
    assert ARMS == ("width", "head16", "inner256")


def test_the_models_with_arms_are_the_paper_s_and_the_fresh_profiles():
    """arms.ARM_SHAPES (written in arms, which design imports) is exactly the paper's model
    and every fresh-data profile's: a new profile of another size fails here until added."""
    from bparallel.transformer.arms import ARM_SHAPES, PAPER_SHAPE
    from bparallel.transformer.design import PROFILES, FreshProfile

    fresh = {(p.d_model, p.n_layers, p.d_mlp) for p in PROFILES.values()
             if isinstance(p, FreshProfile)}
    assert ARM_SHAPES == {PAPER_SHAPE} | fresh


def test_a_model_run_and_a_train_result_read_their_runs_identity(tmp_path):
    """ModelRun and TrainResult hold one Run and read task, heads, head size, seed, profile
    and budget factor off it (runs.OfRun), never a copy that could drift."""
    from bparallel.transformer.sweep_runs import ModelRun
    from bparallel.transformer.train import TrainResult

    run = Run("induction", 4, "fresh-tiny", seed=43, head_size=8, budget_factor=2)
    holders = [ModelRun(run, tmp_path / "runs", tmp_path / "models"),
               TrainResult(model=None, run=run, position=0)]
    for holder in holders:
        for name in ("task", "heads", "head_size", "seed", "profile", "budget_factor"):
            assert getattr(holder, name) == getattr(run, name), (type(holder).__name__, name)
    assert (holders[0].heads, holders[0].head_size, holders[0].seed,
            holders[1].budget_factor) == (4, 8, 43, 2)
    with pytest.raises(AttributeError):
        holders[0].heads = 2  # the run's, not the holder's
