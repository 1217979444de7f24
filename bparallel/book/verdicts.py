"""The book's one verdict vocabulary: what a test of one of the paper's claims concludes.

Every verdict of the book, in the introduction's findings tables, in a chapter's summary
table or verdict box, is one member of :class:`Verdict`, written by one function:

- in a table a chapter emits (:func:`bparallel.book.render.markdown.table`), a :class:`Verdict`
  value becomes a verdict cell through :func:`cell`;
- in prose (the introduction, a chapter's verdict box) the same cell is written as the MyST
  role ``{verdict}`holds with conditions``` that :func:`cell` returns.

The role and the ``{verdict-legend}`` directive are registered by the book's Sphinx
extension, :mod:`bparallel.book.render.sphinxext`, which refuses any text that is not a verdict
(a build error, so a typo cannot reach a page). A verdict renders as its word in a badge
coloured per verdict (``book/_static/verdicts.css``, with dark-mode and print styles and a
glyph beside the word): the word is always shown, so colour is never the only signal.

One level below a verdict, the outcome of one measured change across seeds (a layer's
1 -> 16-head change in chapter 11, a task's in chapter 12) is one member of
:class:`Outcome`: a statistical result per cell, which the verdicts tally.

The vocabulary is closed: the browser tests check that every verdict on every page is one of
:data:`LABELS`. Conditions ("only where the heads break a common causal order", "in 3 of 4
layers") are not part of a
verdict's word; they follow it in the same cell, ``{verdict}`holds with conditions`: in 3 of
4 layers`` (:func:`cell`, which refuses a *holds with conditions* cell without its
condition), and the key number beside it gives the evidence.

Every verdict on a claim of the paper is reached by one reading rule, :data:`READING_RULE`,
which the ``{verdict-legend}`` directive prints under the legend (in the introduction and
the chapters): a claim is judged as the paper states it, under the hypotheses the paper
states, at the strength it states (an existential "can" holds on one case that shows it;
an unqualified claim must hold in every case tested); a stronger or weaker variant that the
book tests is the book's own claim, labelled so and listed under "beyond the paper"; and a
condition in a verdict cell is only one the paper did not state, never a restatement of
its hypotheses (Theorem 2.8 is judged where ``exp(-pN) <= epsilon``, the paper's
assumption; that it holds for every chain when ``epsilon >= e^-2`` is the book's
strengthening, not a condition).
"""

from __future__ import annotations

import enum
from collections.abc import Mapping, Sequence

from .words import join_words

__all__ = ["HOLDING", "LABELS", "MEANINGS", "READING_RULE", "Outcome", "Verdict", "cell",
           "condition", "legend", "only"]


class Verdict(enum.StrEnum):
    """What testing a claim of the paper concludes; the value is the word a reader sees.

    - ``HOLDS``, "holds": tested, and true as the paper states it (under its hypotheses, at
      its strength), in every case tested (e.g. Lemma 2.5 on every random feedforward
      graph; Theorem 2.8 wherever ``exp(-pN) <= epsilon``; amplification, a "can" claim).
    - ``HOLDS_WITH_CONDITIONS``, "holds with conditions": true only under a condition the
      paper does not state, or only in part of the cases; the condition is written beside
      the verdict (Eq. 18 with ``F`` read as ``Pr(p_h < p-bar)`` where the law has an atom;
      "more heads mix faster" in 3 of 4 layers; Example 3.13 only with a head that breaks
      the heads' common causal order). "Published code only" is
      such a condition: the authors' published code reproduces the paper's numbers or
      trend, while computed as the paper defines the quantities the claim is unresolved
      (where either reverses it, the verdict *fails*, with the mode that reverses it and
      the other's answer as a note beside it). Both answers are shown.
    - ``NOT_SUPPORTED``, "not supported": the test could have confirmed the claim and did
      not (the effect is absent or too weak, or the proposed mechanism is not what the data
      show), but it does not contradict the claim as stated: a "can" or "may" claim, an
      explanation, a suggestion.
    - ``FAILS``, "fails": a counterexample, or a measured effect in the opposite direction,
      contradicts the claim as stated (Eq. 20's left side; "a combination mixes no faster
      than its fastest head").

    How a claim is read before it is judged: :data:`READING_RULE`.
    - ``NOT_TESTABLE``, "not testable": the data at hand cannot decide (one training seed,
      an effect below its noise floor, no counterpart to compute); say what would decide it.
    """

    HOLDS = "holds"
    HOLDS_WITH_CONDITIONS = "holds with conditions"
    NOT_SUPPORTED = "not supported"
    FAILS = "fails"
    NOT_TESTABLE = "not testable"

    @property
    def label(self) -> str:
        """The word a reader sees."""
        return self.value

    @property
    def slug(self) -> str:
        """The verdict's CSS class suffix: ``"holds-with-conditions"``."""
        return _SLUGS[self]

    @property
    def meaning(self) -> str:
        """One sentence: what the verdict says (the legend)."""
        return MEANINGS[self]

    @classmethod
    def parse(cls, text: str) -> Verdict:
        """The verdict whose word is ``text`` (surrounding spaces ignored); a ``ValueError``
        naming the closed set for anything else."""
        if isinstance(text, cls):
            return text
        if not isinstance(text, str):
            raise ValueError(f"verdict={text!r}: expected one of {list(LABELS)}")
        try:
            return cls(" ".join(text.split()))
        except ValueError:
            raise ValueError(
                f"verdict={text!r} is not in the book's vocabulary: use one of {list(LABELS)}"
            ) from None


class Outcome(enum.StrEnum):
    """Where one change across seeds (paired by seed, with its t-interval) lies relative to
    the direction a claim says it goes; the value is the word a reader sees.

    - ``AS_CLAIMED``, "as claimed": the whole interval lies on the claimed side of 0 (the
      change survives the seeds);
    - ``AGAINST``, "against the claim": the whole interval lies on the other side;
    - ``NOT_RESOLVED``, "not resolved": the interval holds 0;
    - ``AS_CLAIMED_ONE_SEED``, ``AGAINST_ONE_SEED``: one seed, no interval, only the sign;
    - ``NO_CHANGE``, "no change": every seed's change is exactly 0;
    - ``NOT_AFTER_HOLM``, "as claimed, not after Holm": as claimed by its own interval, but
      not after Holm's correction over a table's tests (chapter 11).

    Computed by :func:`bparallel.book.section4.statistics.effect_outcome`; the chapters'
    verdicts count them (:func:`bparallel.book.section4.across_seeds_stats.surviving_claims`,
    :func:`bparallel.book.section4.graph_tasks.tally`).
    """

    AS_CLAIMED = "as claimed"
    AGAINST = "against the claim"
    NOT_RESOLVED = "not resolved"
    AS_CLAIMED_ONE_SEED = "as claimed (one seed)"
    AGAINST_ONE_SEED = "against the claim (one seed)"
    NO_CHANGE = "no change"
    NOT_AFTER_HOLM = "as claimed, not after Holm"


_SLUGS = {
    Verdict.HOLDS: "holds",
    Verdict.HOLDS_WITH_CONDITIONS: "holds-with-conditions",
    Verdict.NOT_SUPPORTED: "not-supported",
    Verdict.FAILS: "fails",
    Verdict.NOT_TESTABLE: "not-testable",
}

#: The verdicts that say a claim holds, with or without a condition.
HOLDING = frozenset({Verdict.HOLDS, Verdict.HOLDS_WITH_CONDITIONS})

#: The words of the closed set, in the legend's order.
LABELS: tuple[str, ...] = tuple(v.value for v in Verdict)

#: The legend: what each verdict says.
MEANINGS: dict[Verdict, str] = {
    Verdict.HOLDS: ("tested, and true as the paper states it, under its hypotheses and at its "
                    "strength, in every case tested."),
    Verdict.HOLDS_WITH_CONDITIONS: (
        "true only under a condition the paper does not state, or in part of the cases; "
        "the condition follows it in a few words (for instance *published code only*: the "
        "authors' code reproduces the claim, the paper's definitions do not)."),
    Verdict.NOT_SUPPORTED: (
        "the test could have confirmed the claim and did not, without contradicting it as "
        "stated (an effect too weak, a mechanism the data do not show)."),
    Verdict.FAILS: (
        "a counterexample or an effect in the opposite direction contradicts the claim as "
        "stated."),
    Verdict.NOT_TESTABLE: "the data at hand cannot decide; the text says what would.",
}

#: The one rule by which every claim of the paper is read before it is judged; the
#: ``{verdict-legend}`` directive prints it under the legend.
READING_RULE = (
    "How a claim is read. Each claim is judged as the paper states it: under the hypotheses "
    "the paper states, and at the strength it states (a claim that heads \"can\" do something "
    "holds when one case shows it; an unqualified claim must hold in every case tested). A "
    "stronger or weaker variant that this book tests is the book's own claim: it is labelled "
    "so and listed under \"beyond the paper\", with its own verdict. A condition beside a "
    "verdict is one the paper did not state, never a restatement of the paper's hypotheses.")


def cell(verdict: Verdict | str, condition: str = "") -> str:
    """A verdict cell for a MyST table or a sentence: the role ``{verdict}`<word>```, which
    the book's Sphinx extension renders as the colour-coded badge, followed by
    ``condition`` where there is one (``"{verdict}`holds with conditions`: in 3 of 4
    layers"``). ``verdict`` is a :class:`Verdict` or its word (anything else is a
    ``ValueError``).

    A *holds with conditions* cell names its condition in a few words (:func:`condition`):
    without one it says nothing a reader can use, so an empty ``condition`` is a
    ``ValueError`` for it; for any other verdict a condition is a note (*fails*: "as defined;
    the published code reproduces it")."""
    v = Verdict.parse(verdict)
    if not isinstance(condition, str):
        raise ValueError(f"condition={condition!r}: expected a few words of text")
    words = " ".join(condition.split())
    if v is Verdict.HOLDS_WITH_CONDITIONS and not words:
        raise ValueError(f"condition={condition!r}: a verdict of {v.value!r} names its "
                         "condition in its cell, in a few words (where or when it holds)")
    return f"{{verdict}}`{v.value}`" + (f": {words}" if words else "")


def condition(verdict: Verdict | str, by_part: Mapping[str, Verdict | str], part: str,
              conditions: Mapping[str, str] | None = None, within: str = "") -> str:
    """The condition of a claim's verdict over parts (tasks, arms, modes, layers) in a few
    words, for :func:`cell`: empty unless the verdict is *holds with conditions*; then the
    parts where the claim holds, "only copy; cycle"; where it holds in every part, the parts
    where only with conditions, "in every task; with conditions in cycle" (with each one's
    condition from ``conditions`` where given: "with conditions in cycle (in 3 of 4
    layers)"), or, when that is every part, their one condition where ``conditions`` gives
    them all the same, "loosely, in every task"; where each part holds only in some of what
    it ranges over (every condition an :func:`only`, "only induction, as defined"), and
    ``within`` names that ("tasks and modes"), "in every arm, for some tasks and modes";
    else "in every task, with that task's conditions" (each part's row says which). Where
    only some parts hold, a part holding with conditions carries its own from
    ``conditions``: "only fixed head size (induction)", never the bare part, which would
    read as if the claim held there everywhere. ``part`` names one part ("task", "arm").
    A ``ValueError`` where every part holds without a condition (their common verdict is
    *holds*, not ``verdict``)."""
    v = Verdict.parse(verdict)
    if v is not Verdict.HOLDS_WITH_CONDITIONS:
        return ""
    if not isinstance(part, str) or not part.strip():
        raise ValueError(f"part={part!r}: name one part (\"task\", \"arm\")")
    held = [name for name, pv in by_part.items() if Verdict.parse(pv) in HOLDING]
    partly = [name for name in held
              if Verdict.parse(by_part[name]) is Verdict.HOLDS_WITH_CONDITIONS]
    said = {name: (conditions or {}).get(name, "") for name in partly}
    if by_part and len(held) == len(by_part):
        if not partly:
            raise ValueError(f"by_part={dict(by_part)!r}: every {part} holds without a "
                             f"condition, so the claim holds; verdict={v.value!r} does not "
                             "fit it")
        if len(partly) == len(by_part):
            common = set(said.values())
            if len(common) == 1 and all(common):
                return f"{common.pop()}, in every {part}"
            if within and all(c.startswith(_ONLY) for c in common):
                return f"in every {part}, for some {within}"
            return f"in every {part}, with that {part}'s conditions"
        return f"in every {part}; with conditions in " + join_words(
            [f"{name} ({said[name]})" if said[name] else name for name in partly])
    return only([f"{name} ({said[name].removeprefix(_ONLY)})" if said.get(name) else name
                 for name in held])


#: How :func:`only` begins a condition, and how :func:`condition` knows one of its making.
_ONLY = "only "


def only(places: Sequence[str]) -> str:
    """The condition of a claim that holds in some places only, in a few words: "only
    induction; histogram, as defined" (``places`` joined), "only in part" for none named."""
    return _ONLY + ("; ".join(places) if places else "in part")


def legend() -> str:
    """The legend as MyST: the ``{verdict-legend}`` directive, which lists every verdict's
    badge with its meaning (:data:`MEANINGS`)."""
    return ":::{verdict-legend}\n:::\n"
