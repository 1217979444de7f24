"""An install of the theory alone, simulated: on ``PYTHONPATH`` this folder makes every
module outside the theory's own dependencies (numpy, scipy, tqdm; pytest and hypothesis to
test) unimportable, as on a ``pip install bparallel`` without extras. Used by
``tests/test_theory_alone.py``; no test imports it."""

import importlib.abc
import sys

#: Top-level modules the theory must not need: the extras ``torch`` and ``book`` of
#: pyproject.toml and what they pull in.
BLOCKED = frozenset({
    "torch", "pandas", "matplotlib", "ipywidgets", "papermill", "jupytext", "myst_nb",
    "jupyter_book", "sphinx", "submitit", "IPython", "nbformat", "yaml", "psutil",
})
#: The layers above the theory.
BLOCKED_PACKAGES = ("bparallel.book", "bparallel.transformer")


class _Blocker(importlib.abc.MetaPathFinder):
    def find_spec(self, name, path=None, target=None):
        if name.split(".")[0] in BLOCKED or any(
                name == p or name.startswith(p + ".") for p in BLOCKED_PACKAGES):
            raise ModuleNotFoundError(f"No module named {name!r} (numpy-only install)",
                                      name=name)
        return None


sys.meta_path.insert(0, _Blocker())
