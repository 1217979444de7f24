"""Where a run executes: the device (CPU or CUDA), the torch threads, and a description of
the hardware that a checkpoint and a manifest record."""

from __future__ import annotations

import contextlib
import os
import platform
from collections.abc import Iterator

import torch

from .._checks import positive_int

__all__ = ["THREADS_ENV", "hardware_string", "device_name", "resolve_device", "num_threads"]

THREADS_ENV = "BPARALLEL_THREADS"


def hardware_string(device: str | torch.device = "cpu") -> str:
    """Where a run happened: CPU, cores, torch threads and, for a CUDA ``device``, the GPU."""
    cpu = platform.processor() or platform.machine()
    text = f"{platform.system()} {cpu}, {os.cpu_count()} cores"
    text += f", torch threads {torch.get_num_threads()}"
    dev = torch.device(device)
    if dev.type == "cuda":
        text += f", {torch.cuda.get_device_name(dev)} (CUDA {torch.version.cuda})"
    return text


def hardware_kind(hardware: str) -> str:
    """``"GPU"`` for a machine string of :func:`hardware_string` naming CUDA or an NVIDIA
    device, else ``"CPU"`` (chapters 11 and 12 say where their runs trained)."""
    if not isinstance(hardware, str):
        raise ValueError(f"hardware={hardware!r}: expected a machine string "
                         "(runtime.hardware_string)")
    return "GPU" if ("CUDA" in hardware or "NVIDIA" in hardware) else "CPU"


def device_name(device: str | torch.device) -> torch.device:
    """``device`` (``"cpu"``, ``"cuda"`` or ``"cuda:N"``) as a ``torch.device``; another kind
    of device is a ``ValueError``. Whether this machine has it is :func:`resolve_device`'s
    check (a sweep checks only the name: its jobs may run on a GPU node)."""
    try:
        dev = torch.device(device)
    except (RuntimeError, TypeError) as err:
        raise ValueError(f"device={device!r}: not a device name ({err}); use 'cpu' or "
                         "'cuda'") from None
    if dev.type not in ("cpu", "cuda"):
        raise ValueError(f"device={device!r}: only 'cpu' and 'cuda' are supported")
    return dev


def resolve_device(device: str | torch.device) -> torch.device:
    """``device`` as a ``torch.device`` (:func:`device_name`), checked to exist here.

    Raises ``ValueError`` for another kind of device or a CUDA device this machine lacks.
    """
    dev = device_name(device)
    if dev.type == "cuda":
        if not torch.cuda.is_available():
            raise ValueError(f"device={device!r}: CUDA is not available here (torch "
                             f"{torch.__version__}, no usable GPU); use device='cpu'")
        if dev.index is not None and dev.index >= torch.cuda.device_count():
            raise ValueError(f"device={device!r}: this machine has "
                             f"{torch.cuda.device_count()} CUDA device(s)")
    return dev


@contextlib.contextmanager
def num_threads(n: int | None = None) -> Iterator[int]:
    """Run with ``n`` torch threads (default: ``$BPARALLEL_THREADS``, else unchanged)."""
    if n is None and os.environ.get(THREADS_ENV):
        try:
            n = int(os.environ[THREADS_ENV])
        except ValueError:
            raise ValueError(
                f"{THREADS_ENV}={os.environ[THREADS_ENV]!r}: must be a positive integer"
            ) from None
    if n is not None:
        positive_int(n, "threads")
    before = torch.get_num_threads()
    if n is not None:
        torch.set_num_threads(n)
    try:
        yield torch.get_num_threads()
    finally:
        if n is not None:
            torch.set_num_threads(before)
