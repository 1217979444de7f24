"""The checkpoint columns of chapters 08 and 09 (:mod:`bparallel.book.section4.authors_columns`):
the authors' checkpoints through the published code reproduce the published Tables 1-4 (from
the recorded values always, from the checkpoints themselves where a build has them), the
comparison notices a cell that does not, and the differences split into code, definitions
and training as constructed."""

from __future__ import annotations

import json

import numpy as np
import pytest

from bparallel.book.section4 import authors_columns as ck
from bparallel.book.section4.published import published_rows
from bparallel.book.verdicts import Verdict
from bparallel.transformer import authors as loader

pytestmark = pytest.mark.usefixtures("one_torch_thread")

needs_checkpoints = pytest.mark.skipif(
    loader.checkpoint_dir() is None,
    reason=f"the authors' checkpoints are not at {loader.DEFAULT_DIR} and "
    f"{loader.ENV} names none: they are never copied into the repository")


def as_rows(shift: float = 0.0, mode: str = "paper", scale_std: float = 1.0,
            bump: tuple[int, int, int] | None = None, by: float = 0.0) -> list[dict]:
    """The published Tables 1-4 as rows of :func:`evaluate_models` (50 sequences), every
    mean moved by ``shift`` and the cell ``bump`` by ``by`` more."""
    out = []
    for r in published_rows():
        if r["table"] > 4:
            continue
        key = (r["table"], r["heads"], r["layer"])
        out.append({"table": r["table"], "protocol": "paper", "mode": mode,
                    "quantity": r["quantity"], "task": r["task"], "heads": r["heads"],
                    "layer": r["layer"], "n": 50, "std": r["std"] * scale_std,
                    "mean": r["mean"] + shift + (by if key == bump else 0.0)})
    return out


def test_the_recorded_checkpoint_columns_reproduce_the_published_tables():
    """The values recorded from the authors' checkpoints (published-code mode, the published
    protocol's 50 sequences): every one of the 32 mixing-time and 32 fidelity cells lies
    within Z_TOLERANCE = 4 standard errors of the published mean (the smallest gap this
    would catch in a cell is 4 standard errors of two 50-sequence means: 0.011 steps for
    the 16-head copy model's layer 1, 1.7 steps for the single-head cycle layer 1), and the
    median mixing-time difference is below 0.01 steps. The page's verdict on the numbers
    follows: *holds with conditions*."""
    rec = ck.read_recorded()
    assert rec.source == "recorded"
    assert rec.provenance["sha256"] == dict(sorted(loader.SHA256.items()))
    rep = ck.reproduction(rec.tables["tables_1_4"])
    assert rep["mixing.cells"] == rep["fidelity.cells"] == 32
    assert rep["mixing.within"] == rep["fidelity.within"] == 32, rep
    assert rep["mixing.max_z"] <= ck.Z_TOLERANCE and rep["fidelity.max_z"] <= ck.Z_TOLERANCE
    assert rep["mixing.median_abs_difference"] < 0.01
    assert ck.reproduces(rep)
    assert ck.numbers_verdict(rep) == (Verdict.HOLDS_WITH_CONDITIONS, ck.NUMBERS_CONDITION)
    # definition mode is another table: most mixing-time cells are far from the published
    assert ck.reproduction(rec.tables["tables_1_4"], mode="definition")["mixing.within"] < 16


def test_the_record_is_current_for_the_measuring_code():
    """The record was made by the measuring code of now (else `record --check` fails)."""
    assert ck.recorded_is_current(), "run `python -m bparallel record` with the checkpoints"


@needs_checkpoints
@pytest.mark.slow
def test_the_checkpoints_give_the_recorded_values(tmp_path):
    """Measured again from the hash-checked checkpoints (about a minute on 2 cores), the
    checkpoint columns equal the recorded ones to float rounding across CPUs (1e-4, far
    below the four decimals shown), and they reproduce the published tables."""
    tables = ck.evaluate_authors(cache_dir=tmp_path)
    rec = ck.read_recorded().tables
    for part in ("tables_1_4", "tables_5_6"):
        assert len(tables[part]) == len(rec[part])
        for a, b in zip(tables[part], rec[part], strict=True):
            for k, v in a.items():
                if isinstance(v, float):
                    np.testing.assert_allclose(v, b[k], rtol=1e-4, atol=1e-4, err_msg=k)
                else:
                    assert v == b[k], k
    assert ck.reproduces(ck.reproduction(tables["tables_1_4"]))


def test_a_cell_off_by_more_than_the_tolerance_is_caught():
    exact = ck.reproduction(as_rows())
    assert exact["mixing.max_abs_difference"] == 0 and ck.reproduces(exact)
    cell = (2, 1, 1)  # published 27.0384 +- 2.4355 over 50 sequences
    se = np.sqrt(2 * 2.4355 ** 2 / 50)
    near = ck.reproduction(as_rows(bump=cell, by=3.9 * se))
    assert near["mixing.within"] == 32 and ck.reproduces(near)
    far = ck.reproduction(as_rows(bump=cell, by=4.1 * se))
    assert far["mixing.within"] == 31 and not ck.reproduces(far)
    assert ck.numbers_verdict(far) == (Verdict.NOT_SUPPORTED, "")
    assert ck.numbers_results(far) == {"verdict.numbers": list(Verdict).index(
        Verdict.NOT_SUPPORTED)}
    # a fidelity of 0.00 +- 0.00 published: reproduced only at two decimals
    zero = (4, 1, 2)
    assert ck.reproduction(as_rows(bump=zero, by=0.004))["fidelity.within"] == 32
    assert ck.reproduction(as_rows(bump=zero, by=0.006))["fidelity.within"] == 31
    with pytest.raises(ValueError, match="mode='definition'"):
        ck.reproduction(as_rows(), mode="definition")


def test_the_differences_split_into_code_definitions_and_training():
    """Checkpoints equal to the published numbers, their definition mode 1 above, the
    retrained seeds 2 and 4 above: code 0, definitions 1, training 3 (the seeds' mean less
    the checkpoints), and the checkpoint lies outside the seeds' range in every cell."""
    authors_rows = as_rows() + as_rows(shift=1.0, mode="definition")
    by_seed = {42: as_rows(shift=2.0), 43: as_rows(shift=4.0)}
    got = ck.sources_of_difference(authors_rows, by_seed)
    for q in ("mixing_time", "fidelity"):
        assert got[q]["cells"] == 32
        assert got[q]["code.median"] == got[q]["code.max"] == 0
        assert got[q]["definitions.median"] == pytest.approx(1.0)
        assert got[q]["training.median"] == pytest.approx(3.0)
        assert got[q]["training.outside_seeds"] == 32
    rows = ck.sources_table(got)
    assert len(rows) == 6 and rows[0]["median |difference|"] == 0
    spread = ck.seed_spread(by_seed)
    mean, sd, n = spread[(1, 16, 1)]
    assert n == 2 and mean == pytest.approx(3.6328 + 3) and sd == pytest.approx(np.sqrt(2))
    by_seed_rep = ck.reproduction_by_seed(by_seed)
    assert by_seed_rep["seeds"] == 2 and by_seed_rep["mixing.within.min"] < 32


def test_the_checkpoint_columns_as_shown():
    rec = ck.read_recorded().tables
    by_seed = {42: as_rows(shift=1.0), 43: as_rows(shift=3.0)}
    rows = ck.checkpoint_columns(rec["tables_1_4"], by_seed, 2)
    assert len(rows) == 16 and rows[0]["published"] == 27.0384
    assert rows[0]["retrained, 2 seeds, mean"] == pytest.approx(29.0384)
    assert rows[0]["checkpoints, published code"] == pytest.approx(27.0384, abs=1.0)
    md = ck.columns_markdown(rec["tables_1_4"], by_seed)
    assert md.count(":::{table}") == 4 and "seeds 42-43" in md and "nan" not in md.lower()
    with pytest.raises(ValueError, match="Tables 1-4"):
        ck.checkpoint_columns(rec["tables_1_4"], by_seed, 5)
    with pytest.raises(ValueError, match="empty"):
        ck.seed_spread({})
    amp = ck.amplification_columns(rec["tables_5_6"], {42: rec["tables_5_6"]}, 6)
    assert len(amp) == 12 and amp[0]["published"] == "0.39 / 0.59 ▲"
    assert all(r["retrained: seeds where the combination wins"] in ("0 of 1", "1 of 1")
               for r in amp)
    with pytest.raises(ValueError, match="Tables 5-6"):
        ck.amplification_columns(rec["tables_5_6"], {42: rec["tables_5_6"]}, 4)
    agree = ck.amplification_results(rec["tables_5_6"])
    assert agree["checkpoints.fresh.paper.cells"] == 24
    assert agree["checkpoints.fresh.paper.published_wins"] == 11


def test_without_checkpoints_the_record_is_read(tmp_path, monkeypatch):
    """No directory given and none beside the repository: the recorded values, said so on
    the page; no record either: a FileNotFoundError that says how to make one."""
    monkeypatch.delenv(loader.ENV, raising=False)
    monkeypatch.setattr(loader, "DEFAULT_DIR", tmp_path / "absent")
    rec = ck.read_recorded()
    path = ck.write_recorded(rec.tables, tmp_path / "rec.json")
    got = ck.authors_tables(recorded_file=path)
    assert got.source == "recorded" and got.tables == rec.tables
    assert "not available to this build" in got.note and "SHA-256" in got.note
    assert json.loads(path.read_text())["provenance"]["settings"] == ck.SETTINGS
    with pytest.raises(FileNotFoundError, match="bparallel record"):
        ck.authors_tables(recorded_file=tmp_path / "none.json")
    (tmp_path / "bad.json").write_text("[]")
    with pytest.raises(ValueError, match="not a record"):
        ck.read_recorded(tmp_path / "bad.json")
    with pytest.raises(ValueError, match="tables_1_4"):
        ck.write_recorded({}, tmp_path / "x.json")
