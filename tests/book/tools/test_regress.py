import argparse
import io
import json
import math
from pathlib import Path

import pytest

from bparallel.book.tools import noise
from bparallel.book.tools import regress as rg
from tests.book.tools.quick_regression import passed_in_the_build
from tests.myst import MYST_HEADER

ROOT = Path(__file__).resolve().parents[3]


def _args(**kw):
    base = dict(profile="quick", notebooks=None, parameter=[], output_dir="regress-out",
                update=False, timeout=600, jobs=None, verbose=False, retries=2)
    base.update(kw)
    return argparse.Namespace(**base)


# --------------------------------------------------------------------------- unit level
def test_compare_verdicts_and_tolerance():
    ref = {"a": {"value": 1.0, "abs": 0.1, "rel": 0.0},
           "b": {"value": 100.0, "abs": 0.0, "rel": 0.01},
           "gone": {"value": 3.0, "abs": 0, "rel": 0}}
    rows = {r.key: r for r in rg.compare({"a": 1.05, "b": 102.0, "new": 5.0}, ref)}
    assert rows["a"].verdict == "PASS"
    assert rows["b"].verdict == "FAIL" and rows["b"].tolerance == pytest.approx(1.0)
    assert rows["gone"].verdict == "MISSING" and rows["new"].verdict == "NEW"
    assert rows["b"].difference == pytest.approx(2.0)
    table = rg.format_table("nb", list(rows.values()))
    assert "FAIL" in table and "MISSING" in table and "NEW" in table


def test_update_keeps_tolerances_and_reports_changes():
    ref = {"a": {"value": 1.0, "abs": 0.5, "rel": 0.0}, "old": {"value": 2.0, "abs": 0, "rel": 0}}
    rules = [{"notebook": "nb*", "key": "sampled.*", "abs": 0.0, "rel": 0.05}]
    new, changes = rg.updated_reference({"a": 1.5, "sampled.x": 3.0, "c": 4.0}, ref, "nb1", rules)
    assert new["a"] == {"value": 1.5, "abs": 0.5, "rel": 0.0}
    assert new["sampled.x"] == {"value": 3.0, "abs": 0.0, "rel": 0.05}
    assert new["c"] == {"value": 4.0, **rg.DEFAULT_TOLERANCE}
    text = "\n".join(changes)
    assert "changed  a: 1.0 -> 1.5" in text and "removed  old" in text and "added    c" in text


def test_parse_value_is_literal_only():
    assert rg.parse_value("30") == 30 and rg.parse_value("0.5") == 0.5
    assert rg.parse_value("[1, 2]") == [1, 2] and rg.parse_value("paper") == "paper"
    assert rg.parse_value("__import__('os').getcwd()") == "__import__('os').getcwd()"


def test_bad_profile_notebook_and_parameter():
    with pytest.raises(rg.RegressError, match="unknown profile 'fast'; valid: quick, paper"):
        rg.run(_args(profile="fast"))
    with pytest.raises(rg.RegressError, match="unknown notebook 'nope'; valid: 01_"):
        rg.run(_args(notebooks=["nope"]))
    with pytest.raises(rg.RegressError, match="does not declare parameter.*horizn"):
        rg.run(_args(notebooks=["04_minimax_fidelity"], parameter=[["horizn", "3"]]))


def test_root_is_the_repository_unless_a_folder_with_notebooks_is_named(tmp_path):
    assert rg.chosen_root(_args()) == rg.ROOT
    with pytest.raises(rg.RegressError, match="has no notebooks/ folder"):
        rg.chosen_root(_args(root=str(tmp_path)))
    (tmp_path / "notebooks").mkdir()
    (tmp_path / "notebooks" / "mine.md").write_text("# mine\n")
    root = rg.chosen_root(_args(root=str(tmp_path)))
    assert root == tmp_path.resolve()
    assert rg.available_notebooks(root) == ["mine"]
    assert rg.reference_dir(root) == root / "reference"


def test_the_package_reads_nothing_under_tests():
    """The book's recorded results are product data (``reference/``, :data:`rg.REFERENCE_FOLDER`),
    not test fixtures: no string of the package's code (its docstrings aside, which may name a
    test file) names the ``tests`` folder, so no path the package builds leads into it.
    Checked on a planted offender first, so the scan can fail."""
    import ast

    def offenders(source: str) -> list[str]:
        tree = ast.parse(source)
        docs = {id(n.body[0].value) for n in ast.walk(tree)
                if isinstance(n, (ast.Module, ast.ClassDef, ast.FunctionDef,
                                  ast.AsyncFunctionDef))
                and n.body and isinstance(n.body[0], ast.Expr)
                and isinstance(n.body[0].value, ast.Constant)}
        return [c.value for c in ast.walk(tree)
                if isinstance(c, ast.Constant) and isinstance(c.value, str)
                and id(c) not in docs
                and any(part == "tests" for part in c.value.replace("\\", "/").split("/"))]

    assert offenders('ROOT = "x"\npath = ROOT / "tests" / "reference"\n') == ["tests"]
    assert offenders('"""Tested in ``tests/book/test_x.py``."""\n') == []
    found = {str(p.relative_to(ROOT)): hits for p in sorted((ROOT / "bparallel").rglob("*.py"))
             if (hits := offenders(p.read_text()))}
    assert not found, found
    assert rg.reference_dir() == ROOT / rg.REFERENCE_FOLDER
    assert (rg.reference_dir() / "paper").is_dir() and (rg.reference_dir() / "quick").is_dir()


def test_the_notebooks_that_train_start_first():
    names = rg.available_notebooks()
    assert set(rg.TRAIN_FIRST) <= set(names)  # a renamed chapter is noticed here
    order = rg.run_order(names)
    assert order[:2] == list(rg.TRAIN_FIRST) and sorted(order) == sorted(names)
    assert rg.run_order(["01_feedforward_graphs", "07_training"]) == \
        ["07_training", "01_feedforward_graphs"]


def test_every_notebook_declares_profile_and_results_dir():
    for name in rg.available_notebooks():
        declared = rg.declared_parameters(ROOT / "notebooks" / f"{name}.md")
        assert {"profile", "results_dir"} <= set(declared), name
        # theory chapters default to quick; Section 4 chapters to "auto" (shipped paper
        # models when present, else the quick profile)
        assert declared["profile"] in ("quick", "auto"), name




def test_references_and_tolerance_rules_name_existing_notebooks():
    """Renumbered or split chapters leave no stale reference file or tolerance rule behind:
    every notebook has references in both profiles, every reference file a notebook, and every
    rule's notebook pattern matches a notebook."""
    import fnmatch

    from bparallel.book.section4.models import resolve_profile

    names = set(rg.available_notebooks())
    # Chapter 12 runs at the paper profile only once every graph task has a seed with all
    # four head counts shipped (the sweep ships them over several sessions); until then it
    # has quick references only, and its page says that it shows quick models.
    waiting = set() if resolve_profile("auto") == "paper" else {"12_graph_tasks"}
    for profile in ("quick", "paper"):
        want = names - waiting if profile == "paper" else names
        files = {p.stem for p in (rg.reference_dir() / profile).glob("*.json")}
        assert files == want, (profile, sorted(files ^ want))
    rules = json.loads((rg.reference_dir() / "tolerances.json").read_text())
    for rule in rules:
        assert fnmatch.filter(names, rule["notebook"]), rule
    auto = {n for n in names
            if rg.declared_parameters(ROOT / "notebooks" / f"{n}.md")["profile"] == "auto"}
    trained = [r["notebook"] for r in rules if r["why"].startswith("trained models")]
    # the trained-model tolerances cover exactly the Section 4 chapters
    assert {n for n in names if any(fnmatch.fnmatch(n, p) for p in trained)} == auto


# ---------------------------------------------------------------------- with papermill
@pytest.mark.slow
def test_deliberate_change_fails_with_readable_diff(tmp_path):
    out = io.StringIO()
    status = rg.run(_args(notebooks=["04_minimax_fidelity"], parameter=[["horizon", "30"]],
                          output_dir=str(tmp_path)), out=out)
    text = out.getvalue()
    assert status == 1, text
    assert "example_3_13.phi_min.multi" in text and "FAIL" in text
    # restoring the parameter passes again
    out = io.StringIO()
    assert rg.run(_args(notebooks=["04_minimax_fidelity"], output_dir=str(tmp_path)), out=out) == 0
    assert "-> PASS" in out.getvalue()
    assert (tmp_path / "quick" / "04_minimax_fidelity.ipynb").is_file()


PARAMS_CELL = (
    "```{code-cell} ipython3\n:tags: [parameters]\nprofile = 'quick'\nresults_dir = 'r'\n```\n\n"
)


def _scratch_root(tmp_path, source: str) -> Path:
    root = tmp_path / "root"
    (root / "notebooks").mkdir(parents=True)
    (rg.reference_dir(root) / "quick").mkdir(parents=True)
    (root / "notebooks" / "boom.md").write_text(MYST_HEADER + "\n" + source)
    return root


@pytest.mark.slow
def test_raising_notebook_shows_failing_cell(tmp_path):
    root = _scratch_root(tmp_path, (
        PARAMS_CELL +
        "```{code-cell} ipython3\nx = 1\nassert x == 2, 'the fact broke'\n```\n"))
    out = io.StringIO()
    status = rg.run(_args(output_dir=str(tmp_path / "o")), root=root, out=out)
    text = out.getvalue()
    assert status == 1
    assert "notebook raised" in text and "assert x == 2" in text and "the fact broke" in text


@pytest.mark.slow
def test_timeout_is_reported(tmp_path):
    root = _scratch_root(tmp_path, (
        PARAMS_CELL +
        "```{code-cell} ipython3\nimport time\ntime.sleep(60)\n```\n"))
    out = io.StringIO()
    assert rg.run(_args(output_dir=str(tmp_path / "o"), timeout=8, retries=1), root=root,
                  out=out) == 1
    assert "timed out after 8 s (raise --timeout) (2 attempts)" in out.getvalue()


@pytest.mark.slow
def test_kernel_that_never_starts_is_retried(monkeypatch, tmp_path):
    """A kernel-start failure (CI saw "Kernel didn't respond in 60 seconds") is retried."""
    calls = []

    def fake_once(name, parameters, output_dir, *, timeout, root):
        calls.append(name)
        if len(calls) < 3:
            return rg.Outcome(name, 1.0, False, error="the kernel did not start: x",
                              retryable=True)
        return rg.Outcome(name, 1.0, True, results={"a": 1.0})

    monkeypatch.setattr(rg, "_run_notebook_once", fake_once)
    o = rg.run_notebook("nb", {}, tmp_path, timeout=5, retries=2)
    assert o.ok and len(calls) == 3 and o.seconds == 3.0
    calls.clear()
    o = rg.run_notebook("nb", {}, tmp_path, timeout=5, retries=1)
    assert not o.ok and len(calls) == 2 and "(2 attempts)" in o.error


@pytest.mark.slow
def test_raising_notebook_is_not_retried(monkeypatch, tmp_path):
    calls = []

    def fake_once(name, parameters, output_dir, *, timeout, root):
        calls.append(name)
        return rg.Outcome(name, 1.0, False, error="notebook raised\nboom")

    monkeypatch.setattr(rg, "_run_notebook_once", fake_once)
    assert not rg.run_notebook("nb", {}, tmp_path, timeout=5).ok and len(calls) == 1


@pytest.mark.slow
def test_missing_and_new_keys_fail(tmp_path):
    root = _scratch_root(tmp_path, (
        PARAMS_CELL +
        "```{code-cell} ipython3\nfrom bparallel.book.render.results import save_results\n"
        "save_results(results_dir, 'boom', {'a': 1.0, 'b': 2})\n```\n"))
    ref = rg.reference_dir(root) / "quick" / "boom.json"
    ref.write_text(json.dumps({"a": {"value": 1.0, "abs": 0, "rel": 0},
                               "c": {"value": 3.0, "abs": 0, "rel": 0}}))
    out = io.StringIO()
    assert rg.run(_args(output_dir=str(tmp_path / "o")), root=root, out=out) == 1
    text = out.getvalue()
    assert "1 passed, 0 failed, 1 missing, 1 new" in text
    out = io.StringIO()
    assert rg.run(_args(output_dir=str(tmp_path / "o"), update=True), root=root, out=out) == 0
    assert "added    b" in out.getvalue() and "removed  c" in out.getvalue()
    assert rg.run(_args(output_dir=str(tmp_path / "o")), root=root, out=io.StringIO()) == 0


@pytest.mark.slow
def test_paper_regression_of_the_fast_notebooks(tmp_path):
    """Paper profile of the theory chapters (seconds), against committed references, and
    of every chapter the last book build ran at the paper profile (07-14 where every shipped
    model is there: bparallel.book.tools.from_build), from what the build wrote.

    The claims chapters' paper profiles (03, 06) take minutes (run them with `python -m
    bparallel regress --profile paper --notebooks 03_mixing_claims 06_fidelity_claims`).
    Chapters 07-11 are run here when the build did not run them (it took them from its
    cache) and all eight paper-profile models are shipped.
    """
    from bparallel.transformer.shipped import shipped_complete

    built = passed_in_the_build("paper")
    fast = ["01_feedforward_graphs", "02_mixing_time", "04_minimax_fidelity", "05_playground"]
    if shipped_complete():
        fast += [n for n in ("07_training", "08_proxies", "09_amplification",
                             "10_section4_as_defined", "11_across_seeds") if n not in built]
    out = io.StringIO()
    status = rg.run(_args(profile="paper", notebooks=fast, output_dir=str(tmp_path)), out=out)
    assert status == 0, out.getvalue()
    assert "-> PASS" in out.getvalue()


def test_pytest_workers_share_the_cores_as_notebooks_do():
    """tests/conftest.py sets the same variables for each pytest-xdist worker (it cannot
    import the package before setting them: numpy and torch read them on import)."""
    from tests.conftest import SHARED_VARS

    assert SHARED_VARS == rg.SHARED_VARS


def test_notebooks_side_by_side_share_the_cores(monkeypatch):
    for var in rg.SHARED_VARS:
        monkeypatch.delenv(var, raising=False)
    monkeypatch.setattr(rg.os, "cpu_count", lambda: 4)
    with rg.share_of_cores(2):
        for var in ("BPARALLEL_WORKERS", "OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS"):
            assert rg.os.environ[var] == "2"
    assert not set(rg.SHARED_VARS) & set(rg.os.environ)
    with rg.share_of_cores(8):
        assert rg.os.environ["BPARALLEL_WORKERS"] == rg.os.environ["OMP_NUM_THREADS"] == "1"
    monkeypatch.setenv("BPARALLEL_WORKERS", "3")  # the caller's choice stands
    monkeypatch.setenv("OMP_NUM_THREADS", "4")
    with rg.share_of_cores(2):
        assert rg.os.environ["BPARALLEL_WORKERS"] == "3"
        assert rg.os.environ["OMP_NUM_THREADS"] == "4" and rg.os.environ["MKL_NUM_THREADS"] == "2"
    assert rg.os.environ["BPARALLEL_WORKERS"] == "3" and rg.os.environ["OMP_NUM_THREADS"] == "4"
    assert "MKL_NUM_THREADS" not in rg.os.environ


def test_a_kernel_started_by_the_runner_takes_its_share_of_threads(monkeypatch):
    """torch sizes its pool from OMP_NUM_THREADS when it starts: a process started inside
    the share has as many threads as the share says."""
    import subprocess
    import sys

    for var in rg.SHARED_VARS:
        monkeypatch.delenv(var, raising=False)
    monkeypatch.setattr(rg.os, "cpu_count", lambda: 2)
    with rg.share_of_cores(2):
        out = subprocess.run([sys.executable, "-c",
                              "import torch; print(torch.get_num_threads())"],
                             capture_output=True, text=True, check=True).stdout
    assert out.strip() == "1"


#: The keys whose tolerance may reach the value it guards (at most 10), as
#: ``"profile/notebook:key"``, each with its reason. Empty: every reference records its
#: values in a form their tolerance can guard (:func:`bparallel.book.tools.regress.
#: recorded_form`: p-values as log10 p, values within their absolute tolerance of zero as 0).
TOLERANCE_REACHES_VALUE: dict[str, str] = {}


def _reaches(entry: dict) -> bool:
    """A tolerance that cannot see its value go to zero or change sign: at least the
    magnitude of a value that is not zero. A zero is exempt: recorded as zero within its
    absolute tolerance, it fails as soon as it leaves that resolution."""
    tol = entry.get("abs", 0.0) + entry.get("rel", 0.0) * abs(entry["value"])
    return entry["value"] != 0 and tol >= abs(entry["value"])


def test_no_tolerance_reaches_its_value_outside_the_listed_keys():
    """Issue 74: a regression tolerance at least the value it guards passes a sign flip or a
    value gone to zero. Over every reference of both profiles: no key's tolerance reaches its
    value outside :data:`TOLERANCE_REACHES_VALUE` (each listed key still does, so the list
    holds no stale entry); every stored tolerance is its rule's (no stale, looser one); and
    every reference is in its recorded form (``regress --retolerance`` has run since the
    last change of rules or references)."""
    assert len(TOLERANCE_REACHES_VALUE) <= 10 and all(TOLERANCE_REACHES_VALUE.values())
    # the check itself can fail: the examples, as they were recorded before
    assert _reaches({"value": 4.0e-7, "abs": 0.002, "rel": 0.02})  # paper.copy.h1.train_loss
    assert _reaches({"value": 0.0002, "abs": 0.002, "rel": 0.0})  # a p-value
    assert not _reaches({"value": 0.0, "abs": 1e-6, "rel": 1e-3})  # zero within 1e-6
    assert not _reaches({"value": -3.7, "abs": 1e-6, "rel": 1e-3})  # log10 p of 0.0002
    rules = rg.load_tolerance_rules()
    reaching, stale, unrecorded = {}, [], []
    for profile in ("quick", "paper"):
        for path in sorted((rg.reference_dir() / profile).glob("*.json")):
            data = rg.load_reference(path)
            values = {k: e["value"] for k, e in data.items()}
            if rg.recorded_form(values, path.stem, rules, profile) != values:
                unrecorded.append(f"{profile}/{path.stem}")
            for key, entry in data.items():
                want = rg.tolerance_for(path.stem, key, rules, profile, entry["value"])
                if (entry.get("abs", 0.0), entry.get("rel", 0.0)) != (want["abs"], want["rel"]):
                    stale.append(f"{profile}/{path.stem}:{key}")
                if _reaches(entry):
                    reaching[f"{profile}/{path.stem}:{key}"] = entry
    assert not unrecorded, f"references not in their recorded form (run regress " \
        f"--retolerance): {unrecorded}"
    assert not stale, f"{len(stale)} stored tolerances differ from their rule: {stale[:10]}"
    unlisted = {k: e for k, e in reaching.items() if k not in TOLERANCE_REACHES_VALUE}
    assert not unlisted, f"{len(unlisted)} tolerances reach their value: " \
        f"{list(unlisted.items())[:10]}"
    assert set(TOLERANCE_REACHES_VALUE) <= set(reaching), \
        f"listed keys whose tolerance no longer reaches their value: " \
        f"{sorted(set(TOLERANCE_REACHES_VALUE) - set(reaching))}"


def test_p_values_are_recorded_as_their_logarithm():
    """A p-value is recorded as log10 p under ``log10_<word>``: a p-value ten times larger
    moves it by 1, which its tolerance sees at any size; 0 (an underflow) as the floor; a
    p-value outside [0, 1] refused by key."""
    assert rg.recorded_key("heads.copy.p") == "heads.copy.log10_p"
    assert rg.recorded_key("heads.copy.p_holm") == "heads.copy.log10_p_holm"
    assert rg.recorded_key("p") == "log10_p"
    assert rg.recorded_key("eq18.atom.pbar") == "eq18.atom.pbar"
    assert rg.recorded_value("a.p", 0.001) == ("a.log10_p", pytest.approx(-3.0))
    assert rg.recorded_value("a.p", 0.0) == ("a.log10_p", rg.LOG10_P_FLOOR)
    assert rg.recorded_value("a.p_holm", 1.0) == ("a.log10_p_holm", 0.0)
    with pytest.raises(rg.RegressError, match="'a.p': a p-value must lie in"):
        rg.recorded_value("a.p", 1.5)
    rules = [{"notebook": "*", "key": "*", "abs": 1e-6, "rel": 1e-3}]
    ref = {k: {"value": v, **rg.tolerance_for("nb", k, rules)} for k, v in
           rg.recorded_form({"t.p": 0.0002}, "nb", rules).items()}
    for p, verdict in ((0.0002, "PASS"), (0.000201, "PASS"), (0.002, "FAIL"), (0.00002, "FAIL")):
        rows = rg.compare(rg.recorded_values({"t.p": p}), ref)
        assert [r.verdict for r in rows] == [verdict], p  # tenfold either way fails


def test_values_within_their_tolerance_of_zero_are_recorded_as_zero():
    """A value within its key's absolute tolerance of zero is recorded as 0 (zero at the
    resolution its rule states), guarded at ZERO_GUARD times that tolerance, so that what it
    was recorded from lies within a quarter of its guard; a run is compared as it is, so a
    value that noise carries just above the tolerance passes, one that leaves the guard
    fails, either sign; anything larger is kept with its rule's tolerance; the form is
    idempotent, and keys recorded alike are refused."""
    rules = [{"notebook": "*", "key": "*", "abs": 1e-6, "rel": 1e-3}]
    form = rg.recorded_form({"loss": 4.0e-7, "combined": -3.1e-10, "drop": 2e-6, "n": 0},
                            "nb", rules)
    assert form == {"loss": 0.0, "combined": 0.0, "drop": 2e-6, "n": 0}
    assert rg.recorded_form(form, "nb", rules) == form
    assert rg.ZERO_GUARD == noise.NOISE_FACTOR
    assert rg.tolerance_for("nb", "loss", rules, value=0.0) == {"abs": 4e-6, "rel": 1e-3}
    assert rg.tolerance_for("nb", "drop", rules, value=2e-6) == {"abs": 1e-6, "rel": 1e-3}
    ref, _ = rg.updated_reference(form, {}, "nb", rules)
    assert ref["loss"] == {"value": 0.0, "abs": 4e-6, "rel": 1e-3}
    for loss, verdict in ((1.05e-6, "PASS"), (-3.9e-6, "PASS"), (4.1e-6, "FAIL"),
                          (-4.1e-6, "FAIL")):
        row = rg.compare(rg.recorded_values({"loss": loss}), {"loss": ref["loss"]})
        assert row[0].verdict == verdict, loss
    # a key whose value goes to zero on --update takes the zero's guard, and back
    again, _ = rg.updated_reference({"drop": 0.0}, {"drop": ref["drop"]}, "nb", rules)
    assert again["drop"]["abs"] == 4e-6
    with pytest.raises(rg.RegressError, match="recorded alike"):
        rg.recorded_form({"a.p": 0.5, "a.log10_p": -0.3}, "nb", rules)


def test_noise_of_a_p_value_becomes_its_logarithms(tmp_path):
    """``--retolerance`` first rewrites the measured noise under the recorded keys: a
    p-value's spread becomes a bound on its logarithm's (about the reference p-value, raw or
    already a logarithm); idempotent."""
    assert noise.log10_spread(1.0, 0.0012) == pytest.approx(-math.log10(0.9988))
    assert noise.log10_spread(0.5, 0.0) == 0.0
    assert noise.log10_spread(0.01, 0.001) == pytest.approx(math.log10(0.011 / 0.009))
    ref = rg.reference_dir(tmp_path)
    (ref / "noise").mkdir(parents=True)
    (ref / "quick").mkdir()
    (ref / "quick" / "nb.json").write_text(json.dumps(
        {"t.p_holm": {"value": 1.0, "abs": 0, "rel": 0}, "x": {"value": 2.0, "abs": 0, "rel": 0}}))
    (ref / "noise" / "quick.json").write_text(json.dumps(
        {"settings": {}, "notebooks": {"nb": {"t.p_holm": 0.0012, "x": 1e-9}}}))
    assert noise.recorded_noise("quick", tmp_path) == ["nb:t.p_holm"]
    got = noise.load_noise("quick", tmp_path)["notebooks"]["nb"]
    assert got == {"t.log10_p_holm": pytest.approx(-math.log10(0.9988)), "x": 1e-9}
    assert noise.recorded_noise("quick", tmp_path) == []


def test_rules_for_one_profile_and_retolerance(tmp_path):
    ref = rg.reference_dir(tmp_path)
    (ref / "quick").mkdir(parents=True)
    (ref / "quick" / "nb.json").write_text(json.dumps(
        {"a": {"value": 2.0, "abs": 9.0, "rel": 0.0}, "b": {"value": 0.5, "abs": 1.0}}))
    (ref / "tolerances.json").write_text(json.dumps([
        {"notebook": "nb", "key": "a", "profile": "paper", "abs": 5.0, "why": "paper only"},
        {"notebook": "*", "key": "*", "abs": 1e-3, "rel": 0.0, "why": "default"}]))
    rules = rg.load_tolerance_rules(tmp_path)
    assert rg.tolerance_for("nb", "a", rules, "paper") == {"abs": 5.0, "rel": 0.0}
    assert rg.tolerance_for("nb", "a", rules, "quick") == {"abs": 1e-3, "rel": 0.0}
    assert sorted(rg.retolerance("quick", tmp_path)) == ["nb:a", "nb:b"]
    data = json.loads((ref / "quick" / "nb.json").read_text())
    assert data == {"a": {"value": 2.0, "abs": 1e-3, "rel": 0.0},
                    "b": {"value": 0.5, "abs": 1e-3, "rel": 0.0}}  # values kept
    assert rg.retolerance("quick", tmp_path) == []
    # the recorded forms: a p-value as its logarithm, a value within its tolerance of zero as 0
    (ref / "quick" / "nb.json").write_text(json.dumps(
        {"c.p": {"value": 0.01, "abs": 0, "rel": 0}, "z": {"value": 4e-4, "abs": 1e-3}}))
    assert sorted(rg.retolerance("quick", tmp_path)) == ["nb:c.p -> c.log10_p", "nb:z"]
    data = json.loads((ref / "quick" / "nb.json").read_text())
    assert data == {"c.log10_p": {"value": pytest.approx(-2.0), "abs": 1e-3, "rel": 0.0},
                    "z": {"value": 0.0, "abs": 4e-3, "rel": 0.0}}
    assert rg.retolerance("quick", tmp_path) == []


# ------------------------------------------------------------------ last-bit noise
def test_spreads_of_values_across_settings():
    spread = noise.spreads({"a": [1.0, 1.5, 1.25], "b": [2, 2], "c": [0.1, float("nan")],
                         "label": ["x", "x"], "one": [3.0]})
    assert spread == {"a": 0.5, "b": 0, "c": float("inf"), "one": 0.0}


def test_noise_measured_on_another_machine_is_kept():
    """A key's recorded spread is the largest over the machines measured: a run here that
    moves it less keeps the other machine's, one that moves it more raises it; a key no
    longer computed goes, a new one comes."""
    before = {"a": 1e-5, "b": 2e-4, "gone": 1.0}
    now = {"a": 3e-4, "b": 0.0, "new": 5e-6, "c": float("inf")}
    assert noise.merged_spreads(before, now) == {"a": 3e-4, "b": 2e-4, "c": float("inf"),
                                                 "new": 5e-6}


def test_noise_settings_are_refused_by_name(tmp_path):
    with pytest.raises(rg.RegressError, match="unknown noise setting.*avx1024; valid: native"):
        noise.measure_noise(_args(notebooks=["04_minimax_fidelity"], noise=["native", "avx1024"],
                                  output_dir=str(tmp_path)))


@pytest.mark.parametrize("profile", ["quick", "paper"])
def test_tolerances_cover_the_measured_noise(profile):
    """Every regressed key of the chapters that train or measure models has its spread
    measured across the sources of last-bit noise (``regress --noise``: CPU kernels at the
    AVX2 and scalar widths, one thread or the runner's share, the committed reference from
    another machine), and its tolerance is at least :data:`NOISE_FACTOR` times that spread:
    a key that moves with the machine cannot fail on a user's machine. Together with
    :func:`test_no_tolerance_reaches_its_value_outside_the_listed_keys` the tolerance lies
    between the noise and the value it guards."""
    measured = noise.load_noise(profile)
    assert set(noise.NOISE_SETTINGS) <= set(measured["settings"]), measured["settings"]
    trained = [n for n in rg.available_notebooks()
               if rg.declared_parameters(ROOT / "notebooks" / f"{n}.md")["profile"] == "auto"]
    too_tight, unmeasured = [], []
    for name in trained:
        spread = measured["notebooks"].get(name, {})
        for key, entry in rg.load_reference(
                rg.reference_dir() / profile / f"{name}.json").items():
            if not isinstance(entry["value"], (int, float)) or isinstance(entry["value"], bool):
                continue
            if key not in spread:
                unmeasured.append(f"{name}:{key}")
                continue
            tol = entry.get("abs", 0.0) + entry.get("rel", 0.0) * abs(entry["value"])
            if tol < noise.NOISE_FACTOR * spread[key]:
                too_tight.append(f"{name}:{key} tolerance {tol:.3g} < {noise.NOISE_FACTOR:g} x "
                                 f"spread {spread[key]:.3g}")
    assert not unmeasured, f"{len(unmeasured)} keys without measured noise: {unmeasured[:10]}"
    assert not too_tight, f"{len(too_tight)} tolerances below the noise: {too_tight[:10]}"


def test_the_measuring_chapters_are_one_list_and_run_under_avx2_where_the_cpu_is_wider(
        monkeypatch):
    """The Makefile's MEASURING (``make test-avx2``) is :data:`noise.MEASURING`, every one of
    them a chapter; the suite's quick regression runs them under the AVX2 setting exactly
    where the CPU has AVX-512 kernels and ``BPARALLEL_QUICK_NATIVE`` is not set, and CI then
    skips ``make test-avx2``'s second run of them."""
    import re

    import torch

    from tests.book.tools import quick_regression as qr

    text = (ROOT / "Makefile").read_text()
    block = re.search(r"^MEASURING := ((?:.*\\\n)*.*)$", text, re.M).group(1)
    assert tuple(block.replace("\\\n", " ").split()) == noise.MEASURING
    assert set(noise.MEASURING) <= set(rg.available_notebooks())
    assert "make test-avx2 AVX2_REGRESSION=0" in (ROOT / ".ci" / "run").read_text()
    wide = torch.backends.cpu.get_cpu_capability().upper().startswith("AVX512")
    monkeypatch.delenv(qr.NATIVE_ENV, raising=False)
    assert qr.under_avx2() is wide
    monkeypatch.setenv(qr.NATIVE_ENV, "1")
    assert qr.under_avx2() is False
    assert noise.NOISE_SETTINGS["avx2"]["ATEN_CPU_CAPABILITY"] == "avx2"
