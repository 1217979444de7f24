"""The three layers of the package (theory <- Transformer <- book tooling), read from what a
fresh interpreter actually imports: the theory layer stands alone on numpy and scipy, and
no layer imports one above it."""

from __future__ import annotations

import ast
import json
import re
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
PACKAGE = ROOT / "bparallel"
THEORY = sorted(f"bparallel.{p.stem}" for p in PACKAGE.glob("*.py")
                if p.stem not in ("__main__",))
HEAVY = ("torch", "pandas", "matplotlib", "ipywidgets", "IPython", "submitit", "papermill")


def _imported_by(modules: list[str]) -> set[str]:
    """The top-level names in ``sys.modules`` after a fresh interpreter imports ``modules``."""
    code = (f"import importlib, json, sys\nfor m in {modules!r}: importlib.import_module(m)\n"
            "print(json.dumps(sorted({n.split('.')[0] for n in sys.modules})))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         check=True, cwd=ROOT)
    return set(json.loads(out.stdout))


def test_the_theory_layer_imports_without_torch_pandas_or_matplotlib():
    assert "bparallel.proxies" in THEORY and "bparallel.graphs" in THEORY  # the glob found them
    loaded = _imported_by([*THEORY, "bparallel.__main__"])
    assert not loaded & set(HEAVY), sorted(loaded & set(HEAVY))


def test_the_transformer_layer_imports_without_the_book_tools():
    mods = [f"bparallel.transformer.{p.stem}" for p in (PACKAGE / "transformer").glob("*.py")]
    loaded = _imported_by(mods)
    assert "torch" in loaded
    assert not loaded & {"pandas", "matplotlib", "ipywidgets", "IPython", "papermill"}


def _package_imports(path: Path, *, runtime: bool = False) -> set[str]:
    """The ``bparallel`` modules that ``path`` imports, resolved to absolute names. With
    ``runtime``: less the imports under ``if TYPE_CHECKING:`` (they never run), and a
    ``from package import name`` also names ``package.name`` (it may be a module)."""
    module = ".".join(path.relative_to(ROOT).with_suffix("").parts)
    package = module.rsplit(".", 1)[0] if path.name != "__init__.py" else module
    tree = ast.parse(path.read_text())
    if runtime:
        for node in ast.walk(tree):
            if isinstance(node, ast.If) and getattr(node.test, "id", None) == "TYPE_CHECKING":
                node.body = []
    found = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom):
            if node.level:
                base = package.split(".")
                base = base[: len(base) - node.level + 1]
                name = ".".join([*base, node.module] if node.module else base)
            else:
                name = node.module or ""
            if name.startswith("bparallel"):
                found.add(name)
                if runtime:
                    found |= {f"{name}.{a.name}" for a in node.names}
        elif isinstance(node, ast.Import):
            found |= {a.name for a in node.names if a.name.startswith("bparallel")}
    return found


def _layer(module: str) -> int:
    if module.startswith("bparallel.book"):
        return 2
    if module.startswith("bparallel.transformer"):
        return 1
    return 0


@pytest.mark.parametrize("path", sorted(PACKAGE.rglob("*.py")), ids=lambda p: p.name)
def test_no_module_imports_a_layer_above_its_own(path):
    module = ".".join(path.relative_to(ROOT).with_suffix("").parts)
    if module == "bparallel.__main__":  # the entry point runs the CLI of the book layer
        return
    above = {m for m in _package_imports(path) if _layer(m) > _layer(module)}
    assert not above, f"{module} imports {sorted(above)} from a layer above its own"


def test_array_checks_name_the_argument_and_the_shape():
    import numpy as np

    from bparallel._checks import finite_array, square_matrices

    with pytest.raises(ValueError, match=r"W has shape \(3, 4\): expected square matrices"):
        square_matrices(np.zeros((3, 4)), "W")
    with pytest.raises(ValueError, match=r"W_heads has shape \(2, 3, 3\).*\(num, H, n, n\)"):
        square_matrices(np.zeros((2, 3, 3)), "W_heads", layout="(num, H, n, n)", ndim=4)
    with pytest.raises(ValueError, match="with n >= 2"):
        square_matrices(np.zeros((1, 1)), "W", min_n=2)
    assert square_matrices([[1, 0], [0, 1]], "W").dtype == np.float64
    with pytest.raises(ValueError, match="x contains NaN"):
        finite_array([1.0, np.nan], "x")
    with pytest.raises(ValueError, match=r"x has negative entries \(x\[1\] = -1\)"):
        finite_array([1.0, -1.0], "x", nonnegative=True)
    kept = finite_array(np.ones(2, dtype=np.float32), "x", keep_float32=True)
    assert kept.dtype == np.float32
    assert finite_array(np.ones(2, dtype=np.float32), "x").dtype == np.float64


def test_inline_membership_checks_go_through_one_of():
    """No ``if x not in VALID: raise`` left in the package: membership checks call
    ``_checks.one_of`` (the command line's parser errors and Tables-only guards aside)."""
    import re

    pattern = re.compile(r"if (\w+) not in [A-Z_]+:\n\s*raise ValueError\(\s*f\"\1=")
    found = [str(p.relative_to(ROOT)) for p in PACKAGE.rglob("*.py")
             if pattern.search(p.read_text())]
    assert not found, found


def test_every_room_of_the_book_layer_is_named_where_it_says_what_goes_there():
    """The book layer's docstring says where a new helper goes; each of its modules and
    folders is named there (a module nobody lists is a room a newcomer cannot find)."""
    import bparallel.book as book

    doc = book.__doc__
    names = [p.stem for p in (ROOT / "bparallel" / "book").glob("*.py")
             if p.stem != "__init__"]
    names += [p.name for p in (ROOT / "bparallel" / "book").iterdir()
              if p.is_dir() and (p / "__init__.py").is_file()]
    missing = [n for n in names if f"``{n}``" not in doc and f"book.{n}`" not in doc]
    assert not missing, f"bparallel/book/__init__.py does not name {missing}"


def test_the_api_page_names_modules_that_exist_and_every_book_module():
    """book/api.md documents or lists every module of the book layer, by its real name."""
    import importlib
    import re

    text = (ROOT / "book" / "api.md").read_text(encoding="utf-8")
    named = set(re.findall(r"bparallel\.book(?:\.[a-z_0-9]+)+", text))
    for name in sorted(named):
        importlib.import_module(name)  # a stale name fails here
    modules = {f"bparallel.book.{p.stem}" for p in (ROOT / "bparallel" / "book").glob("*.py")
               if p.stem != "__init__"}
    modules |= {f"bparallel.book.section4.{p.stem}"
                for p in (ROOT / "bparallel" / "book" / "section4").glob("*.py")
                if p.stem != "__init__"}
    missing = sorted(modules - named)
    assert not missing, f"book/api.md neither documents nor lists {missing}"


def test_every_chapter_of_section_4_has_its_module_named_after_its_file():
    """A newcomer finds a chapter's code from the chapter's file name: notebooks/NN_<name>.md
    of chapters 07-14 -> bparallel/book/section4/<name>.py, and the package's docstring
    names each of its modules."""
    import bparallel.book.section4 as section4

    names = {"07_training": "training", "08_proxies": "proxies",
             "09_amplification": "amplification", "10_section4_as_defined": "as_defined",
             "11_across_seeds": "across_seeds", "12_graph_tasks": "graph_tasks",
             "13_circuit": "circuit", "14_explorer": "explorer"}
    folder = ROOT / "bparallel" / "book" / "section4"
    for notebook, module in names.items():
        assert (ROOT / "notebooks" / f"{notebook}.md").is_file(), notebook
        assert (folder / f"{module}.py").is_file(), module
    stems = [p.stem for p in folder.glob("*.py") if p.stem != "__init__"]
    missing = [s for s in stems if f"``{s}``" not in section4.__doc__]
    assert not missing, f"bparallel/book/section4/__init__.py does not name {missing}"


#: What the rendering room may import from the rest of the book layer, with the reason: the
#: closed verdict vocabulary (a verdict cell is rendered from it) and the book's rules of
#: wording (a number in a cell or a glued number is written by them); neither is a chapter's
#: science, and neither imports anything of the book.
RENDER_MAY_IMPORT = {
    "bparallel.book.verdicts": "the verdict vocabulary a table cell renders",
    "bparallel.book.words": "numbers written as a reader writes them (fmt_sig)",
}


@pytest.mark.parametrize("path", sorted((PACKAGE / "book" / "render").rglob("*.py")),
                         ids=lambda p: p.stem)
def test_the_rendering_room_imports_no_chapter_science(path):
    """``bparallel.book.render`` draws and writes what a chapter gives it (issue #35, item
    4): it imports nothing of the book layer outside itself but :data:`RENDER_MAY_IMPORT`,
    so no import runs back up from the rendering room to a chapter's science."""
    outside = {m for m in _package_imports(path)
               if m.startswith("bparallel.book") and not m.startswith("bparallel.book.render")
               and m not in RENDER_MAY_IMPORT and m != "bparallel.book"}
    assert not outside, f"{path.name} imports {sorted(outside)}"


def test_the_book_layer_has_no_import_cycle():
    """No cycle among the book layer's modules (imports under ``TYPE_CHECKING`` excluded:
    they never run)."""
    graph = {}
    for path in sorted((PACKAGE / "book").rglob("*.py")):
        module = ".".join(path.relative_to(ROOT).with_suffix("").parts)
        module = module.removesuffix(".__init__")
        graph[module] = {m for m in _package_imports(path, runtime=True)
                         if m.startswith("bparallel.book")
                         and m != module}
    cycles = _cycles(graph)
    assert not cycles, f"import cycles: {cycles}"


def _cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """The cycles a depth-first walk of ``graph`` (node -> the nodes it imports) meets, each
    as the path that closes it; names outside ``graph`` are leaves."""
    seen: set[str] = set()
    stack: list[str] = []
    cycles: list[list[str]] = []

    def visit(m: str) -> None:
        if m in stack:
            cycles.append([*stack[stack.index(m):], m])
            return
        if m in seen or m not in graph:
            return
        seen.add(m)
        stack.append(m)
        for n in sorted(graph[m]):
            visit(n)
        stack.pop()

    for m in sorted(graph):
        visit(m)
    return cycles


def test_the_cycle_finder_finds_cycles():
    assert _cycles({"a": {"b"}, "b": {"c"}, "c": set()}) == []
    assert _cycles({"a": {"b"}, "b": {"c"}, "c": {"a"}}) == [["a", "b", "c", "a"]]
    assert _cycles({"a": {"a"}}) == [["a", "a"]]
    assert _cycles({"a": {"x"}}) == []  # x is outside the graph: a leaf


#: The most lines a module of the package may have (issue #35): past it, a module holds more
#: than one idea and a newcomer cannot read it in one sitting.
MAX_MODULE_LINES = 600


def test_no_module_is_over_600_lines():
    root = PACKAGE
    long = {p.relative_to(root).as_posix(): n for p in root.rglob("*.py")
            if (n := len(p.read_text().splitlines())) > MAX_MODULE_LINES}
    assert not long, f"modules over {MAX_MODULE_LINES} lines: {long}"


# --------------------------------------------------------------------------- the Transformer floor


def _floor_order() -> list[str]:
    """The Transformer floor's modules in the order its package map
    (``bparallel/transformer/__init__.py``) names them: each may import only those before."""
    doc = ast.get_docstring(ast.parse((PACKAGE / "transformer" / "__init__.py").read_text()))
    order: list[str] = []
    for name in re.findall(r"bparallel\.transformer\.(\w+)", doc):
        if name not in order and (PACKAGE / "transformer" / f"{name}.py").is_file():
            order.append(name)
    return order


def test_the_transformer_package_map_names_every_module_of_the_floor():
    modules = {p.stem for p in (PACKAGE / "transformer").glob("*.py")} - {"__init__"}
    assert set(_floor_order()) == modules


def test_the_transformer_floor_imports_only_down_its_package_map():
    """Each module of ``bparallel/transformer/`` imports only modules its package map lists
    before it: imports run one way, so the floor has no circle and nothing imports upwards
    (measuring never imports a run's design or training)."""
    order = _floor_order()
    wrong = {}
    for i, name in enumerate(order):
        imported = {m.rsplit(".", 1)[-1] for m in
                    _package_imports(PACKAGE / "transformer" / f"{name}.py", runtime=True)
                    if m.startswith("bparallel.transformer.")}
        later = sorted(imported & set(order[i + 1:]))
        if later:
            wrong[name] = later
    assert not wrong, f"imports up the Transformer floor's order: {wrong}"
    assert order.index("measure") < order.index("design") < order.index("train")


def _function_level_imports(path: Path) -> list[str]:
    """The package imports (``bparallel`` or relative) that ``path`` makes inside a function."""
    found = []
    for fn in ast.walk(ast.parse(path.read_text())):
        if not isinstance(fn, (ast.FunctionDef, ast.AsyncFunctionDef)):
            continue
        for node in ast.walk(fn):
            if isinstance(node, ast.ImportFrom) and (node.level or
                                                     (node.module or "").startswith("bparallel")):
                found.append(f"{fn.name}: from {'.' * node.level}{node.module or ''}")
            elif isinstance(node, ast.Import) and any(a.name.startswith("bparallel")
                                                      for a in node.names):
                found.append(f"{fn.name}: import")
    return found


def test_no_module_outside_the_book_imports_the_package_inside_a_function():
    """An import inside a function hides a dependency from the import drawing (and held the
    old Transformer circle together); outside the book layer there are none."""
    hidden = {p.relative_to(PACKAGE).as_posix(): found
              for p in sorted(PACKAGE.rglob("*.py"))
              if not p.relative_to(PACKAGE).parts[0] == "book"
              and (found := _function_level_imports(p))}
    assert not hidden, f"package imports inside functions: {hidden}"


def test_the_function_level_import_finder_finds_them(tmp_path):
    src = tmp_path / "m.py"
    src.write_text("import os\n\ndef f():\n    import json\n    from .x import y\n"
                   "    from bparallel import proxies\n")
    assert _function_level_imports(src) == ["f: from .x", "f: from bparallel"]


def test_the_whole_package_has_no_import_cycle():
    graph = {}
    for path in sorted(PACKAGE.rglob("*.py")):
        module = ".".join(path.relative_to(ROOT).with_suffix("").parts).removesuffix(".__init__")
        graph[module] = {m for m in _package_imports(path, runtime=True)
                         if m != module and m != "bparallel"}
    assert not _cycles(graph), f"import cycles: {_cycles(graph)}"


def test_no_name_of_the_transformer_floor_has_a_fresh_twin():
    """One name per idea: no public ``X`` beside ``fresh_X`` or ``X_fresh`` (the two kinds of
    training are one loop, one checkpoint reader, one ship). The two profile classes,
    ``Profile`` and ``FreshProfile``, are two kinds of one protocol (``Recipe``, whose fields
    they share), as the two checkpoint kinds are (``RunCheckpoint``)."""
    names = set()
    for path in (PACKAGE / "transformer").glob("*.py"):
        for node in ast.parse(path.read_text()).body:
            if isinstance(node, (ast.FunctionDef, ast.ClassDef)):
                names.add(node.name)
            elif isinstance(node, ast.Assign):
                names |= {t.id for t in node.targets if isinstance(t, ast.Name)}
    public = {n for n in names if not n.startswith("_")}
    twins = sorted(n for n in public
                   if (base := re.sub(r"^fresh_|_fresh$", "", n, flags=re.I)) != n
                   and base in public)
    assert not twins, f"names with a fresh twin: {twins}"


def test_the_package_cites_equations_not_issues():
    """Docstrings and comments say what and why; which issue asked for a change belongs in
    the git history."""
    cited = {p.relative_to(PACKAGE).as_posix(): hits for p in sorted(PACKAGE.rglob("*"))
             if p.suffix in (".py", ".mjs", ".css")
             and (hits := re.findall(r"[Ii]ssues? #?\d+", p.read_text()))}
    assert not cited, f"issue numbers in the package: {cited}"


def test_the_javascript_modules_import_one_way_by_idea():
    """The widgets' modules, one idea each (mathematics, random numbers, the playground's
    state and links, Python export, the training page's model, then each interface), import
    only modules before them in the inlining order; the model explorer's maths imports the
    mathematics, never the playground's state or interface."""
    from bparallel.book.render.js_playground import JS_DIR
    from bparallel.book.render.js_playground import SOURCES as PLAYGROUND
    from bparallel.book.render.js_trainer import TRAINER_SOURCES as TRAINER
    from bparallel.book.section4.explorer import SOURCES as EXPLORER

    def imports(name: str) -> set[str]:
        text = (JS_DIR / name).read_text()
        return {f"{m}.mjs" for m in re.findall(r'^import \{[^}]*\} from "\./(\w+)\.mjs";',
                                               text, re.M)}

    for sources in (PLAYGROUND, EXPLORER, TRAINER):
        modules = [n for n in sources if n.endswith(".mjs")]
        for i, name in enumerate(modules):
            assert imports(name) <= set(modules[:i]), (name, imports(name))
    assert imports("toydag.mjs") == set()
    assert imports("transformer.mjs") == {"toydag.mjs", "random.mjs"}
    # the training page's model: the explorer's model format (FORMAT, half floats), no interface
    assert imports("tinytrain.mjs") == {"random.mjs", "transformer.mjs"}
    assert len((JS_DIR / "toydag.mjs").read_text().splitlines()) <= MAX_MODULE_LINES


#: The file names the package uses more than once, each with its reason; every other name
#: is used once, so that a name says which file it means.
SAME_NAME = {
    "__init__": "a package's own file",
    "proxies": "chapter 08's module is named after its chapter (notebooks/08_proxies.md), as "
               "every Section 4 chapter's is; bparallel.proxies is the paper's Algorithms 1-2",
    "explorer": "one widget: its Python writes the page, its .mjs runs it, its .css styles it",
    "playground": "one widget: its Python writes the page, its .mjs runs it, its .css styles it",
    "trainer": "one widget: its .mjs runs the page, its .css styles it",
}


def test_no_file_name_is_used_twice_in_the_package():
    """Outside :data:`SAME_NAME`, no two files of the package share a name (suffix aside):
    the replication's comparison with the authors' checkpoints is ``authors_columns``, the
    checkpoints' loader ``transformer.authors``; the figures are ``plotting.trained`` and
    ``plotting.formation``, beside ``section4.models`` and ``section4.circuit``."""
    from collections import defaultdict

    files = defaultdict(list)
    for path in PACKAGE.rglob("*"):
        if path.suffix in (".py", ".mjs", ".js", ".css") and "__pycache__" not in path.parts:
            files[path.stem].append(path.relative_to(PACKAGE).as_posix())
    twice = {stem: sorted(paths) for stem, paths in files.items()
             if len(paths) > 1 and stem not in SAME_NAME}
    assert not twice, f"file names used twice: {twice}"
    unused = [stem for stem in SAME_NAME if len(files.get(stem, [])) < 2]
    assert not unused, f"SAME_NAME lists names used once: {unused}"


#: The modules of ``bparallel/book/section4`` that import inside a function, with the reason.
IMPORTS_INSIDE_FUNCTIONS = {
    "circuit_knockouts": "chapter 13's recorded knockouts are keyed by this module's code "
                         "(_code_key): moving its imports would re-key the record",
}


def test_the_section4_chapters_import_at_the_top():
    """A chapter's module names what it uses at its top (no cycle needs otherwise: the
    import-cycle tests above run on the modules as they are), outside
    :data:`IMPORTS_INSIDE_FUNCTIONS`."""
    inside = {}
    for path in sorted((PACKAGE / "book" / "section4").glob("*.py")):
        if path.stem in IMPORTS_INSIDE_FUNCTIONS:
            continue
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
                found = [s.lineno for s in ast.walk(node)
                         if isinstance(s, ast.Import | ast.ImportFrom)]
                if found:
                    inside.setdefault(path.name, []).extend(found)
    assert not inside, f"imports inside functions: {inside}"
