"""Fixtures the Transformer floor's tests share: a tiny model and a dataset of its sequence
length (:mod:`tests.transformer.tiny`), built once per test module."""

from __future__ import annotations

import pytest

from bparallel.transformer.data import SequenceDataset, make_dataset
from bparallel.transformer.model import Transformer
from tests.transformer.tiny import T, tiny_model


@pytest.fixture(scope="module")
def model() -> Transformer:
    return tiny_model()


@pytest.fixture(scope="module")
def dataset() -> SequenceDataset:
    return make_dataset("cycle", 30, seed=1, seq_len=T)
