"""scripts/train_paper.sh: a worker trains only the models it is given, and never one that
another worker holds (run in a scratch copy of the tree; nothing is trained)."""

from __future__ import annotations

import fcntl
import shutil
import subprocess
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def _tree(tmp_path: Path) -> Path:
    (tmp_path / "scripts").mkdir()
    shutil.copy(ROOT / "scripts" / "train_paper.sh", tmp_path / "scripts")
    return tmp_path


def _run(tree: Path, models: str) -> subprocess.CompletedProcess:
    return subprocess.run(["bash", str(tree / "scripts" / "train_paper.sh")], cwd=tree,
                          env={"PATH": "/usr/bin:/bin", "MODELS": models},
                          capture_output=True, text=True, timeout=60)


def test_unknown_model_names_are_refused_before_any_work(tmp_path):
    tree = _tree(tmp_path)
    out = _run(tree, "copy-h08 copy-h99")
    assert out.returncode == 2
    assert "unknown model 'copy-h99'" in out.stderr and "cycle-h16" in out.stderr
    assert "training" not in out.stdout


def test_a_model_locked_by_another_worker_is_skipped(tmp_path):
    tree = _tree(tmp_path)
    lock = tree / "runs" / "paper" / ".copy-h08.lock"
    lock.parent.mkdir(parents=True)
    with open(lock, "w") as held:
        fcntl.flock(held, fcntl.LOCK_EX)  # "another worker" trains copy-h08
        out = _run(tree, "copy-h08")
    assert out.returncode == 0, out.stderr
    assert "copy-h08: another worker is training it; skipping" in out.stdout
    assert "training (resumes" not in out.stdout
