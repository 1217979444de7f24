"""bparallel.transformer.runtime: where a run happened, written and read back."""

import pytest

from bparallel.transformer.runtime import hardware_kind, hardware_string


def test_hardware_kind():
    gpu = "Linux x86_64, 16 cores, torch threads 1, NVIDIA H100 80GB HBM3 (CUDA 13.0)"
    assert hardware_kind(gpu) == "GPU"
    assert hardware_kind("Linux x86_64, 2 cores, torch threads 1") == "CPU"
    assert hardware_kind(hardware_string("cpu")) == "CPU"  # this machine's, as written
    with pytest.raises(ValueError, match="hardware=None"):
        hardware_kind(None)
