#!/usr/bin/env python3
"""tp-bench's helper: the oracle that checks each case's output, and the
peers timed against TensorPlay on the same inputs (NumPy; ONNX Runtime with
io-binding, PyTorch eager and torch.compile when installed, as in the venv
bench/peers-venv.sh makes).

tp-bench runs `peers.py --serve` and talks to it one line at a time:

  case NAME DIR INPUTS PEERS MODEL   load DIR/<input>.npy for each of the
                                     comma-separated INPUTS, compute the
                                     oracle, set up the PEERS wanted (comma
                                     list) -> "ready PEER ..." (those that
                                     work; "note ..." lines say why others
                                     do not). MODEL is the .onnx file of a
                                     model case, or "-".
  check LABEL PATH                   compare PATH.npy with the oracle ->
                                     "check ORACLE MAX_ABS MAX_REL pass|FAIL"
                                     or "check none" when the case has none
  time PEER REPS                     REPS timed calls -> "times S S ..."
  ratio CASE PEER VALUE              remember a ratio for the plot -> "ok"
  plot FILE.png                      draw the ratios -> "plotted FILE.png"
  quit

The oracle is NumPy for the micro cases and ONNX Runtime for the model
cases (the model's own file, run by an independent runtime). Tolerance: an
element passes when |got - want| <= 1e-3 |want| + 1e-4 max|want|.
"""
import os
import sys
import time

import numpy as np

RTOL, ATOL_SCALE = 1e-3, 1e-4
HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "tests", "models"))


def sigmoid(v):
    return 1 / (1 + np.exp(-v))


def softmax(v):
    e = np.exp(v - v.max(-1, keepdims=True))
    return e / e.sum(-1, keepdims=True)


def layer_norm(v):
    m = v.mean(-1, keepdims=True)
    return (v - m) / np.sqrt(v.var(-1, keepdims=True) + 1e-5)


def linear(i):
    x = i["xt"].T if "xt" in i else i["x"]
    return x @ i["w"] + i["bias"]


# NumPy: the oracle and a peer. Each takes {input name: array}.
NUMPY = {
    "mm-bias": linear,
    "mm-bias-relu": lambda i: np.maximum(linear(i), 0),
    "mm-bias-sigmoid": lambda i: sigmoid(linear(i)),
    "mm-bias-sin": lambda i: np.sin(linear(i)),
    "mm-bias-tanh": lambda i: np.tanh(linear(i)),
    "mm-bias-pointwise": lambda i: (lambda h: sigmoid(h) * (h + 1))(linear(i)),
    "mm-bias-chain": lambda i: np.tanh(np.maximum(linear(i), 0) * 2 - 1),
    "two-linear-relu": lambda i: np.maximum(linear(i), 0) @ i["w2"] + i["b2"],
    "transpose-mm": linear,
    "mm-reduce": lambda i: linear(i).sum(1),
    "tanh-affine": lambda i: np.tanh(i["x"] * 2 + 1) * i["x"],
    "add": lambda i: i["a"] + i["b"],
    "sgemm-1024": lambda i: i["a"] @ i["b"],
    "sgemm-2048": lambda i: i["a"] @ i["b"],
    "gemv-1280x1000": lambda i: i["x"] @ i["w"],
    "softmax": lambda i: softmax(i["x"]),
    "layer_norm": lambda i: layer_norm(i["x"]),
    "embedding": lambda i: i["table"][i["ids"]],
}


def torch_function(name):
    """The PyTorch version of a micro case, over {input name: tensor}."""
    import torch

    def lin(i):
        x = i["xt"].t() if "xt" in i else i["x"]
        return torch.addmm(i["bias"], x, i["w"])

    table = {
        "mm-bias": lin,
        "mm-bias-relu": lambda i: torch.relu(lin(i)),
        "mm-bias-sigmoid": lambda i: torch.sigmoid(lin(i)),
        "mm-bias-sin": lambda i: torch.sin(lin(i)),
        "mm-bias-tanh": lambda i: torch.tanh(lin(i)),
        "mm-bias-pointwise": lambda i: (lambda h: torch.sigmoid(h) * (h + 1))(lin(i)),
        "mm-bias-chain": lambda i: torch.tanh(torch.relu(lin(i)) * 2 - 1),
        "two-linear-relu": lambda i: torch.addmm(i["b2"], torch.relu(lin(i)), i["w2"]),
        "transpose-mm": lin,
        "mm-reduce": lambda i: lin(i).sum(1),
        "tanh-affine": lambda i: torch.tanh(i["x"] * 2 + 1) * i["x"],
        "add": lambda i: i["a"] + i["b"],
        "sgemm-1024": lambda i: i["a"] @ i["b"],
        "sgemm-2048": lambda i: i["a"] @ i["b"],
        "gemv-1280x1000": lambda i: i["x"] @ i["w"],
        "softmax": lambda i: torch.softmax(i["x"], -1),
        "layer_norm": lambda i: torch.nn.functional.layer_norm(i["x"], i["x"].shape[-1:], eps=1e-5),
        "embedding": lambda i: torch.nn.functional.embedding(i["ids"], i["table"]),
    }
    return table[name]


def onnx_model(name, inputs):
    """The ONNX version of a micro case, built node by node (opset 17)."""
    from onnx import TensorProto, helper, numpy_helper

    nodes, inits = [], []
    counter = [0]

    def node(op, *args, **attrs):
        counter[0] += 1
        out = f"t{counter[0]}"
        nodes.append(helper.make_node(op, list(args), [out], **attrs))
        return out

    def const(value, shape=None):
        counter[0] += 1
        cname = f"c{counter[0]}"
        array = np.asarray(value, dtype=np.float32 if shape is None or isinstance(value, float) else None)
        inits.append(numpy_helper.from_array(array, cname))
        return cname

    def lin():
        x = node("Transpose", "xt", perm=[1, 0]) if "xt" in inputs else "x"
        return node("Add", node("MatMul", x, "w"), "bias")

    if name in ("mm-bias", "transpose-mm"):
        y = lin()
    elif name.startswith("mm-bias-") and name[8:] in ("relu", "sigmoid", "sin", "tanh"):
        y = node(name[8:].capitalize(), lin())
    elif name == "mm-bias-pointwise":
        h = lin()
        y = node("Mul", node("Sigmoid", h), node("Add", h, const(1.0)))
    elif name == "mm-bias-chain":
        y = node("Tanh", node("Sub", node("Mul", node("Relu", lin()), const(2.0)), const(1.0)))
    elif name == "two-linear-relu":
        y = node("Add", node("MatMul", node("Relu", lin()), "w2"), "b2")
    elif name == "mm-reduce":
        y = node("ReduceSum", lin(), const(np.array([1], dtype=np.int64), shape=1), keepdims=0)
    elif name == "tanh-affine":
        y = node("Mul", node("Tanh", node("Add", node("Mul", "x", const(2.0)), const(1.0))), "x")
    elif name == "add":
        y = node("Add", "a", "b")
    elif name.startswith("sgemm"):
        y = node("MatMul", "a", "b")
    elif name.startswith("gemv"):
        y = node("MatMul", "x", "w")
    elif name == "softmax":
        y = node("Softmax", "x", axis=-1)
    elif name == "embedding":
        y = node("Gather", "table", "ids", axis=0)
    elif name == "layer_norm":
        width = inputs["x"].shape[-1]
        y = node("LayerNormalization", "x", const(np.ones(width, np.float32), shape=1), axis=-1, epsilon=1e-5)
    else:
        raise KeyError(name)
    graph = helper.make_graph(
        nodes, name,
        [helper.make_tensor_value_info(k, helper.np_dtype_to_tensor_dtype(v.dtype), v.shape)
         for k, v in inputs.items()],
        [helper.make_tensor_value_info(y, TensorProto.FLOAT, None)], initializer=inits)
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
    model.ir_version = 8
    return model.SerializeToString()


def compare(got, want):
    got, want = got.astype(np.float64), want.astype(np.float64)
    if got.shape != want.shape:
        return float("inf"), float("inf"), False
    diff = np.abs(got - want)
    atol = ATOL_SCALE * float(np.abs(want).max()) if want.size else 0.0
    ok = bool(np.all(diff <= atol + RTOL * np.abs(want)))
    rel = float((diff / (np.abs(want) + atol + 1e-30)).max()) if diff.size else 0.0
    return float(diff.max()) if diff.size else 0.0, rel, ok


class Case:
    def __init__(self, name, directory, input_names, model, threads):
        self.name, self.model, self.threads = name, model, threads
        self.inputs = {n: np.load(os.path.join(directory, n + ".npy")) for n in input_names}
        self.runners, self.oracle, self.oracle_name = {}, None, "none"

    def setup_numpy(self):
        fn = NUMPY[self.name]
        self.oracle, self.oracle_name = fn(self.inputs), "numpy"
        return lambda: fn(self.inputs)

    def setup_onnxruntime(self):
        import onnxruntime as ort

        options = ort.SessionOptions()
        options.intra_op_num_threads = self.threads
        options.inter_op_num_threads = 1
        options.execution_mode = ort.ExecutionMode.ORT_SEQUENTIAL
        source = self.model if self.model != "-" else onnx_model(self.name, self.inputs)
        session = ort.InferenceSession(source, options, providers=["CPUExecutionProvider"])
        feeds = {i.name: self.inputs[i.name] for i in session.get_inputs()}
        first = session.run(None, feeds)
        binding = session.io_binding()
        keep = []  # the bound arrays must outlive the binding
        for name, value in feeds.items():
            value = np.ascontiguousarray(value)
            keep.append(value)
            binding.bind_ortvalue_input(name, ort.OrtValue.ortvalue_from_numpy(value))
        for out, value in zip(session.get_outputs(), first):
            buffer = np.empty_like(value)
            keep.append(buffer)
            binding.bind_ortvalue_output(out.name, ort.OrtValue.ortvalue_from_numpy(buffer))
        self._ort_keep = keep
        if self.model != "-":
            self.oracle, self.oracle_name = first[0], "onnxruntime"
        return lambda: session.run_with_iobinding(binding), first[0]

    def torch_callable(self, compiled):
        import torch

        torch.set_num_threads(self.threads)
        if self.model != "-":
            import model_zoo

            module, _ = model_zoo.build(self.name)
            args = [torch.from_numpy(self.inputs[k]) for k in self.inputs]
            fn = torch.compile(module) if compiled else module
            call = lambda: fn(*args)
        else:
            tensors = {k: torch.from_numpy(v) for k, v in self.inputs.items()}
            body = torch_function(self.name)
            fn = torch.compile(body) if compiled else body
            call = lambda: fn(tensors)

        def run():
            with torch.inference_mode():
                return call()

        return run, run().numpy()

    def setup(self, peers):
        ready = []
        if self.model == "-":
            self.runners["numpy"] = self.setup_numpy()
            if "numpy" in peers:
                ready.append("numpy")
        for peer in peers:
            if peer == "numpy":
                continue
            try:
                if peer == "onnxruntime":
                    run, out = self.setup_onnxruntime()
                elif peer in ("torch", "torch.compile"):
                    run, out = self.torch_callable(peer == "torch.compile")
                else:
                    raise ValueError(f"unknown peer (known: numpy, onnxruntime, torch, torch.compile)")
            except Exception as error:
                say(f"note {self.name}: {peer} unavailable: {type(error).__name__}: {str(error)[:300]}")
                continue
            if self.oracle is not None and peer != self.oracle_name:
                a, r, ok = compare(out, self.oracle)
                if not ok:
                    say(f"note {self.name}: {peer}'s output differs from {self.oracle_name} "
                        f"(max abs {a:.2g}, max rel {r:.2g})")
            for _ in range(2):  # warm-up (torch.compile compiles at its first call)
                run()
            self.runners[peer] = run
            ready.append(peer)
        if self.model != "-" and self.oracle is None and "onnxruntime" not in peers:
            try:  # the model cases' oracle even when ORT is not timed
                self.setup_onnxruntime()
            except Exception as error:
                say(f"note {self.name}: no ONNX Runtime oracle: {type(error).__name__}: {error}")
        return ready

    def time(self, peer, reps):
        run = self.runners[peer]
        times = []
        for _ in range(reps):
            start = time.perf_counter()
            run()
            times.append(time.perf_counter() - start)
        return times


def say(line):
    sys.stdout.write(line + "\n")
    sys.stdout.flush()


def plot(path, ratios):
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    cases = list(dict.fromkeys(c for c, _ in ratios))
    peers = list(dict.fromkeys(p for _, p in ratios))
    width = 0.8 / max(len(peers), 1)
    figure, axes = plt.subplots(figsize=(max(8, len(cases) * 0.7), 5))
    for k, peer in enumerate(peers):
        xs = [i + k * width for i, c in enumerate(cases) if (c, peer) in ratios]
        ys = [ratios[(c, peer)] for c in cases if (c, peer) in ratios]
        axes.bar(xs, ys, width, label=peer)
    axes.axhline(1.0, color="black", linewidth=0.8)
    axes.set_xticks([i + width * (len(peers) - 1) / 2 for i in range(len(cases))])
    axes.set_xticklabels(cases, rotation=60, ha="right")
    axes.set_yscale("log")
    axes.set_ylabel("stax time / peer time (below 1: stax faster)")
    axes.set_title("tp-bench: median of rounds, same run")
    axes.legend()
    figure.tight_layout()
    figure.savefig(path, dpi=120)


def serve():
    threads = int(os.environ.get("OMP_NUM_THREADS", "1"))
    case, ratios = None, {}
    say("hello")
    for line in sys.stdin:
        words = line.split()
        if not words:
            continue
        try:
            if words[0] == "quit":
                break
            elif words[0] == "case":
                name, directory, names, peers, model = words[1:6]
                case = Case(name, directory, names.split(","), model, threads)
                ready = case.setup(peers.split(","))
                say("ready " + " ".join(ready))
            elif words[0] == "check":
                if case is None or case.oracle is None:
                    say("check none")
                else:
                    a, r, ok = compare(np.load(words[2]), case.oracle)
                    say(f"check {case.oracle_name} {a:.6g} {r:.6g} {'pass' if ok else 'FAIL'}")
            elif words[0] == "time":
                say("times " + " ".join(f"{t:.9f}" for t in case.time(words[1], int(words[2]))))
            elif words[0] == "ratio":
                ratios[(words[1], words[2])] = float(words[3])
                say("ok")
            elif words[0] == "plot":
                plot(words[1], ratios)
                say("plotted " + words[1])
            else:
                say(f"error unknown command '{words[0]}'")
        except Exception as error:
            say(f"error {type(error).__name__}: {str(error)[:500]}".replace("\n", " "))


if __name__ == "__main__":
    if sys.argv[1:] != ["--serve"]:
        sys.exit(__doc__)
    serve()
