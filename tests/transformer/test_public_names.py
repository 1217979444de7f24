"""Public names (issue 77): every module the measures are built from says what it exports
(``__all__``), every name it lists exists, and nothing imported leaks (``importance`` used
to export ``np``, ``torch`` and ``itertools``); no two functions share a name for two ideas."""

import importlib
import types

import numpy as np
import pytest

MODULES = ["bparallel.proxies", "bparallel.graphs", "bparallel.markov", "bparallel.ranks",
           "bparallel.transformer.ablation", "bparallel.transformer.attention",
           "bparallel.transformer.data", "bparallel.transformer.evaluation",
           "bparallel.transformer.importance", "bparallel.transformer.measure",
           "bparallel.transformer.metrics_cache", "bparallel.transformer.model",
           "bparallel.transformer.patterns", "bparallel.transformer.arms",
           "bparallel.transformer.design", "bparallel.transformer.runs",
           "bparallel.transformer.sweep"]
#: Functions a module lists on purpose though another defines them.
REEXPORTED = {("bparallel.markov", "reachability")}


@pytest.mark.parametrize("name", MODULES)
def test_all_lists_the_modules_own_public_names(name):
    module = importlib.import_module(name)
    exported = module.__all__
    assert len(set(exported)) == len(exported), f"{name}: a name listed twice"
    for public in exported:
        obj = getattr(module, public)  # every listed name exists
        assert not isinstance(obj, types.ModuleType), f"{name} exports the module {public}"
        owner = getattr(obj, "__module__", None) if callable(obj) else None
        assert owner in (name, None) or (name, public) in REEXPORTED, (
            f"{name} exports {public} of {owner}")
    star: dict = {}
    exec(f"from {name} import *", star)
    assert not {"np", "torch", "itertools", "math"} & set(star)


def test_graph_reachability_is_not_the_threshold_decision():
    from bparallel import graphs, markov, ranks

    path = np.zeros((4, 4), dtype=bool)
    path[[0, 1, 2], [1, 2, 3]] = True  # 0 -> 1 -> 2 -> 3
    R = graphs.reachability(path)
    np.testing.assert_array_equal(R, np.triu(np.ones((4, 4), dtype=bool)))
    assert markov.reachability is graphs.reachability
    assert not hasattr(graphs, "reaches") and not hasattr(markov, "reaches")
    assert ranks.reaches(0.8, 0.8) and not ranks.reaches(0.79, 0.8)
