"""The playground's links: a :class:`~bparallel.book.playground.PlaygroundState` as the
JSON-ready configuration the in-page playground takes (:func:`config_of`), and as the text of
the page's address fragment ``#pg=...`` (:func:`encode_state`, :func:`decode_state`,
:func:`fragment`; the same text as ``encodeState`` / ``decodeState`` in
``bparallel/book/render/js/state.mjs``), so a link can be made from, or read back into, a
state. The rendering room (:mod:`bparallel.book.render.js_playground`) takes configurations
only.
"""

from __future__ import annotations

import math
from decimal import Decimal
from urllib.parse import quote, unquote

from .playground import PlaygroundState, from_preset

__all__ = ["HASH_PREFIX", "config_of", "decode_state", "encode_state", "fragment", "js_number"]

#: What starts the playground's part of the address fragment.
HASH_PREFIX = "pg="


def config_of(state: PlaygroundState) -> dict:
    """The JSON-ready configuration of a playground state (what the JS module takes)."""
    return {
        "n": state.n,
        "heads": [[list(e) for e in edges] for edges in state.edge_lists()],
        "raw_beta": list(state.raw_beta),
        "horizon": state.horizon,
        "eps": state.eps,
        "labels": state.labels,
    }


def js_number(x: float) -> str:
    """JavaScript's ``String(x)`` for a finite float: shortest round-trip digits, with
    exponent form below 1e-6 or from 1e21 (``1``, ``0.25``, ``1e-7``, ``1.5e+21``)."""
    x = float(x)
    if not math.isfinite(x):
        raise ValueError(f"x must be finite, got {x}")
    if x == 0:
        return "0"
    sign = "-" if x < 0 else ""
    _, digit_tuple, exp = Decimal(repr(abs(x))).normalize().as_tuple()
    digits = "".join(map(str, digit_tuple))
    e = int(exp) + len(digits) - 1  # |x| = d.ddd * 10^e
    if -7 < e < 21:
        if e < 0:
            return f"{sign}0.{'0' * (-e - 1)}{digits}"
        whole, frac = digits[: e + 1].ljust(e + 1, "0"), digits[e + 1 :]
        return f"{sign}{whole}.{frac}" if frac else f"{sign}{whole}"
    m = f"{digits[0]}.{digits[1:]}" if len(digits) > 1 else digits
    return f"{sign}{m}e{'-' if e < 0 else '+'}{abs(e)}"


def encode_state(state: PlaygroundState) -> str:
    """The compact text of the page's ``#pg=`` fragment (same as ``encodeState`` in
    ``state.mjs``): ``v=1;n=4;T=20;e=0.25;b=0.5,0.5;h=2480,4180;l=u,v,w,tau``.

    Each head is its adjacency by sender row: row ``j`` is a bitmask of the receivers of
    ``j`` in ``ceil(n/4)`` hex digits.
    """
    width = math.ceil(state.n / 4)
    heads = []
    for edges in state.edge_lists():
        rows = [0] * state.n
        for j, i in edges:
            rows[j] |= 1 << i
        heads.append("".join(f"{r:0{width}x}" for r in rows))
    parts = [
        "v=1",
        f"n={state.n}",
        f"T={state.horizon}",
        f"e={js_number(state.eps)}",
        "b=" + ",".join(js_number(b) for b in state.raw_beta),
        "h=" + ",".join(heads),
    ]
    if state.labels is not None:
        parts.append("l=" + ",".join(quote(lab, safe="-_.!~*'()") for lab in state.labels))
    return ";".join(parts)


def decode_state(text: str) -> PlaygroundState:
    """A :class:`PlaygroundState` from the fragment text (or a whole URL with ``#pg=``)."""
    if "#" in text:
        text = text.split("#", 1)[1]
    text = text.removeprefix(HASH_PREFIX)
    fields = dict(part.partition("=")[::2] for part in text.split(";"))
    if fields.get("v") != "1":
        raise ValueError(f"unknown playground link version {fields.get('v')!r}")
    try:
        n = int(fields["n"])
        width = math.ceil(n / 4)
        heads = []
        for hexes in fields["h"].split(","):
            if len(hexes) != n * width:
                raise ValueError(f"bad head {hexes!r}")
            rows = [int(hexes[j * width : (j + 1) * width], 16) for j in range(n)]
            heads.append({(j, i) for j in range(n) for i in range(n) if rows[j] >> i & 1})
        labels = [unquote(lab) for lab in fields["l"].split(",")] if "l" in fields else None
        return PlaygroundState(
            n=n,
            heads=heads,
            raw_beta=[float(b) for b in fields["b"].split(",")],
            horizon=int(fields["T"]),
            eps=float(fields["e"]),
            labels=labels,
        )
    except (KeyError, ValueError) as err:
        raise ValueError(f"playground link {text!r} could not be read: {err}") from err


def fragment(state: PlaygroundState | None = None) -> str:
    """``#pg=...`` for a state (default: Example 3.13, paper), to append to the page URL."""
    return "#" + HASH_PREFIX + encode_state(state or from_preset("Example 3.13 (paper)"))
