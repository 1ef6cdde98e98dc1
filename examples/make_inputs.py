#!/usr/bin/env python3
"""Writes deterministic inputs for each example graph, and the outputs
expected from them computed here, independently, in NumPy (float64 math on
the float32 inputs; results stored in the graph's output dtype).

usage: make_inputs.py OUTDIR
  OUTDIR/<example>/inputs/<input name>.npy
  OUTDIR/<example>/expected/<output name>.npy
"""
import os
import sys

import numpy as np


def uniform(rng, shape, scale=1.0):
    return (rng.uniform(-1.0, 1.0, size=shape) * scale).astype(np.float32)


def mlp(rng):
    x = uniform(rng, (8, 16))
    w1 = uniform(rng, (16, 32), 0.25)
    b1 = uniform(rng, (32,), 0.1)
    w2 = uniform(rng, (32, 4), 0.25)
    b2 = uniform(rng, (4,), 0.1)
    f = lambda a: a.astype(np.float64)
    hidden = np.maximum(f(x) @ f(w1) + f(b1), 0.0)
    y = hidden @ f(w2) + f(b2)
    inputs = dict(x=x, w1=w1, b1=b1, w2=w2, b2=b2)
    return inputs, dict(y=y.astype(np.float32))


def layer_norm(x, weight, bias, eps):
    mean = x.mean(axis=-1, keepdims=True)
    variance = ((x - mean) ** 2).mean(axis=-1, keepdims=True)
    return (x - mean) / np.sqrt(variance + eps) * weight + bias


def softmax(x):
    shifted = np.exp(x - x.max(axis=-1, keepdims=True))
    return shifted / shifted.sum(axis=-1, keepdims=True)


def attention_block(rng):
    d = 16
    inputs = dict(x=uniform(rng, (6, d)),
                  ln_w=(1.0 + uniform(rng, (d,), 0.1)).astype(np.float32),
                  ln_b=uniform(rng, (d,), 0.1))
    for name in ("q", "k", "v", "o"):
        inputs["w" + name] = uniform(rng, (d, d), 0.3)  # [out, in], as linear takes it
        inputs["b" + name] = uniform(rng, (d,), 0.1)
    f = {name: value.astype(np.float64) for name, value in inputs.items()}
    h = layer_norm(f["x"], f["ln_w"], f["ln_b"], 1e-5)
    q = h @ f["wq"].T + f["bq"]
    k = h @ f["wk"].T + f["bk"]
    v = h @ f["wv"].T + f["bv"]
    p = softmax(q @ k.T / np.sqrt(d))
    y = f["x"] + (p @ v) @ f["wo"].T + f["bo"]
    return inputs, dict(y=y.astype(np.float32), p=p.astype(np.float32))


def softmax_classifier(rng):
    x = uniform(rng, (10, 20))
    w = uniform(rng, (5, 20), 0.5)
    b = uniform(rng, (5,), 0.1)
    logits = x.astype(np.float64) @ w.astype(np.float64).T + b.astype(np.float64)
    shifted = logits - logits.max(axis=-1, keepdims=True)
    logp = shifted - np.log(np.exp(shifted).sum(axis=-1, keepdims=True))
    classes = logp.argmax(axis=-1).astype(np.int64)
    return dict(x=x, w=w, b=b), dict(logp=logp.astype(np.float32), **{"class": classes})


EXAMPLES = dict(mlp=mlp, attention_block=attention_block, softmax_classifier=softmax_classifier)


def main():
    if len(sys.argv) != 2:
        sys.exit(__doc__)
    root = sys.argv[1]
    for seed, (name, make) in enumerate(sorted(EXAMPLES.items())):
        inputs, expected = make(np.random.default_rng(1000 + seed))
        for folder, arrays in (("inputs", inputs), ("expected", expected)):
            path = os.path.join(root, name, folder)
            os.makedirs(path, exist_ok=True)
            for array_name, array in arrays.items():
                np.save(os.path.join(path, array_name + ".npy"), array)
    print("wrote inputs and expected outputs of %s into %s" % (", ".join(sorted(EXAMPLES)), root))


if __name__ == "__main__":
    main()
