"""Section 4.1 in torch: the copy/cycle data, the Transformer, its attention kernels,
training with resumable checkpoints, and the proxies measured on a trained model.

Imports :mod:`bparallel`'s theory layer (``proxies``); never the book layer.
"""
