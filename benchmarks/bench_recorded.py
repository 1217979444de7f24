"""Each recorded study computed from the weights against read from ``models/recorded/``,
side by side in one run (not a test).

For every study of :data:`bparallel.book.tools.record.STUDIES` (the chapter calls that a
cold book build would otherwise spend minutes on): the seconds to compute its results with
no cache (``BPARALLEL_WORKERS`` worker processes, default one per core, as in a book build)
against the seconds to find and read them in ``models/recorded/`` (the content keys hash
the weights and the sequences, so reading includes loading the models and hashing them),
and the ratio. Run after ``python -m bparallel record``; ``--only`` picks studies (the full
run computes every study once: about 13 minutes on 2 cores).

    python benchmarks/bench_recorded.py [--only 12_graph_tasks ...]
"""

from __future__ import annotations

import argparse
import time

from bparallel.book.tools import record


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--only", nargs="+", choices=sorted(record.STUDIES),
                    default=sorted(record.STUDIES), metavar="STUDY")
    args = ap.parse_args()
    gaps = record.missing()
    print(f"{'study':36s} {'compute (s)':>12s} {'read (s)':>9s} {'ratio':>7s}")
    for name in args.only:
        if gaps[name]:
            print(f"{name:36s} not recorded for this code: run `python -m bparallel record`")
            continue
        study = record.STUDIES[name]
        t = time.perf_counter()
        study(None, record.RECORDED)
        read = time.perf_counter() - t
        t = time.perf_counter()
        study(None, None)
        compute = time.perf_counter() - t
        print(f"{name:36s} {compute:12.1f} {read:9.1f} {compute / read:6.0f}x")


if __name__ == "__main__":
    main()
