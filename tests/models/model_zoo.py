"""The real architectures TensorPlay's model tests and tp-bench's model cases
use: built with PyTorch (and transformers) from a fixed seed with random
weights, nothing downloaded from a model hub.

build(name) returns (module in eval mode, {input name: numpy array}); the
same name always gives the same weights and inputs, so the ONNX file written
by export_models.py and the module that bench/peers.py times agree.
"""
import numpy as np
import torch
from torch import nn

SEED = 20261201

# name: (what it is, batch) -- batch is part of the name so each file has
# static shapes.
MODELS = {
    "resnet18-b1": ("torchvision ResNet-18, weights=None, 1x3x224x224", 1),
    "resnet18-b8": ("torchvision ResNet-18, weights=None, 8x3x224x224", 8),
    "mobilenetv2-b1": ("torchvision MobileNetV2, weights=None, 1x3x224x224", 1),
    "mobilenetv2-b8": ("torchvision MobileNetV2, weights=None, 8x3x224x224", 8),
    "bert": ("transformers BertModel from BertConfig (4 layers, width 256, 4 heads), 1x128 tokens", 1),
    "gpt2": ("transformers GPT2LMHeadModel from GPT2Config() (GPT-2 small, 124M), 1x64 tokens", 1),
    "encoder": ("two-layer nn.TransformerEncoder (width 256, 4 heads, ffn 1024), 8x128x256", 8),
    "gpt2-block": ("one GPT-2-small transformer block (width 768, 12 heads, causal), 1x128x768", 1),
}


class GPT2Block(nn.Module):
    """GPT-2's pre-norm block: causal self-attention and a tanh-GELU MLP."""

    def __init__(self, width=768, heads=12):
        super().__init__()
        self.heads = heads
        self.ln_1 = nn.LayerNorm(width)
        self.c_attn = nn.Linear(width, 3 * width)
        self.c_proj = nn.Linear(width, width)
        self.ln_2 = nn.LayerNorm(width)
        self.c_fc = nn.Linear(width, 4 * width)
        self.mlp_proj = nn.Linear(4 * width, width)
        # GPT-2 keeps its causal mask as a buffer too (a constant in ONNX)
        self.register_buffer("causal", torch.triu(torch.full((1024, 1024), float("-inf")), 1))

    def forward(self, x):
        b, t, c = x.shape
        qkv = self.c_attn(self.ln_1(x))
        # slices rather than split(): the same values, and Slice is what the
        # importer has today (GPT-2 small itself exports Split)
        q, k, v = qkv[:, :, :c], qkv[:, :, c:2 * c], qkv[:, :, 2 * c:]
        shape = (b, t, self.heads, c // self.heads)
        q, k, v = (z.reshape(shape).transpose(1, 2) for z in (q, k, v))
        scores = q @ k.transpose(-2, -1) * (1.0 / (c // self.heads) ** 0.5)
        attn = torch.softmax(scores + self.causal[:t, :t], dim=-1) @ v
        x = x + self.c_proj(attn.transpose(1, 2).reshape(b, t, c))
        h = nn.functional.gelu(self.c_fc(self.ln_2(x)), approximate="tanh")
        return x + self.mlp_proj(h)


class FirstOutput(nn.Module):
    """transformers models return dataclasses and take keyword inputs; ONNX
    wants positional inputs and the one tensor."""

    def __init__(self, model, names):
        super().__init__()
        self.model, self.names = model, names

    def forward(self, *args):
        return self.model(**dict(zip(self.names, args)))[0]


def _inputs_rng():
    return np.random.default_rng(SEED)


def build(name):
    if name not in MODELS:
        raise KeyError(f"unknown model '{name}' (known: {', '.join(MODELS)})")
    torch.manual_seed(SEED)
    rng = _inputs_rng()
    batch = MODELS[name][1]
    if name.startswith("resnet18") or name.startswith("mobilenetv2"):
        import torchvision

        make = torchvision.models.resnet18 if name.startswith("resnet18") else torchvision.models.mobilenet_v2
        module = make(weights=None)
        inputs = {"input": rng.standard_normal((batch, 3, 224, 224), dtype=np.float32)}
    elif name == "bert":
        from transformers import BertConfig, BertModel

        config = BertConfig(hidden_size=256, num_hidden_layers=4, num_attention_heads=4,
                            intermediate_size=1024, hidden_act="gelu")
        module = FirstOutput(BertModel(config), ["input_ids", "attention_mask"])
        inputs = {"input_ids": rng.integers(0, config.vocab_size, (1, 128), dtype=np.int64),
                  "attention_mask": np.ones((1, 128), dtype=np.int64)}
    elif name == "gpt2":
        from transformers import GPT2Config, GPT2LMHeadModel

        config = GPT2Config(use_cache=False)
        module = FirstOutput(GPT2LMHeadModel(config), ["input_ids", "attention_mask"])
        # an explicit mask: without one, transformers' packed-sequence check
        # uses aten::diff, which the TorchScript exporter lacks
        inputs = {"input_ids": rng.integers(0, config.vocab_size, (1, 64), dtype=np.int64),
                  "attention_mask": np.ones((1, 64), dtype=np.int64)}
    elif name == "encoder":
        layer = nn.TransformerEncoderLayer(256, 4, 1024, dropout=0.0, batch_first=True)
        module = nn.TransformerEncoder(layer, 2, enable_nested_tensor=False)
        inputs = {"input": rng.standard_normal((8, 128, 256), dtype=np.float32)}
    else:  # gpt2-block
        module = GPT2Block()
        inputs = {"input": rng.standard_normal((1, 128, 768), dtype=np.float32)}
    module.eval()
    return module, inputs
