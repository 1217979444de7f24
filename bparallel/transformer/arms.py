"""The arms of fresh-data training (:data:`ARMS`), which separate the number of heads from
their size, and the one rule that says which arms a model is in (:func:`arms_of`).

``"width"``: head size ``64/H``, the paper's, the same 172,800 parameters at every head
count. ``"head16"``: 16 dimensions per head at every head count, the attention's inner width
``16 H`` (Bhojanapalli et al. 2020's remedy for the low-rank bottleneck); the parameters grow
with ``H``. ``"inner256"``: the attention's inner width fixed at 256 (:data:`ARM_INNER_WIDTH`,
above ``d = 64``), head size ``256/H``: the parameters and the attention width are the same at
every head count, so the head count is the only thing that varies; its one head of 256
dimensions is the only configuration whose head size reaches the sequence length
(Bhojanapalli et al.'s criterion). A configuration in two arms is one run, shipped once,
listed under both: 4 heads of 16 (width and head16), 16 heads of 16 (head16 and inner256).

A run is named and stored by its head count and head size (``ModelConfig.head_size``,
``None`` for ``d_model / H``); the arms are *derived* from that configuration, here and
nowhere else (:func:`arms_of`): a manifest entry's ``arms`` is :func:`arms_of` of its model.
"""

from __future__ import annotations

from .._checks import one_of, positive_int
from .model import ModelConfig

#: The arms of fresh-data training (module docstring): the paper's head size, a fixed head
#: size of 16, a fixed attention width of 256.
ARMS = ("width", "head16", "inner256")
ARM_HEAD_SIZE = 16  # the head16 arm's head size
ARM_INNER_WIDTH = 256  # the inner256 arm's attention width, n_heads * head_size


def arm_head_size(arm: str, heads: int, d_model: int = 64) -> int | None:
    """The head size of ``heads`` heads in ``arm``, as ``ModelConfig.head_size``: ``None``
    (``d_model / heads``) for ``"width"`` and wherever the arm's head size is
    ``d_model / heads`` (4 heads of 16: the width arm's model too); else 16 (``"head16"``)
    or ``256 / heads`` (``"inner256"``, which refuses a head count that does not divide
    256)."""
    one_of(arm, "arm", ARMS, "arms")
    positive_int(heads, "heads")
    if arm == "width":
        return None
    if arm == "head16":
        size = ARM_HEAD_SIZE
    else:
        if ARM_INNER_WIDTH % heads:
            raise ValueError(f"heads={heads}: the inner256 arm splits an attention width of "
                             f"{ARM_INNER_WIDTH} into equal heads; {heads} does not divide it")
        size = ARM_INNER_WIDTH // heads
    return None if size * heads == d_model else size


def arm_of(heads: int, head_size: int | None, d_model: int = 64) -> str:
    """The arm a sweep trains ``heads`` heads of ``head_size`` under: the first of
    :data:`ARMS` whose configuration it is (a shared model is one run). Raises
    ``ValueError`` for a configuration of no arm."""
    for arm in ARMS:
        try:
            if arm_head_size(arm, heads, d_model) == head_size:
                return arm
        except ValueError:
            continue
    raise ValueError(f"head_size={head_size}: {heads} heads of {head_size} dimensions belong "
                     f"to no arm of {list(ARMS)}")


def arm_head_dim(arm: str, heads: int, d_model: int = 64) -> int:
    """The dimensions per head of ``heads`` heads in ``arm``, the head size actually used:
    :func:`arm_head_size`, else ``d_model / heads`` (``ModelConfig.head_dim``)."""
    return arm_head_size(arm, heads, d_model) or d_model // heads


def arms_of(config: ModelConfig) -> list[str]:
    """The arms whose model ``config`` is, in the order of :data:`ARMS`: one, two (4 heads
    of 16: width and head16; 16 heads of 16: head16 and inner256) or none. The arms are
    arms of the paper's model (``d = 64``, 4 layers, an MLP of 128, ``ModelConfig``'s
    defaults): a model of another size is in none."""
    paper = ModelConfig()
    if (config.d_model, config.n_layers, config.d_mlp) != (paper.d_model, paper.n_layers,
                                                           paper.d_mlp):
        return []
    default = config.d_model % config.n_heads == 0 and (
        config.head_dim == config.d_model // config.n_heads)
    return [arm for arm, ok in (("width", default), ("head16", config.head_dim == ARM_HEAD_SIZE),
                                ("inner256", config.n_heads * config.head_dim == ARM_INNER_WIDTH))
            if ok]
