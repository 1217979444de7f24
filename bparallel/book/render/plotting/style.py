"""The book's figure style, applied when this module is imported (:func:`use_book_style`)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

#: Width in inches of a figure that spans the book's text column: 7 in = 504 pt = 672 CSS px
#: (an SVG figure is shown at 96 px per inch), within the 688 px of the column at 1280 px,
#: so a figure is never scaled down there and its text keeps its drawn size.
TEXT_WIDTH = 7.0

#: The smallest font size (points) in the book's figures: at the drawn size 8 pt is 10.7 px.
MIN_FONT_PT = 8

#: The font size (points) of a figure that must read on a phone too: at 390 px a
#: text-width figure is shown at about 0.53 of its drawn size, so 14 pt (18.7 px drawn)
#: reads at about 10 px there, and its smallest text (legends, 12 pt) at about 8.5 px.
PHONE_FONT_PT = 14

#: A scatter with more points than this is drawn as an image inside the SVG (thousands of
#: markers would make a page of megabytes); text, lines and axes stay vectors.
RASTERIZE_ABOVE = 500


def use_book_style() -> None:
    """The book's figure style: matplotlib's defaults (10 pt text) with legends at "small"
    (8.3 pt, :data:`MIN_FONT_PT` and up), deterministic SVG output (no date, fixed ids), a
    resolution of 150 dpi for the parts drawn as images; in an IPython kernel, figures shown
    as SVG. Idempotent; called when this module is imported."""
    import matplotlib as mpl

    mpl.rcParams.update({"legend.fontsize": "small", "legend.title_fontsize": "small",
                         "svg.fonttype": "path", "svg.hashsalt": "bparallel",
                         "figure.dpi": 150})
    try:
        from IPython import get_ipython
    except ImportError:  # no IPython: nothing shows figures inline
        return
    if get_ipython() is None:
        return
    from matplotlib_inline.backend_inline import set_matplotlib_formats

    set_matplotlib_formats("svg", metadata={"Date": None})


use_book_style()


def require_columns(frame: Any, columns: Sequence[str], what: str) -> None:
    """A ``ValueError`` naming ``what`` and the missing ones unless ``frame`` has ``columns``."""
    missing = [c for c in columns if c not in frame.columns]
    if missing:
        raise ValueError(f"{what} needs columns {list(columns)}; missing {missing}")

