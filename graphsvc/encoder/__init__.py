"""The sentence encoder behind recall's semantic signal: the only package that imports onnxruntime,
tokenizers and numpy (installed by the `embeddings` extra)."""
