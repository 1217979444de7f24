"""The authors' published checkpoints read into the book's Transformer
(:mod:`bparallel.transformer.authors`): found where the build says, refused when a file's
SHA-256 differs, their keys mapped onto the book's model, and the mapped model computing the
authors' forward pass (held-out accuracy, and logits equal to a forward pass written from the
authors' state dict by hand)."""

from __future__ import annotations

import math
import shutil

import pytest
import torch
import torch.nn.functional as F

from bparallel.transformer import authors
from bparallel.transformer.checkpoints import sha256_file
from bparallel.transformer.data import heldout_dataset
from bparallel.transformer.evaluation import evaluate_accuracy
from bparallel.transformer.model import ModelConfig, Transformer

pytestmark = pytest.mark.usefixtures("one_torch_thread")

FOUND = authors.checkpoint_dir()
needs_checkpoints = pytest.mark.skipif(
    FOUND is None, reason=f"the authors' checkpoints are not at {authors.DEFAULT_DIR} and "
    f"{authors.ENV} names none: they are never copied into the repository")


def authors_state(heads: int, seed: int = 0) -> dict[str, torch.Tensor]:
    """A random state dict under the authors' names and shapes (Section 4.1's model)."""
    g = torch.Generator().manual_seed(seed)
    r = lambda *shape: torch.randn(*shape, generator=g)  # noqa: E731
    state = {"token_emb.weight": r(256, 64), "pos_emb.weight": r(100, 64)}
    for n in range(4):
        for w in ("W_q", "W_k", "W_v", "out_proj"):
            state[f"layers.{n}.attn.{w}.weight"] = r(64, 64)
            state[f"layers.{n}.attn.{w}.bias"] = r(64)
        state[f"layers.{n}.ln1.weight"] = 1 + 0.1 * r(64)
        state[f"layers.{n}.ln2.weight"] = 1 + 0.1 * r(64)
        state[f"layers.{n}.mlp.0.weight"], state[f"layers.{n}.mlp.0.bias"] = r(128, 64), r(128)
        state[f"layers.{n}.mlp.2.weight"], state[f"layers.{n}.mlp.2.bias"] = r(64, 128), r(64)
    state["out_proj.weight"], state["out_proj.bias"] = r(256, 64), r(256)
    return state


def forward_by_hand(state: dict[str, torch.Tensor], heads: int, idx: torch.Tensor
                    ) -> torch.Tensor:
    """The authors' model (reference-implementation notes, Section 4.1) written out from
    their state dict, in evaluation mode: embeddings, four pre-norm blocks with RMSNorm,
    causal softmax attention with 1/sqrt(head_dim), a ReLU MLP, no final norm, the head."""
    T = idx.shape[1]
    x = state["token_emb.weight"][idx] + state["pos_emb.weight"][:T]
    D = 64 // heads
    mask = torch.tril(torch.ones(T, T, dtype=torch.bool))

    def rms(v, w):
        return v * torch.rsqrt(v.pow(2).mean(-1, keepdim=True) + torch.finfo(v.dtype).eps) * w

    def lin(v, name):
        return v @ state[f"{name}.weight"].T + state[f"{name}.bias"]

    for n in range(4):
        h = rms(x, state[f"layers.{n}.ln1.weight"])
        q, k, v = (lin(h, f"layers.{n}.attn.{w}").view(*h.shape[:2], heads, D).transpose(1, 2)
                   for w in ("W_q", "W_k", "W_v"))
        s = (q @ k.transpose(-2, -1) / math.sqrt(D)).masked_fill(~mask, float("-inf"))
        y = (torch.softmax(s, -1) @ v).transpose(1, 2).reshape(*h.shape)
        x = x + lin(y, f"layers.{n}.attn.out_proj")
        h = rms(x, state[f"layers.{n}.ln2.weight"])
        x = x + lin(F.relu(lin(h, f"layers.{n}.mlp.0")), f"layers.{n}.mlp.2")
    return lin(x, "out_proj")


def test_every_authors_key_maps_onto_the_book_model():
    """The mapped state dict holds exactly the book model's parameters, shape for shape."""
    for heads in (1, 4, 8, 16):
        mapped = authors.book_state_dict(authors_state(heads))
        book = Transformer(ModelConfig(n_heads=heads)).state_dict()
        assert mapped.keys() == book.keys()
        assert all(mapped[k].shape == book[k].shape for k in book)


def test_the_mapped_model_is_the_authors_forward_pass():
    """On random weights under the authors' names (so a swapped q and k, or norm 1 and 2,
    would change the logits), the book's model with the mapped weights computes the
    hand-written forward pass: equal to float32 rounding (1e-4 on logits of size ~10)."""
    for heads in (1, 4, 16):
        state = authors_state(heads, seed=heads)
        model = Transformer(ModelConfig(n_heads=heads), attention_path="explicit").eval()
        model.load_state_dict(authors.book_state_dict(state))
        idx = torch.randint(0, 256, (3, 100), generator=torch.Generator().manual_seed(1))
        with torch.no_grad():
            ours, theirs = model(idx), forward_by_hand(state, heads, idx)
        torch.testing.assert_close(ours, theirs, rtol=1e-4, atol=1e-4)
        swapped = dict(state)
        swapped["layers.0.attn.W_q.weight"] = state["layers.0.attn.W_k.weight"]
        swapped["layers.0.attn.W_k.weight"] = state["layers.0.attn.W_q.weight"]
        assert not torch.allclose(forward_by_hand(swapped, heads, idx), theirs, atol=1e-2)


def test_a_key_the_authors_model_lacks_is_refused():
    state = authors_state(4)
    state["layers.0.attn.rotary.weight"] = torch.zeros(1)
    with pytest.raises(ValueError, match="rotary"):
        authors.book_state_dict(state)
    with pytest.raises(ValueError, match="state dict"):
        authors.book_state_dict([1, 2])


def test_the_directory_comes_from_the_argument_then_the_environment(tmp_path, monkeypatch):
    monkeypatch.delenv(authors.ENV, raising=False)
    monkeypatch.setattr(authors, "DEFAULT_DIR", tmp_path / "absent")
    assert authors.checkpoint_dir() is None
    with pytest.raises(FileNotFoundError, match=authors.ENV):
        authors.load_authors_models()
    monkeypatch.setattr(authors, "DEFAULT_DIR", tmp_path)
    assert authors.checkpoint_dir() == tmp_path  # the default, where it exists
    there = tmp_path / "env"
    there.mkdir()
    monkeypatch.setenv(authors.ENV, str(there))
    assert authors.checkpoint_dir() == there
    assert authors.checkpoint_dir(tmp_path) == tmp_path  # the argument first
    with pytest.raises(ValueError, match="not a directory"):
        authors.checkpoint_dir(tmp_path / "nowhere")
    monkeypatch.setenv(authors.ENV, str(tmp_path / "nowhere"))
    with pytest.raises(ValueError, match=authors.ENV):
        authors.checkpoint_dir()


def test_the_default_is_beside_the_repository():
    assert authors.DEFAULT_DIR == authors.ROOT.parent / "shared" / "published" / "checkpoints"


def test_a_file_whose_sha256_differs_is_refused(tmp_path):
    """A file under a published name whose content is not the authors' is refused, with the
    file named, before anything is loaded from it."""
    fake = tmp_path / "4_heads_copy.pt"
    torch.save(authors_state(4), fake)
    with pytest.raises(ValueError, match=r"4_heads_copy\.pt has SHA-256 .* not the published"):
        authors.load_authors_model(fake)
    with pytest.raises(ValueError, match="not one of the published"):
        authors.verify(tmp_path / "5_heads_copy.pt")
    with pytest.raises(ValueError, match="missing"):
        authors.verify(tmp_path / "8_heads_cycle.pt")


@needs_checkpoints
def test_a_tampered_copy_of_a_checkpoint_is_refused(tmp_path):
    """One byte changed in a copy of a real checkpoint: refused, naming the file, alone
    and among the seven others (copied intact to a temporary directory)."""
    for other in authors.SHA256:
        shutil.copyfile(FOUND / other, tmp_path / other)
    name = "1_heads_cycle.pt"
    copy = tmp_path / name
    assert authors.verify(copy) == authors.SHA256[name]
    data = bytearray(copy.read_bytes())
    data[-100] ^= 1
    copy.write_bytes(bytes(data))
    assert sha256_file(copy) != authors.SHA256[name]
    with pytest.raises(ValueError, match=name):
        authors.load_authors_model(copy)
    with pytest.raises(ValueError, match=name):
        authors.load_authors_models(tmp_path)


@needs_checkpoints
def test_the_published_checkpoints_load_and_compute_their_tasks():
    """The eight models, hash-checked and mapped, predict the held-out tokens as the paper
    reports (copy ~100%, cycle ~99%: every predictable position): a wrong mapping would
    fall to chance, 1/256. On the real weights too the book's model equals the hand-written
    forward pass."""
    models = authors.load_authors_models()
    assert sorted(models) == [(t, h) for t in ("copy", "cycle") for h in (1, 4, 8, 16)]
    for (task, heads), model in models.items():
        assert model.config.n_heads == heads and not model.training
        acc = evaluate_accuracy(model, heldout_dataset(task, 100, seed=42))
        assert acc["accuracy_predictable"] >= 0.999, (task, heads, acc)
    state = torch.load(FOUND / "4_heads_cycle.pt", map_location="cpu", weights_only=True)
    idx = heldout_dataset("cycle", 4, seed=0).inputs
    with torch.no_grad():
        torch.testing.assert_close(models[("cycle", 4)](idx), forward_by_hand(state, 4, idx),
                                   rtol=1e-4, atol=1e-3)
