"""``python -m bparallel pilot budget|settling``: where one of chapter 12's pilots of a
training recipe stands and what its rule reads, without building the book.

The pilot's runs are its design's (:data:`~bparallel.book.section4.models.BUDGET_PILOT_DESIGNS`,
:data:`~bparallel.book.section4.models.SETTLING_PILOT_DESIGNS`), shipped or committed as
snapshots (``sweep --snapshot`` copies a running sweep's checkpoints there), each beside the
run it repeats at the task's constant rate
(:func:`~bparallel.book.section4.graph_pilots.budget_pilot_rows`); the reading is the one
the chapter prints (:func:`~bparallel.book.section4.graph_pilots.budget_pilot_reading`),
so the decision to retrain a task under a piloted recipe can be taken as soon as its runs
finish.
"""

from __future__ import annotations

import argparse
from collections.abc import Mapping, Sequence
from typing import Any

from ..section4 import graph_pilots as gpl
from ..section4 import models

#: Each pilot the command reads: (its profiles per task, its designs per task).
PILOTS = {"budget": ("BUDGET_PILOTS", "BUDGET_PILOT_DESIGNS"),
          "settling": ("SETTLING_PILOTS", "SETTLING_PILOT_DESIGNS")}


def add_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("pilot", choices=list(PILOTS),
                   help="budget: the decayed rate over a longer budget (histogram-cosine-36k); "
                        "settling: no dropout and the decayed rate (histogram-nodropout-cosine)")
    p.add_argument("--models-dir", default=str(models.MODELS_ROOT), metavar="DIR",
                   help="the shipped models and committed snapshots (default: models/ in the "
                        "repository)")


def text_table(rows: Sequence[Mapping[str, Any]]) -> str:
    """Rows of one set of columns as aligned plain text, a header and a rule."""
    if not rows:
        raise ValueError("rows is empty: no table to write")
    cols = list(rows[0])
    cells = [[str(c) for c in cols], *[[str(r[c]) for c in cols] for r in rows]]
    widths = [max(len(line[i]) for line in cells) for i in range(len(cols))]
    lines = ["  ".join(v.ljust(w) for v, w in zip(line, widths, strict=True)).rstrip()
             for line in cells]
    return "\n".join([lines[0], "  ".join("-" * w for w in widths), *lines[1:]])


def run(args: argparse.Namespace) -> int:
    profiles, designs = (getattr(models, name) for name in PILOTS[args.pilot])
    root = args.models_dir
    baseline = models.fresh_runs(root, profiles=models.PILOT_BASELINES)
    rows = gpl.budget_pilot_rows(baseline, models.budget_pilot_runs(root, profiles, designs))
    names = ", ".join(sorted(set(profiles.values())))
    if not rows:
        print(f"the {args.pilot} pilot ({names}): no run shipped or snapshotted in {root} "
              "(`python -m bparallel sweep --profile PROFILE ... --snapshot` commits a "
              "running sweep's checkpoints)")
        return 0
    print(f"the {args.pilot} pilot ({names}), {len(rows)} runs:\n")
    print(text_table(gpl.budget_pilot_table(rows)))
    for task, reading in gpl.budget_pilot_reading(rows, designs).items():
        words = gpl.budget_pilot_words(reading)
        print(f"\n{task}: {words['status'][0].upper()}{words['status'][1:]}: "
              f"{words['tally']}. {words['reading'].replace('**', '')}")
        if reading["not_started"]:
            print(f"Not started (no shipped run and no committed snapshot): "
                  f"{', '.join(reading['not_started'])}.")
    return 0


__all__ = ["PILOTS", "add_arguments", "run", "text_table"]
