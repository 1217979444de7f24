"""The command line, ``python -m bparallel train | evaluate | regress | sweep | findings |
record | pilot``
(:mod:`bparallel.__main__` runs :func:`main`; the theory layer never imports this module).

Each subcommand is a pair ``(add_arguments, run)`` in :data:`COMMANDS`; ``run`` returns the
exit status. Examples::

    python -m bparallel train --profile quick --out-dir runs/quick
    python -m bparallel train --profile induction-fresh --tasks induction --heads 4 --layers 2
    python -m bparallel evaluate --profile quick --run-dir runs/quick --out-dir results/quick
    python -m bparallel sweep --profile paper --seeds 43 44 --jobs 2 --threads 1
    python -m bparallel findings --check    # is README.md's findings table current?
    python -m bparallel record --check      # are the recorded measures current?
    python -m bparallel pilot settling      # what chapter 12's settling pilot reads so far
"""

from __future__ import annotations

import argparse
import os
import sys
from collections.abc import Callable
from pathlib import Path

from ...transformer.data import PAPER_TASKS, TASKS
from ...transformer.design import DEFAULT_SEED, HEADS, PROFILES, profiles
from ...transformer.model import ATTENTION_PATHS
from ...transformer.runs import Run


def _visible_profiles() -> list[str]:
    return profiles("epoch")


def _check_profile(parser: argparse.ArgumentParser, name: str, fresh: bool = False) -> None:
    """Refuse an unknown profile: a finite-data one, or, with ``fresh`` (``sweep``), either
    kind."""
    valid = profiles(None if fresh else "epoch")
    if name in PROFILES and (fresh or PROFILES[name].unit == "epoch"):
        return
    parser.error(f"unknown profile {name!r}; valid profiles: {', '.join(valid)}")


def _common(p: argparse.ArgumentParser, fresh: bool = False) -> None:
    """The options of ``train`` and ``evaluate`` (``fresh``: ``train``, which takes
    fresh-data profiles too, and whose tasks default to the profile's)."""
    kinds = (f"; on fresh data, one of {', '.join(profiles('step'))}" if fresh else "")
    p.add_argument("--profile", default="quick",
                   help=f"training profile, one of {', '.join(_visible_profiles())}{kinds}")
    p.add_argument("--heads", type=int, nargs="+", default=list(HEADS), metavar="H",
                   help="head counts (default: 1 4 8 16)")
    default_tasks = "the profile's" if fresh else "copy cycle"
    p.add_argument("--tasks", nargs="+", default=None if fresh else list(PAPER_TASKS),
                   choices=TASKS, help=f"tasks (default: {default_tasks})")
    p.add_argument("--seed", type=int, default=42, help="seed of data, init and shuffles")
    p.add_argument("--threads", type=int, default=None,
                   help="torch threads (default: $BPARALLEL_THREADS or torch's choice)")
    p.add_argument("--no-progress", action="store_true", help="hide progress bars")


# --------------------------------------------------------------------------- train


def _model_size_arguments(p: argparse.ArgumentParser) -> None:
    """The model-size options of ``train`` and ``sweep`` (default: the profile's; a size
    other than the profile's is part of the run's name, ``-L2``, ``-w32``, ``-m64``)."""
    p.add_argument("--layers", dest="n_layers", type=int, default=None, metavar="N",
                   help="depth: Transformer layers (default: the profile's, 4)")
    p.add_argument("--d-model", type=int, default=None, metavar="D",
                   help="model width (default: the profile's, 64)")
    p.add_argument("--d-mlp", type=int, default=None, metavar="D",
                   help="MLP width (default: the profile's, 128)")
    p.add_argument("--no-probes", action="store_true",
                   help="fresh-data profiles: skip the proxies and head probes through "
                        "training (faster; the same weights, a history without them)")


def add_train_arguments(p: argparse.ArgumentParser) -> None:
    from ...transformer.arms import ARMS

    _common(p, fresh=True)
    p.add_argument("--out-dir", required=True, type=Path,
                   help="checkpoints and weights go here; existing checkpoints are resumed")
    p.add_argument("--epochs", type=int, default=None,
                   help="finite-data profiles: override the profile's epochs")
    p.add_argument("--arm", default="width", choices=ARMS,
                   help="fresh-data profiles: the head size of an arm (default width: 64/H)")
    p.add_argument("--head-size", type=int, default=None, metavar="D",
                   help="fresh-data profiles: dimensions per head (default: the arm's)")
    p.add_argument("--budget-factor", type=int, default=1, metavar="K",
                   help="fresh-data profiles: K times the step budget, as <name>-xK")
    _model_size_arguments(p)
    p.add_argument("--attention-path", default=None, choices=ATTENTION_PATHS,
                   help="training attention kernel (default: fused; a resumed run keeps its own)")
    p.add_argument("--device", default="cpu", metavar="DEV",
                   help="cpu (default: a seed fixes every result) or cuda (much faster; the "
                        "same seed, not bitwise the CPU run; the GPU is recorded)")


def train_runs(args: argparse.Namespace) -> list[Run]:
    """The runs ``python -m bparallel train`` trains: every task x heads of the options
    (tasks: the profile's by default), each a :class:`~bparallel.transformer.runs.Run`."""
    from ...transformer.runs import SIZE_TAGS

    profile = PROFILES[args.profile]
    sizes = {k: getattr(args, k) for k in SIZE_TAGS if getattr(args, k) is not None}
    tasks = profile.tasks if args.tasks is None else args.tasks
    runs = []
    for task in tasks:
        for heads in args.heads:
            run = Run.in_arm(task, heads, profile, args.arm, seed=args.seed,
                             budget_factor=args.budget_factor, **sizes)
            if args.head_size is not None:
                run = Run(task, heads, profile, seed=args.seed, head_size=args.head_size,
                          budget_factor=args.budget_factor, **sizes)
            runs.append(run)
    return runs


def run_train(args: argparse.Namespace) -> int:
    """Train every (task, heads) model, resuming checkpoints; export weights + manifest.

    Each model is trained under its lock file (as in a ``sweep`` job): a model that another
    process is training is refused.
    """
    from ..._io import file_lock, write_json
    from ...transformer.checkpoints import export_weights
    from ...transformer.train import train

    manifest_path = args.out_dir / "weights.json"
    manifest = {}
    if manifest_path.is_file():
        import json

        manifest = json.loads(manifest_path.read_text())
    for run in train_runs(args):
        lock = run.lock_path(args.out_dir)
        with file_lock(lock, wait=False) as held:
            if not held:
                raise ValueError(f"{run.name}: another process is training it "
                                 f"into {args.out_dir} (it holds {lock})")
            result = train(run, out_dir=args.out_dir, epochs=args.epochs,
                           threads=args.threads, progress=not args.no_progress,
                           attention_path=args.attention_path, device=args.device,
                           probes=not args.no_probes)
        path = run.weights_path(args.out_dir)
        digest = export_weights(result.checkpoint, path)
        h = result.history
        trained = bool(h["heldout_accuracy"])
        manifest[run.name] = {
            "file": path.name, "sha256": digest, "task": run.task, "heads": run.heads,
            "head_size": run.config.head_dim, "arms": run.arms, **run.record(),
            "profile": result.profile.name, "seed": args.seed, run.unit: result.position,
            "heldout_accuracy": h["heldout_accuracy"][-1] if trained else None,
            "heldout_accuracy_predictable":
                h["heldout_accuracy_predictable"][-1] if trained else None,
            "train_seconds": sum(h["seconds"]), "attention_path": result.model.attention_path,
        }
        acc = manifest[run.name]["heldout_accuracy"]
        print(f"{run.name}: {run.unit} {result.position}, held-out accuracy "
              f"{acc if acc is None else f'{acc:.4f}'}, weights {path} sha256 {digest}")
        write_json(manifest, manifest_path)
    return 0


# --------------------------------------------------------------------------- evaluate


def add_evaluate_arguments(p: argparse.ArgumentParser) -> None:
    _common(p)
    p.add_argument("--run-dir", required=True, type=Path, help="where `train` wrote models")
    p.add_argument("--out-dir", required=True, type=Path, help="tables and figures go here")
    p.add_argument("--protocol", nargs="+", default=["paper"], choices=("paper", "heldout"),
                   help="sequences of Tables 1-4 (default: paper)")
    p.add_argument("--num-sequences", type=int, default=None,
                   help="sequences per model (paper protocol: batches; default 50)")
    p.add_argument("--max-steps", type=int, default=100, help="Algorithm 1 cutoff M")
    p.add_argument("--horizon", type=int, default=100, help="Algorithm 2 horizon M")


def run_evaluate(args: argparse.Namespace) -> int:
    """Tables 1-6 (CSV, JSON, flat results JSON) and Figure 4 PNGs for a run directory."""
    from ..._io import write_csv, write_json
    from ...transformer.measure import MODES
    from ...transformer.runtime import num_threads
    from ...transformer.shipped import load_run_models
    from ..render.plotting import plot_figure4
    from ..render.results import save_results
    from ..section4.published import MODE_NAMES, published_rows
    from ..section4.tables import evaluate_models, flat_results

    models, metas = load_run_models(args.run_dir, tasks=args.tasks, heads=args.heads)
    wrong = sorted({m.get("profile") for m in metas.values()} - {args.profile})
    if wrong:
        raise ValueError(f"models in {args.run_dir} were trained with profile(s) {wrong}, "
                         f"not {args.profile!r}")
    epochs = {int(m["epoch"]) for m in metas.values()}
    with num_threads(args.threads):
        tables = evaluate_models(
            models, profile=args.profile, protocols=args.protocol, seed=args.seed,
            epoch=epochs.pop() if len(epochs) == 1 else None,
            num_sequences=args.num_sequences, max_steps=args.max_steps, horizon=args.horizon,
            progress=not args.no_progress,
        )
    out = args.out_dir
    write_csv(tables["tables_1_4"], out / "tables_1_4.csv")
    write_csv(tables["tables_5_6"], out / "tables_5_6.csv")
    write_csv(published_rows(), out / "published_tables.csv")
    write_json({"profile": args.profile, "seed": args.seed, **tables},
                  out / "tables.json")
    save_results(out, "evaluation", flat_results(tables))
    for protocol in args.protocol:
        for mode in MODES:
            plot_figure4(tables["tables_1_4"], out / f"figure4_{protocol}_{mode}.png",
                         mode=mode, protocol=protocol, mode_name=MODE_NAMES[mode])
    plot_figure4(published_rows(), out / "figure4_published.png",
                    title="Figure 4 as published (Tables 1-4)")
    print(f"wrote Tables 1-6 and Figure 4 to {out}")
    return 0


# --------------------------------------------------------------------------- regress


def add_regress_arguments(p: argparse.ArgumentParser) -> None:
    from .regress import add_arguments

    add_arguments(p)


def run_regress(args: argparse.Namespace) -> int:
    from .noise import measure_noise, recorded_noise
    from .regress import chosen_root, run

    root = chosen_root(args)  # --root: a chapter of one's own, outside this repository
    if getattr(args, "retolerance", False):
        # the measured noise under the recorded keys first: it reads the raw p-values
        renamed = recorded_noise(args.profile, root)
        print(f"regress --retolerance ({args.profile}): {len(renamed)} noise key(s) recorded "
              "as log10 p")
    # --noise runs the notebooks under each setting instead of comparing them
    return measure_noise(args, root) if getattr(args, "noise", None) else run(args, root)


# --------------------------------------------------------------------------- sweep


SWEEP_EPILOG = """\
Each job trains one model and ships it into --models-dir: seed 42 as copy-h04, any other
seed S as copy-h04-sS, in one manifest.json. Jobs skip shipped models, resume checkpoints
(bitwise as `train` does) and never train a model that another job holds, so running the
same command again after an interruption picks up where it stopped.

files:
  <runs-dir>/<profile>/seed-<S>/<task>-hNN.ckpt.pt  checkpoints (what `train --seed S
                                                    --out-dir <runs-dir>/<profile>/seed-S`
                                                    writes, so such runs are adopted)
  <runs-dir>/<profile>/logs/<job id>_0_log.out      each job's output (_log.err: errors)
  <models-dir>/partial/seed-<S>/                    --snapshot's copies (commit them)

examples:
  one machine with 2 cores: seeds 43 and 44, two jobs of one torch thread each
    python -m bparallel sweep --profile paper --seeds 43 44 --jobs 2 --threads 1
  where the sweep stands (from the files alone)
    python -m bparallel sweep --profile paper --seeds 42 43 44 --status
  before a session ends: copy unfinished checkpoints into models/paper/partial/, commit them
    python -m bparallel sweep --profile paper --seeds 43 44 --snapshot
  one GPU machine with 16 cores: every model of seeds 43-46 at once, sharing the GPU
    python -m bparallel sweep --profile paper --seeds 43 44 45 46 --jobs 16 --threads 1 \
        --device cuda
  a Slurm cluster: one job array, at most 16 models at once, 4 hours and 2 CPUs per job
  (a job at its time limit is requeued and resumes)
    python -m bparallel sweep --profile paper --seeds 42 43 44 45 46 --executor slurm \\
        --jobs 16 --slurm-partition cpu --slurm-time 240 --slurm-cpus-per-task 2

fresh data: each step 50 new sequences, a budget in steps, stopped when the
held-out accuracy has converged; all three arms by default (width: head size 64/H, the
paper's; head16: 16 dimensions per head; inner256: an attention width of 256 split into H
heads), a model in two arms (4 heads of 16, 16 heads of 16) trained once for both; shipped
into models/<profile>/ with the outcome, learning curve and the proxies through training
(--no-probes: without them); --layers, --d-model, --d-mlp: a model of another size, named
for it (induction-h04-L2)
    python -m bparallel sweep --profile induction-fresh --seeds 42 43 44 --jobs 2 --threads 1
    python -m bparallel sweep --profile induction-fresh --arms head16 --heads 16 --seeds 42 \\
        --budget-factor 5          # 5x the budget, shipped as induction-h16-hs16-x5
"""


def add_sweep_arguments(p: argparse.ArgumentParser) -> None:
    """The options of ``python -m bparallel sweep``."""
    from ...transformer.arms import ARMS
    from ...transformer.sweep import EXECUTORS, SLURM_TIME_MIN, SWEEP_DIR

    p.formatter_class = argparse.RawDescriptionHelpFormatter
    p.epilog = SWEEP_EPILOG
    visible, fresh = ", ".join(profiles("epoch")), ", ".join(profiles("step"))
    p.add_argument("--profile", required=True,
                   help=f"training profile, one of {visible}; on fresh data, one of {fresh}")
    p.add_argument("--tasks", nargs="+", default=None, choices=TASKS,
                   help="tasks (default: the profile's, copy cycle for paper and quick, "
                        "first induction majority for graph)")
    p.add_argument("--heads", type=int, nargs="+", default=list(HEADS), metavar="H",
                   help="head counts (default: 1 4 8 16)")
    p.add_argument("--arms", nargs="+", default=None, choices=ARMS,
                   help="fresh-data profiles: width (head size 64/H, the paper's), head16 (16 "
                        "dimensions per head at every head count) and/or inner256 (an "
                        "attention width of 256 split into H heads); default all three")
    p.add_argument("--budget-factor", type=int, default=1, metavar="K",
                   help="fresh-data profiles of a constant learning rate: train K times the "
                        "step budget, shipped as <name>-xK and started from the plain run's "
                        "checkpoint (default 1)")
    _model_size_arguments(p)
    p.add_argument("--seeds", type=int, nargs="+", default=[DEFAULT_SEED], metavar="S",
                   help="seeds (default: 42, the paper's)")
    p.add_argument("--executor", choices=EXECUTORS, default="local",
                   help="local: processes on this machine (default); slurm: one job array; "
                        "debug: in this process, one after another (an error opens pdb)")
    p.add_argument("--jobs", type=int, default=1, metavar="N",
                   help="jobs at once: local processes, or the Slurm array's limit (default 1)")
    p.add_argument("--threads", type=int, default=None, metavar="N",
                   help="torch threads per job (default: local, this machine's cores / "
                        "--jobs; slurm, --slurm-cpus-per-task)")
    p.add_argument("--device", default="cpu", metavar="DEV",
                   help="cpu (default: a seed fixes every result, resumes are bitwise) or cuda "
                        "(minutes instead of hours; same seeds, not bitwise the CPU runs; the "
                        "GPU is recorded in the manifest)")
    p.add_argument("--runs-dir", type=Path, default=SWEEP_DIR, metavar="DIR",
                   help="checkpoints and logs (default: runs/sweep in the repository)")
    p.add_argument("--models-dir", type=Path, default=None, metavar="DIR",
                   help="shipped models and snapshots (default: models/<profile> in the "
                        "repository)")
    what = p.add_mutually_exclusive_group()
    what.add_argument("--status", action="store_true",
                      help="print where each model stands (shipped, running, partial at "
                           "epoch k, pending) and start nothing")
    what.add_argument("--snapshot", action="store_true",
                      help="copy unfinished checkpoints into <models-dir>/partial/seed-<S>/ "
                           "and start nothing")
    slurm = p.add_argument_group("Slurm (with --executor slurm)")
    slurm.add_argument("--slurm-partition", default=None, metavar="NAME")
    slurm.add_argument("--slurm-time", type=int, default=SLURM_TIME_MIN, metavar="MIN",
                       help=f"minutes per job (default {SLURM_TIME_MIN}); a job at the limit "
                            "is requeued and resumes its checkpoint")
    slurm.add_argument("--slurm-cpus-per-task", type=int, default=None, metavar="N")
    slurm.add_argument("--slurm-extra", action="append", default=[], metavar="KEY=VALUE",
                       help="any other sbatch option, e.g. account=proj or mem=4G (repeatable)")


def run_sweep(args: argparse.Namespace) -> int:
    from ...transformer.sweep import run

    return run(args)


# --------------------------------------------------------------------------- findings


def add_findings_arguments(p: argparse.ArgumentParser) -> None:
    from .findings import add_arguments

    add_arguments(p)


def run_findings(args: argparse.Namespace) -> int:
    from .findings import run

    return run(args)


# --------------------------------------------------------------------------- record


def add_record_arguments(p: argparse.ArgumentParser) -> None:
    from .record import add_arguments

    add_arguments(p)


def run_record(args: argparse.Namespace) -> int:
    from .record import run

    return run(args)


# --------------------------------------------------------------------------- pilot


def add_pilot_arguments(p: argparse.ArgumentParser) -> None:
    from .pilot import add_arguments

    add_arguments(p)


def run_pilot(args: argparse.Namespace) -> int:
    from .pilot import run

    return run(args)


COMMANDS: dict[str, tuple[str, Callable[[argparse.ArgumentParser], None],
                          Callable[[argparse.Namespace], int]]] = {
    "train": ("train the Section 4 models (resumes checkpoints)", add_train_arguments,
              run_train),
    "evaluate": ("Tables 1-6 and Figure 4 from trained models", add_evaluate_arguments,
                 run_evaluate),
    "regress": ("run the notebooks and compare their results with the references",
                add_regress_arguments, run_regress),
    "sweep": ("train and ship tasks x heads x seeds as submitit jobs (local or Slurm)",
              add_sweep_arguments, run_sweep),
    "findings": ("write README.md's findings table from the intro and the paper references",
                 add_findings_arguments, run_findings),
    "record": ("record the costliest measures of the shipped models in models/recorded/",
               add_record_arguments, run_record),
    "pilot": ("where a pilot of chapter 12's recipe stands and what its rule reads",
              add_pilot_arguments, run_pilot),
}


#: The environment variable that names the models folder
#: (:data:`bparallel.transformer.shipped.MODELS_ENV`, read when that module is imported).
MODELS_ENV = "BPARALLEL_MODELS"


def _models_option(argv: list[str]) -> str | None:
    """The value of ``--models DIR`` given before the command, or ``None``."""
    for i, token in enumerate(argv):
        if token == "--models":
            return argv[i + 1] if i + 1 < len(argv) else None
        if token.startswith("--models="):
            return token.partition("=")[2]
        if not token.startswith("-"):  # the command: its options are its own
            return None
    return None


def _use_models(folder: str) -> str | None:
    """Point this process (and the notebooks it runs) at the models folder ``folder``
    through ``$BPARALLEL_MODELS``; the error, if it cannot."""
    path = Path(folder).expanduser().resolve()
    if not path.is_dir():
        return f"--models {folder}: not a folder"
    os.environ[MODELS_ENV] = str(path)
    from ...transformer import shipped

    if shipped.MODELS_ROOT != path:  # imported before: its defaults are bound
        return (f"--models {folder}: bparallel.transformer.shipped was imported before, "
                f"reading {shipped.MODELS_ROOT}; set ${MODELS_ENV} instead")
    return None


MAIN_EPILOG = """\
examples:
  python -m bparallel train --profile quick --out-dir runs/quick
  python -m bparallel train --profile induction-fresh --tasks induction --heads 4 \\
      --layers 2 --no-probes --out-dir runs/small     # fresh data, a 2-layer model
  python -m bparallel evaluate --profile quick --run-dir runs/quick --out-dir results/quick
  python -m bparallel sweep --profile paper --seeds 43 44 --jobs 2 --threads 1
  python -m bparallel regress --profile quick         # the notebooks against their references
  python -m bparallel findings --check                # is README.md's findings table current?
  python -m bparallel record --check                  # are the recorded measures current?
  python -m bparallel pilot settling                  # what chapter 12's settling pilot reads
"""


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="python -m bparallel", formatter_class=argparse.RawDescriptionHelpFormatter,
        description=f"The command line of bparallel: {', '.join(COMMANDS)}\n"
                    "(`python -m bparallel COMMAND --help` for each).",
        epilog=MAIN_EPILOG)
    parser.add_argument(
        "--models", metavar="DIR", dest="models_root",
        help=f"the models folder (default: ${MODELS_ENV}, else models/ of the checkout the "
             "package runs from); given before the command, it sets that variable for the "
             "notebooks the command runs too")
    sub = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")
    for name, (help_text, add, _) in COMMANDS.items():
        add(sub.add_parser(name, help=help_text, description=help_text))
    return parser


def main(argv: list[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else list(argv)
    folder = _models_option(argv)
    problem = None if folder is None else _use_models(folder)  # before the parser imports
    parser = build_parser()
    if problem:
        parser.error(problem)
    args = parser.parse_args(argv)
    if args.command in ("train", "evaluate", "sweep"):
        _check_profile(parser, args.profile, fresh=args.command in ("train", "sweep"))
    try:
        return COMMANDS[args.command][2](args)
    except (ValueError, FileNotFoundError) as err:
        print(f"python -m bparallel {args.command}: error: {err}", file=sys.stderr)
        return 2
    except BrokenPipeError:  # the reader of our output went away (`... --status | head`)
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return 0


if __name__ == "__main__":
    sys.exit(main())
