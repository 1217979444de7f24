"""Recorded forms of the regression's values, and the tolerance rules' matching
(:mod:`.regress` re-exports every name).

Recorded forms: a tolerance guards a value only where it is smaller than the value, so two
kinds of number are recorded in another form, by :func:`recorded_form`, whatever the chapter
wrote (``run``, ``--update`` and ``--retolerance`` alike):

- a p-value (a key whose last word is one of :data:`P_VALUE_WORDS`) as its base-10 logarithm,
  under ``log10_<word>`` (:func:`recorded_key`): a tolerance on ``log10 p`` is a bound on the
  ratio of p to its reference, so that a p-value ten times larger moves the key by 1, whatever
  its size (a p-value below :data:`LOG10_P_FLOOR`'s power, an underflow, as that floor);
- a value within its key's absolute tolerance of zero (a fidelity of 1e-10 %, a training loss
  of 4e-7 nats, a margin drop of a removal that changes nothing) as exactly 0, guarded at
  :data:`ZERO_GUARD` times that tolerance: it means zero at the resolution its rule states,
  and the key fails once the value leaves it.

Every other value is recorded as it is, and the test suite checks that no tolerance reaches
the value it guards, outside a short list of keys each with its reason. The stored references
are brought to these forms by ``--retolerance`` (with the measured noise, whose p-values'
spreads become spreads of their logarithms, :func:`bparallel.book.tools.noise.recorded_noise`).
"""

from __future__ import annotations

import fnmatch
import math
from typing import Any

__all__ = ["DEFAULT_TOLERANCE", "P_VALUE_WORDS", "LOG10_P_FLOOR", "ZERO_GUARD", "RegressError",
           "matching_rule", "tolerance_for", "recorded_key", "recorded_value", "recorded_values",
           "recorded_form"]

DEFAULT_TOLERANCE = {"abs": 1e-12, "rel": 1e-9}


class RegressError(ValueError):
    """A usage error of the runner (unknown notebook, profile or parameter)."""


def matching_rule(notebook: str, key: str, rules: list[dict[str, Any]],
                  profile: str | None = None) -> dict[str, Any] | None:
    """The first rule for ``key`` of ``notebook`` (and ``profile``, when a rule names one)."""
    for rule in rules:
        if rule.get("profile", profile) != profile:
            continue
        if fnmatch.fnmatch(notebook, rule["notebook"]) and fnmatch.fnmatch(key, rule["key"]):
            return rule
    return None


def tolerance_for(notebook: str, key: str, rules: list[dict[str, Any]],
                  profile: str | None = None, value: float | None = None) -> dict[str, float]:
    """The tolerance of ``key``'s first matching rule (else :data:`DEFAULT_TOLERANCE`); for a
    ``value`` of 0, a zero at its rule's resolution, :data:`ZERO_GUARD` times the rule's
    absolute tolerance (:func:`recorded_form`)."""
    rule = matching_rule(notebook, key, rules, profile)
    tol = dict(DEFAULT_TOLERANCE) if rule is None else {
        "abs": float(rule.get("abs", 0.0)), "rel": float(rule.get("rel", 0.0))}
    if value == 0:
        tol["abs"] *= ZERO_GUARD
    return tol


#: The last words of the keys that hold a p-value (a test's, and its Holm-adjusted one).
P_VALUE_WORDS = ("p", "p_holm")
#: ``log10 p`` recorded for a p-value of 0 or below ``10 ** LOG10_P_FLOOR`` (an underflow).
LOG10_P_FLOOR = -300.0
#: A value within its rule's absolute tolerance of zero is recorded as 0 and guarded at
#: ``ZERO_GUARD`` times that tolerance: what it was recorded from lies within a quarter of its
#: guard (the margin :data:`bparallel.book.tools.noise.NOISE_FACTOR` asks of every key), and a
#: value just above the tolerance, recorded as it is, keeps its own tolerance below it.
ZERO_GUARD = 4.0


def recorded_key(key: str) -> str:
    """The key under which ``key``'s value is recorded: ``a.b.log10_p`` for a p-value
    ``a.b.p`` (:data:`P_VALUE_WORDS`), else ``key`` itself."""
    head, _, last = key.rpartition(".")
    if last not in P_VALUE_WORDS:
        return key
    return f"{head}.log10_{last}" if head else f"log10_{last}"


def recorded_value(key: str, value: float) -> tuple[str, float]:
    """``(recorded_key(key), value)``, a p-value as its base-10 logarithm (at least
    :data:`LOG10_P_FLOOR`); a ``RegressError`` for a p-value outside [0, 1]."""
    name = recorded_key(key)
    if name == key:
        return key, value
    if not 0.0 <= value <= 1.0:
        raise RegressError(f"key {key!r}: a p-value must lie in [0, 1], got {value!r}")
    return name, max(math.log10(value), LOG10_P_FLOOR) if value > 0 else LOG10_P_FLOOR


def recorded_values(values: dict[str, float], notebook: str = "") -> dict[str, float]:
    """A chapter's results under the keys the references record, p-values as ``log10``
    (:func:`recorded_value`): what a run is compared with. Idempotent."""
    out: dict[str, float] = {}
    for key, value in values.items():
        name, value = recorded_value(key, value)
        if name in out:
            raise RegressError(f"{notebook}: keys {key!r} and {name!r} are recorded alike")
        out[name] = value
    return out


def recorded_form(values: dict[str, float], notebook: str, rules: list[dict[str, Any]],
                  profile: str | None = None) -> dict[str, float]:
    """A chapter's results as the references store them (the module's docstring):
    :func:`recorded_values`, and every value within its key's absolute tolerance of zero
    (:func:`tolerance_for`) as 0, whose tolerance is then :data:`ZERO_GUARD` times as wide
    (a run is compared as it is: a value that noise carries just across the tolerance
    still passes). Idempotent."""
    out = recorded_values(values, notebook)
    for name, value in out.items():
        if value != 0 and abs(value) <= tolerance_for(notebook, name, rules, profile)["abs"]:
            out[name] = 0.0
    return out
