"""The book's small rules of wording, shared by every page that writes a sentence or a table
cell from data: lists, words that agree with a count, numbers to significant digits."""

from __future__ import annotations

import math
import re
from collections.abc import Sequence


def join_words(words: Sequence[object]) -> str:
    """A list as the book writes it: ``a``, ``a and b``, ``a, b and c`` (no serial comma).
    ``ValueError`` for an empty list (there is no sentence to write)."""
    items = [str(w) for w in words]
    if not items:
        raise ValueError("words is empty: nothing to join")
    return items[0] if len(items) == 1 else ", ".join(items[:-1]) + " and " + items[-1]


def agree(count: int, one: str, many: str) -> str:
    """The word that agrees with ``count``: ``one`` for exactly one (``"is"``, ``"has"``,
    ``"was"``), ``many`` otherwise (zero included: "0 runs have")."""
    if isinstance(count, bool) or not isinstance(count, int) or count < 0:
        raise ValueError(f"count={count!r}: expected a count (an int >= 0)")
    return one if count == 1 else many


def count_of(count: int, total: int, one: str, many: str) -> str:
    """``count`` of ``total`` things as the book says it: ``"all 12 runs"``, ``"both runs"``,
    ``"the one run"`` (``"no run"``), ``"none of the 12 runs"``, ``"7 of the 12 runs"`` (``one`` and
    ``many``: the noun, singular and plural). ``ValueError`` unless ``0 <= count <= total``
    and ``total >= 1``."""
    for value, name in ((count, "count"), (total, "total")):
        if isinstance(value, bool) or not isinstance(value, int):
            raise ValueError(f"{name}={value!r}: expected an int")
    if total < 1 or not 0 <= count <= total:
        raise ValueError(f"count={count}, total={total}: expected 0 <= count <= total, "
                         "total >= 1")
    if total == 1:
        return f"the one {one}" if count else f"no {one}"
    if count == total:
        return f"both {many}" if total == 2 else f"all {total} {many}"
    if count == 0:
        return f"{'neither' if total == 2 else 'none'} of the {total} {many}"
    return f"{count} of the {total} {many}"


#: Superscript digits, for a power of ten as a reader writes it.
_SUPERSCRIPT = str.maketrans("-0123456789", "⁻⁰¹²³⁴⁵⁶⁷⁸⁹")


def fmt_sig(x: float, digits: int = 2, *, sign: bool = False) -> str:
    """``x`` to ``digits`` significant digits as a reader writes it, never in a program's
    ``e`` notation: plain with thousands grouped from 1e-4 up to 1e6 (``"1,300"``,
    ``"0.00025"``, ``"-431"``), beyond that ``"-4.49 × 10⁻⁵"``; ``sign``: a ``+`` before a
    positive value; ``"0"`` for zero (never ``"-0"``). ``ValueError`` for a value that is
    not finite or ``digits`` below 1."""
    if isinstance(digits, bool) or not isinstance(digits, int) or digits < 1:
        raise ValueError(f"digits={digits!r}: expected an int >= 1")
    if not math.isfinite(x):
        raise ValueError(f"x={x!r}: not a finite number")
    mantissa, _, exponent = f"{x:.{digits - 1}e}".partition("e")
    if float(mantissa) == 0:
        return "0"
    e = int(exponent)
    plus = "+" if sign and x > 0 else ""
    if -4 <= e < 6:
        return plus + f"{float(mantissa) * 10.0 ** e:,.{max(0, digits - 1 - e)}f}"
    return f"{plus}{mantissa} × 10{str(e).translate(_SUPERSCRIPT)}"


#: A formatted number that rounds to zero with a sign ("-0.00", "+0.0", "-0", "-0.0%").
_SIGNED_ZERO = re.compile(r"[-+]0(\.0*)?%?")


def unsigned_zero(text: str) -> str:
    """A formatted number as a reader takes it: one that rounds to zero without its sign
    (``"-0.00"`` reads ``"0.00"``, ``"+0.0%"`` reads ``"0.0%"``), any other unchanged.
    ``ValueError`` for anything but text."""
    if not isinstance(text, str):
        raise ValueError(f"text={text!r}: expected a formatted number (a str)")
    return text[1:] if _SIGNED_ZERO.fullmatch(text) else text


def fmt_fixed(x: float, decimals: int, *, sign: bool = False) -> str:
    """``x`` with ``decimals`` decimals; 1e5 and beyond in three significant digits
    (``"9.84 × 10⁸"``, :func:`fmt_sig`); never ``"-0.00"``; ``sign``: a ``+`` before a
    value that does not round to zero (``"+0.40"``, ``"0.00"``)."""
    if abs(x) >= 1e5:
        return fmt_sig(x, 3, sign=sign)
    return unsigned_zero(("+" if sign and x > 0 else "") + f"{x:.{decimals}f}")


def fmt_steps(value: float) -> str:
    """A number of steps (a mixing time, a bound on one) for a table: a whole number without
    decimals ("4", not "4.0"), else one decimal; ``inf`` reads "∞", values from ``1e4`` on
    in three significant digits (:func:`fmt_sig`: ``"2.37 × 10⁶"``)."""
    if math.isinf(value):
        return "∞"
    return fmt_sig(value, 3) if value >= 1e4 else f"{value:.1f}".removesuffix(".0")


def fmt_p(p: float | None) -> str:
    """A p-value for a table: ``"0.003"``, ``"< 0.001"``; ``"—"`` when there is none."""
    if p is None:
        return "—"
    return "< 0.001" if p < 0.001 else f"{p:.3f}"


__all__ = ["agree", "count_of", "fmt_fixed", "fmt_p", "fmt_sig", "fmt_steps", "join_words",
           "unsigned_zero"]
