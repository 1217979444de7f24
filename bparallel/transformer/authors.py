"""The authors' eight published checkpoints, read into the book's Transformer.

The paper's authors released one trained model per task (copy, cycle) and head count (1, 4,
8, 16) in their public repository (``haitzsaezdeocariz/beyondparallelism``, commit
``0de5787e``, folder ``checkpoints/``), trained by their ``main.py`` with seed 42. The files
carry no licence, so they are never copied into this repository: a build reads them from a
directory it is given (:func:`checkpoint_dir`: an argument, else the environment variable
:data:`ENV`, else ``<repository>/../shared/published/checkpoints`` where that exists) and
checks each file against its SHA-256 (:data:`SHA256`, copied from the README that
accompanies them) before loading it with ``torch.load(..., weights_only=True)``.

Each file is a plain state dict of the authors' model, the architecture of Section 4.1 that
the book's :class:`~bparallel.transformer.model.Transformer` implements (token and learned
positional embeddings, four pre-norm blocks ``x + attn(rmsnorm(x))``, ``x + mlp(rmsnorm(x))``,
no final norm, a linear head). Only the names differ; :data:`KEY_MAP` maps them, and
:func:`book_state_dict` refuses a state dict with a key it cannot map or a missing one.

This module is not imported by the measuring code (:mod:`~bparallel.transformer.measure`),
so the metrics cache's and the recorded measures' keys do not depend on it.
"""

from __future__ import annotations

import os
import re
from collections.abc import Mapping
from pathlib import Path

import torch

from .checkpoints import read_torch_file, sha256_file
from .model import ModelConfig, Transformer

#: The environment variable that names the directory holding the authors' checkpoints.
ENV = "BPARALLEL_PUBLISHED_CHECKPOINTS"

#: The repository root, and where CI and the developers keep the checkpoints beside it.
ROOT = Path(__file__).resolve().parents[2]
DEFAULT_DIR = ROOT.parent / "shared" / "published" / "checkpoints"

#: Where the files come from, for the page and the recorded values' provenance.
SOURCE = ("the authors' repository haitzsaezdeocariz/beyondparallelism, commit "
          "0de5787e624f2cc4b274c87b93a6f6d662dee9ad, folder checkpoints/")

#: SHA-256 of each published checkpoint file (from the README that accompanies them).
SHA256: dict[str, str] = {
    "16_heads_copy.pt": "0de2dfa01e1a263c25e1ed28ffc6d298b86129d05b9984ff12115cd2ae5ca22c",
    "16_heads_cycle.pt": "733be35e05143fac18a8c998466d85fc6730c5aef83f75a8c565a8607bfc84a2",
    "1_heads_copy.pt": "301a874b10ac7e8381458f738be2748928ff67d5b69dad677d9ce47a8bc12904",
    "1_heads_cycle.pt": "6bf97d1c26f8c13bfdd0ea4aafbe017c806ce49ad67c9d781bb6794d452f4fd1",
    "4_heads_copy.pt": "ded0999c457ca3605b79bded66e271623765f2b8d55841306912e6143a74cf2b",
    "4_heads_cycle.pt": "882680ba5e12377641482c1a82d40026e357f46eacc697e057ee530910e6a333",
    "8_heads_copy.pt": "d2bca84e1e59778a9b13775fab745821ef1bafc053e51bef3f3a37bb4ab6f093",
    "8_heads_cycle.pt": "96ab0694ee8b1d3439423d74ea8cddfe26e8af89ad8fb51bd99d1137eee63b06",
}

_NAME = re.compile(r"^(?P<heads>\d+)_heads_(?P<task>copy|cycle)\.pt$")

#: The authors' parameter names (a regular expression over the state dict's keys) -> the
#: book's (a replacement): per layer N the attention's q, k, v and output projections, the
#: two RMSNorm weights, the MLP's two linear maps; the embeddings and the head.
KEY_MAP: tuple[tuple[str, str], ...] = (
    (r"^token_emb\.(weight)$", r"tok_emb.\1"),
    (r"^pos_emb\.(weight)$", r"pos_emb.\1"),
    (r"^layers\.(\d+)\.attn\.W_q\.(weight|bias)$", r"blocks.\1.attn.q.\2"),
    (r"^layers\.(\d+)\.attn\.W_k\.(weight|bias)$", r"blocks.\1.attn.k.\2"),
    (r"^layers\.(\d+)\.attn\.W_v\.(weight|bias)$", r"blocks.\1.attn.v.\2"),
    (r"^layers\.(\d+)\.attn\.out_proj\.(weight|bias)$", r"blocks.\1.attn.out.\2"),
    (r"^layers\.(\d+)\.ln1\.(weight)$", r"blocks.\1.norm1.\2"),
    (r"^layers\.(\d+)\.ln2\.(weight)$", r"blocks.\1.norm2.\2"),
    (r"^layers\.(\d+)\.mlp\.0\.(weight|bias)$", r"blocks.\1.mlp.fc.\2"),
    (r"^layers\.(\d+)\.mlp\.2\.(weight|bias)$", r"blocks.\1.mlp.proj.\2"),
    (r"^out_proj\.(weight|bias)$", r"head.\1"),
)


def checkpoint_dir(directory: str | os.PathLike | None = None) -> Path | None:
    """The directory of the authors' checkpoints: ``directory`` when given (it must exist),
    else the one the environment variable :data:`ENV` names (it must exist), else
    :data:`DEFAULT_DIR` (``<repository>/../shared/published/checkpoints``) where it exists;
    ``None`` when none is given and the default is absent (the chapters then read the
    recorded values)."""
    for given, what in ((directory, "directory"), (os.environ.get(ENV) or None, ENV)):
        if given is not None:
            if not isinstance(given, (str, os.PathLike)) or not str(given).strip():
                raise ValueError(f"{what}={given!r}: expected the path of a directory")
            path = Path(given).expanduser()
            if not path.is_dir():
                raise ValueError(f"{what}={str(given)!r} is not a directory holding the "
                                 "authors' checkpoints")
            return path
    return DEFAULT_DIR if DEFAULT_DIR.is_dir() else None


def parse_name(name: str) -> tuple[str, int]:
    """``(task, heads)`` of a published checkpoint file name (``"4_heads_copy.pt"``)."""
    m = _NAME.match(name) if isinstance(name, str) else None
    if m is None or name not in SHA256:
        raise ValueError(f"name={name!r} is not one of the published checkpoints "
                         f"{sorted(SHA256)}")
    return m.group("task"), int(m.group("heads"))


def book_state_dict(state: Mapping[str, torch.Tensor]) -> dict[str, torch.Tensor]:
    """The authors' state dict ``state`` under the book's parameter names (:data:`KEY_MAP`);
    a ``ValueError`` naming any key that no rule maps."""
    if not isinstance(state, Mapping):
        raise ValueError(f"state is a {type(state).__name__}: expected a state dict")
    out: dict[str, torch.Tensor] = {}
    unknown = []
    for key, value in state.items():
        for pattern, repl in KEY_MAP:
            if re.match(pattern, key):
                out[re.sub(pattern, repl, key)] = value
                break
        else:
            unknown.append(key)
    if unknown:
        raise ValueError(f"state has keys the authors' model does not: {unknown}")
    return out


def verify(path: str | os.PathLike) -> str:
    """Check the file ``path`` against its published SHA-256 (:data:`SHA256`, by file name)
    and return the hash; a ``ValueError`` naming the file when it differs."""
    path = Path(path)
    parse_name(path.name)
    if not path.is_file():
        raise ValueError(f"checkpoint {path.name} is missing from {path.parent}")
    digest = sha256_file(path)
    if digest != SHA256[path.name]:
        raise ValueError(f"checkpoint {path.name} has SHA-256 {digest}, not the published "
                         f"{SHA256[path.name]}: it is not the authors' file")
    return digest


def load_authors_model(path: str | os.PathLike) -> Transformer:
    """The authors' model in the file ``path`` (hash-checked, :func:`verify`), as the book's
    :class:`~bparallel.transformer.model.Transformer` with Section 4.1's configuration and
    its head count from the file name, in evaluation mode on the explicit attention path
    (scores, causal mask, softmax, dropout written out, as the authors' code does)."""
    path = Path(path)
    verify(path)
    _, heads = parse_name(path.name)
    state = book_state_dict(read_torch_file(path, "the authors' checkpoint"))
    model = Transformer(ModelConfig(n_heads=heads), attention_path="explicit")
    try:
        model.load_state_dict(state)
    except RuntimeError as err:
        raise ValueError(f"checkpoint {path.name} does not fit the Section 4.1 model with "
                         f"{heads} heads: {err}") from None
    return model.eval()


def load_authors_models(directory: str | os.PathLike | None = None
                        ) -> dict[tuple[str, int], Transformer]:
    """All eight published models keyed by ``(task, heads)``, from :func:`checkpoint_dir`
    (``directory``, the environment variable, the default), each hash-checked; a
    ``FileNotFoundError`` when no directory is given and the default is absent."""
    folder = checkpoint_dir(directory)
    if folder is None:
        raise FileNotFoundError(f"the authors' checkpoints are not at {DEFAULT_DIR}: give "
                                f"their directory (argument or {ENV})")
    return {parse_name(name): load_authors_model(folder / name) for name in sorted(SHA256)}


__all__ = ["DEFAULT_DIR", "ENV", "KEY_MAP", "SHA256", "SOURCE", "book_state_dict",
           "checkpoint_dir", "load_authors_model", "load_authors_models", "parse_name",
           "verify"]
