import json

import numpy as np
import pytest

from bparallel.book.render.results import ChapterResults, flatten, load_results, save_results


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


def test_chapter_results_record_glue_and_save(tmp_path, monkeypatch):
    import myst_nb

    glued = {}
    monkeypatch.setattr(myst_nb, "glue", lambda k, v, display=True: glued.setdefault(k, v))
    chapter = ChapterResults(tmp_path, "02_x")
    assert chapter("a.ratio", np.float64(0.25)) == 0.25
    assert type(glued["a.ratio"]) is float  # a plain float, so glue's format specs work
    chapter.update({"b": {"count": np.int64(3), "flag": True}}, prefix="t")
    assert type(glued["t.b.count"]) is int and glued["t.b.flag"] == 1
    assert chapter("a.ratio", 0.25) == 0.25  # the same value twice is fine
    with pytest.raises(ValueError, match="recorded twice"):
        chapter("a.ratio", 0.5)
    with pytest.raises(ValueError, match="not a number"):
        chapter("label", "holds")  # sentences belong in the prose
    with pytest.raises(ValueError, match="not finite"):
        chapter("x", float("nan"))
    chapter("tiny", 0.0037)
    assert chapter.glue_sig("tiny") == "0.0037" and glued["tiny.sig"].data == "0.0037"
    chapter("tinier", 6.9e-11)
    assert chapter.glue_sig("tinier") == "6.9 × 10⁻¹¹"  # as a reader writes it, not 6.9e-11
    with pytest.raises(ValueError, match="no number recorded"):
        chapter.glue_sig("absent")
    path = chapter.save()
    assert load_results(path) == {"a.ratio": 0.25, "t.b.count": 3, "t.b.flag": 1,
                                  "tiny": 0.0037, "tinier": 6.9e-11}  # text is not a result
    with pytest.raises(ValueError, match="plain file stem"):
        ChapterResults(tmp_path, "../x")
    quiet = ChapterResults(tmp_path, "03_y", glue=False)
    quiet("k", 1)
    assert "k" not in glued


@pytest.mark.parametrize("value", ["pilot", "budget.dropout", "settling_2"])
def test_a_recorded_values_name_is_words_joined_by_dots(value):
    """key_name (the check of every ``name`` a chapter 12 function records its values under:
    recipe_results, budget_pilot_results, dropout_results) keeps a name of words joined by
    dots and refuses spaces, empty words, leading digits and what is not a string."""
    from bparallel.book.render.results import key_name

    assert key_name(value, "name") == value
    for bad in ("two words", "budget.", ".budget", "2nd", "", None, 3):
        with pytest.raises(ValueError, match=r"name=.*letters, digits and _"):
            key_name(bad, "name")


def test_show_glues_what_another_notebook_records_without_recording_it(tmp_path, monkeypatch):
    import myst_nb

    glued = {}
    monkeypatch.setattr(myst_nb, "glue", lambda k, v, display=True: glued.setdefault(k, v))
    page = ChapterResults(tmp_path, "12a_x")
    page("own", 1)
    page.show({"fresh": {"steps": np.int64(600)}})
    assert type(glued["fresh.steps"]) is int and glued["fresh.steps"] == 600
    assert load_results(page.save()) == {"own": 1}  # shown, not recorded
    with pytest.raises(ValueError, match="recorded here"):
        page.show({"own": 1})
