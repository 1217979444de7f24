"""Fast checks of the book's frame, no build needed: toc, config, bibliography, vendored JS."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
import yaml

from bparallel.book.tools.toc import toc_files

ROOT = Path(__file__).resolve().parents[3]
CONFIG = yaml.safe_load((ROOT / "_config.yml").read_text())
SPHINX = CONFIG["sphinx"]["config"]
VENDOR = ROOT / "book" / "_vendor"


def test_toc_entries_exist():
    files = toc_files()
    assert len(files) == len(set(files)), f"_toc.yml lists a page twice: {files}"
    missing = [
        f for f in files if not any((ROOT / f"{f}{s}").is_file() for s in ("", ".md", ".ipynb"))
    ]
    assert not missing, f"_toc.yml lists pages that do not exist: {missing}"


def test_toc_has_the_planned_parts():
    """The parts of the book and their chapters, in order (more chapters may be added)."""
    toc = yaml.safe_load((ROOT / "_toc.yml").read_text())
    assert toc["format"] == "jb-book" and toc["root"] == "book/intro"
    parts = {p["caption"]: [c["file"] for c in p["chapters"]] for p in toc["parts"]}
    planned = {
        "Getting started": ["book/notation"],
        # each section's claims on graph ensembles follow that section's theory chapters
        "Section 2: Mixing time": ["notebooks/01_feedforward_graphs", "notebooks/02_mixing_time",
                                   "notebooks/03_mixing_claims"],
        "Section 3: Minimax fidelity": ["notebooks/04_minimax_fidelity", "notebooks/05_playground",
                                        "notebooks/06_fidelity_claims"],
        "Reproducibility": ["book/reproducibility"],
    }
    for caption, chapters in planned.items():
        assert caption in parts, f"_toc.yml has no part {caption!r}"
        present = [c for c in parts[caption] if c in chapters]
        assert present == chapters, f"part {caption!r}: {parts[caption]} lacks {chapters}"
    assert list(parts)[0] == "Getting started" and list(parts)[-1] == "Reproducibility"


def test_reading_order_is_file_order():
    """The sidebar lists the chapters in the order of their file numbers, so a reader who
    follows the book meets them as they are numbered (01, 02, ...), with no gap; a chapter's
    appendix pages (12a, 12b, ...) follow it in letter order."""
    chapters = [f.removeprefix("notebooks/") for f in toc_files() if f.startswith("notebooks/")]
    numbered = [c for c in chapters if c.split("_", 1)[0].isdigit()]
    numbers = [int(c.split("_", 1)[0]) for c in numbered]
    assert numbers == list(range(1, len(numbered) + 1)), chapters
    on_disk = sorted(p.stem for p in (ROOT / "notebooks").glob("[0-9][0-9]*_*.md"))
    assert chapters == on_disk, "every numbered notebook is in _toc.yml, in file order"


def test_execution_fails_on_errors_and_only_toc_pages_build():
    assert CONFIG["only_build_toc_files"] is True
    execute = CONFIG["execute"]
    assert execute["execute_notebooks"] == "cache"
    assert execute["allow_errors"] is False
    assert execute["timeout"] >= 600


def _strings(node):
    if isinstance(node, dict):
        for k, v in node.items():
            yield from _strings(k)
            yield from _strings(v)
    elif isinstance(node, list):
        for v in node:
            yield from _strings(v)
    elif isinstance(node, str):
        yield node


def test_config_loads_nothing_from_the_network():
    # addresses a reader may follow (links), never loaded by a page: the authors' code, the
    # book's own address and repository (the browser tests block and report any request)
    links = {SPHINX.get("bparallel_published_code_url"), CONFIG["html"]["baseurl"],
             CONFIG["repository"]["url"]}
    urls = [s for s in _strings(CONFIG) if "://" in s and s not in links]
    assert not urls, f"_config.yml names remote URLs: {urls}"
    assert "book/_vendor" in SPHINX["html_static_path"]
    assert "sphinx_thebe" not in SPHINX["extensions"], "sphinx_thebe loads thebe from unpkg"
    for ext in ("myst_nb", "sphinx_proof", "sphinxcontrib.bibtex", "jupyter_book"):
        assert ext in SPHINX["extensions"]
    assert CONFIG["bibtex_bibfiles"] == ["book/references.bib"]
    launch = CONFIG["launch_buttons"]
    assert not launch["thebe"] and not launch["binderhub_url"] and not launch["colab_url"]


def test_vendored_assets_named_in_config_exist():
    if not (VENDOR / ".stamp").is_file():
        pytest.fail(f"{VENDOR} is not populated: run `make setup` (scripts/vendor_js.sh)")
    wanted = [SPHINX["mathjax_path"], *SPHINX["nb_ipywidgets_js"]]
    missing = [p for p in wanted if not (VENDOR / p).is_file()]
    assert not missing, f"_config.yml names files that scripts/vendor_js.sh did not make: {missing}"
    # MathJax finds its fonts relative to its own URL.
    mathjax = VENDOR / SPHINX["mathjax_path"]
    assert list((mathjax.parent / "output" / "chtml" / "fonts" / "woff-v2").glob("*.woff"))
    # The order matters: require.js, then the path shim, then the widget manager.
    assert list(SPHINX["nb_ipywidgets_js"]) == [
        "requirejs/require.js",
        "jupyter-widgets/offline.js",
        "jupyter-widgets/embed-amd.js",
    ]


def test_offline_shim_maps_every_widget_module():
    """Every AMD module named in embed-amd.js must be mapped to the vendored folder, or its
    webpack public path (where its font files are) points at the page's own folder."""
    if not (VENDOR / ".stamp").is_file():
        pytest.fail(f"{VENDOR} is not populated: run `make setup` (scripts/vendor_js.sh)")
    bundle = (VENDOR / "jupyter-widgets" / "embed-amd.js").read_text()
    shim = (VENDOR / "jupyter-widgets" / "offline.js").read_text()
    defined = set(re.findall(r'define\("(@jupyter-widgets/[^"]+)"', bundle))
    assert "@jupyter-widgets/html-manager/dist/libembed-amd" in defined
    unmapped = [name for name in sorted(defined) if f'"{name}"' not in shim]
    assert not unmapped, f"offline.js does not map {unmapped}"
    assert "data-jupyter-widgets-cdn" in shim


def test_npm_versions_pinned_and_locked():
    package = json.loads((ROOT / "package.json").read_text())
    lock = json.loads((ROOT / "package-lock.json").read_text())
    deps = package["dependencies"]
    assert set(deps) == {"mathjax", "requirejs", "@jupyter-widgets/html-manager",
                         "@tensorflow/tfjs", "@tensorflow/tfjs-backend-wasm"}
    assert deps["mathjax"].startswith("3.")
    for name, version in deps.items():
        assert re.fullmatch(r"\d+\.\d+\.\d+", version), f"{name}@{version} is not pinned exactly"
        assert lock["packages"][f"node_modules/{name}"]["version"] == version, (
            f"package-lock.json is stale for {name}: run `npm install --package-lock-only`"
        )
    assert lock["packages"][""]["dependencies"] == deps


def test_vendored_tensorflow_js_fits_its_budget_and_inlines_the_package_binary():
    """The training page's TensorFlow.js adds at most 5 MB to the book (smallest effect: one
    byte over), and ``wasm-simd.js`` decodes to the WASM backend's SIMD binary byte for byte,
    so the page runs the package's code and not a stale copy."""
    import base64

    tfjs = VENDOR / "tfjs"
    if not (VENDOR / ".stamp").is_file():
        pytest.fail(f"{VENDOR} is not populated: run `make setup` (scripts/vendor_js.sh)")
    total = sum(f.stat().st_size for f in tfjs.iterdir() if f.is_file())
    assert total <= 5 * 1024 * 1024, f"book/_vendor/tfjs holds {total} bytes"
    text = (tfjs / "wasm-simd.js").read_text()
    uri = re.search(r'"data:application/octet-stream;base64,([A-Za-z0-9+/=]+)"', text)
    assert uri is not None
    binary = ROOT / "node_modules" / "@tensorflow" / "tfjs-backend-wasm" / "dist" / \
        "tfjs-backend-wasm-simd.wasm"
    assert base64.b64decode(uri.group(1)) == binary.read_bytes()
    assert "Apache License" in (tfjs / "LICENSE.txt").read_text()


# ------------------------------------------------------------------------------ bibliography
PAPER_REFERENCES = {  # key: (first author's surname, year), as in the paper's reference list
    "brown2020": ("Brown", "2020"),
    "cheng2024": ("Cheng", "2024"),
    "horn1985": ("Horn", "1985"),
    "levin2017": ("Levin", "2017"),
    "vaswani2017": ("Vaswani", "2017"),
    "vitvitskyi2025": ("Vitvitskyi", "2025"),
    "voita2019": ("Voita", "2019"),
}


@pytest.fixture(scope="module")
def bib():
    from pybtex.database import parse_file

    return parse_file(str(ROOT / "book" / "references.bib"))


def test_references_bib_has_every_reference_of_the_paper(bib):
    for key, (surname, year) in PAPER_REFERENCES.items():
        assert key in bib.entries, f"references.bib lacks {key}"
        entry = bib.entries[key]
        assert entry.fields["year"] == year, f"{key}: year {entry.fields['year']} != {year}"
        first = entry.persons["author"][0]
        assert surname in " ".join(first.last_names), f"{key}: first author {first}"
        assert entry.fields.get("title"), f"{key}: no title"
    assert {"horn1985", "levin2017"} <= {k for k, e in bib.entries.items() if e.type == "book"}


def test_every_cited_key_exists(bib):
    sources = [*ROOT.glob("book/*.md"), *ROOT.glob("notebooks/*.md")]
    cited = set()
    for path in sources:
        for group in re.findall(r"\{cite(?::[a-z]+)?\}`([^`]+)`", path.read_text()):
            cited.update(k.strip() for k in group.split(","))
    unknown = sorted(cited - set(bib.entries))
    assert not unknown, f"cited but not in references.bib: {unknown}"
    assert set(PAPER_REFERENCES) <= cited, (
        f"never cited, so missing from the bibliography: {sorted(set(PAPER_REFERENCES) - cited)}"
    )


# ------------------------------------------------------------------------ package references
PY_ROLE = re.compile(r"\{(?:py:)?(mod|func|class|meth|attr|data|obj)\}`([^`]+)`")


def _resolve(target: str):
    import importlib

    parts = target.split(".")
    for cut in range(len(parts), 0, -1):
        try:
            obj = importlib.import_module(".".join(parts[:cut]))
        except ImportError:
            continue
        for name in parts[cut:]:
            obj = getattr(obj, name)
        return obj
    raise ImportError(target)


def test_package_names_in_the_text_exist():
    """The chapters name package objects with {mod}/{func} roles; there are no API pages to
    link to (see nitpick_ignore_regex in _config.yml), so check here that each name exists."""
    sources = [*ROOT.glob("book/*.md"), *ROOT.glob("notebooks/*.md")]
    bad = []
    for path in sources:
        for role, text in PY_ROLE.findall(path.read_text()):
            target = re.sub(r"^.*<(.+)>$", r"\1", text).lstrip("~!").strip()
            if not target.startswith("bparallel"):
                bad.append(f"{path.name}: {{{role}}}`{text}` is not a bparallel name")
                continue
            try:
                _resolve(target)
            except (ImportError, AttributeError) as err:
                bad.append(f"{path.name}: {{{role}}}`{text}` does not resolve ({err!r})")
    # the prose pages name functions as plain code, `fidelity.minimax_fidelity`
    modules = "|".join(p.stem for p in (ROOT / "bparallel").glob("*.py") if p.stem != "__init__")
    for path in ROOT.glob("book/*.md"):
        for name in re.findall(
            rf"`(?:bparallel\.)?((?:{modules})\.[A-Za-z_][\w.]*)", path.read_text()
        ):
            try:
                _resolve(f"bparallel.{name}")
            except (ImportError, AttributeError) as err:
                bad.append(f"{path.name}: `{name}` does not resolve ({err!r})")
    assert not bad, "\n".join(bad)


def test_sources_have_no_stray_control_characters():
    """A "\\t" or "\\b" typed in a Python string ends up as a control character in the page
    (``$T_{\\text{mix}}$`` once became a tab and "ext{mix}"): only newlines are allowed."""
    sources = [*ROOT.glob("notebooks/*.md"), *ROOT.glob("book/*.md"), ROOT / "README.md",
               *ROOT.glob("bparallel/*.py")]
    bad = []
    for path in sources:
        for n, line in enumerate(path.read_text().splitlines(), 1):
            if re.search(r"[\x00-\x08\x0b-\x1f\x7f]", line):
                bad.append(f"{path.relative_to(ROOT)}:{n}")
    assert not bad, f"control characters in {bad}"


def test_footer_year_is_the_books_release_year():
    """The footer's copyright year is the year CITATION.cff says this book was released."""
    cff = yaml.safe_load((ROOT / "CITATION.cff").read_text())
    assert str(CONFIG["copyright"]) == str(cff["date-released"])[:4]


def test_every_chapter_has_one_parameters_cell_hidden_on_the_page():
    """Papermill injects a chapter's parameters into the cell tagged ``parameters``; on the
    page that cell is removed (issue #35, item 6): cache and results paths teach a reader
    nothing. The reproducibility page says how to change them."""
    for path in sorted((ROOT / "notebooks").glob("*.md")):
        tags = re.findall(r"^:tags: \[([^\]]*)\]", path.read_text(encoding="utf-8"), re.M)
        with_parameters = [t for t in tags if "parameters" in [x.strip() for x in t.split(",")]]
        assert len(with_parameters) == 1, f"{path.name}: {len(with_parameters)} parameters cells"
        assert "remove-cell" in with_parameters[0], f"{path.name}: parameters cell shown"
