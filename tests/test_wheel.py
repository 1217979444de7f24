"""The package as a dependency: the wheel built from the repository holds every subpackage
and runs from outside the checkout (``python -m bparallel --help``, every module imported,
the README's first example), reads models only from a stated folder, and carries one
version (``bparallel.__version__``, ``CITATION.cff``, ``CHANGELOG.md``)."""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
import tomllib
import zipfile
from pathlib import Path

import pytest

import bparallel
from bparallel.book.tools import cli
from bparallel.transformer import shipped
from tests.myst import MYST_HEADER

ROOT = Path(__file__).resolve().parents[1]
PACKAGES = sorted(".".join(p.parent.relative_to(ROOT).parts)
                  for p in (ROOT / "bparallel").rglob("__init__.py"))
MODULES = sorted(".".join(p.relative_to(ROOT).with_suffix("").parts).removesuffix(".__init__")
                 for p in (ROOT / "bparallel").rglob("*.py") if p.stem != "__main__")


def _readme_example(n: int) -> str:
    """The ``n``-th ```python block of README.md."""
    return re.findall(r"```python\n(.*?)```", (ROOT / "README.md").read_text(), re.S)[n]


def _page_example(n: int) -> str:
    """The ``n``-th code cell of the book's "use the package" page (book/use.md), its
    ``:tags:`` line left out."""
    cells = re.findall(r"```\{code-cell\} ipython3\n(.*?)```", (ROOT / "book" / "use.md")
                       .read_text(encoding="utf-8"), re.S)
    return re.sub(r"\A:tags:.*\n", "", cells[n])


# --------------------------------------------------------------------------- one version


def test_one_version_in_code_citation_and_changelog():
    cff = re.search(r"^version: (\S+)$", (ROOT / "CITATION.cff").read_text(), re.M)
    released = re.findall(r"^## (\d+\.\d+\.\d+)", (ROOT / "CHANGELOG.md").read_text(), re.M)
    assert cff and cff.group(1) == bparallel.__version__
    assert released and released[0] == bparallel.__version__
    pyproject = tomllib.loads((ROOT / "pyproject.toml").read_text())
    assert "version" not in pyproject["project"]  # one place, not two
    assert pyproject["project"]["dynamic"] == ["version"]
    assert pyproject["tool"]["setuptools"]["dynamic"]["version"] == {
        "attr": "bparallel.__version__"}


def test_license_matches_pyproject_and_citation():
    assert (ROOT / "LICENSE").read_text().startswith("MIT License")
    assert 'license = "MIT"' in (ROOT / "pyproject.toml").read_text()
    assert re.search(r"^license: MIT$", (ROOT / "CITATION.cff").read_text(), re.M)


def test_dependencies_are_ranges_and_the_pins_stay_in_requirements():
    project = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
    declared = project["dependencies"] + sum(project["optional-dependencies"].values(), [])
    assert not [d for d in declared if "==" in d]
    assert {"pandas", "matplotlib", "papermill"} <= {
        re.split(r"[<>=\[]", d)[0] for d in project["optional-dependencies"]["book"]}
    assert re.search(r"^torch==", (ROOT / "requirements.txt").read_text(), re.M)


# --------------------------------------------------------------------------- the models folder


def test_models_folder_from_the_environment_then_the_checkout_never_site_packages(tmp_path):
    site = tmp_path / "site-packages"
    (site / "models").mkdir(parents=True)  # even a models/ there is not read
    assert not shipped.is_checkout(site)
    assert shipped.find_models_root({}, site) is None
    assert shipped.find_models_root({}, ROOT) == ROOT / "models"
    elsewhere = tmp_path / "my-models"
    env = {shipped.MODELS_ENV: str(elsewhere)}
    assert shipped.find_models_root(env, ROOT) == elsewhere.resolve()
    assert shipped.find_models_root({shipped.MODELS_ENV: ""}, site) is None


def test_a_missing_manifest_says_how_to_name_the_models_folder(tmp_path):
    with pytest.raises(FileNotFoundError, match=r"no shipped models: .*BPARALLEL_MODELS"):
        shipped.load_shipped(tmp_path)


def test_cli_models_option_is_read_before_the_command_only():
    assert cli.MODELS_ENV == shipped.MODELS_ENV
    assert cli._models_option(["--models", "m", "regress"]) == "m"
    assert cli._models_option(["--models=m", "regress"]) == "m"
    assert cli._models_option(["sweep", "--models", "m"]) is None  # the command's own
    assert cli._models_option(["regress"]) is None


def test_cli_models_option_refuses_a_missing_folder(tmp_path):
    out = subprocess.run([sys.executable, "-m", "bparallel", "--models", str(tmp_path / "no"),
                          "findings", "--check"], capture_output=True, text=True, cwd=ROOT)
    assert out.returncode == 2 and "not a folder" in out.stderr


# --------------------------------------------------------------------------- the wheel


@pytest.fixture(scope="module")
def installed(tmp_path_factory) -> tuple[Path, Path]:
    """The wheel built from a copy of the sources (offline, this environment's setuptools)
    and installed without dependencies into a clean folder: ``(wheel, site)``."""
    tmp = tmp_path_factory.mktemp("wheel")
    src = tmp / "src"
    shutil.copytree(ROOT / "bparallel", src / "bparallel",
                    ignore=shutil.ignore_patterns("__pycache__", "*.pyc"))
    for name in ("pyproject.toml", "README.md", "LICENSE"):
        shutil.copy2(ROOT / name, src / name)
    pip = [sys.executable, "-m", "pip", "--disable-pip-version-check", "-q"]
    subprocess.run([*pip, "wheel", "--no-deps", "--no-build-isolation", "--no-index",
                    "-w", str(tmp / "dist"), str(src)], check=True, capture_output=True)
    (wheel,) = (tmp / "dist").glob("bparallel-*.whl")
    subprocess.run([*pip, "install", "--no-deps", "--no-index", "--target", str(tmp / "site"),
                    str(wheel)], check=True, capture_output=True)
    return wheel, tmp / "site"


def _run(site: Path, *args: str, env: dict[str, str] | None = None):
    """Run the installed copy from a folder outside the checkout (no $BPARALLEL_MODELS)."""
    base = {k: v for k, v in os.environ.items() if k != shipped.MODELS_ENV}
    base["PYTHONPATH"] = str(site)
    outside = site.parent / "elsewhere"
    outside.mkdir(exist_ok=True)
    return subprocess.run([sys.executable, *args], capture_output=True, text=True,
                          cwd=outside, env={**base, **(env or {})})


@pytest.mark.slow
def test_wheel_holds_every_package_its_data_version_and_license(installed):
    wheel, _ = installed
    with zipfile.ZipFile(wheel) as z:
        names = set(z.namelist())
    in_wheel = {n.removesuffix("/__init__.py").replace("/", ".") for n in names
                if n.endswith("/__init__.py")}
    assert in_wheel == set(PACKAGES)
    assert {f"bparallel/book/render/js/{p.name}"
            for p in (ROOT / "bparallel/book/render/js").iterdir()} <= names
    assert f"bparallel-{bparallel.__version__}-py3-none-any.whl" == wheel.name
    assert any(n.endswith(".dist-info/licenses/LICENSE") for n in names)


@pytest.mark.slow
def test_installed_wheel_runs_from_outside_the_checkout(installed):
    _, site = installed
    out = _run(site, "-m", "bparallel", "--help")
    assert out.returncode == 0, out.stderr
    assert all(c in out.stdout for c in cli.COMMANDS)
    code = ("import importlib, bparallel\n"
            f"assert bparallel.__file__.startswith({str(site)!r}), bparallel.__file__\n"
            f"for m in {MODULES!r}: importlib.import_module(m)\n"
            + _readme_example(0))
    out = _run(site, "-c", code)
    assert out.returncode == 0, out.stderr
    # the "use the package" page's first example: your own DAG, its mixing times, fidelity
    # and the proxies (what it prints is the page's; the values are tested in theory/)
    out = _run(site, "-c", _page_example(0))
    assert out.returncode == 0, out.stderr
    assert "mixing time" in out.stdout, out.stdout


@pytest.mark.slow
def test_installed_wheel_reads_models_only_from_a_stated_folder(installed):
    _, site = installed
    code = ("from bparallel.transformer.shipped import load_shipped\n"
            "models, metas = load_shipped()\n"
            "print(len(models), models[('copy', 16)].config.n_heads)\n")
    out = _run(site, "-c", code)
    assert out.returncode != 0
    assert "not a checkout and $BPARALLEL_MODELS is not set" in out.stderr
    out = _run(site, "-c", code, env={shipped.MODELS_ENV: str(ROOT / "models")})
    assert out.returncode == 0, out.stderr
    assert out.stdout.split() == ["8", "16"]
    out = _run(site, "-m", "bparallel", "--models", str(ROOT / "models"), "pilot", "--help")
    assert out.returncode == 0, out.stderr


CHAPTER = MYST_HEADER + """
# A chapter of my own

```{code-cell} ipython3
:tags: [parameters]
profile = "quick"
results_dir = "results"
scale = 2
```

```{code-cell} ipython3
from bparallel.book.render.results import save_results

save_results(results_dir, "mine", {"answer": 21 * scale})
```
"""


@pytest.mark.slow
def test_installed_wheel_runs_the_regression_of_a_chapter_outside_the_checkout(installed,
                                                                                tmp_path):
    """``regress --root``: a folder of one's own (notebooks/, reference/), run by the
    installed package from outside the checkout: --update writes the reference, a second
    run passes, and a changed parameter fails naming the key (the smallest change it sees:
    above the default tolerance, 1e-12 + 1e-9 relative)."""
    _, site = installed
    mine = tmp_path / "my-chapters"
    (mine / "notebooks").mkdir(parents=True)
    (mine / "notebooks" / "mine.md").write_text(CHAPTER)
    regress = ["-m", "bparallel", "regress", "--root", str(mine), "--notebooks", "mine",
               "--output-dir", str(tmp_path / "out"), "--jobs", "1"]
    out = _run(site, *regress, "--update")
    assert out.returncode == 0, out.stdout + out.stderr
    reference = mine / "reference" / "quick" / "mine.json"
    assert json.loads(reference.read_text())["answer"]["value"] == 42
    out = _run(site, *regress)
    assert out.returncode == 0 and "1 passed, 0 failed" in out.stdout, out.stdout + out.stderr
    out = _run(site, *regress, "-p", "scale", "3")
    assert out.returncode == 1, out.stdout + out.stderr
    assert re.search(r"^answer +42 +63 .*FAIL$", out.stdout, re.M), out.stdout
    out = _run(site, "-m", "bparallel", "regress", "--root", str(tmp_path / "none"))
    assert out.returncode == 2 and "has no notebooks/ folder" in out.stderr
