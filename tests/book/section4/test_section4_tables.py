"""bparallel.book.section4.proxies, .amplification, .across_seeds and .tables: what chapters
08, 09 and 11 compute, show and record, against hand-computed values, the published tables
and tiny models."""

from __future__ import annotations

from types import SimpleNamespace

import numpy as np
import pytest
import torch

from bparallel import proxies
from bparallel.book.section4 import across_seeds, amplification
from bparallel.book.section4 import proxies as proxy_chapter
from bparallel.book.section4.across_seeds import effects_table
from bparallel.book.section4.across_seeds_stats import (
    head_count_effects,
    surviving_claims,
)
from bparallel.book.section4.published import published_rows
from bparallel.book.section4.tables import (
    evaluate_bundle,
    evaluate_models,
    evaluate_seeds,
    flat_results,
)
from bparallel.book.verdicts import Verdict
from bparallel.transformer.design import HEADS, model_config
from bparallel.transformer.model import Transformer

pytestmark = pytest.mark.usefixtures("one_torch_thread")


# --------------------------------------------------------------------------- fixtures

def _tiny_models():
    models = {}
    for i, (task, h) in enumerate((t, h) for t in ("copy", "cycle") for h in HEADS):
        torch.manual_seed(i)
        models[(task, h)] = Transformer(model_config("tiny", h)).eval()
    return models


@pytest.fixture(scope="module")
def tiny():
    """The eight Section 4 configurations as untrained tiny models, and their Tables 1-6 on
    both evaluation sets (T = 16)."""
    before = torch.get_num_threads()
    torch.set_num_threads(1)
    models = _tiny_models()
    bundle = SimpleNamespace(models=models, profile="tiny",
                             metas={key: {"seed": 42} for key in models})
    tables = evaluate_bundle(bundle, protocols=("paper", "heldout"), max_steps=20,
                                horizon=20, workers=1)
    torch.set_num_threads(before)
    return bundle, tables


def _published_as_ours(modes=("paper", "definition"), protocols=("paper", "heldout"),
                       change=lambda r, protocol, mode: r["mean"]):
    """The published Tables 1-4 as this book's rows, in every protocol and mode."""
    table = {("mixing_time", "copy"): 1, ("mixing_time", "cycle"): 2,
             ("fidelity", "copy"): 3, ("fidelity", "cycle"): 4}
    return [{**r, "table": table[(r["quantity"], r["task"])], "protocol": protocol,
             "mode": mode, "mean": change(r, protocol, mode), "n": 50}
            for protocol in protocols for mode in modes for r in published_rows()
            if r["quantity"] in ("mixing_time", "fidelity")]


def _published_5_6_as_ours(samples=(("fresh", "fresh"), ("mean", "heldout")),
                           modes=("paper", "definition")):
    return [{"table": r["table"], "task": r["task"], "heads": r["heads"], "layer": r["layer"],
             "sample": sample, "protocol": protocol, "mode": mode,
             "individual": r["individual"], "combined": r["combined"],
             "combined_exceeds_fraction": float(r["combined"] > r["individual"]), "n": 1}
            for sample, protocol in samples for mode in modes for r in published_rows()
            if r["quantity"] == "best_head"]


# --------------------------------------------------------------------------- evaluation

def test_evaluate_bundle_is_evaluate_models_of_the_bundle(tiny):
    bundle, tables = tiny
    direct = evaluate_models(bundle.models, profile="tiny", protocols=("paper", "heldout"),
                             max_steps=20, horizon=20, workers=1)
    assert tables == direct
    assert len(tables["tables_1_4"]) == 2 * 2 * 2 * 8 * 4  # protocols, quantities, modes
    with pytest.raises(ValueError, match="bundle"):
        evaluate_bundle(bundle.models)
    with pytest.raises(ValueError, match="protocols"):
        evaluate_bundle(bundle, protocols=())
    with pytest.raises(ValueError, match="max_steps"):
        evaluate_bundle(bundle, max_steps=0)


def test_evaluate_seeds_of_a_one_seed_bundle(tiny):
    bundle, _ = tiny
    by_seed = evaluate_seeds(bundle, "unused: not a paper-profile bundle", max_steps=20,
                                horizon=20, workers=1)
    assert list(by_seed) == [42]
    assert by_seed[42] == evaluate_models(bundle.models, profile="tiny", protocols=("paper",),
                                          seed=42, max_steps=20, horizon=20, workers=1)


def test_the_results_split_flat_results_between_tables_1_4_and_5_6(tiny):
    _, tables = tiny
    t14, t56 = proxy_chapter.tables_1_4_results(tables), amplification.tables_5_6_results(tables)
    assert not set(t14) & set(t56)
    assert {**t14, **t56} == flat_results(tables)
    assert {k.split(".")[0] for k in t14} == {"table1", "table2", "table3", "table4"}
    assert {k.split(".")[0] for k in t56} == {"table5", "table6"}
    with pytest.raises(ValueError, match="tables_1_4"):
        proxy_chapter.tables_1_4_results({"tables_5_6": []})


# --------------------------------------------------------------------------- chapter 08

def test_exact_and_sampled_algorithm_1_agree_on_a_random_causal_pattern():
    rng = np.random.default_rng(7)
    a = np.tril(rng.uniform(0.1, 1.0, size=(3, 2, 12, 12)))
    a /= a.sum(-1, keepdims=True)  # causal softmax-like rows
    w = rng.uniform(0.2, 1.0, size=(3, 2))
    w /= w.sum(-1, keepdims=True)  # head weights are a distribution per layer (Section 4.2)
    rows = proxy_chapter.exact_vs_monte_carlo(a, w, max_steps=30)
    assert [(r["mode"], r["layer"]) for r in rows] == [
        (m, layer) for m in ("paper", "definition") for layer in (1, 2, 3)]
    # the chapter's check: the sampled mean is within 5 standard errors of the exact one
    assert all(abs(r["z"]) < 5 for r in rows)
    exact = proxies.mixing_time_proxy(a, w, mode="definition", max_steps=30)
    assert [r["exact"] for r in rows[3:]] == list(exact)
    assert f"Monte Carlo ({proxy_chapter.WALKS} walks)" in rows[0] and proxy_chapter.WALKS == 500
    with pytest.raises(ValueError, match="max_steps"):
        proxy_chapter.exact_vs_monte_carlo(a, w, max_steps=0)


def test_exact_and_sampled_algorithm_1_agree_on_the_shipped_copy_model():
    """Chapter 08's example: the 4-head copy model on one held-out sequence."""
    from bparallel.transformer.design import evaluation_inputs
    from bparallel.transformer.patterns import extract_patterns, model_head_weights
    from bparallel.transformer.shipped import load_shipped, shipped_complete

    if not shipped_complete():
        pytest.skip("paper-profile models not shipped")
    model = load_shipped()[0][("copy", 4)]
    x = evaluation_inputs("copy", "heldout", "paper", num_sequences=1)
    pattern = extract_patterns(model, x)[:, 0]
    rows = proxy_chapter.exact_vs_monte_carlo(pattern, model_head_weights(model), max_steps=100)
    assert len(rows) == 8 and all(abs(r["z"]) < 5 for r in rows)


def test_column_sums_by_hand():
    c = np.array([[[1.0, 0.0, 0.0], [0.5, 0.5, 0.0], [0.2, 0.3, 0.5]]] * 2)
    c[1, 2] = [0.0, 0.0, 1.0]
    # layer 1: columns sum to 1.7, 0.8 (the sink's 0.5 left out); layer 2: 1.5, 0.5
    assert proxy_chapter.column_sum_rows(c) == [
        {"layer": 1, "smallest column sum": pytest.approx(0.8),
         "largest column sum": pytest.approx(1.7)},
        {"layer": 2, "smallest column sum": pytest.approx(0.5),
         "largest column sum": pytest.approx(1.5)}]
    with pytest.raises(ValueError, match="combined"):
        proxy_chapter.column_sum_rows(c[0])


def test_the_claims_of_the_published_tables_by_hand():
    out = proxy_chapter.proxy_claims_results(_published_as_ours(), slow=10)
    assert out["claims.slow_steps"] == 10
    for key, value in out.items():  # this book's rows are the published ones here
        if key.endswith(".ours"):
            assert value == out[key.replace(".ours", ".published")]
    assert out["claims.copy_h1_deep_layers.published"] == pytest.approx(
        (77.9281 + 78.6635 + 73.5020) / 3)
    assert out["claims.copy_h16_max.published"] == 3.6594
    # Table 2: layers slower than 10 steps with 1, 4, 8, 16 heads
    assert [out[f"claims.cycle_slow_layers.h{h}.published"] for h in HEADS] == [4, 2, 1, 1]
    assert (out["claims.copy_l1_fidelity.h1.published"],
            out["claims.copy_l1_fidelity.h16.published"]) == (0.30, 0.58)
    assert out["claims.cycle_l4_fidelity_max.published"] == 0.0
    assert out["claims.cycle_l4_fidelity.definition.h8"] == 0.0
    with pytest.raises(ValueError, match="slow"):
        proxy_chapter.proxy_claims_results(_published_as_ours(), slow=-1)


def test_definition_fidelity_is_never_below_published_code_fidelity(tiny):
    """Algorithm 2's minimum over the non-sink nodes (definition mode, Definition 3.5) can
    only be larger than the minimum over all nodes (published-code mode): per sequence,
    hence for the means of Tables 3-4 (chapter 08 counts the cells where the sink decides)."""
    _, tables = tiny
    mean = {(r["protocol"], r["mode"], r["task"], r["heads"], r["layer"]): r["mean"]
            for r in tables["tables_1_4"] if r["quantity"] == "fidelity"}
    gaps = [mean[(p, "definition", *rest)] - v for (p, mode, *rest), v in mean.items()
            if mode == "paper"]
    assert len(gaps) == 64 and min(gaps) >= -1e-9
    out = proxy_chapter.differences_results(tables["tables_1_4"], max_steps=20, seq_len=16)
    assert out["differences.sink_binding.of"] == 64
    assert out["differences.sink_binding.cells"] == sum(g > 1e-9 for g in gaps)
    assert out["differences.sink_binding.max_gap"] == pytest.approx(max(gaps))


def test_differences_by_hand():
    bump = {("fidelity", "cycle", 4, 2): 0.25}

    def change(r, protocol, mode):
        if r["quantity"] == "mixing_time":
            return r["mean"] * (1.1 if protocol == "heldout" and r["heads"] == 16 else 1.0)
        return r["mean"] + (bump.get((r["quantity"], r["task"], r["heads"], r["layer"]), 0.0)
                            if mode == "definition" else 0.0)

    out = proxy_chapter.differences_results(_published_as_ours(change=change), max_steps=100,
                                 seq_len=100)
    assert out["differences.copy_h16_l1.paper"] == out["differences.copy_h16_l1.definition"]
    assert out["differences.copy_h16_l1.paper"] == 3.6328
    assert out["differences.position0_share"] == 1.0
    assert out["differences.published_mixing.min"] == 3.5859
    # published mixing times below 4 steps: 12 in Table 1, 6 in Table 2, of 32
    assert out["differences.published_mixing.share_below_4"] == 18 / 32
    # the bumped cell, in both protocols
    assert (out["differences.sink_binding.cells"], out["differences.sink_binding.of"]) == (2, 64)
    assert out["differences.sink_binding.max_gap"] == pytest.approx(0.25)
    assert out["differences.protocol.max_relative"] == pytest.approx(0.1)
    with pytest.raises(ValueError, match="heldout"):
        proxy_chapter.differences_results(_published_as_ours(protocols=("paper",)), max_steps=100,
                               seq_len=100)


def test_agreement_and_largest_differences_tables():
    bump = {("copy", 4, 2): 5.0, ("cycle", 16, 3): -7.5}
    rows = _published_as_ours(change=lambda r, p, m: r["mean"] + bump.get(
        (r["task"], r["heads"], r["layer"]), 0.0) * (r["quantity"] == "mixing_time"))
    agreement = proxy_chapter.agreement_by_mode(rows)
    table = proxy_chapter.agreement_table(agreement)
    assert [(r["mode"], r["quantity"]) for r in table] == [
        ("paper", "mixing time"), ("paper", "fidelity"), ("definition", "mixing time"),
        ("definition", "fidelity")]
    assert table[1]["cells"] == 32 and table[1]["Spearman ρ"] == pytest.approx(1.0)
    assert table[1]["median |ours − published|"] == 0.0
    worst = proxy_chapter.largest_differences_by_quantity(rows, n=2)
    shown = proxy_chapter.largest_differences_table(worst)
    assert [(r["quantity"], r["task"], r["heads"], r["layer"]) for r in shown[:2]] == [
        ("mixing time", "cycle", 16, 3), ("mixing time", "copy", 4, 2)]
    assert shown[0]["this book − published"] == pytest.approx(-7.5)
    assert set(shown[0]) == {"quantity", "task", "heads", "layer", "published",
                             "published std", "this book", "this book − published"}
    out = proxy_chapter.largest_differences_results(worst)
    assert out["largest_difference.mixing_time"] == pytest.approx(7.5)
    assert out["largest_difference.fidelity"] == 0.0
    assert out["largest_difference.mixing_time.published"] == 4.3759  # Table 2, 16 heads, L3
    assert out["largest_difference.mixing_time.published_std"] == 0.0583
    assert out["largest_difference.mixing_time.ours"] == pytest.approx(4.3759 - 7.5)
    with pytest.raises(ValueError, match="fidelity"):
        proxy_chapter.largest_differences_results({"mixing_time": worst["mixing_time"]})
    for column in ("Spearman ρ", "this book − published",
                   f"Monte Carlo ({proxy_chapter.WALKS} walks)"):
        assert column in proxy_chapter.FORMATS


# --------------------------------------------------------------------------- chapter 09

def test_amplification_summary_by_hand():
    def row(sample, mode, combined, individual, share):
        return {"sample": sample, "mode": mode, "combined": combined,
                "individual": individual, "combined_exceeds_fraction": share}

    rows = [row("mean", "definition", 0.5, 0.3, 0.75), row("mean", "definition", 0.2, 0.3, 0.25),
            row("mean", "paper", 0.9, 0.1, 1.0), row("fresh", "paper", 0.4, 0.4, 0.0),
            row("fresh", "paper", 0.6, 0.4, 1.0)]
    assert amplification.amplification_summary(rows) == {
        "summary.definition.mean.cells": 2, "summary.definition.mean.cells_combined_wins": 1,
        "summary.definition.mean.share_sequences_combined_wins": 0.5,
        "summary.paper.fresh.cells": 2, "summary.paper.fresh.cells_combined_wins": 1}
    with pytest.raises(ValueError, match="Tables 5-6"):
        amplification.amplification_summary([{"sample": "mean"}])


def test_amplification_agreements_with_the_published_tables():
    rows = _published_5_6_as_ours()
    amp = amplification.amplification_agreements(rows)
    assert list(amp) == [("fresh", "paper"), ("fresh", "definition"), ("mean", "paper"),
                         ("mean", "definition")]
    table = amplification.amplification_agreement_table(amp)
    # the published tables: the combination wins in 11 of 24 cells
    assert all((r["cells"], r["combined wins: published"], r["combined wins: this book"],
                r["same outcome"]) == (24, 11, 11, 1.0) for r in table)
    out = amplification.amplification_agreement_results(amp)
    assert len(out) == 4 * 6
    assert out["amplification_agreement.mean.definition.ours_wins"] == 11.0
    panels = amplification.best_head_panels(rows)
    assert list(panels) == ["published (one sequence)", "this book, one fresh sequence",
                            "this book, held-out mean"]
    assert all(len(p) == 24 for p in panels.values())
    assert set(panels["this book, held-out mean"]["mode"]) == {"paper"}
    # each cell's outcome decided at the published precision; the published tables' own
    # count agrees with the agreement table's: the combination wins in 11 of 24
    assert (panels["published (one sequence)"]["outcome"] == 1).sum() == 11
    assert set(panels["this book, held-out mean"]["outcome"]) <= {-1, 0, 1}


def test_the_cycle_models_last_layer():
    rows = _published_5_6_as_ours()
    for r in rows:
        if (r["sample"], r["mode"], r["task"], r["layer"]) == ("mean", "definition", "cycle", 4):
            r["combined"] = float(r["heads"])
    out = amplification.cycle_l4_results(rows)
    assert out == {"published.cycle_l4.max": 0.0, "definition.cycle_l4.combined.h4": 4.0,
                   "definition.cycle_l4.combined.h8": 8.0,
                   "definition.cycle_l4.combined.h16": 16.0}
    with pytest.raises(ValueError, match="protocol='paper'"):
        amplification.cycle_l4_results(rows, protocol="paper")


# --------------------------------------------------------------------------- chapter 11

CPU = "Linux x86_64, 2 cores, torch threads 1"
GPU = "Linux x86_64, 16 cores, torch threads 1, NVIDIA H100 80GB HBM3 (CUDA 13.0)"


def _overview(machines=(CPU, GPU, GPU)):
    return [{"seed": seed, "models": 8, "trained on": m, "torch": "2.13.0",
             "lowest held-out accuracy": 0.9} for seed, m in zip((42, 43, 44), machines,
                                                                  strict=False)]


def _t14(quantity, task, heads, layer, mean, mode):
    table = {("mixing_time", "copy"): 1, ("fidelity", "copy"): 3}[(quantity, task)]
    return {"table": table, "protocol": "paper", "quantity": quantity, "mode": mode,
            "task": task, "heads": heads, "layer": layer, "mean": mean, "std": 0.0, "n": 50}


def _t56(layer, combined, individual, mode="paper"):
    return {"table": 5, "protocol": "paper", "sample": "mean", "mode": mode, "task": "copy",
            "heads": 4, "layer": layer, "combined": combined, "individual": individual}


def _by_seed(seeds=(42, 43, 44)):
    """Copy layer 1 over three seeds: mixing 10/12/14 -> 5/6/7 steps with 1 -> 16 heads
    (change -5, -6, -7: as claimed), fidelity 1 -> 1.1/0.9/1.0 (not resolved); in definition
    mode the mixing time rises instead (+5, +6, +7: against the claim)."""
    mix1, mix16 = (10.0, 12.0, 14.0), (5.0, 6.0, 7.0)
    fid1, fid16 = (1.0, 1.0, 1.0), (1.1, 0.9, 1.0)
    out = {}
    for i, seed in enumerate(seeds):
        rows = []
        for mode, sign in (("paper", 1), ("definition", -1)):
            rows += [_t14("mixing_time", "copy", 1, 1, mix1[i], mode),
                     _t14("mixing_time", "copy", 16, 1, mix1[i] + sign * (mix16[i] - mix1[i]),
                          mode),
                     _t14("fidelity", "copy", 1, 1, fid1[i], mode),
                     _t14("fidelity", "copy", 16, 1, fid16[i], mode)]
        out[seed] = {"tables_1_4": rows,
                     "tables_5_6": [_t56(1, 0.5, 0.3), _t56(2, 0.3 + 0.1 * (seed == 43), 0.3),
                                    _t56(1, 0.2, 0.3, "definition"),
                                    _t56(2, 0.2, 0.3, "definition")]}
    return out


def test_the_seeds_and_their_machines():
    overview = _overview()
    assert across_seeds.seed_kinds(overview) == {42: "CPU", 43: "GPU", 44: "GPU"}
    rows = across_seeds.seed_model_rows(overview)
    assert list(rows[0]) == ["seed", "models", "kind", "trained on", "torch",
                             "lowest held-out accuracy"]
    assert [r["kind"] for r in rows] == ["CPU", "GPU", "GPU"]
    assert across_seeds.hardware_split(overview) == \
        "seed 42 was trained on a CPU, seeds 43 and 44 on a GPU"
    assert across_seeds.hardware_split(overview[1:]) == "seeds 43 and 44 were trained on a GPU"
    note = across_seeds.machines_note(overview)
    assert note.startswith("**Which models this page shows, and where they were trained.** "
                           f"Seed 42: CPU ({CPU}; torch 2.13.0). Seeds 43 and 44: GPU ({GPU}")
    assert "may come from the seed or from the hardware" in note
    assert "may come from" not in across_seeds.machines_note(_overview((GPU, GPU, GPU)))
    with pytest.raises(ValueError, match="overview"):
        across_seeds.machines_note([])


def test_effects_table_and_results_by_hand():
    effects = {mode: head_count_effects(_by_seed(), mode=mode) for mode in ("paper",
                                                                           "definition")}
    shown = effects_table(effects["paper"])
    assert [(r["quantity"], r["1 head"], r["16 heads"]) for r in shown] == [
        ("minimax fidelity (%)", 1.0, 1.0), ("mixing time (steps)", 12.0, 6.0)]
    assert shown[1]["change [interval]"].startswith("-6.00") and shown[0]["Holm p"] != ""
    out = across_seeds.effects_results(effects, n_seeds=3)
    assert out["effects.paper.mixing_time.copy.L1.change"] == pytest.approx(-6.0)
    assert out["effects.paper.mixing_time.copy.L1.survives"] == 1
    assert out["effects.paper.fidelity.copy.L1.survives"] == 0
    assert (out["effects.paper.survive"], out["effects.paper.cells"]) == (1, 2)
    assert (out["effects.definition.survive"], out["effects.definition.reversed"]) == (0, 1)
    assert out["effects.paper.holm.tests"] == 2
    one = {mode: head_count_effects({42: _by_seed()[42]}, mode=mode)
           for mode in ("paper", "definition")}
    assert not any(".holm." in k for k in across_seeds.effects_results(one, n_seeds=1))
    with pytest.raises(ValueError, match="modes"):
        across_seeds.effects_results({"paper": effects["paper"]}, n_seeds=3)


def test_the_seed_trained_alone_on_its_machine():
    by_seed, overview = _by_seed(), _overview()
    seed, odd = across_seeds.odd_seed_comparison(overview, by_seed)
    assert seed == 42 and len(odd) == 2  # mixing time and fidelity, copy layer 1
    out = across_seeds.hardware_results(odd, seed=seed, n_seeds=3)
    # mixing: -5 above -7..-6; fidelity: +0.1 above -0.1..0, signs differ
    assert {k: out[k] for k in ("hardware.seed", "hardware.cells", "hardware.outside",
                                "hardware.between", "hardware.above", "hardware.below",
                                "hardware.same_sign")} == {
        "hardware.seed": 42, "hardware.cells": 2, "hardware.outside": 2,
        "hardware.between": 0, "hardware.above": 2, "hardware.below": 0,
        "hardware.same_sign": 1}
    assert out["hardware.outside_tail"] == pytest.approx((2 / 3) ** 2)
    md = across_seeds.hardware_markdown(odd, seed=seed, overview=overview)
    assert md.startswith(":::{table} Does seed 42 (CPU) stand apart?")
    assert ":name: tbl-seeds-hardware" in md and "seeds 43, 44: lowest" in md
    # the GPU seed alone: it is the one set against the others
    assert across_seeds.odd_seed_comparison(_overview((GPU, CPU, CPU)), by_seed)[0] == 42
    assert across_seeds.odd_seed_comparison(_overview((CPU, GPU, CPU)), by_seed)[0] == 43
    # one seed: nothing to compare with
    one_seed, none = across_seeds.odd_seed_comparison(_overview((CPU,)), {42: by_seed[42]})
    assert (one_seed, none) == (42, [])
    assert across_seeds.hardware_results(none, seed=42, n_seeds=1) == {}
    assert "nothing to compare" in across_seeds.hardware_markdown(none, seed=42,
                                                        overview=_overview((CPU,)))


def _amp_data():
    """Per seed (42-44), a 4-head copy model of 2 layers on 4 sequences: layer 1's
    combination (0.5) beats every head (0.3) on every sequence; layer 2's beats its best
    head (0.3) only in seed 43 (0.4), and loses in the others (0.2)."""
    out = {}
    for seed in (42, 43, 44):
        per_head = np.full((2, 4, 4), 0.1)
        per_head[0] = 0.3
        per_head[1, :, 0] = 0.3
        comb = np.stack([np.full(4, 0.5), np.full(4, 0.4 if seed == 43 else 0.2)])
        d = {"combined": comb, "per_head": per_head}
        out[seed] = {("copy", 4): {"paper": d, "definition": {
            "combined": comb - 0.3, "per_head": per_head}}}  # as defined: never wins
    return out


def test_amplification_and_claims_over_seeds():
    from bparallel.book.section4.across_seeds_stats import (
        amplification_claims,
        amplification_per_sequence,
    )

    by_seed = _by_seed()
    amplification = amplification_per_sequence(_amp_data())
    claims_amp = amplification_claims(amplification)
    res = across_seeds.seed_amplification_results(amplification, claims_amp)
    assert {k: res[k] for k in ("amplification.cells", "amplification.every_seed",
                                "amplification.no_seed")} == {
        "amplification.cells": 2, "amplification.every_seed": 1, "amplification.no_seed": 0}
    assert res["amplification.per_sequence.copy.h4.L2.wins"] == 1
    assert res["amplification.per_sequence.copy.h4.L2.share"] == pytest.approx(1 / 3)
    index = list(Verdict).index
    assert res["verdict.amplification_occurs.copy"] == index(Verdict.HOLDS)
    shares = across_seeds.seed_amplification_table(amplification)
    assert [(r["task"], r["heads"], r["layer"]) for r in shares] == [("copy", 4, 1),
                                                                      ("copy", 4, 2)]
    assert shares[0]["best head per sequence: seeds won"] == "3 of 3"
    assert shares[1]["best head per sequence: seeds won"] == "1 of 3"
    assert shares[0]["best head per sequence: win share"] == "1.00 [1.00, 1.00]"
    claims_table = across_seeds.amplification_claims_table(claims_amp)
    assert claims_table[0]["claim"] == "wins occur (the paper's claim)"
    effects = {mode: head_count_effects(by_seed, mode=mode) for mode in ("paper", "definition")}
    claims = surviving_claims(effects["paper"], amplification)
    claims_definition = surviving_claims(
        effects["definition"], amplification_per_sequence(_amp_data(), mode="definition"))
    out = across_seeds.seed_claims_results(claims)
    index = list(Verdict).index
    # fidelity: nothing holds and nothing reverses, so not supported (the one rule)
    assert out == {"claims.units": 3, "claims.survives": 1, "claims.partly": 1,
                   "claims.fails": 0, "claims.not_supported": 1, "claims.mixing.copy.holds": 1,
                   "claims.mixing.copy.units": 1, "claims.fidelity.copy.holds": 0,
                   "claims.fidelity.copy.units": 1, "claims.amplification.copy.holds": 1,
                   "claims.amplification.copy.units": 2,
                   "claims.mixing.copy.holds_uncorrected": 1,
                   "claims.fidelity.copy.holds_uncorrected": 0,
                   # verdicts are recorded as their index in Verdict
                   "verdict.mixing.copy": index(Verdict.HOLDS),
                   "verdict.mixing": index(Verdict.HOLDS),
                   "verdict.fidelity.copy": index(Verdict.NOT_SUPPORTED),
                   "verdict.fidelity": index(Verdict.NOT_SUPPORTED),
                   "verdict.amplification.copy": index(Verdict.HOLDS_WITH_CONDITIONS),
                   "verdict.amplification": index(Verdict.HOLDS_WITH_CONDITIONS)}
    table = across_seeds.seed_claims_table(claims, claims_definition)
    assert table[0]["verdict: published code"] == "{verdict}`holds`"
    assert table[0]["verdict: definitions"] == "{verdict}`fails`"
    # holding with conditions, the cell says where: the units that hold
    assert claims[2]["verdict"] is Verdict.HOLDS_WITH_CONDITIONS
    assert table[2]["verdict: published code"] == \
        "{verdict}`holds with conditions`: in 1 of 2 cells"
    assert all(c["condition"] == "" for c in claims[:2])
    assert table[2]["published code: holds in"] == "1 of 2"
    assert table[2]["definitions: holds in"] == "0 of 2"
    assert table[2]["verdict: definitions"] == "{verdict}`fails`"  # loses beyond the seeds
    with pytest.raises(ValueError, match="pair up"):
        across_seeds.seed_claims_table(claims, claims_definition[:1])
    with pytest.raises(ValueError, match="unknown claim"):
        across_seeds.seed_claims_results([{**claims[0], "claim": "more heads are better"}])


def test_the_machine_check_is_read_as_its_numbers_say():
    """Chapter 11's words on the seed trained alone follow the binomial tail: 'no sign'
    above the level, 'stands apart' below it (seed 42 outside the four GPU seeds' range in
    11 of 16 cells, chance 40%: the paper profile's five seeds)."""
    from bparallel.book.section4.across_seeds_stats import outside_tail

    base = {"hardware.seed": 42, "hardware.cells": 16, "hardware.same_sign": 14,
            "hardware.outside_chance": 2 / 5}
    apart = {**base, "hardware.outside": 11, "hardware.outside_tail": outside_tail(11, 16, 5)}
    assert apart["hardware.outside_tail"] == pytest.approx(0.0191, abs=1e-4)
    words = across_seeds.hardware_reading(apart, alpha=0.05)
    assert "stands apart" in words["summary"] and "11 of 16 cells" in words["summary"]
    assert "40%" in words["summary"] and "p = 0.02" in words["summary"]
    assert "no sign" not in words["summary"] + words["conclusion"]
    assert "14 of 16" in words["conclusion"]
    # the smallest effect it could find: 11 of 16 outside (tail .019), 10 gives .05 or more
    from bparallel.book.section4.across_seeds_stats import smallest_outside

    need = smallest_outside(16, 5, 0.05)
    assert outside_tail(need, 16, 5) <= 0.05 < outside_tail(need - 1, 16, 5)
    assert f"in {need} of the 16 cells" in words["conclusion"]
    assert smallest_outside(2, 2, 0.05) is None  # chance 100%: nothing to find
    alike = {**base, "hardware.outside": 7, "hardware.outside_tail": outside_tail(7, 16, 5)}
    words = across_seeds.hardware_reading(alike, alpha=0.05)
    assert "no sign" in words["summary"] and "stands apart" not in words["summary"]
    assert words["summary"].endswith(f"(p = {alike['hardware.outside_tail']:.2f})")
    assert "nothing to compare" in across_seeds.hardware_reading({}, alpha=0.05)["summary"]
    with pytest.raises(ValueError, match="alpha"):
        across_seeds.hardware_reading(apart, alpha=1.5)
