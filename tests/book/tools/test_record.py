"""The measures recorded beside the shipped models (``python -m bparallel record``): current
for the code as it is, equal to what the weights give, and kept or pruned as they should."""

from __future__ import annotations

import numpy as np
import pytest
import torch

from bparallel._io import flatten
from bparallel.book.section4 import graph_causal, graph_tasks, models
from bparallel.book.section4.measures import HORIZON, MAX_STEPS
from bparallel.book.tools import record
from bparallel.transformer import metrics_cache
from bparallel.transformer.design import model_config
from bparallel.transformer.model import Transformer

pytestmark = pytest.mark.usefixtures("one_torch_thread")


def test_every_recorded_measure_the_chapters_need_is_there():
    """Chapters 10 and 12 find every result of their costliest studies in models/recorded/:
    a change to the measuring code changes the keys, and this fails until the results are
    recorded again (the chapters would compute them: correct, but minutes slower)."""
    gaps = record.missing()
    assert set(gaps) == set(record.STUDIES)
    assert not any(gaps.values()), (
        f"{ {k: len(v) for k, v in gaps.items()} } results not recorded for the current "
        f"code (changed since: {record.changed_code()}): run `python -m bparallel record`")
    assert record.changed_code() == []  # the code they were recorded with, said beside them
    stale = record.stale()
    assert not stale, f"{len(stale)} stale files in models/recorded/: run the command again"


def test_a_recorded_result_is_what_the_weights_give():
    """Recompute the causal tests of one shipped fresh-data model (one head: a second) and
    compare them with the recorded file. Another CPU (AVX2 against AVX-512) rounds the
    float32 logits differently in their last bit: near a logit of 55 that bit is 3.8e-6,
    and a margin drop is a difference of such logits summed over positions, so values
    compare to 1e-4 absolute, far below the two decimals the chapter shows."""
    runs = models.fresh_runs()
    key = min((e["task"], e["heads"], e["head_size"], e["seed"]) for e in runs.entries)
    model = models.load_models(runs)[key]
    sizes = graph_tasks.defaults("paper")
    options = dict(num_sequences=sizes["measured"], reference_sequences=sizes["reference"])
    with metrics_cache.tracked_files(lookup_only=True) as names:
        read = graph_causal.measure_heads({key: model}, cache_dir=None,
                                          recorded=record.RECORDED, **options)[key]
    assert len(names) == 1 and (record.RECORDED / names.pop()).is_file()
    fresh = graph_causal.measure_heads({key: model}, cache_dir=None, **options)[key]
    flat_read, flat_fresh = flatten(read.as_tree()), flatten(fresh.as_tree())
    assert flat_read.keys() == flat_fresh.keys()
    for k in flat_fresh:
        np.testing.assert_allclose(flat_read[k], flat_fresh[k], rtol=1e-5, atol=1e-4,
                                   err_msg=k)


def test_record_keeps_computes_and_prunes(tmp_path, monkeypatch):
    """record() computes what is missing, keeps what is current without computing it again,
    and deletes stale results and lock files; needed() computes nothing."""
    torch.manual_seed(0)
    tiny = {("copy", h): Transformer(model_config("tiny", h)).eval() for h in (1, 2)}
    x = torch.randint(0, 16, (2, model_config("tiny", 1).seq_len))
    which = {"keys": [("copy", 1)]}

    def study(cache_dir, recorded):
        from bparallel.book.section4.measures import measure_models

        return measure_models({k: tiny[k] for k in which["keys"]}, lambda k: x, "sequence",
                              cache_dir=cache_dir, recorded=recorded, workers=1,
                              max_steps=5, horizon=5)

    monkeypatch.setattr(record, "STUDIES", {"toy": study})
    monkeypatch.setattr(record, "record_authors", lambda folder: False)  # tested below
    folder = tmp_path / "recorded"
    assert len(record.missing(folder)["toy"]) == 1 and not folder.exists()  # nothing computed
    assert record.stale(folder) is None  # not known while a result is missing
    counts = record.record(folder)
    assert (counts["computed"], counts["kept"], counts["removed"]) == (1, 0, 0)
    assert record.missing(folder) == {"toy": []} and record.stale(folder) == []
    (folder / "metrics-stale.npz").write_bytes(b"old")
    (folder / "metrics-x.lock").write_bytes(b"")
    which["keys"] = [("copy", 1), ("copy", 2)]
    assert len(record.missing(folder)["toy"]) == 1  # the 2-head model's, not computed
    assert record.stale(folder) is None
    which["keys"] = [("copy", 1)]
    assert record.stale(folder) == ["metrics-stale.npz", "metrics-x.lock"]
    which["keys"] = [("copy", 1), ("copy", 2)]
    assert len(list(folder.glob("metrics-*.npz"))) == 2
    counts = record.record(folder)
    assert (counts["computed"], counts["kept"], counts["removed"]) == (1, 1, 1)
    assert sorted(p.suffix for p in folder.iterdir()) == [".json", ".npz", ".npz"]
    assert record.missing(folder) == {"toy": []} and record.stale(folder) == []
    assert record.changed_code(folder) == []  # record() says which code it measured with


def test_chapter_11s_head_fidelities_are_recorded_like_the_metrics(tmp_path):
    """head_fidelity_cached (chapter 11's per-head study) names its file to record's
    tracking, raises NotCached in a lookup-only block instead of computing, reads a
    recorded result without writing it, and gives what head_fidelity gives (compared to
    1e-12: the same float32 computation, saved and read back)."""
    from bparallel.book.section4.across_seeds_stats import head_fidelity_cached
    from bparallel.transformer.importance import head_fidelity

    torch.manual_seed(0)
    model = Transformer(model_config("tiny", 2)).eval()
    x = torch.randint(0, 16, (2, model_config("tiny", 2).seq_len))
    folder = tmp_path / "recorded"
    with metrics_cache.tracked_files(lookup_only=True) as names:
        with pytest.raises(metrics_cache.NotCached):
            head_fidelity_cached(model, x, horizon=5, cache_dir=None, recorded=folder)
    assert len(names) == 1 and not folder.exists()  # looked up, nothing computed
    with metrics_cache.tracked_files() as kept:
        computed = head_fidelity_cached(model, x, horizon=5, cache_dir=folder)
    assert kept == names and (folder / names.pop()).is_file()
    direct = head_fidelity(model, x, horizon=5)
    assert computed.keys() == direct.keys()
    for k in direct:
        np.testing.assert_allclose(computed[k], direct[k], rtol=1e-12, atol=0, err_msg=k)
    cache = tmp_path / "cache"
    with metrics_cache.tracked_files(lookup_only=True):  # found recorded: no NotCached
        read = head_fidelity_cached(model, x, horizon=5, cache_dir=cache, recorded=folder)
    assert not cache.exists()  # read from the record, nothing written to the cache
    for k in direct:
        np.testing.assert_array_equal(read[k], computed[k], err_msg=k)


def test_the_checkpoint_columns_are_recorded_only_from_the_checkpoints(tmp_path, monkeypatch):
    """Without the authors' checkpoints record() measures nothing of theirs and keeps the
    record there is (it is no stale file); the record in the repository is current."""
    from bparallel.book.section4 import authors_columns as authors
    from bparallel.transformer import authors as loader

    monkeypatch.delenv(loader.ENV, raising=False)
    monkeypatch.setattr(loader, "DEFAULT_DIR", tmp_path / "absent")
    folder = tmp_path / "recorded"
    folder.mkdir()
    kept = folder / record.AUTHORS_FILE
    kept.write_text("{}")
    assert record.record_authors(folder) is False and kept.read_text() == "{}"
    monkeypatch.setattr(record, "STUDIES", {})
    counts = record.record(folder)
    assert counts["authors"] is False and kept.is_file() and counts["removed"] == 0
    assert record.stale(folder) == []
    assert authors.recorded_is_current(record.RECORDED / record.AUTHORS_FILE)


def test_check_names_the_measuring_code_that_changed(tmp_path, monkeypatch, capsys):
    """changed_code names the modules whose code differs from the one the results were
    recorded with (a module added or removed too), None without the file; `record --check`
    prints them when results are missing."""
    import json

    folder = tmp_path / "recorded"
    folder.mkdir()
    assert record.changed_code(folder) is None
    now = record.measured_code()
    assert "transformer/measure.py" in now and "_checks.py" in now  # what the keys follow
    then = {**now, "_checks.py": "0" * 64, "gone.py": "1" * 64}
    del then["graphs.py"]
    (folder / record.CODE_FILE).write_text(json.dumps(then))
    assert record.changed_code(folder) == ["_checks.py", "gone.py", "graphs.py"]
    monkeypatch.setattr(record, "RECORDED", folder)
    monkeypatch.setattr(record, "missing", lambda: {"toy": ["metrics-x.npz"]})
    monkeypatch.setattr(record, "stale", lambda: None)
    monkeypatch.setattr(record, "changed_code", lambda: ["_checks.py"])
    assert record.run(type("A", (), {"check": True})()) == 1
    out = capsys.readouterr().out
    assert "the measuring code changed since they were recorded: _checks.py" in out


def test_the_studies_use_the_chapters_own_defaults():
    """The record tool measures with the settings the chapters default to (their parameter
    cells; ``None``: the sizes of the paper profile, which the tool reads from the same
    place as the chapter): were a chapter's default to change, its results would no longer
    be found."""
    from pathlib import Path

    from bparallel.book.tools.regress import declared_parameters

    want = {"08_proxies": {"max_steps": MAX_STEPS, "horizon": HORIZON},
            "09_amplification": {"horizon": HORIZON},
            "10_section4_as_defined": {"max_steps": MAX_STEPS, "num_sequences": None,
                                       "ablation_sequences": None,
                                       "reference_sequences": None, "other_seeds": True},
            "11_across_seeds": {"max_steps": MAX_STEPS, "horizon": HORIZON},
            "12_graph_tasks": {"max_steps": MAX_STEPS, "num_sequences": None,
                               "reference_sequences": None},
            "12d_graph_dropout": {}, "12f_graph_heads": {"max_steps": 100, "num_sequences": None,
                                                         "reference_sequences": None},
            "12g_graph_finite": {"max_steps": 100, "num_sequences": None,
                                 "reference_sequences": None},
            "13_circuit": {}}
    root = Path(__file__).resolve().parents[3] / "notebooks"
    for name, defaults in want.items():
        declared = declared_parameters(root / f"{name}.md")
        assert declared["recorded_measures"] == "../models/recorded", name
        assert {k: declared.get(k, "not declared") for k in defaults} == defaults, name
