"""The training page as one HTML snippet: TensorFlow.js trains a tiny Transformer in the page.

The page's sources are ES modules of ``bparallel/book/render/js/``: ``tinytrain.mjs`` (the
model, the induction batches, the training run and the learning rule, written against
TensorFlow.js passed in as ``tf``) and ``trainer.mjs`` (the interface), with the explorer's
``transformer.mjs`` for the graph measures (Algorithm 1, Definition 3.5) and its
``explorer.mjs``, whose views open the trained models in the page; ``explorer.css`` and
``trainer.css`` after ``widget.css``. They are inlined as the playground's are
(:func:`~bparallel.book.render.js_playground.inline_modules`), so the page works from
``file://``.

TensorFlow.js is vendored by ``scripts/vendor_js.sh`` into ``book/_vendor/tfjs/`` (served as
``_static/tfjs/``): the union bundle ``tf.min.js`` (core with its gradients, and the CPU
backend), the WASM backend ``tf-backend-wasm.min.js``, and ``wasm-simd.js``, which holds the
backend's SIMD binary as a base64 data URI (a page opened from ``file://`` may not fetch a
``.wasm`` file; Emscripten decodes a data URI without a request). Classic ``<script>``
elements load them, which a ``file://`` page may do. Where the WASM backend cannot start, the
page trains on the CPU backend and says so.
"""

from __future__ import annotations

import html
import json
import re

from .js_playground import inline_modules, module_var, style_block

__all__ = ["TRAINER_SOURCES", "VENDOR_FILES", "trainer_script", "trainer_html"]

#: The inlined modules, in import order, then the stylesheet.
TRAINER_SOURCES = ("toydag.mjs", "random.mjs", "state.mjs", "python.mjs", "transformer.mjs",
                   "explorer.mjs", "tinytrain.mjs", "trainer.mjs", "explorer.css", "trainer.css")
#: The vendored TensorFlow.js files the page loads, under ``_static/tfjs/``, in order.
VENDOR_FILES = ("tf.min.js", "tf-backend-wasm.min.js", "wasm-simd.js")
#: The global that ``wasm-simd.js`` sets to the WASM backend's binary (a data URI).
WASM_GLOBAL = "__bpTfWasmSimd"


def trainer_script(element_id: str = "bp-trainer", *, steps: int | None = None) -> str:
    """The JavaScript of the page's ``<script type="module">``: the modules, then the mount
    call (``steps``: the step budget of each run; ``None``: the page's default)."""
    if steps is not None and (isinstance(steps, bool) or not isinstance(steps, int)
                              or steps < 1):
        raise ValueError(f"steps={steps!r}: must be a positive integer or None")
    modules = [n for n in TRAINER_SOURCES if n.endswith(".mjs")]
    defaults = {} if steps is None else {"steps": steps}
    parts = [
        f"// bparallel training page: bparallel/book/render/js/{{{','.join(modules)}}}, inlined",
        *inline_modules(modules),
        "if (!window.tf) { document.getElementById(" + json.dumps(element_id) + ").textContent = "
        "'TensorFlow.js did not load (the book\\'s _static/tfjs/ folder is missing): the page "
        "cannot train.'; } else {",
        f"{module_var('trainer')}.mountTrainer(document.getElementById({json.dumps(element_id)}),"
        f" {{ tf: window.tf, wasmUri: window.{WASM_GLOBAL}, defaults: {json.dumps(defaults)} }});",
        "}",
    ]
    script = "\n".join(parts)
    if re.search(r"</script|<!--", script, re.I):
        raise ValueError("the training page's sources contain '</script' or '<!--'")
    return script


def trainer_html(element_id: str = "bp-trainer", *, static: str = "../_static/",
                 steps: int | None = None) -> str:
    """One HTML fragment: styles, container, the vendored TensorFlow.js (from ``static``, the
    book's ``_static/`` folder relative to the page) and the page's module script."""
    if not isinstance(static, str) or not static.endswith("/"):
        raise ValueError(f"static={static!r}: must be a folder URL ending in '/'")
    scripts = "".join(f'<script src="{html.escape(static)}tfjs/{name}"></script>\n'
                      for name in VENDOR_FILES)
    noscript = "<noscript>The training page needs JavaScript.</noscript>"
    return (
        f"{style_block('explorer.css', 'trainer.css')}"
        f'<div id="{html.escape(element_id)}" class="bp-widget bp-tr" role="group" '
        f'aria-label="training page">{noscript}</div>\n'
        f"{scripts}"
        f'<script type="module">\n{trainer_script(element_id, steps=steps)}\n</script>\n'
    )
