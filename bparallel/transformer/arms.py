"""The arms of fresh-data training (:data:`ARMS`), which separate the number of heads from
their size, and the one rule that says which arms a model is in (:func:`arms_of`).

Each arm is a rule on the model width ``d`` (the profile's ``d_model``), named by its value
at the paper's ``d = 64``. ``"width"``: head size ``d/H``, the paper's, the same parameters at
every head count (172,800 at ``d = 64``). ``"head16"``: a quarter of the width per head at
every head count (:func:`arm_head_size_of`, 16 at ``d = 64``), the attention's inner width
``d H / 4`` (Bhojanapalli et al. 2020's remedy for the low-rank bottleneck); the parameters
grow with ``H``. ``"inner256"``: the attention's inner width fixed at four times the model
width (:func:`arm_inner_width_of`, 256 at ``d = 64``), head size ``4d/H``: the parameters and
the attention width are the same at every head count, so the head count is the only thing
that varies; its one head of ``4d`` dimensions is the only configuration whose head size
reaches the sequence length (Bhojanapalli et al.'s criterion). A configuration in two arms is
one run, shipped once, listed under both: 4 heads of ``d/4`` (width and head16), 16 heads of
``d/4`` (head16 and inner256). The training page's ``induction-tiny`` profile (``d = 32``)
has all three: head size ``32/H``, 8, ``128/H``.

A run is named and stored by its head count and head size (``ModelConfig.head_size``,
``None`` for ``d_model / H``); the arms are *derived* from that configuration, here and
nowhere else (:func:`arms_of`): a manifest entry's ``arms`` is :func:`arms_of` of its model.
"""

from __future__ import annotations

from .._checks import one_of, positive_int
from .model import ModelConfig

#: The arms of fresh-data training (module docstring): the paper's head size, a fixed head
#: size of a quarter of the width, a fixed attention width of four times the width.
ARMS = ("width", "head16", "inner256")
PAPER_D_MODEL = 64  # the paper's model width, at which the arms are named
HEAD_SIZE_DIVISOR = 4  # the head16 arm's head size is d_model / 4
INNER_WIDTH_FACTOR = 4  # the inner256 arm's attention width is 4 d_model
#: The paper's model's shape ``(d_model, n_layers, d_mlp)``, whose arms chapter 12 trains.
PAPER_SHAPE = (PAPER_D_MODEL, 4, 128)
#: The models ``(d_model, n_layers, d_mlp)`` that have arms: the paper's and each fresh-data
#: profile's own (``induction-tiny``'s width 32, 2 layers, an MLP of 64). Written here, not
#: read from the profiles (``design`` imports this module); a test ties it to
#: :data:`~bparallel.transformer.design.PROFILES`.
ARM_SHAPES = frozenset({PAPER_SHAPE, (32, 2, 64)})


def arm_head_size_of(d_model: int = PAPER_D_MODEL) -> int:
    """The head16 arm's head size at width ``d_model``: ``d_model / 4`` (16 at the paper's
    64); raises ``ValueError`` for a width that 4 does not divide."""
    positive_int(d_model, "d_model")
    if d_model % HEAD_SIZE_DIVISOR:
        raise ValueError(f"d_model={d_model}: the head16 arm gives every head a quarter of the "
                         f"width; {HEAD_SIZE_DIVISOR} does not divide {d_model}")
    return d_model // HEAD_SIZE_DIVISOR


def arm_inner_width_of(d_model: int = PAPER_D_MODEL) -> int:
    """The inner256 arm's attention width (``n_heads * head_size``) at width ``d_model``:
    ``4 d_model`` (256 at the paper's 64)."""
    return INNER_WIDTH_FACTOR * positive_int(d_model, "d_model")


ARM_HEAD_SIZE = arm_head_size_of()  # the head16 arm's head size at the paper's width: 16
ARM_INNER_WIDTH = arm_inner_width_of()  # the inner256 arm's attention width there: 256


def arm_head_size(arm: str, heads: int, d_model: int = PAPER_D_MODEL) -> int | None:
    """The head size of ``heads`` heads in ``arm`` at model width ``d_model``, as
    ``ModelConfig.head_size``: ``None`` (``d_model / heads``) for ``"width"`` and wherever
    the arm's head size is ``d_model / heads`` (4 heads of ``d/4``: the width arm's model
    too); else ``d_model / 4`` (``"head16"``, :func:`arm_head_size_of`) or
    ``4 d_model / heads`` (``"inner256"``, :func:`arm_inner_width_of`, which refuses a head
    count that does not divide that width)."""
    one_of(arm, "arm", ARMS, "arms")
    positive_int(heads, "heads")
    positive_int(d_model, "d_model")
    if arm == "width":
        return None
    if arm == "head16":
        size = arm_head_size_of(d_model)
    else:
        inner = arm_inner_width_of(d_model)
        if inner % heads:
            raise ValueError(f"heads={heads}: the inner256 arm splits an attention width of "
                             f"{inner} (4 x d_model={d_model}) into equal heads; {heads} does "
                             "not divide it")
        size = inner // heads
    return None if size * heads == d_model else size


def arm_of(heads: int, head_size: int | None, d_model: int = PAPER_D_MODEL) -> str:
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


def arm_head_dim(arm: str, heads: int, d_model: int = PAPER_D_MODEL) -> int:
    """The dimensions per head of ``heads`` heads in ``arm``, the head size actually used:
    :func:`arm_head_size`, else ``d_model / heads`` (``ModelConfig.head_dim``)."""
    return arm_head_size(arm, heads, d_model) or d_model // heads


def arms_of(config: ModelConfig) -> list[str]:
    """The arms whose model ``config`` is, in the order of :data:`ARMS`: one, two (4 heads
    of ``d/4``: width and head16; 16 heads of ``d/4``: head16 and inner256) or none. The arms
    are arms of a fresh-data profile's own model at its own width ``d`` (:data:`ARM_SHAPES`):
    the paper's (:data:`PAPER_SHAPE`, ``ModelConfig``'s defaults) or another fresh-data
    profile's (``induction-tiny``: width 32, 2 layers, an MLP of 64); a model of another size
    (a size control) is in none."""
    if (config.d_model, config.n_layers, config.d_mlp) not in ARM_SHAPES:
        return []
    d = config.d_model
    default = d % config.n_heads == 0 and config.head_dim == d // config.n_heads
    quarter = d % HEAD_SIZE_DIVISOR == 0 and config.head_dim == d // HEAD_SIZE_DIVISOR
    return [arm for arm, ok in (("width", default), ("head16", quarter),
                                ("inner256", config.n_heads * config.head_dim
                                 == arm_inner_width_of(d)))
            if ok]

__all__ = ["ARMS", "ARM_HEAD_SIZE", "ARM_INNER_WIDTH", "ARM_SHAPES", "HEAD_SIZE_DIVISOR",
           "INNER_WIDTH_FACTOR", "PAPER_D_MODEL", "PAPER_SHAPE", "arm_head_dim", "arm_head_size",
           "arm_head_size_of", "arm_inner_width_of", "arm_of", "arms_of"]
