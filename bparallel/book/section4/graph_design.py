"""Chapter 12's design: its arms (:data:`~bparallel.transformer.design.ARMS`, named as
:data:`~.models.ARM_NAMES`), the configurations of every arm with their head sizes and
parameters, the seeds the design asks for, and how much of it is shipped
(:func:`grid_rows`). The analysis of the runs is
:mod:`bparallel.book.section4.graph_experiment`."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from ...transformer.arms import arm_head_dim
from ...transformer.design import ARMS, HEADS
from ...transformer.model import ModelConfig
from .models import ARM_NAMES, FreshRuns

#: The seeds the design asks for per (task, arm, heads): five (with three, a rank test over
#: the four head counts passes only at a median rho of 1).
DESIGN_SEEDS = (42, 43, 44, 45, 46)


# --------------------------------------------------------------------------- primary family

#: The tasks the primary family reads: induction and histogram, the chapter's tasks with a
#: verdict. Majority, which no head count learned and which histogram replaced, is secondary.
PRIMARY_TASKS = ("induction", "histogram")


@dataclass(frozen=True)
class Hypothesis:
    """One primary hypothesis of chapter 12, stated before the controls' runs trained: the
    claim it tests (``slug``, a key of :data:`~.graph_experiment.CLAIMS`), the quantity
    (``quantity``: ``"speed"``, or a quantity of :data:`~.graph_experiment.CHANGE_CLAIMS`),
    in words (``what``), its test and the direction the paper's claim predicts, in words
    (``direction``) and as the sign of the predicted change per added head (``sign``, as
    :data:`~.graph_tasks.SUMMARY`'s; speed: of the rank correlation). It is tested
    once per task of :data:`PRIMARY_TASKS` and arm of :data:`~...transformer.design.ARMS`
    (:func:`primary_tests`)."""

    slug: str
    quantity: str
    what: str
    test: str
    direction: str
    sign: int


_CHANGE_TEST = ("paired t-test over seeds of the change from 1 to 16 heads "
                "(graph_tasks.head_count_change), two-sided")
#: Chapter 12's primary family, stated before the learning-rate control and the one-recipe runs
#: trained (the controls, :mod:`bparallel.transformer.design`): learning speed per task and arm,
#: and the change of each graph measure from 1 to 16 heads per task and arm. Holm's correction runs
#: over these tests alone (:func:`primary_tests`); every other test of the chapter is secondary, in
#: its own family (:data:`SECONDARY_FAMILIES`), and read as exploratory.
PRIMARY_FAMILY = (
    Hypothesis("speed", "speed", "learning speed (steps to the learning threshold)",
               "exact two-sided permutation test of the mean over seeds of Spearman's rho "
               "between head count and minus the learning step (Page's trend test)",
               "more heads learn sooner: rho > 0", +1),
    Hypothesis("mixing", "mixing.paper", "Algorithm 1, published code", _CHANGE_TEST,
               "more heads mix faster: the mean walk length falls", -1),
    Hypothesis("mixing", "mixing.definition", "Algorithm 1, as defined", _CHANGE_TEST,
               "more heads mix faster: the mean walk length falls", -1),
    Hypothesis("t_mix", "t_mix", "Definition 2.7's mixing time", _CHANGE_TEST,
               "more heads mix faster: the mixing time falls", -1),
    Hypothesis("fidelity", "fidelity.paper", "Algorithm 2's minimax fidelity, published code",
               _CHANGE_TEST, "more heads keep more fidelity: it rises", +1),
    Hypothesis("fidelity", "fidelity.definition", "Algorithm 2's minimax fidelity, as defined",
               _CHANGE_TEST, "more heads keep more fidelity: it rises", +1),
)

#: What is not primary, each its own family with its own Holm correction, all read as
#: exploratory: the reason for each in words.
SECONDARY_FAMILIES = {
    "accuracy": "the held-out accuracy's change from 1 to 16 heads: induction is at ceiling "
                "and accuracy at each run's own stopping step is not a common step",
    "rank_speed": "the early-proxy tests across head counts: dropped as a separate claim, "
                  "since the early proxies rank head counts as the design's head count does "
                  "and so restate the speed test",
    "rank_within": "the early-proxy tests within configurations (runs of one seed share a "
                   "data stream: the seed is the unit)",
    "heads": "the per-head fidelity tests (which heads do the work)",
    "race": "the horse race of the graph measures as predictors of learning",
}


def primary_tests() -> list[tuple[str, str, str]]:
    """The primary family's tests, ``(quantity, task, arm)`` for every hypothesis of
    :data:`PRIMARY_FAMILY`, task of :data:`PRIMARY_TASKS` and arm (36: 6 x 2 x 3); Holm's
    correction runs over these."""
    return [(h.quantity, task, arm) for h in PRIMARY_FAMILY for task in PRIMARY_TASKS
            for arm in ARMS]


def primary_family_words() -> str:
    """The primary family as a Markdown list, one hypothesis an item (its quantity, test
    and predicted direction), for chapter 12's design section."""
    return "\n".join(f"- **{h.what}**: {h.test}; the paper's claim predicts that "
                      f"{h.direction}." for h in PRIMARY_FAMILY)


def secondary_words() -> str:
    """The secondary families as a Markdown list, one family an item with why it is not
    primary."""
    return "\n".join(f"- {why};" if i < len(SECONDARY_FAMILIES) - 1 else f"- {why}."
                      for i, why in enumerate(SECONDARY_FAMILIES.values()))


def configurations(d_model: int = 64) -> list[dict[str, Any]]:
    """The design's configurations: per head count, the head size of each arm (4 x 16 is
    shared by both) and the parameters of each."""
    rows = []
    for h in HEADS:
        row: dict[str, Any] = {"heads": h}
        for arm in ARMS:
            hs = arm_head_dim(arm, h, d_model)
            cfg = ModelConfig(n_heads=h, head_size=hs)
            row[f"{ARM_NAMES[arm]}: head size"] = hs
            row[f"{ARM_NAMES[arm]}: parameters"] = cfg.num_parameters()
        rows.append(row)
    return rows


def logit_rank_bound(head_size: int, d_model: int = 64) -> int:
    """The largest rank a head's attention logits can reach over any number of positions: its
    queries and keys are affine maps of the ``d_model``-dimensional stream into ``head_size``
    dimensions, so the logit matrix has rank at most ``min(head_size, d_model + 1)`` (the
    ``+ 1`` for the bias). Bhojanapalli et al.'s low-rank bottleneck is escaped only where
    this reaches the sequence length."""
    for name, v in (("head_size", head_size), ("d_model", d_model)):
        if isinstance(v, bool) or not isinstance(v, int) or v < 1:
            raise ValueError(f"{name}={v!r}: expected a positive int")
    return min(head_size, d_model + 1)


def max_logit_rank(d_model: int = 64) -> int:
    """The largest :func:`logit_rank_bound` of any configuration of the design."""
    return max(logit_rank_bound(arm_head_dim(arm, h, d_model), d_model)
               for arm in ARMS for h in HEADS)


def design_configurations() -> int:
    """The distinct configurations of the design: every arm at every head count, a
    configuration of two arms (4 x 16, 16 x 16) once."""
    return len({(h, arm_head_dim(arm, h)) for arm in ARMS for h in HEADS})


def design_models() -> int:
    """The models the design asks of a task: :func:`design_configurations` x
    :data:`DESIGN_SEEDS`."""
    return design_configurations() * len(DESIGN_SEEDS)


def grid_rows(runs: FreshRuns) -> list[dict[str, Any]]:
    """Per task: its budget and threshold, and how much of the design is shipped: models of
    :func:`design_configurations` x :data:`DESIGN_SEEDS`, and per arm the seeds with all four head
    counts."""
    rows = []
    for task in runs.profiles:
        p = runs.profiles[task]
        row = {"task": task, "budget (steps)": p["budget"],
               "threshold": p["threshold"],
               "models shipped": f"{len(runs.of(task))} of {design_models()}"}
        for arm in ARMS:
            seeds = runs.seeds(task, arm)
            row[f"complete seeds, {ARM_NAMES[arm]}"] = \
                ", ".join(map(str, seeds)) if seeds else "none yet"
        rows.append(row)
    return rows



__all__ = ["ARM_NAMES", "DESIGN_SEEDS", "PRIMARY_FAMILY", "PRIMARY_TASKS",
           "SECONDARY_FAMILIES", "Hypothesis", "configurations", "design_configurations",
           "design_models", "grid_rows", "logit_rank_bound", "max_logit_rank",
           "primary_family_words", "primary_tests", "secondary_words"]
