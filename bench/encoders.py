"""Encoders side by side: recall quality by cosine alone, and throughput on this machine.

    .venv/bin/python bench/encoders.py [--data locomo-dev.json] [--texts 800]

For each model: the hard paraphrase set's hit@1 / hit@5 and LoCoMo dev's R@10 by cosine alone (no
keywords, no walk), then texts per second for LoCoMo's turns ("<speaker>: <text>").

Measures graphsvc's encoders (graphsvc.encoder.onnx.MODELS: int8 bge-small-en-v1.5 and all-MiniLM-L6-v2, one thread;
each text in a run of its own, however many are passed), then one query, and, when the
package is installed (`pip install wordllama`, not a graphsvc dependency), WordLlama's static 256-d
embeddings loaded from the files its wheel ships (its loader looks for the tokenizer in a folder the
wheel does not have and would download it).
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from collections.abc import Callable, Sequence
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
sys.path.insert(0, str(Path(__file__).resolve().parent))
import numpy as np
from locomo import DATA, DEV_HALF, chosen, turns

from graphsvc.encoder.onnx import MODELS, OnnxEncoder
from tests import paraphrase_hard


def rate(encode: Callable[[Sequence[str]], object], texts: list[str], batch: int) -> float:
    ordered = sorted(texts, key=len) if batch > 1 else texts
    encode(ordered[:8])  # warm
    started = time.perf_counter()
    for at in range(0, len(ordered), batch):
        encode(ordered[at : at + batch])
    return len(texts) / (time.perf_counter() - started)


def wordllama() -> Callable[[Sequence[str]], object] | None:
    try:
        import wordllama as package
        from safetensors import safe_open
        from wordllama import WordLlama
        from wordllama.inference import WordLlamaInference
    except ImportError:
        return None
    root = Path(package.__file__).parent
    tokenizer = WordLlama.load_tokenizer(root / "tokenizers" / "l2_supercat_tokenizer_config.json")
    with safe_open(str(root / "weights" / "l2_supercat_256.safetensors"), framework="np") as f:
        model = WordLlamaInference(f.get_tensor("embedding.weight"), tokenizer)
    return lambda texts: model.embed(list(texts), norm=True)


def locomo_r10(encoder: OnnxEncoder, samples: list[dict]) -> float:
    """LoCoMo's questions against their conversation's turns ("<speaker>: <text>") by cosine alone: the
    share of each question's evidence turns among the 10 nearest, averaged."""
    scores = []
    for sample in samples:
        said = turns(sample)
        memories = np.array(encoder.encode([f"{t['speaker']}: {t['text']}" for _, _, t in said]))
        for qa in sample["qa"]:
            if evidence := set(qa.get("evidence") or []):
                nearest = np.argsort(-(memories @ np.array(encoder.encode_query(qa["question"]))))[:10]
                scores.append(len(evidence & {said[i][1] for i in nearest}) / len(evidence))
    return float(np.mean(scores))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--data", type=Path, default=DATA)
    parser.add_argument("--texts", type=int, default=800)
    args = parser.parse_args()
    samples = json.loads(args.data.read_text())
    texts = [f"{t['speaker']}: {t['text']}" for s in samples for _, _, t in turns(s)][: args.texts]
    print(f"{len(texts)} turns, {sum(map(len, texts)) / len(texts):.0f} characters on average")
    for name in MODELS:
        encoder = OnnxEncoder.load(name)
        hard1, hard5 = paraphrase_hard.by_cosine_alone(encoder)
        print(f"{name}, cosine alone: hard set hit@1 {hard1}/46, hit@5 {hard5}/46; ", end="")
        print(f"LoCoMo dev R@10 {locomo_r10(encoder, chosen(samples, DEV_HALF)):.3f}")
        print(f"{name} int8: {rate(encoder.encode, texts, 1):,.0f} texts/s")
        query = "What did Caroline research about adoption agencies?"
        started = time.perf_counter()
        for _ in range(50):
            encoder.encode_query(query)
        print(f"{name} int8, one query: {1000 * (time.perf_counter() - started) / 50:.1f} ms")
    static = wordllama()
    if static is not None:
        print(f"wordllama l2_supercat 256-d, batch 64: {rate(static, texts, 64):,.0f} texts/s")


if __name__ == "__main__":
    main()
