"""The last book build's chapters as a regression (:mod:`bparallel.book.tools.from_build`):
only what the build's chapters wrote, sealed by the build, unchanged since, at the profile
each ran, against that profile's reference."""

from __future__ import annotations

import json
import os

import pytest

from bparallel.book.tools import from_build
from tests.myst import MYST_HEADER

NOTEBOOK = MYST_HEADER + """
```{{code-cell}} ipython3
:tags: [parameters]
profile = "{profile}"
results_dir = "results"
```
"""


@pytest.fixture
def root(tmp_path):
    (tmp_path / "notebooks" / "results").mkdir(parents=True)
    for name, profile in (("01_a", "quick"), ("02_b", "quick"), ("07_c", "auto")):
        (tmp_path / "notebooks" / f"{name}.md").write_text(NOTEBOOK.format(profile=profile))
    for profile in ("quick", "paper"):
        (tmp_path / "reference" / profile).mkdir(parents=True)
    for name, value in (("01_a", 1.0), ("02_b", 2.0)):
        (tmp_path / "reference" / "quick" / f"{name}.json").write_text(
            json.dumps({"x": {"value": value, "abs": 0.01, "rel": 0.0}}))
    (tmp_path / "reference" / "paper" / "07_c.json").write_text(
        json.dumps({"y": {"value": 7.0, "abs": 0.01, "rel": 0.0}}))
    (tmp_path / "_build").mkdir()
    return tmp_path


def _write(root, name, values, mtime=None):
    path = root / "notebooks" / "results" / f"{name}.json"
    path.write_text(json.dumps(values))
    if mtime is not None:
        os.utime(path, (mtime, mtime))
    return path


def test_only_what_the_build_wrote_is_compared_at_its_profile(root, monkeypatch):
    monkeypatch.setattr(from_build, "shipped_complete", lambda: True)
    monkeypatch.setattr(from_build, "resolve_profile", lambda p: "paper")
    (root / from_build.START_FILE).write_text("1000000000\n")
    _write(root, "01_a", {"x": 1.005})
    _write(root, "02_b", {"x": 2.0}, mtime=999_999_000)  # before the build: not its own
    _write(root, "07_c", {"y": 7.5})
    assert sorted(from_build.seal(root)) == ["01_a", "07_c"]
    compared = from_build.compare_build(root)
    assert {n: p for n, (p, _) in compared.items()} == {"01_a": "quick", "07_c": "paper"}
    assert [r.verdict for r in compared["01_a"][1]] == ["PASS"]
    assert [r.verdict for r in compared["07_c"][1]] == ["FAIL"]  # 0.5 from its reference
    assert list(from_build.compare_build(root, profile="quick")) == ["01_a"]
    _write(root, "01_a", {"x": 1.0})  # changed after the build sealed it: not the build's
    assert list(from_build.compare_build(root)) == ["07_c"]


def test_auto_is_the_paper_profile_only_when_every_model_is_shipped(root, monkeypatch):
    monkeypatch.setattr(from_build, "resolve_profile", lambda p: "paper")
    monkeypatch.setattr(from_build, "shipped_complete", lambda: False)
    assert from_build.chapter_profile("07_c", root) is None
    assert from_build.chapter_profile("01_a", root) == "quick"
    monkeypatch.setattr(from_build, "shipped_complete", lambda: True)
    assert from_build.chapter_profile("07_c", root) == "paper"


def test_nothing_is_compared_without_a_sealed_build(root):
    _write(root, "01_a", {"x": 1.0})
    assert from_build.build_results(root) == {}  # no seal
    assert from_build.seal(root) == {}  # no start: nothing sealed
    assert from_build.compare_build(root) == {}
