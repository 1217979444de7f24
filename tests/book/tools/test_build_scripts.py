"""scripts/exec_cache_stamp.sh: the fingerprint that decides when scripts/build_book.sh drops
the notebook execution cache (whose own key is the notebook text only)."""

import re
import subprocess
from pathlib import Path

ROOT = Path(__file__).resolve().parents[3]
STAMP = ROOT / "scripts" / "exec_cache_stamp.sh"


def _stamp(root: Path) -> str:
    out = subprocess.run(["bash", str(STAMP), str(root)], capture_output=True, text=True,
                         check=True).stdout.strip()
    assert re.fullmatch(r"[0-9a-f]{64}", out), out
    return out


def test_stamp_follows_the_package_and_the_shipped_models(tmp_path):
    (tmp_path / "bparallel" / "js").mkdir(parents=True)
    (tmp_path / "bparallel" / "proxies.py").write_text("x = 1\n")
    (tmp_path / "bparallel" / "js" / "toydag.mjs").write_text("export const a = 1;\n")
    first = _stamp(tmp_path)  # no models/paper/ yet: still a stamp
    assert _stamp(tmp_path) == first
    (tmp_path / "bparallel" / "proxies.py").write_text("x = 2\n")
    second = _stamp(tmp_path)
    assert second != first
    (tmp_path / "bparallel" / "js" / "toydag.mjs").write_text("export const a = 2;\n")
    third = _stamp(tmp_path)
    assert third != second
    (tmp_path / "models" / "paper").mkdir(parents=True)
    (tmp_path / "models" / "paper" / "manifest.json").write_text("{}\n")
    fourth = _stamp(tmp_path)
    assert fourth != third
    # chapter 12 reads the graph tasks' models (models/<task>/): a newly shipped one counts
    (tmp_path / "models" / "induction").mkdir()
    (tmp_path / "models" / "induction" / "induction-h16.weights.pt").write_bytes(b"w")
    fifth = _stamp(tmp_path)
    assert fifth != fourth
    fourth = fifth
    # Byte caches are not inputs.
    (tmp_path / "bparallel" / "__pycache__").mkdir()
    (tmp_path / "bparallel" / "__pycache__" / "proxies.cpython-311.pyc").write_bytes(b"\0")
    assert _stamp(tmp_path) == fourth


def test_build_book_drops_the_execution_cache_when_the_stamp_changes():
    text = (ROOT / "scripts" / "build_book.sh").read_text()
    assert "now=$(bash scripts/exec_cache_stamp.sh)" in text
    assert ('if [ -d _build/.jupyter_cache ] && { [ ! -f "$stamp" ] || '
            '[ "$(cat "$stamp")" != "$now" ]; }; then') in text
    assert "rm -rf _build/.jupyter_cache" in text
    # The stamp is written only once the build has succeeded (set -e), and the executed
    # notebooks are copied next to their pages after it.
    build = text.index(".venv/bin/jupyter-book build . --all -W -n --keep-going")
    stamp_write = text.index('echo "$now" > "$stamp"')
    downloads = text.index(".venv/bin/python -m bparallel.book.tools.downloads _build")
    assert build < stamp_write < downloads
    # Pages of renamed or split chapters do not linger: the output is cleared before the
    # full build (the execution cache stays).
    assert text.index("rm -rf _build/html _build/jupyter_execute") < build
    assert "set -euo pipefail" in text
