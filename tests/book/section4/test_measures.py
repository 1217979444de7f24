"""bparallel.book.section4.measures: the chapters' measures of many models, each exactly
bparallel.transformer.measure's of one."""

import numpy as np
import pytest
import torch

from bparallel.book.section4.measures import measure_models
from bparallel.transformer.measure import sequence_metrics
from bparallel.transformer.model import ModelConfig, Transformer
from tests.transformer.test_measure import small_copy_model


def test_measure_models_is_measure_model_per_key_and_refuses_bad_input():
    model, x = small_copy_model()
    torch.manual_seed(5)
    other = Transformer(ModelConfig(n_heads=2, seq_len=16, vocab_size=32, n_layers=2)).eval()
    models = {("copy", 4): model, ("copy", 2): other}
    got = measure_models(models, {k: x[:3] for k in models}, "sequence", cache_dir=None,
                         workers=1, max_steps=10, horizon=10)
    assert list(got) == [("copy", 2), ("copy", 4)]  # sorted keys
    for key, m in models.items():
        want = sequence_metrics(m, x[:3], max_steps=10, horizon=10)
        assert got[key].graphs.keys() == want.keys()
        for name in want:  # bitwise: the same call, one pass each
            np.testing.assert_array_equal(got[key].graphs[name], want[name], err_msg=name)
    heads = measure_models({("copy", 4): model}, lambda k: x, "heads", cache_dir=None,
                           workers=1, options_of=lambda k: {"task": k[0]},
                           reference_sequences=2, impact=False)
    study = heads[("copy", 4)].heads
    assert study.knockout["none"]["accuracy"] >= 0.0 and study.impact is None
    with pytest.raises(ValueError, match="models is empty"):
        measure_models({}, {}, "sequence", cache_dir=None)
    with pytest.raises(ValueError, match=r"inputs has no sequences for \[\('copy', 2\)\]"):
        measure_models(models, {("copy", 4): x}, "sequence", cache_dir=None)
