#!/usr/bin/env python3
"""Writes the conformance corpus (the .tpir files next to this script).

The corpus is committed; run this after changing it here, then run the
coverage test (ctest -R sdk_corpus). Every file is a graph written with f32
inputs (the "base" dtype) plus `# @` directives that the kit reads
(tools/tp-backends/conformance.h): the dtype variants, input ranges, symbol
bindings, options and expected errors. A new op of core/ops/op_list.def
needs a case here, or the coverage test fails.
"""
import os
import shutil

HERE = os.path.dirname(os.path.abspath(__file__))
ALL = "f32 f64 i32 i64 bool f16 bf16"
NUMERIC = "f32 f64 i32 i64 f16 bf16"
FLOATS = "f32 f64 f16 bf16"

files = {}


def case(path, about, graph, dtypes=None, ranges=(), binds=(), extra=()):
    lines = [f"# {about}"]
    if dtypes:
        lines.append(f"# @dtypes {dtypes}")
    lines += [f"# @range {r}" for r in ranges]
    lines += [f"# @bind {b}" for b in binds]
    lines += [f"# @{e}" for e in extra]
    files[path] = "\n".join(lines) + "\n" + graph.strip() + "\n"


# ---- unary pointwise ------------------------------------------------------------
UNARY = {
    # op: (dtypes, range, f32 result)
    "neg": (NUMERIC, None, "f32"), "abs": (NUMERIC, None, "f32"),
    "exp": (ALL, None, "f32"), "log": (ALL, "0.25 4", "f32"),
    "sqrt": (ALL, "0.25 4", "f32"), "rsqrt": (ALL, "0.25 4", "f32"),
    "sin": (ALL, None, "f32"), "cos": (ALL, None, "f32"), "tanh": (ALL, None, "f32"),
    "sigmoid": (ALL, "-6 6", "f32"), "relu": (ALL, None, "f32"), "erf": (ALL, None, "f32"),
    "floor": (ALL, None, "f32"), "ceil": (ALL, None, "f32"), "sign": (NUMERIC, None, "f32"),
    "logical_not": (ALL, "-1 1", "bool"),
}
for op, (dtypes, rng, out) in UNARY.items():
    case(f"pointwise/{op}.tpir", f"{op} on a 3x5 tensor",
         f"graph {op}_case(%x: f32[3, 5]) {{\n  %y: {out}[3, 5] = {op}(%x)\n  return %y\n}}",
         dtypes, [rng] if rng else [])

for target in ["f32", "f64", "i32", "i64", "bool"]:
    case(f"pointwise/cast_to_{target}.tpir",
         f"cast to {target}: truncation toward zero, 0/1 for bool",
         f"graph cast_to_{target}(%x: f32[3, 5]) {{\n"
         f"  %y: {target}[3, 5] = cast(%x) {{dtype={target}}}\n  return %y\n}}",
         ALL, ["-3.5 3.5"])

# ---- binary pointwise -------------------------------------------------------------
BINARY = {
    "add": (NUMERIC, [], "f32"), "sub": (NUMERIC, [], "f32"), "mul": (NUMERIC, [], "f32"),
    "div": (ALL, ["y 0.5 4"], "f32"), "pow": (NUMERIC, ["x 0.5 3", "y -2 3"], "f32"),
    "maximum": (ALL, ["-2 2"], "f32"), "minimum": (ALL, ["-2 2"], "f32"),
    "lt": (ALL, ["-2 2"], "bool"), "le": (ALL, ["-2 2"], "bool"),
    "gt": (ALL, ["-2 2"], "bool"), "ge": (ALL, ["-2 2"], "bool"),
    "eq": (ALL, ["-1 1"], "bool"), "ne": (ALL, ["-1 1"], "bool"),
    "logical_and": (ALL, ["-1 1"], "bool"), "logical_or": (ALL, ["-1 1"], "bool"),
}
for op, (dtypes, rng, out) in BINARY.items():
    case(f"pointwise/{op}.tpir", f"{op} of two 3x5 tensors",
         f"graph {op}_case(%x: f32[3, 5], %y: f32[3, 5]) {{\n"
         f"  %z: {out}[3, 5] = {op}(%x, %y)\n  return %z\n}}", dtypes, rng)

case("pointwise/where.tpir", "where(cond, x, y) with a bool condition",
     "graph where_case(%c: bool[3, 5], %x: f32[3, 5], %y: f32[3, 5]) {\n"
     "  %z: f32[3, 5] = where(%c, %x, %y)\n  return %z\n}", ALL)

# ---- reductions ---------------------------------------------------------------------
REDUCE_OUT = {"sum": "f32", "mean": "f32", "max": "f32", "min": "f32"}
for op in REDUCE_OUT:
    case(f"reduction/{op}_axis.tpir", f"{op} over axis 1 of a 3x4x5 tensor",
         f"graph {op}_axis(%x: f32[3, 4, 5]) {{\n"
         f"  %y: f32[3, 5] = {op}(%x) {{axes=[1], keepdim=false}}\n  return %y\n}}", ALL)
    case(f"reduction/{op}_keepdim.tpir", f"{op} over axes 0 and -1, keepdim",
         f"graph {op}_keepdim(%x: f32[3, 4, 5]) {{\n"
         f"  %y: f32[1, 4, 1] = {op}(%x) {{axes=[0, -1], keepdim=true}}\n  return %y\n}}", ALL)
    case(f"reduction/{op}_all.tpir", f"{op} over every axis (axes=[])",
         f"graph {op}_all(%x: f32[6, 7]) {{\n"
         f"  %y: f32[] = {op}(%x) {{axes=[], keepdim=false}}\n  return %y\n}}", ALL)
case("reduction/argmax_last.tpir", "argmax along the last axis (first maximum wins)",
     "graph argmax_last(%x: f32[4, 6]) {\n"
     "  %y: i64[4] = argmax(%x) {axis=-1, keepdim=false}\n  return %y\n}", ALL, ["-2 2"])
case("reduction/argmax_keepdim.tpir", "argmax along axis 0, keepdim",
     "graph argmax_keepdim(%x: f32[5, 3]) {\n"
     "  %y: i64[1, 3] = argmax(%x) {axis=0, keepdim=true}\n  return %y\n}", ALL, ["-2 2"])

# ---- matmul ---------------------------------------------------------------------------
case("matmul/matrix.tpir", "matmul of 3x4 and 4x5",
     "graph matmul_matrix(%a: f32[3, 4], %b: f32[4, 5]) {\n"
     "  %c: f32[3, 5] = matmul(%a, %b)\n  return %c\n}", NUMERIC)
case("matmul/batched.tpir", "matmul with a broadcast batch dimension",
     "graph matmul_batched(%a: f32[2, 3, 4], %b: f32[4, 5]) {\n"
     "  %c: f32[2, 3, 5] = matmul(%a, %b)\n  return %c\n}", NUMERIC)
case("matmul/vector.tpir", "matmul of a vector and a matrix (NumPy 1-D rules)",
     "graph matmul_vector(%a: f32[4], %b: f32[4, 5]) {\n"
     "  %c: f32[5] = matmul(%a, %b)\n  return %c\n}", NUMERIC)

# ---- shape ops ---------------------------------------------------------------------------
SHAPE = [
    ("reshape", "reshape 3x4 to 2x6", "%x: f32[3, 4]", "%y: f32[2, 6] = reshape(%x) {shape=[2, 6]}"),
    ("reshape_infer", "reshape with a -1 dimension", "%x: f32[3, 4]",
     "%y: f32[4, 3] = reshape(%x) {shape=[4, -1]}"),
    ("permute", "permute a 2x3x4 tensor", "%x: f32[2, 3, 4]",
     "%y: f32[4, 2, 3] = permute(%x) {perm=[2, 0, 1]}"),
    ("transpose", "transpose a 3x4 matrix", "%x: f32[3, 4]",
     "%y: f32[4, 3] = transpose(%x) {dim0=0, dim1=1}"),
    ("expand", "expand 3x1 to 3x4", "%x: f32[3, 1]", "%y: f32[3, 4] = expand(%x) {shape=[3, 4]}"),
    ("slice_step", "slice rows 1..5 step 2", "%x: f32[6, 4]",
     "%y: f32[2, 4] = slice(%x) {axis=0, start=1, stop=5, step=2}"),
    ("slice_negative", "slice the last 3 columns", "%x: f32[6, 4]",
     "%y: f32[6, 3] = slice(%x) {axis=1, start=-3, stop=end, step=1}"),
    ("squeeze", "squeeze axis 1", "%x: f32[3, 1, 4]", "%y: f32[3, 4] = squeeze(%x) {axes=[1]}"),
    ("unsqueeze", "unsqueeze at axis 1", "%x: f32[3, 4]", "%y: f32[3, 1, 4] = unsqueeze(%x) {axis=1}"),
]
for name, about, inputs, node in SHAPE:
    case(f"shape/{name}.tpir", about,
         f"graph {name}_case({inputs}) {{\n  {node}\n  return %y\n}}", ALL)
case("shape/concat.tpir", "concat of three tensors along axis 0",
     "graph concat_case(%a: f32[2, 3], %b: f32[4, 3], %c: f32[1, 3]) {\n"
     "  %y: f32[7, 3] = concat(%a, %b, %c) {axis=0}\n  return %y\n}", ALL)
case("shape/concat_last.tpir", "concat along the last axis",
     "graph concat_last(%a: f32[2, 3], %b: f32[2, 2]) {\n"
     "  %y: f32[2, 5] = concat(%a, %b) {axis=-1}\n  return %y\n}", ALL)

# ---- creation ---------------------------------------------------------------------------------
PAYLOAD = {"f32": "[1.5, -2, 0.25, 3, -0.5, 8]", "f64": "[1.5, -2, 0.25, 3, -0.5, 8]",
           "i32": "[1, -2, 0, 3, -5, 8]", "i64": "[1, -2, 0, 3, -5, 8]", "bool": "[1, 0, 0, 1, 1, 0]"}
for dtype, payload in PAYLOAD.items():
    case(f"creation/constant_{dtype}.tpir", f"a {dtype} constant, returned and used",
         f"graph constant_{dtype}(%x: f32[2, 3]) {{\n"
         f"  %c: {dtype}[2, 3] = constant() {{value={payload}}}\n"
         f"  %y: {'f64' if dtype == 'f64' else 'f32'}[2, 3] = mul(%x, %c)\n  return %c, %y\n}}",
         None, [], [], ["group constant"])
for dtype, value in [("f32", "1.5"), ("f64", "-2.25"), ("i32", "7"), ("i64", "-3"), ("bool", "1")]:
    case(f"creation/full_{dtype}.tpir", f"full of {dtype}",
         f"graph full_{dtype}() {{\n"
         f"  %y: {dtype}[2, 3] = full() {{shape=[2, 3], value={value}, dtype={dtype}}}\n"
         f"  return %y\n}}")
for dtype, (start, stop, step, n) in {"f32": ("0", "5", "0.5", 10), "f64": ("-1", "1", "0.25", 8),
                                      "i32": ("0", "7", "2", 4), "i64": ("10", "0", "-3", 4)}.items():
    case(f"creation/arange_{dtype}.tpir", f"arange of {dtype}",
         f"graph arange_{dtype}() {{\n"
         f"  %y: {dtype}[{n}] = arange() {{start={start}, stop={stop}, step={step}, dtype={dtype}}}\n"
         f"  return %y\n}}")

# ---- composites ---------------------------------------------------------------------------------
COMPOSITE = [
    ("softmax", "%x: f32[3, 6]", "%y: f32[3, 6] = softmax(%x) {axis=-1}"),
    ("log_softmax", "%x: f32[3, 6]", "%y: f32[3, 6] = log_softmax(%x) {axis=1}"),
    ("layer_norm", "%x: f32[3, 8], %w: f32[8], %b: f32[8]",
     "%y: f32[3, 8] = layer_norm(%x, %w, %b) {axis=-1, eps=1e-05}"),
    ("layer_norm_plain", "%x: f32[3, 8]", "%y: f32[3, 8] = layer_norm(%x) {axis=1, eps=0.001}"),
    ("gelu", "%x: f32[3, 6]", "%y: f32[3, 6] = gelu(%x) {approximate=none}"),
    ("gelu_tanh", "%x: f32[3, 6]", "%y: f32[3, 6] = gelu(%x) {approximate=tanh}"),
    ("silu", "%x: f32[3, 6]", "%y: f32[3, 6] = silu(%x)"),
    ("softplus", "%x: f32[3, 6]", "%y: f32[3, 6] = softplus(%x) {beta=2, threshold=4}"),
    ("linear", "%x: f32[3, 4], %w: f32[5, 4], %b: f32[5]", "%y: f32[3, 5] = linear(%x, %w, %b)"),
    ("linear_nobias", "%x: f32[3, 4], %w: f32[5, 4]", "%y: f32[3, 5] = linear(%x, %w)"),
]
for name, inputs, node in COMPOSITE:
    case(f"composite/{name}.tpir", f"{name} (a composite op)",
         f"graph {name}_case({inputs}) {{\n  {node}\n  return %y\n}}",
         NUMERIC if name.startswith("linear") else ALL)

# ---- broadcasting ----------------------------------------------------------------------------------
case("broadcast/rank_mismatch.tpir", "3x1x5 plus 4x1: both sides broadcast, ranks differ",
     "graph rank_mismatch(%x: f32[3, 1, 5], %y: f32[4, 1]) {\n"
     "  %z: f32[3, 4, 5] = add(%x, %y)\n  return %z\n}", NUMERIC, [], [], ["group broadcast"])
case("broadcast/scalar.tpir", "a scalar times a matrix",
     "graph scalar_times(%s: f32[], %x: f32[3, 4]) {\n"
     "  %z: f32[3, 4] = mul(%s, %x)\n  return %z\n}", NUMERIC, [], [], ["group broadcast"])
case("broadcast/outer.tpir", "4x1 minus 1x5 (an outer difference)",
     "graph outer(%x: f32[4, 1], %y: f32[1, 5]) {\n"
     "  %z: f32[4, 5] = sub(%x, %y)\n  return %z\n}", NUMERIC, [], [], ["group broadcast"])
case("broadcast/where3.tpir", "where with three differently shaped operands",
     "graph where3(%c: bool[4, 1], %x: f32[1, 5], %y: f32[]) {\n"
     "  %z: f32[4, 5] = where(%c, %x, %y)\n  return %z\n}", ALL, [], [], ["group broadcast"])
case("broadcast/compare.tpir", "lt of 2x3x1 and 3x4",
     "graph compare_broadcast(%x: f32[2, 3, 1], %y: f32[3, 4]) {\n"
     "  %z: bool[2, 3, 4] = lt(%x, %y)\n  return %z\n}", ALL, ["-1 1"], [], ["group broadcast"])
case("broadcast/row_column.tpir", "a row vector and a column vector into a matrix",
     "graph row_column(%x: f32[5], %y: f32[7, 1]) {\n"
     "  %z: f32[7, 5] = maximum(%x, %y)\n  return %z\n}", ALL, [], [], ["group broadcast"])

# ---- fusion patterns ----------------------------------------------------------------------------------
case("fusion/softmax_decomposed.tpir", "softmax written out: max, sub, exp, sum, div",
     """graph softmax_decomposed(%x: f32[4, 9]) {
  %m: f32[4, 1] = max(%x) {axes=[1], keepdim=true}
  %s: f32[4, 9] = sub(%x, %m)
  %e: f32[4, 9] = exp(%s)
  %z: f32[4, 1] = sum(%e) {axes=[1], keepdim=true}
  %y: f32[4, 9] = div(%e, %z)
  return %y
}""", FLOATS, [], [], ["group fusion"])
case("fusion/layernorm_decomposed.tpir", "layer norm written out with reductions and rsqrt",
     """graph layernorm_decomposed(%x: f32[3, 8], %w: f32[8], %b: f32[8]) {
  %mu: f32[3, 1] = mean(%x) {axes=[-1], keepdim=true}
  %d: f32[3, 8] = sub(%x, %mu)
  %d2: f32[3, 8] = mul(%d, %d)
  %var: f32[3, 1] = mean(%d2) {axes=[-1], keepdim=true}
  %eps: f32[] = constant() {value=[1e-05]}
  %ve: f32[3, 1] = add(%var, %eps)
  %r: f32[3, 1] = rsqrt(%ve)
  %n: f32[3, 8] = mul(%d, %r)
  %nw: f32[3, 8] = mul(%n, %w)
  %y: f32[3, 8] = add(%nw, %b)
  return %y
}""", "f32", [], [], ["group fusion"])
case("fusion/gelu_tanh_chain.tpir", "the tanh form of gelu as a chain of pointwise ops",
     """graph gelu_tanh_chain(%x: f32[5, 6]) {
  %half: f32[] = constant() {value=[0.5]}
  %one: f32[] = constant() {value=[1]}
  %c: f32[] = constant() {value=[0.7978846]}
  %k: f32[] = constant() {value=[0.044715]}
  %x2: f32[5, 6] = mul(%x, %x)
  %x3: f32[5, 6] = mul(%x2, %x)
  %kx3: f32[5, 6] = mul(%k, %x3)
  %inner: f32[5, 6] = add(%x, %kx3)
  %scaled: f32[5, 6] = mul(%c, %inner)
  %t: f32[5, 6] = tanh(%scaled)
  %onet: f32[5, 6] = add(%one, %t)
  %hx: f32[5, 6] = mul(%half, %x)
  %y: f32[5, 6] = mul(%hx, %onet)
  return %y
}""", "f32", [], [], ["group fusion"])
case("fusion/elementwise_chain.tpir", "a chain whose intermediate is also an output",
     """graph elementwise_chain(%x: f32[6, 7], %y: f32[6, 7]) {
  %a: f32[6, 7] = add(%x, %y)
  %b: f32[6, 7] = mul(%a, %x)
  %c: f32[6, 7] = sub(%b, %y)
  %d: f32[6, 7] = relu(%c)
  %e: f32[6, 7] = neg(%d)
  %f: f32[6, 7] = exp(%e)
  return %f, %a
}""", FLOATS, [], [], ["group fusion"])
case("fusion/shared_producer.tpir", "one producer feeding a reduction and a pointwise op",
     """graph shared_producer(%x: f32[5, 4]) {
  %t: f32[5, 4] = exp(%x)
  %u: f32[4] = sum(%t) {axes=[0], keepdim=false}
  %v: f32[5, 4] = mul(%t, %x)
  return %u, %v
}""", FLOATS, [], [], ["group fusion"])
case("fusion/reduce_broadcast_back.tpir", "x minus its row mean, then squared and summed",
     """graph reduce_broadcast_back(%x: f32[4, 6]) {
  %m: f32[4, 1] = mean(%x) {axes=[1], keepdim=true}
  %c: f32[4, 6] = sub(%x, %m)
  %s: f32[4, 6] = mul(%c, %c)
  %v: f32[4] = sum(%s) {axes=[1], keepdim=false}
  return %c, %v
}""", FLOATS, [], [], ["group fusion"])
case("fusion/compare_select.tpir", "leaky relu through gt and where",
     """graph compare_select(%x: f32[4, 6]) {
  %zero: f32[] = constant() {value=[0]}
  %slope: f32[] = constant() {value=[0.1]}
  %p: bool[4, 6] = gt(%x, %zero)
  %small: f32[4, 6] = mul(%x, %slope)
  %y: f32[4, 6] = where(%p, %x, %small)
  return %y
}""", FLOATS, [], [], ["group fusion"])

# ---- dynamic shapes --------------------------------------------------------------------------------------
case("dynamic/pointwise.tpir", "pointwise ops on a symbolic batch dimension",
     """graph dynamic_pointwise(%x: f32[n, 4], %y: f32[n, 4]) {
  %a: f32[n, 4] = add(%x, %y)
  %b: f32[n, 4] = tanh(%a)
  return %b
}""", FLOATS, [], ["n=1", "n=3", "n=17"], ["group dynamic"])
case("dynamic/broadcast.tpir", "a symbolic matrix plus a row of the same symbolic width",
     """graph dynamic_broadcast(%x: f32[n, m], %b: f32[m]) {
  %y: f32[n, m] = add(%x, %b)
  return %y
}""", FLOATS, [], ["n=2 m=3", "n=5 m=1", "n=1 m=7"], ["group dynamic"])
case("dynamic/reduction.tpir", "reductions over symbolic dimensions",
     """graph dynamic_reduction(%x: f32[n, m]) {
  %s: f32[n] = sum(%x) {axes=[1], keepdim=false}
  %mx: f32[m] = max(%x) {axes=[0], keepdim=false}
  return %s, %mx
}""", FLOATS, [], ["n=3 m=4", "n=1 m=9", "n=8 m=1"], ["group dynamic"])
case("dynamic/softmax_chain.tpir", "decomposed softmax with symbolic sizes",
     """graph dynamic_softmax(%x: f32[n, m]) {
  %mx: f32[n, 1] = max(%x) {axes=[1], keepdim=true}
  %s: f32[n, m] = sub(%x, %mx)
  %e: f32[n, m] = exp(%s)
  %z: f32[n, 1] = sum(%e) {axes=[1], keepdim=true}
  %y: f32[n, m] = div(%e, %z)
  return %y
}""", FLOATS, [], ["n=2 m=5", "n=6 m=3"], ["group dynamic"])

# ---- edge cases ---------------------------------------------------------------------------------------------
case("edge/scalars.tpir", "rank-0 tensors",
     """graph scalars(%x: f32[], %y: f32[]) {
  %a: f32[] = add(%x, %y)
  %b: f32[] = exp(%a)
  return %b
}""", NUMERIC, [], [], ["group edge"])
case("edge/empty.tpir", "size-0 dimensions: pointwise and a sum over the empty axis",
     """graph empty(%x: f32[0, 4], %y: f32[0, 4]) {
  %a: f32[0, 4] = mul(%x, %y)
  %s: f32[4] = sum(%x) {axes=[0], keepdim=false}
  return %a, %s
}""", FLOATS, [], [], ["group edge"])
case("edge/rank8.tpir", "eight dimensions (TP_MAX_DIMS)",
     """graph rank8(%x: f32[2, 1, 2, 1, 2, 1, 2, 3], %y: f32[2, 3]) {
  %a: f32[2, 1, 2, 1, 2, 1, 2, 3] = mul(%x, %y)
  %s: f32[1, 2, 1, 2, 1, 2] = sum(%a) {axes=[0, 7], keepdim=false}
  return %a, %s
}""", FLOATS, [], [], ["group edge"])
case("edge/output_is_input.tpir", "an input returned unchanged, next to a computed output",
     """graph output_is_input(%x: f32[3, 4]) {
  %y: f32[3, 4] = neg(%x)
  return %x, %y
}""", FLOATS, [], [], ["group edge"])
case("edge/repeated_output.tpir", "the same value returned twice",
     """graph repeated_output(%x: f32[3, 4]) {
  %y: f32[3, 4] = exp(%x)
  return %y, %y
}""", FLOATS, [], [], ["group edge"])
case("edge/large.tpir", "a large pointwise op and reduction (exercises parallel loops)",
     """graph large(%x: f32[256, 300], %y: f32[256, 300]) {
  %a: f32[256, 300] = add(%x, %y)
  %s: f32[256] = sum(%a) {axes=[1], keepdim=false}
  return %a, %s
}""", FLOATS, [], [], ["group edge"])
case("edge/special_values.tpir", "inf, -inf and NaN through pointwise ops and reductions",
     """graph special_values(%x: f32[4]) {
  %c: f32[4] = constant() {value=[inf, -inf, nan, 0]}
  %a: f32[4] = add(%x, %c)
  %m: f32[4] = maximum(%x, %c)
  %e: f32[4] = exp(%c)
  %r: f32[4] = relu(%c)
  %mx: f32[] = max(%c) {axes=[], keepdim=false}
  return %a, %m, %e, %r, %mx
}""", "f32", [], [], ["group edge"])

# ---- indexing (indices are i64 inputs; the variants change the data's dtype) ----------------
case("shape/gather.tpir", "gather rows by a 2-D index tensor (an embedding lookup), negative indices",
     "graph gather_case(%table: f32[6, 4], %ids: i64[2, 3]) {\n"
     "  %y: f32[2, 3, 4] = gather(%table, %ids) {axis=0}\n  return %y\n}",
     ALL, ["ids -6 5"])
case("shape/gather_elements.tpir", "gather_elements along the last axis (take_along_axis)",
     "graph gather_elements_case(%x: f32[3, 5], %ids: i64[3, 2]) {\n"
     "  %y: f32[3, 2] = gather_elements(%x, %ids) {axis=-1}\n  return %y\n}",
     ALL, ["ids -5 4"])

# ---- sliding windows over NCHW data (window/) ----------------------------------------------
case("window/conv.tpir", "conv 3x3, stride 2, asymmetric pads, with a bias",
     "graph conv_case(%x: f32[2, 3, 7, 6], %w: f32[4, 3, 3, 3], %b: f32[4]) {\n"
     "  %y: f32[2, 4, 4, 3] = conv(%x, %w, %b) {strides=[2, 2], pads=[1, 0, 1, 1], dilations=[], group=1}\n"
     "  return %y\n}",
     FLOATS)
case("window/conv_depthwise.tpir", "depthwise conv (group = channels), 3x3, pad 1",
     "graph conv_depthwise_case(%x: f32[1, 4, 6, 6], %w: f32[4, 1, 3, 3]) {\n"
     "  %y: f32[1, 4, 6, 6] = conv(%x, %w) {strides=[], pads=[1, 1, 1, 1], dilations=[], group=4}\n"
     "  return %y\n}",
     FLOATS)
case("window/conv_transpose.tpir", "conv_transpose 3x3, stride 2, pads and output_padding",
     "graph conv_transpose_case(%x: f32[1, 3, 4, 4], %w: f32[3, 2, 3, 3]) {\n"
     "  %y: f32[1, 2, 8, 8] = conv_transpose(%x, %w) {strides=[2, 2], pads=[1, 1, 1, 1], "
     "dilations=[], group=1, output_padding=[1, 1]}\n"
     "  return %y\n}",
     FLOATS)
case("window/max_pool.tpir", "max_pool 3x3, stride 2, pad 1 (ResNet's stem)",
     "graph max_pool_case(%x: f32[1, 2, 9, 9]) {\n"
     "  %y: f32[1, 2, 5, 5] = max_pool(%x) {kernel_shape=[3, 3], strides=[2, 2], "
     "pads=[1, 1, 1, 1], dilations=[], ceil_mode=false}\n"
     "  return %y\n}",
     NUMERIC)
case("window/avg_pool.tpir", "avg_pool 2x2, stride 2, ceil_mode, padding counted",
     "graph avg_pool_case(%x: f32[1, 2, 6, 6]) {\n"
     "  %y: f32[1, 2, 4, 4] = avg_pool(%x) {kernel_shape=[2, 2], strides=[2, 2], "
     "pads=[1, 1, 0, 0], dilations=[], ceil_mode=true, count_include_pad=true}\n"
     "  return %y\n}",
     FLOATS)
# ---- pad, clip, topk, cumsum, resize, batch_norm --------------------------------------------------------------
case("shape/pad.tpir", "pad in reflect mode: 1 before both axes, 3 after axis 1",
     "graph pad_case(%x: f32[3, 4]) {\n"
     "  %y: f32[4, 8] = pad(%x) {value=0, before=[1, 1], after=[0, 3], mode=reflect}\n"
     "  return %y\n}", ALL)
case("shape/pad_constant.tpir", "pad with a constant, cropping one axis",
     "graph pad_constant(%x: f32[3, 4]) {\n"
     "  %y: f32[5, 3] = pad(%x) {value=2.5, before=[2, -1], after=[0, 0], mode=constant}\n"
     "  return %y\n}", ALL)
case("pointwise/clip.tpir", "clip to [-1, 1.5] (relu6 is clip to [0, 6])",
     "graph clip_case(%x: f32[3, 5]) {\n"
     "  %y: f32[3, 5] = clip(%x) {min=-1, max=1.5}\n  return %y\n}", NUMERIC, ["-3 3"])
case("reduction/topk.tpir", "topk: the 2 largest along axis 1",
     "graph topk_case(%x: f32[3, 5]) {\n"
     "  %y: f32[3, 2] = topk(%x) {axis=1, k=2, largest=true}\n  return %y\n}", NUMERIC)
case("reduction/topk_indices.tpir", "topk_indices: positions of the 3 smallest along axis 0",
     "graph topk_indices_case(%x: f32[4, 3]) {\n"
     "  %y: i64[3, 3] = topk_indices(%x) {axis=0, k=3, largest=false}\n  return %y\n}",
     NUMERIC)
case("reduction/cumsum.tpir", "cumsum along axis 1, exclusive and reversed",
     "graph cumsum_case(%x: f32[3, 5]) {\n"
     "  %y: f32[3, 5] = cumsum(%x) {axis=1, exclusive=true, reverse=true}\n  return %y\n}",
     NUMERIC)
case("shape/resize_nearest.tpir", "resize nearest x2 (asymmetric, floor: torch's nearest)",
     "graph resize_nearest(%x: f32[1, 2, 3, 4]) {\n"
     "  %y: f32[1, 2, 6, 8] = resize(%x) {shape=[-1, -1, 6, 8], mode=nearest, "
     "coordinates=asymmetric, rounding=floor, scale_h=0, scale_w=0}\n  return %y\n}", ALL)
case("shape/resize_linear.tpir", "resize bilinear to 5x7 (half_pixel)",
     "graph resize_linear(%x: f32[1, 2, 3, 4]) {\n"
     "  %y: f32[1, 2, 5, 7] = resize(%x) {shape=[-1, -1, 5, 7], mode=linear, "
     "coordinates=half_pixel, rounding=round_prefer_floor, scale_h=0, scale_w=0}\n"
     "  return %y\n}", FLOATS)
case("composite/batch_norm.tpir", "batch_norm for inference over the channels of [2, 3, 4, 4]",
     "graph batch_norm_case(%x: f32[2, 3, 4, 4], %scale: f32[3], %bias: f32[3], %mean: f32[3], "
     "%var: f32[3]) {\n"
     "  %y: f32[2, 3, 4, 4] = batch_norm(%x, %scale, %bias, %mean, %var) {eps=0.001}\n"
     "  return %y\n}", ALL, ["var 0.25 2"])

# ---- error paths --------------------------------------------------------------------------------------------------
case("errors/unknown_option.tpir",
     "an option the backend does not know must fail compile, naming the option",
     """graph unknown_option(%x: f32[3]) {
  %y: f32[3] = exp(%x)
  return %y
}""", "f32", [], [],
     ["option tp_conformance_no_such_option=1", "expect error tp_conformance_no_such_option",
      "group errors"])


def main():
    for sub in os.listdir(HERE):
        if os.path.isdir(os.path.join(HERE, sub)):
            shutil.rmtree(os.path.join(HERE, sub))
    for path, text in files.items():
        full = os.path.join(HERE, path)
        os.makedirs(os.path.dirname(full), exist_ok=True)
        with open(full, "w") as out:
            out.write(text)
    print(f"wrote {len(files)} files")


if __name__ == "__main__":
    main()
