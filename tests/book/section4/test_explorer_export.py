"""An export of the explorer is measured once and reused only when made from the same
package, models, settings and CPU kernels (:func:`bparallel.book.section4.explorer.
cached_export`): the book build's export serves the tests of the same build."""

from __future__ import annotations

import os

import pytest

from bparallel.book.section4 import explorer

CHOICE = {"tasks": ("copy",), "heads": (1,), "fresh_tasks": (), "step_runs": (),
          "num_sequences": 2, "reference_sequences": 3}


def test_an_export_is_reused_only_when_made_from_the_same_inputs(tmp_path, monkeypatch):
    catalogue = explorer.cached_export(tmp_path, **CHOICE)
    key = explorer.export_key(**CHOICE)
    assert [e["name"] for e in catalogue] == ["copy-h01"]
    assert explorer.read_export(tmp_path, key) == catalogue
    with monkeypatch.context() as m:  # the same inputs: read back, nothing measured again
        m.setattr(explorer, "model_data", lambda *a, **k: pytest.fail("measured again"))
        assert explorer.cached_export(tmp_path, **CHOICE) == catalogue
    assert explorer.export_key(**{**CHOICE, "num_sequences": 3}) != key
    assert explorer.export_key(**{**CHOICE, "max_bytes": 10**9}) == key  # changes no file
    with monkeypatch.context() as m:  # other kernels: another export
        other = "Nehalem" if os.environ.get("OPENBLAS_CORETYPE") != "Nehalem" else "Haswell"
        m.setenv("OPENBLAS_CORETYPE", other)
        assert explorer.export_key(**CHOICE) != key
    assert explorer.read_export(tmp_path / "elsewhere", key) is None
    assert explorer.read_export(tmp_path, "0" * 64) is None
    data = tmp_path / catalogue[0]["file"]
    data.write_text(data.read_text(encoding="utf-8") + " ", encoding="utf-8")
    assert explorer.read_export(tmp_path, key) is None  # a data file changed
    assert explorer.cached_export(tmp_path, **CHOICE) == catalogue  # exported again
    assert explorer.read_export(tmp_path, key) == catalogue


def test_an_unknown_choice_is_refused():
    with pytest.raises(ValueError, match=r"choices: \['bogus'\]"):
        explorer.export_key(bogus=1)
