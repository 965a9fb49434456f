"""MiniLM through ONNX Runtime: the same weights, the same tokenizer, the same pooling as the
sentence-transformers path, without eager PyTorch in the write path.

The model's transformer is exported once from the local weights (``torch.onnx.export``, fp32)
into ``IBEX_EMBEDDING_ONNX_DIR`` under a name that carries a digest of the weights and the
export's own version, written to a temporary file and renamed, so concurrent processes
never read a half-written graph and a change of weights exports again. Nothing is
downloaded. The ONNX graph yields the token states; mean pooling over the attention mask
and L2 normalisation are done here, as the sentence-transformers modules of the model do
(``modules.json``: Transformer, Pooling(mean), Normalize). ``docs/decisions.md`` has the
equivalence figures against the PyTorch path.
"""

from __future__ import annotations

import hashlib
import json
import os
import tempfile
import warnings
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np

from ibex_worker.store.vectors import EMBEDDING_DIM

EXPORT_VERSION = "1"  # part of the cached file's name: a change to the export below exports again
OPSET = 17
_INPUTS = ("input_ids", "attention_mask", "token_type_ids")


def _weights_digest(model_dir: Path) -> str:
    digest = hashlib.sha256()
    for name in ("model.safetensors", "pytorch_model.bin", "config.json", "tokenizer.json"):
        path = model_dir / name
        if path.exists():
            digest.update(name.encode())
            with path.open("rb") as handle:
                for block in iter(lambda: handle.read(1 << 20), b""):
                    digest.update(block)
    return digest.hexdigest()[:16]


def _max_seq_length(model_dir: Path) -> int:
    config = model_dir / "sentence_bert_config.json"
    if config.exists():
        return int(json.loads(config.read_text()).get("max_seq_length", 256))
    return 256


def _check_modules(model_dir: Path) -> None:
    """Refuse a model whose sentence-transformers modules this class does not reproduce."""
    modules = model_dir / "modules.json"
    kinds = [m["type"].rsplit(".", 1)[-1] for m in json.loads(modules.read_text())] if modules.exists() else []
    pooling = model_dir / "1_Pooling" / "config.json"
    mean = json.loads(pooling.read_text()).get("pooling_mode_mean_tokens") if pooling.exists() else False
    if kinds != ["Transformer", "Pooling", "Normalize"] or not mean:
        raise RuntimeError("the ONNX embedder reproduces Transformer + mean Pooling + Normalize models only; "
                           "use IBEX_EMBEDDING_BACKEND=torch for this model")


def export(model_dir: Path, cache_dir: Path) -> Path:
    """The ONNX file of the model's transformer, exported now unless already cached."""
    target = cache_dir / f"{model_dir.name}-{_weights_digest(model_dir)}-v{EXPORT_VERSION}.onnx"
    if target.exists():
        return target
    import torch
    from transformers import AutoModel

    class TokenStates(torch.nn.Module):  # keyword arguments: positional order differs across versions
        def __init__(self) -> None:
            super().__init__()
            self.model = AutoModel.from_pretrained(str(model_dir), local_files_only=True).eval()

        def forward(self, input_ids: Any, attention_mask: Any, token_type_ids: Any) -> Any:
            return self.model(input_ids=input_ids, attention_mask=attention_mask,
                              token_type_ids=token_type_ids).last_hidden_state

    cache_dir.mkdir(parents=True, exist_ok=True)
    model = TokenStates().eval()
    sample = {name: torch.ones((2, 8), dtype=torch.long) for name in _INPUTS}
    sample["token_type_ids"] = torch.zeros((2, 8), dtype=torch.long)
    axes = {name: {0: "batch", 1: "tokens"} for name in _INPUTS}
    axes["last_hidden_state"] = {0: "batch", 1: "tokens"}
    handle, partial = tempfile.mkstemp(dir=cache_dir, suffix=".onnx.partial")
    os.close(handle)
    try:
        # The TorchScript exporter (torch is pinned): its deprecation notices, the tracer's
        # notes on Python-side branches (shape checks, constant for a given input rank) and
        # its note on advanced indexing (the mask's indices are never negative) are expected;
        # the graph is checked against eager PyTorch by the tests and
        # ops/bench/embedding_equivalence.py.
        with torch.no_grad(), warnings.catch_warnings():
            warnings.filterwarnings("ignore", category=DeprecationWarning)
            warnings.filterwarnings("ignore", category=torch.jit.TracerWarning)
            warnings.filterwarnings("ignore", category=UserWarning, message="Exporting aten::index operator")
            torch.onnx.export(model, (sample["input_ids"], sample["attention_mask"], sample["token_type_ids"]),
                              partial, input_names=list(_INPUTS), output_names=["last_hidden_state"],
                              dynamic_axes=axes, opset_version=OPSET, dynamo=False)
        os.chmod(partial, 0o644)  # exported at image build by root, read by the service user
        os.replace(partial, target)
    finally:
        if os.path.exists(partial):
            os.unlink(partial)
    return target


class OnnxEmbedder:
    def __init__(self, model_path: str, model_name: str, *, threads: int, cache_dir: str,
                 texts_per_pass: int) -> None:
        import onnxruntime
        from tokenizers import Tokenizer

        model_dir = Path(model_path)
        _check_modules(model_dir)
        options = onnxruntime.SessionOptions()
        options.intra_op_num_threads = threads
        options.inter_op_num_threads = 1
        options.graph_optimization_level = onnxruntime.GraphOptimizationLevel.ORT_ENABLE_ALL
        graph = export(model_dir, Path(cache_dir).expanduser())
        self._session = onnxruntime.InferenceSession(str(graph), options, providers=["CPUExecutionProvider"])
        self._tokenizer = Tokenizer.from_file(str(model_dir / "tokenizer.json"))
        self._tokenizer.enable_truncation(max_length=_max_seq_length(model_dir))
        self._tokenizer.no_padding()
        self._per_pass = max(1, texts_per_pass)
        self.model_name = model_name
        if self._session.get_outputs()[0].shape[-1] != EMBEDDING_DIM:
            raise RuntimeError(f"embedding model has dimension {self._session.get_outputs()[0].shape[-1]}, "
                               f"schema expects {EMBEDDING_DIM}")

    def embed_many(self, texts: Sequence[str]) -> list[list[float]]:
        """Unit-normalised vectors, one per text: texts sorted by token count and encoded in
        passes of similar length (padding costs attention time), returned in input order."""
        encodings = self._tokenizer.encode_batch([str(t).strip() for t in texts])
        order = sorted(range(len(encodings)), key=lambda i: len(encodings[i].ids))
        out: list[Any] = [None] * len(encodings)
        for start in range(0, len(order), self._per_pass):
            chunk = order[start:start + self._per_pass]
            for i, vector in zip(chunk, self._run([encodings[i] for i in chunk])):
                out[i] = vector
        return [v.tolist() for v in out]

    def _run(self, encodings: list[Any]) -> np.ndarray:
        width = max(len(e.ids) for e in encodings)
        feeds = {name: np.zeros((len(encodings), width), dtype=np.int64) for name in _INPUTS}
        for row, enc in enumerate(encodings):
            n = len(enc.ids)
            feeds["input_ids"][row, :n] = enc.ids
            feeds["attention_mask"][row, :n] = enc.attention_mask
            feeds["token_type_ids"][row, :n] = enc.type_ids
        states = self._session.run(["last_hidden_state"], feeds)[0]
        mask = feeds["attention_mask"][..., None].astype(np.float32)
        pooled = (states * mask).sum(axis=1) / np.clip(mask.sum(axis=1), 1e-9, None)
        norms = np.linalg.norm(pooled, axis=1, keepdims=True)
        return (pooled / np.clip(norms, 1e-12, None)).astype(np.float32)
