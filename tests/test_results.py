import json

import numpy as np
import pytest

from bparallel.book.results import flatten, load_results, save_results


def test_flatten_nested_and_numbers():
    flat = flatten({"a": {"b": 1, "c": np.float64(0.5)}, "d.e": np.int64(3), "f": True})
    assert flat == {"a.b": 1, "a.c": 0.5, "d.e": 3, "f": 1}


@pytest.mark.parametrize("bad", [{"a": "text"}, {"a": float("nan")}, {"a": [1, 2]}, {"": 1}])
def test_flatten_rejects(bad):
    with pytest.raises(ValueError):
        flatten(bad)


def test_save_and_load_roundtrip(tmp_path):
    path = save_results(tmp_path / "r", "nb", {"example_3_13": {"phi_min": {"multi": 0.5}}})
    assert path.name == "nb.json"
    assert json.loads(path.read_text()) == {"example_3_13.phi_min.multi": 0.5}
    assert load_results(path) == {"example_3_13.phi_min.multi": 0.5}
    assert not list((tmp_path / "r").glob(".*tmp"))  # no temporary left behind


def test_load_errors(tmp_path):
    with pytest.raises(FileNotFoundError, match="does not exist"):
        load_results(tmp_path / "missing.json")
    bad = tmp_path / "bad.json"
    bad.write_text("{not json")
    with pytest.raises(ValueError, match="not valid JSON"):
        load_results(bad)
    with pytest.raises(ValueError, match="plain file stem"):
        save_results(tmp_path, "../x", {"a": 1})
