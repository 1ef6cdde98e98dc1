#!/usr/bin/python3
"""NumPy oracle for every op of core/ops/op_list.def.

Usage: /usr/bin/python3 gen_op_cases.py OUTPUT_DIR

Writes, for each case, its input .npy files and its expected .npy into
OUTPUT_DIR, and one line per case into OUTPUT_DIR/manifest.txt. The C side
(tests/numpy/test_numpy_ops.c) runs each case through tp_op (and through a
one-node graph) and compares. Deterministic: fixed seed, same bytes each run.

Manifest format (plain text, one case per line, '#' starts a comment line):

  CASE NAME key=value key=value ...

  op=NAME            op table name
  dtype=D            dtype the case stands for in the coverage check: the
                     first input's dtype, or the created dtype for creation ops
  inputs=F1,F2,...   input .npy files (relative to OUTPUT_DIR); '-' = none
  expected=F         expected output .npy; '-' for expect_error cases
  rtol=R atol=A      pass when |got - expected| <= atol + rtol * |expected|
                     (NaN must be NaN, +-Inf must be equal; 0/0 = exact)
  attrs=K:V;K:V      tp_attrs fields; '-' = none (all defaults). Keys are the
                     tp_attr_key names in lower case: axes, keepdim, shape,
                     perm, axis, dim0, dim1, start, stop, step, range_start,
                     range_stop, range_step, dtype, value, eps, approximate,
                     beta, threshold, data, kernel_shape, strides, pads,
                     dilations, output_padding, group, ceil_mode,
                     count_include_pad. Lists are "[1,-1]" ("[]" empty);
                     ints are decimal ("end" = TP_SLICE_END); floats are
                     Python repr ("nan", "inf", "-inf" allowed); dtype is
                     f32|f64|i32|i64|bool; approximate none|tanh; keepdim, ceil_mode,
                     count_include_pad 0|1;
                     data names a .npy file (the constant's payload).
                     f32|f64|i32|i64|bool; approximate none|tanh; keepdim 0|1;
                     data names a .npy file (the constant's payload). The
                     keys after data (before, after, mode, min, max, k,
                     largest, exclusive, reverse, coordinates, rounding,
                     scale_h, scale_w) are their .tpir names, bools 0|1,
                     enums by name.
  expect_error=S     (optional) the op must fail with tp_status S, written as
                     tp_status_name with '_' for ' ' (dtype, shape,
                     invalid_argument, ...) or "any" for any failure; the
                     message must name the op.

How expected values are computed: the inputs are first converted to the
dtype our promotion rules (include/tensorplay/tensor.h) compute in, then the
math is done in float64 (floats) or int64 (integers) and the result is cast
to the dtype our rules give. So f32 results are correctly rounded values of
the exact function of the f32 inputs.

Tolerances (rtol / atol), by result dtype and op class:
  integer and bool results                  exact (0 / 0)
  f32 simple (arithmetic, compare, shape,
      creation, cast, floor, ...)           1e-6 / 1e-6
  f32 transcendental (exp log sin erf pow)  1e-5 / 1e-6
  f32 accumulating (reductions, matmul,
      composites)                           1e-4 / 1e-5
  f64 simple                                1e-12 / 1e-14
  f64 transcendental                        1e-12 / 1e-13
  f64 accumulating                          1e-10 / 1e-12
  matmul and linear raise atol to 8 ulp of max(|a| @ |b|): rounding error of
  a dot product scales with its terms, not with its (possibly cancelled) sum.

f16 and bf16 (storage dtypes, computed in f32 and rounded on store): after
the main run, every generator runs once more per storage dtype S with
DTYPES = [S], and only the cases whose dtype is S are kept (see
storage_pass). f16 is NumPy's float16, so its expected values are the exact
math on the f16 inputs rounded to f16 by NumPy. NumPy has no bfloat16: in the
bf16 pass a float32 array stands for a bf16 one (every float32 array of that
pass is bf16), values()/specials() round their output to bf16 (to nearest,
ties to even, by bit manipulation: bf16_round), a case whose float32 input is
not exactly a bf16 (an input transformed after values()) is dropped, and the
expected float32 is rounded to bf16 (a second rounding, far inside the
tolerance). bf16 files use the structured dtype [('bfloat16', '<u2')] of
docs/npy-bf16.md; casts to and from f32 are written by hand
(gen_storage_casts). Tolerances are a few units of the format's precision
(f16 2^-11, bf16 2^-8): the f32 computation rounded once differs from the
exact result rounded once only at ties, by one ulp.
"""

import math
import os
import sys
import time

try:
    import numpy as np
except ImportError:
    sys.exit("gen_op_cases.py needs /usr/bin/python3 with NumPy "
             "(apt-get install python3-numpy)")

DTYPES = ["f32", "f64", "i32", "i64", "bool"]
NP = {"f32": np.float32, "f64": np.float64, "i32": np.int32, "i64": np.int64,
      "bool": np.bool_}
FLOATS = ["f32", "f64"]
INTS = ["i32", "i64"]
# bool < integers < floats; inside a category by width (tensor.h).
RANK = {"bool": 0, "i32": 1, "i64": 2, "f32": 3, "f64": 4}

TOLS = {
    ("f16", "simple"): (1e-3, 1e-3),
    ("f16", "transc"): (2e-3, 1e-3),
    ("f16", "accum"): (1e-2, 1e-2),
    ("bf16", "simple"): (8e-3, 8e-3),
    ("bf16", "transc"): (1.6e-2, 8e-3),
    ("bf16", "accum"): (6e-2, 6e-2),
    ("f32", "simple"): (1e-6, 1e-6),
    ("f32", "transc"): (1e-5, 1e-6),
    ("f32", "accum"): (1e-4, 1e-5),
    ("f64", "simple"): (1e-12, 1e-14),
    ("f64", "transc"): (1e-12, 1e-13),
    ("f64", "accum"): (1e-10, 1e-12),
}

SPECIALS = [math.nan, math.inf, -math.inf, -0.0, 0.0, 1.0, -1.0, 0.5, -2.5, 3.0,
            1e-20, -1e-20, 50.0, -50.0]

rng = np.random.default_rng(20240607)


def promote(*dts):
    return max(dts, key=RANK.get)


def is_float(dt):
    return dt in FLOATS


def compute_dtype(dt):
    """NumPy dtype the math is done in for values of tp dtype `dt`."""
    return np.float64 if is_float(dt) else (np.bool_ if dt == "bool" else np.int64)


def up(x, dt):
    """x as our rules see it in dtype dt, widened for the computation."""
    return np.asarray(x).astype(NP[dt]).astype(compute_dtype(dt))


def dt_of(x):
    if STORAGE == "bf16" and x.dtype == np.float32:
        return "bf16"  # the bf16 pass: every float32 array is a bf16 one
    if x.dtype == BF16_DTYPE:
        return "bf16"
    if x.dtype == np.float16:
        return "f16"
    for name, t in NP.items():
        if x.dtype == t:
            return name
    raise ValueError(x.dtype)


# ---------------------------------------------------------------- values

def rand_shape(rank=None, zero=False, maxdim=5):
    if rank is None:
        rank = int(rng.integers(0, 5))
    dims = [int(d) for d in rng.integers(1, maxdim + 1, size=rank)]
    if zero and rank > 0:
        dims[int(rng.integers(rank))] = 0
    return tuple(dims)


# The storage pass running (None, "f16" or "bf16"): see storage_pass.
STORAGE = None
BF16_DTYPE = np.dtype([("bfloat16", "<u2")])


def bf16_round(x):
    """float32 array of the bf16 nearest to each element of x (ties to even;
    a NaN stays a NaN). Written for this oracle: add 0x7FFF plus the lowest
    kept bit to the float32 bits and clear the low 16."""
    f = np.asarray(x, dtype=np.float32)
    u = f.view(np.uint32).astype(np.uint64)
    sixteen, one = np.uint64(16), np.uint64(1)
    rounded = ((u + np.uint64(0x7FFF) + ((u >> sixteen) & one)) >> sixteen) << sixteen
    out = rounded.astype(np.uint32).view(np.float32).reshape(f.shape)
    return np.where(np.isnan(f), f, out).astype(np.float32)


def bf16_bits(x):
    """The bf16 file form of a bf16-valued float32 array."""
    f = np.asarray(x, dtype=np.float32)
    bits = (f.reshape(-1).view(np.uint32) >> np.uint32(16)).astype(np.uint16)
    return bits.view(BF16_DTYPE).reshape(f.shape)  # (0-d stays 0-d)


def bf16_exact(x):
    f = np.asarray(x, dtype=np.float32)
    low = f.view(np.uint32) & np.uint32(0xFFFF)
    return bool(np.all(np.isnan(f) | (low == 0)))


def values(shape, dt, lo=None, hi=None, scale=3.0):
    if dt == "bf16":
        return bf16_round(values(shape, "f32", lo, hi, scale))
    if dt == "bool":
        return rng.random(shape) < 0.5
    if dt in INTS:
        lo = -20 if lo is None else lo
        hi = 20 if hi is None else hi
        return rng.integers(lo, hi + 1, size=shape).astype(NP[dt])
    x = rng.standard_normal(shape) * scale
    if lo is not None:
        x = np.clip(x, lo, hi)
    return x.astype(NP[dt])


def specials(dt, extra=()):
    v = np.array(SPECIALS + list(extra), dtype=np.float64)
    if dt == "bf16":
        return bf16_round(v.reshape(-1))
    return v.reshape(-1).astype(NP[dt])


# ---------------------------------------------------------------- writer

def fmt_float(v):
    return repr(float(v))


class Writer:
    def __init__(self, outdir):
        self.outdir = outdir
        self.lines = []
        self.names = set()
        self.nbytes = 0

    def _save(self, fname, arr):
        path = os.path.join(self.outdir, fname)
        if STORAGE == "bf16" and np.asarray(arr).dtype == np.float32:
            arr = bf16_bits(arr)
        np.save(path, np.array(arr, order="C"))  # (ascontiguousarray makes 0-d 1-d)
        self.nbytes += os.path.getsize(path)
        return fname

    def _name(self, name):
        base, n = name, 1
        while name in self.names:
            n += 1
            name = "%s_%d" % (base, n)
        self.names.add(name)
        return name

    def case(self, name, op, inputs, expected=None, tol="simple", attrs=None,
             expect_error=None, dtype=None, min_atol=0.0):
        """inputs: list of typed arrays; expected: typed array (its dtype is
        the dtype our rules give); attrs: dict key -> value (lists, ints,
        floats, str; np arrays for data)."""
        if STORAGE is not None:
            case_dtype = dtype if dtype is not None else dt_of(np.asarray(inputs[0]))
            if case_dtype != STORAGE:
                return  # the main run has it
            if STORAGE == "bf16":
                if any(np.asarray(x).dtype == np.float32 and not bf16_exact(x) for x in inputs):
                    return  # an input was transformed off the bf16 grid
                if any(v == "f32" for v in (attrs or {}).values()):
                    return  # f32 is spelled by hand in gen_storage_casts
                if expected is not None and np.asarray(expected).dtype == np.float32:
                    expected = bf16_round(expected)
            name = STORAGE + "_pass_" + name
        name = self._name(name)
        files = []
        for i, x in enumerate(inputs):
            files.append(self._save("%s.in%d.npy" % (name, i), np.asarray(x)))
        parts = []
        for key, v in (attrs or {}).items():
            if key == "data":
                v = self._save("%s.data.npy" % name, np.asarray(v))
            elif isinstance(v, (list, tuple)):
                v = "[" + ",".join(str(int(e)) for e in v) + "]"
            elif isinstance(v, bool):
                v = "1" if v else "0"
            elif isinstance(v, float):
                v = fmt_float(v)
            elif isinstance(v, (int, np.integer)):
                v = str(int(v))
            parts.append("%s:%s" % (key, v))
        if dtype is None:
            dtype = dt_of(np.asarray(inputs[0]))
        line = "CASE %s op=%s dtype=%s inputs=%s" % (name, op, dtype, ",".join(files) or "-")
        if expect_error:
            line += " expected=- rtol=0 atol=0"
        else:
            expected = np.asarray(expected)
            out_dt = dt_of(expected)
            rtol, atol = TOLS.get((out_dt, tol), (0.0, 0.0))
            if is_float(out_dt):
                atol = max(atol, min_atol)
            line += " expected=%s rtol=%g atol=%g" % (
                self._save("%s.out.npy" % name, expected), rtol, atol)
        line += " attrs=%s" % (";".join(parts) or "-")
        if expect_error:
            line += " expect_error=%s" % expect_error
        self.lines.append(line)

    def finish(self):
        with open(os.path.join(self.outdir, "manifest.txt"), "w") as f:
            f.write("# NumPy oracle cases written by tests/oracle/gen_op_cases.py;"
                    " format documented there.\n")
            for line in self.lines:
                f.write(line + "\n")


def cast_out(y, dt):
    return np.asarray(y).astype(NP[dt])


# ---------------------------------------------------------------- unary

FLOAT_UNARY = {
    "exp": np.exp,
    "log": np.log,
    "sqrt": np.sqrt,
    "rsqrt": lambda x: 1.0 / np.sqrt(x),
    "sin": np.sin,
    "cos": np.cos,
    "tanh": np.tanh,
    "sigmoid": lambda x: 1.0 / (1.0 + np.exp(-x)),
    "erf": np.vectorize(math.erf, otypes=[np.float64]),
}
POSITIVE_DOMAIN = {"log", "sqrt", "rsqrt"}


def relu_ref(x):
    if x.dtype == np.bool_:
        return x
    return np.maximum(x, np.zeros((), x.dtype))  # NaN propagates, as np/PyTorch


KEEP_UNARY = {
    # name: (function, accepts bool)
    "neg": (np.negative, False),
    "abs": (np.abs, False),
    "sign": (np.sign, False),
    "relu": (relu_ref, True),
    "floor": (lambda x: np.floor(x) if x.dtype == np.float64 else x, True),
    "ceil": (lambda x: np.ceil(x) if x.dtype == np.float64 else x, True),
}


def gen_unary(w):
    for op, fn in FLOAT_UNARY.items():
        tol = "transc"
        for dt in DTYPES:
            out_dt = dt if is_float(dt) else "f32"
            shapes = [rand_shape(), rand_shape(zero=True)] if is_float(dt) else [rand_shape()]
            for k, shape in enumerate(shapes):
                if op in POSITIVE_DOMAIN and dt != "bool":
                    x = values(shape, dt, lo=-100, hi=100)
                    x = np.abs(x).astype(NP[dt]) + (NP[dt](1) if dt in INTS else NP[dt](0.01))
                    x = x.astype(NP[dt])
                else:
                    x = values(shape, dt)
                w.case("%s_%s_r%d_%d" % (op, dt, len(shape), k), op, [x],
                       cast_out(fn(up(x, out_dt)), out_dt), tol)
            if is_float(dt):
                x = specials(dt, [-3.0, 1e4, -1e4, 700.0, -700.0]).reshape(-1)
                w.case("%s_%s_special" % (op, dt), op, [x], cast_out(fn(up(x, dt)), dt), tol)
        # i64 beyond 2^24: converted to f32 first (tensor.h: integers give f32)
        x = np.array([16777217, -33554433, 3, 0], dtype=np.int64)
        if op in POSITIVE_DOMAIN:
            x = np.abs(x) + 1
        w.case("%s_i64_large" % op, op, [x], cast_out(fn(up(x, "f32")), "f32"), tol)

    for op, (fn, accepts_bool) in KEEP_UNARY.items():
        for dt in DTYPES:
            if dt == "bool" and not accepts_bool:
                w.case("%s_bool_rejected" % op, op, [values((3,), "bool")],
                       expect_error="dtype")
                continue
            for k, shape in enumerate([rand_shape(), rand_shape(zero=True)]):
                x = values(shape, dt)
                if is_float(dt) and op in ("floor", "ceil"):
                    x = (x * 1.7).astype(NP[dt])
                w.case("%s_%s_r%d_%d" % (op, dt, len(shape), k), op, [x],
                       cast_out(fn(up(x, dt)), dt))
            if is_float(dt):
                x = specials(dt, [2.5, -2.5, 1.5, -0.5, 1e15 + 0.5]).reshape(-1)
                w.case("%s_%s_special" % (op, dt), op, [x], cast_out(fn(up(x, dt)), dt))
        if op in ("neg", "abs", "sign"):
            x = np.array([-(2**40), 2**40 + 7, -5, 0], dtype=np.int64)
            w.case("%s_i64_large" % op, op, [x], cast_out(fn(up(x, "i64")), "i64"))

    # logical_not: any dtype -> bool; nonzero (NaN too) is true
    for dt in DTYPES:
        for k, shape in enumerate([rand_shape(), rand_shape(zero=True)]):
            x = values(shape, dt, lo=-2, hi=2) if dt in INTS else values(shape, dt)
            w.case("logical_not_%s_%d" % (dt, k), "logical_not", [x],
                   np.logical_not(up(x, dt) != 0))
        if is_float(dt):
            x = specials(dt)
            w.case("logical_not_%s_special" % dt, "logical_not", [x],
                   np.logical_not(up(x, dt) != 0))


def cast_ref(x, src, dst):
    v = up(x, src)
    if dst == "bool":
        return v != 0
    if dst in INTS and is_float(src):
        return np.trunc(v).astype(NP[dst])
    return v.astype(NP[dst])


def gen_cast(w):
    for src in DTYPES:
        for dst in DTYPES:
            shape = rand_shape(zero=(RANK[src] + RANK[dst]) % 4 == 0)
            if is_float(src):
                x = (values(shape, src) * 10).astype(NP[src])  # |x| well inside i32
            else:
                x = values(shape, src)
            w.case("cast_%s_to_%s" % (src, dst), "cast", [x], cast_ref(x, src, dst),
                   attrs={"dtype": dst})
            if is_float(src):
                # truncation toward zero, -0.0, halves; NaN/Inf only where defined
                x = np.array([2.5, -2.5, 0.99, -0.99, -0.0, 7.0, -7.0, 1e6 + 0.5],
                             dtype=NP[src])
                if not dst in INTS:
                    x = np.concatenate([x, np.array([math.nan, math.inf, -math.inf],
                                                    dtype=NP[src])])
                w.case("cast_%s_to_%s_edges" % (src, dst), "cast", [x],
                       cast_ref(x, src, dst), attrs={"dtype": dst})
    # rounding: i64 -> f32 nearest-even, f64 -> f32 nearest
    x = np.array([16777217, 16777219, -(2**53) - 1, 2**62], dtype=np.int64)
    w.case("cast_i64_to_f32_rounding", "cast", [x], cast_ref(x, "i64", "f32"),
           attrs={"dtype": "f32"})
    x = np.array([1 / 3, 1e-40, 1 + 2**-30, 3.4e38], dtype=np.float64)
    w.case("cast_f64_to_f32_rounding", "cast", [x], cast_ref(x, "f64", "f32"),
           attrs={"dtype": "f32"})


# ---------------------------------------------------------------- binary

def broadcast_pair(out_shape=None):
    """Two shapes that broadcast to out_shape: leading dims dropped, dims set to 1."""
    if out_shape is None:
        out_shape = rand_shape(int(rng.integers(1, 5)))
    shapes = []
    for _ in range(2):
        drop = int(rng.integers(0, len(out_shape) + 1))
        s = list(out_shape[drop:])
        for i in range(len(s)):
            if rng.random() < 0.35:
                s[i] = 1
        shapes.append(tuple(s))
    return shapes[0], shapes[1]


def pow_ref(a, b):
    return np.power(a, b)


BINARY = {
    # name: (numpy function, result rule, tolerance class)
    "add": (np.add, "arith", "simple"),
    "sub": (np.subtract, "arith", "simple"),
    "mul": (np.multiply, "arith", "simple"),
    "div": (np.divide, "div", "simple"),
    "pow": (pow_ref, "arith", "transc"),
    "maximum": (np.maximum, "minmax", "simple"),
    "minimum": (np.minimum, "minmax", "simple"),
    "lt": (np.less, "compare", "simple"),
    "le": (np.less_equal, "compare", "simple"),
    "gt": (np.greater, "compare", "simple"),
    "ge": (np.greater_equal, "compare", "simple"),
    "eq": (np.equal, "compare", "simple"),
    "ne": (np.not_equal, "compare", "simple"),
    "logical_and": (np.logical_and, "logical", "simple"),
    "logical_or": (np.logical_or, "logical", "simple"),
}


def binary_out_dtype(rule, da, db):
    p = promote(da, db)
    if rule == "arith":
        return None if (da == "bool" and db == "bool") else p
    if rule == "div":
        return p if is_float(p) else "f32"
    if rule == "minmax":
        return p
    return "bool"


def binary_values(op, shape, dt, which):
    if op == "pow":
        if dt in INTS:
            return values(shape, dt, lo=-4, hi=4) if which == 0 else values(shape, dt, lo=0, hi=5)
        if is_float(dt):
            x = values(shape, dt, scale=1.5)
            return np.abs(x).astype(NP[dt]) if which == 0 else x
    if op == "div" and dt in INTS:
        return values(shape, dt, lo=-6, hi=6)  # includes 0: x/0 = +-inf, 0/0 = nan
    if rule_of(op) in ("compare", "logical", "minmax") and dt in INTS:
        return values(shape, dt, lo=-3, hi=3)  # ties
    if rule_of(op) == "compare" and is_float(dt):
        return np.round(values(shape, dt)).astype(NP[dt])  # ties
    return values(shape, dt)


def rule_of(op):
    return BINARY[op][1]


def binary_case(w, name, op, a, b):
    fn, rule, tol = BINARY[op]
    da, db = dt_of(a), dt_of(b)
    out = binary_out_dtype(rule, da, db)
    if out is None:
        w.case(name + "_rejected", op, [a, b], expect_error="dtype")
        return
    if rule in ("compare", "minmax", "arith"):
        work = promote(da, db)
    elif rule == "div":
        work = out
    else:
        work = None
    if work is None:  # logical: nonzero is true
        y = fn(up(a, da) != 0, up(b, db) != 0)
    else:
        y = fn(up(a, work), up(b, work))
    w.case(name, op, [a, b], cast_out(y, out), tol)


MIXED = [("i32", "f32"), ("i64", "f32"), ("f32", "f64"), ("i32", "i64"), ("bool", "i32"),
         ("f64", "i32"), ("bool", "f32")]


def gen_binary(w):
    for op in BINARY:
        for dt in DTYPES:
            sa = rand_shape()
            shapes = [(sa, sa), broadcast_pair()]
            if is_float(dt):
                shapes.append(broadcast_pair(rand_shape(int(rng.integers(1, 4)), zero=True)))
            for k, (sa, sb) in enumerate(shapes):
                binary_case(w, "%s_%s_%d" % (op, dt, k), op, binary_values(op, sa, dt, 0),
                            binary_values(op, sb, dt, 1))
            if dt == "bool":
                break
        for da, db in MIXED:
            sa, sb = broadcast_pair()
            binary_case(w, "%s_%s_%s" % (op, da, db), op, binary_values(op, sa, da, 0),
                        binary_values(op, sb, db, 1))
        # rank mismatch + size-1 + size-0: [2,0,3] with [1,3], scalar with [4,1]
        binary_case(w, "%s_f32_zero_bcast" % op, op, values((2, 0, 3), "f32"),
                    values((1, 3), "f32"))
        binary_case(w, "%s_i32_scalar_bcast" % op, op, binary_values(op, (), "i32", 0),
                    binary_values(op, (4, 1), "i32", 1))
        w.case("%s_f32_bcast_mismatch_rejected" % op, op,
               [values((2, 3), "f32"), values((4,), "f32")], expect_error="shape")
        for dt in FLOATS:
            s = specials(dt)
            a = np.repeat(s, len(s)).astype(NP[dt])
            b = np.tile(s, len(s)).astype(NP[dt])
            binary_case(w, "%s_%s_special" % (op, dt), op, a, b)
    # compare in promote(a, b): i64 2^24+1 vs f32 2^24 are equal in f32
    a = np.array([16777217, 16777216, 3], dtype=np.int64)
    b = np.array([16777216.0, 16777217.0, 3.5], dtype=np.float32)
    for op in ("eq", "lt", "ge"):
        binary_case(w, "%s_i64_f32_compares_in_f32" % op, op, a, b)
    # integer arithmetic stays 64-bit
    a = np.array([2**40, -(2**41), 7], dtype=np.int64)
    b = np.array([3, 5, -2**33], dtype=np.int64)
    for op in ("add", "sub", "mul", "maximum"):
        binary_case(w, "%s_i64_large" % op, op, a, b if op != "mul" else np.array([3, 5, 2],
                                                                                  np.int64))
    a = np.array([3, 2, 0, 5, -3], dtype=np.int64)
    b = np.array([30, 40, 0, 2, 3], dtype=np.int64)
    binary_case(w, "pow_i64_large", "pow", a, b)


def gen_where(w):
    combos = [("bool", "f32", "f32"), ("bool", "f64", "f64"), ("bool", "i32", "i32"),
              ("bool", "i64", "i64"), ("bool", "bool", "bool"), ("i32", "f32", "f32"),
              ("f32", "i32", "f32"), ("f64", "f32", "f64"), ("i64", "i32", "i64"),
              ("bool", "bool", "i32"), ("bool", "i64", "f32")]
    for k, (dc, da, db) in enumerate(combos):
        out_shape = rand_shape(int(rng.integers(1, 5)))
        sc, sa = broadcast_pair(out_shape)
        _, sb = broadcast_pair(out_shape)
        c = values(sc, dc, lo=-1, hi=1) if dc in INTS else values(sc, dc)
        if is_float(dc):
            c = np.round(c / 3).astype(NP[dc])
        a, b = values(sa, da), values(sb, db)
        out = promote(da, db)
        y = np.where(up(c, dc) != 0, up(a, out), up(b, out))
        w.case("where_%s_%s_%s_%d" % (dc, da, db, k), "where", [c, a, b], cast_out(y, out))
    # NaN condition is true; NaN values pass through; size-0 broadcast
    c = np.array([math.nan, 0.0, -0.0, 2.0], dtype=np.float32)
    a = np.array([1.0, math.nan, 3.0, math.inf], dtype=np.float32)
    b = np.array([[-1.0], [math.nan]], dtype=np.float32)
    w.case("where_f32_special", "where", [c, a, b],
           cast_out(np.where(up(c, "f32") != 0, up(a, "f32"), up(b, "f32")), "f32"))
    c, a, b = values((0, 1), "bool"), values((3,), "f32"), values((), "f32")
    w.case("where_f32_zero_size", "where", [c, a, b],
           cast_out(np.where(c, up(a, "f32"), up(b, "f32")), "f32"))
    w.case("where_f32_bcast_mismatch_rejected", "where",
           [values((2,), "bool"), values((3,), "f32"), values((3,), "f32")],
           expect_error="shape")
    c, a, b = values((), "bool"), values((2, 3), "i64"), values((3,), "i64")
    w.case("where_scalar_cond", "where", [c, a, b], cast_out(np.where(c, a, b), "i64"))


# ---------------------------------------------------------------- reductions

def axes_variants(rank):
    """(axes list or None for "all", label)."""
    if rank == 0:
        return [(None, "all")]
    out = [(None, "all"), ([int(rng.integers(rank))], "one"), ([-1], "neg")]
    if rank >= 2:
        out.append(([0, rank - 1], "two"))
        out.append((list(range(rank)), "every"))
    if rank >= 3:
        out.append(([-1, 1], "negmix"))
    return out


REDUCE = {
    "sum": (lambda x, ax, kd: np.sum(x, axis=ax, keepdims=kd)),
    "mean": (lambda x, ax, kd: np.mean(x, axis=ax, keepdims=kd)),
    "max": (lambda x, ax, kd: np.max(x, axis=ax, keepdims=kd)),
    "min": (lambda x, ax, kd: np.min(x, axis=ax, keepdims=kd)),
}


def reduce_out_dtype(op, dt):
    if op == "sum":
        return dt if is_float(dt) else "i64"
    if op == "mean":
        return dt if is_float(dt) else "f32"
    return dt


def reduce_case(w, name, op, x, axes, keepdim):
    dt = dt_of(x)
    out = reduce_out_dtype(op, dt)
    ax = None if axes is None else tuple(a % x.ndim for a in axes)
    with np.errstate(all="ignore"):
        y = REDUCE[op](up(x, dt), ax, keepdim)
    attrs = {}
    if axes is not None:
        attrs["axes"] = axes
    attrs["keepdim"] = keepdim
    tol = "simple" if op in ("max", "min") else "accum"
    w.case(name, op, [x], cast_out(y, out), tol, attrs=attrs)


def gen_reduce(w):
    import warnings
    warnings.simplefilter("ignore")
    for op in REDUCE:
        for dt in DTYPES:
            # f32 gets every rank and axes pattern; other dtypes a sample
            for rank in ((0, 1, 2, 3, 4) if dt == "f32" else (1, 3)):
                shape = rand_shape(rank, maxdim=4)
                x = values(shape, dt, lo=-3, hi=3) if dt in INTS else values(shape, dt)
                variants = axes_variants(rank)
                if dt != "f32":
                    variants = [variants[0], variants[-1]]
                for axes, label in variants:
                    keepdims = (False, True) if label in ("one", "all") and dt == "f32" else \
                        (bool(rng.integers(2)),)
                    for keepdim in keepdims:
                        reduce_case(w, "%s_%s_r%d_%s_k%d" % (op, dt, rank, label, keepdim),
                                    op, x, axes, keepdim)
        # size-0 dimension not reduced: empty result
        reduce_case(w, "%s_f32_zero_kept" % op, op, values((0, 3), "f32"), [1], False)
        if op in ("sum", "mean"):
            # reducing a size-0 axis: sum 0, mean NaN (0/0)
            reduce_case(w, "%s_f32_zero_reduced" % op, op, values((2, 0), "f32"), [1], False)
            reduce_case(w, "%s_i32_zero_reduced" % op, op, values((0,), "i32"), None, True)
        else:
            # max/min of nothing is undefined (NumPy raises)
            w.case("%s_f32_zero_reduced_rejected" % op, op, [values((2, 0), "f32")],
                   attrs={"axes": [1], "keepdim": False}, expect_error="any")
        for dt in FLOATS:
            x = np.array([[1.0, math.nan, 2.0], [math.inf, -1.0, 0.0], [-math.inf, 3.0, -0.0]],
                         dtype=NP[dt])
            reduce_case(w, "%s_%s_special_rows" % (op, dt), op, x, [1], False)
            reduce_case(w, "%s_%s_special_all" % (op, dt), op, x, None, False)
    # a long f32 sum (accumulation error)
    reduce_case(w, "sum_f32_long", "sum", values((4096,), "f32"), None, False)
    reduce_case(w, "mean_f32_long", "mean", values((3, 1000), "f32"), [1], True)
    # i32 sum does not overflow: it gives i64
    x = np.full((4,), 2**30, dtype=np.int32)
    reduce_case(w, "sum_i32_to_i64_no_overflow", "sum", x, None, False)


def argmax_ref(x, axis, keepdim):
    # NumPy: first index of the maximum; NaN counts as the maximum (first NaN).
    y = np.argmax(x, axis=axis)
    if keepdim:
        y = np.expand_dims(y, axis)
    return y.astype(np.int64)


def gen_argmax(w):
    for dt in DTYPES:
        for rank in (1, 2, 3, 4):
            shape = rand_shape(rank, maxdim=4)
            # few distinct values: ties everywhere, first index wins
            x = values(shape, dt, lo=0, hi=2) if dt in INTS else values(shape, dt)
            if is_float(dt):
                x = np.round(x / 2).astype(NP[dt])
            axis = int(rng.integers(-rank, rank))
            for keepdim in (False, True):
                w.case("argmax_%s_r%d_ax%d_k%d" % (dt, rank, axis, keepdim), "argmax", [x],
                       argmax_ref(up(x, dt), axis % rank, keepdim),
                       attrs={"axis": axis, "keepdim": keepdim})
    x = np.array([[1.0, 5.0, 5.0, 2.0], [-math.inf, -math.inf, -math.inf, -math.inf],
                  [0.0, math.nan, 7.0, math.nan], [-0.0, 0.0, math.inf, math.inf]],
                 dtype=np.float32)
    for axis in (0, 1):
        w.case("argmax_f32_special_ax%d" % axis, "argmax", [x],
               argmax_ref(x, axis, False), attrs={"axis": axis, "keepdim": False})
    x = values((0, 3), "f32")
    w.case("argmax_f32_zero_kept", "argmax", [x], argmax_ref(x, 1, False),
           attrs={"axis": 1, "keepdim": False})
    w.case("argmax_f32_zero_axis_rejected", "argmax", [x], attrs={"axis": 0, "keepdim": False},
           expect_error="any")
    x = np.array(3.5, dtype=np.float32)
    w.case("argmax_f32_rank0_rejected", "argmax", [x], attrs={"axis": 0}, expect_error="any")


# ---------------------------------------------------------------- matmul

def dot_atol(a, b, dt):
    """Absolute error a float dot product may make through rounding, which
    scales with the summed terms (sum |a_i b_i|), not with the result:
    8 ulp-units of the largest such sum. 0 for integers."""
    if not is_float(dt) or a.size == 0 or b.size == 0:
        return 0.0
    with np.errstate(all="ignore"):
        bound = np.nanmax(np.abs(np.matmul(np.abs(up(a, dt)), np.abs(up(b, dt)))))
    eps = 2.0 ** -24 if dt == "f32" else 2.0 ** -53
    return float(8 * eps * bound) if np.isfinite(bound) else 0.0


def matmul_case(w, name, a, b, op="matmul"):
    da, db = dt_of(a), dt_of(b)
    if da == "bool" and db == "bool":
        w.case(name, op, [a, b], expect_error="dtype")
        return
    out = promote(da, db)
    w.case(name, op, [a, b], cast_out(np.matmul(up(a, out), up(b, out)), out), "accum",
           min_atol=dot_atol(a, b, out))


def gen_matmul(w):
    shape_pairs = [((4,), (4,)), ((3,), (3, 5)), ((2, 3), (3,)), ((2, 3), (3, 4)),
                   ((2, 2, 3), (3, 4)), ((3,), (2, 3, 4)), ((2, 1, 3, 4), (5, 4, 2)),
                   ((1, 4, 3), (2, 3, 6)), ((2, 0), (0, 3)), ((0, 3), (3, 2)),
                   ((2, 3, 0), (2, 0, 4)), ((5, 16), (16, 7))]
    for dt in ("f32", "f64", "i32", "i64"):
        for sa, sb in (shape_pairs if dt in ("f32", "f64") else shape_pairs[:8]):
            a = values(sa, dt, lo=-5, hi=5)
            b = values(sb, dt, lo=-5, hi=5)
            matmul_case(w, "matmul_%s_%s_x_%s" % (dt, "x".join(map(str, sa)) or "s",
                                                   "x".join(map(str, sb))), a, b)
    for da, db in (("i32", "f32"), ("f32", "f64"), ("bool", "i32"), ("i64", "f64"),
                   ("bool", "bool")):
        matmul_case(w, "matmul_%s_%s" % (da, db), values((2, 3), da), values((3, 2), db))
    a = np.array([[1.0, math.nan], [math.inf, 0.0]], dtype=np.float32)
    b = np.array([[1.0, 0.0], [2.0, 3.0]], dtype=np.float32)
    matmul_case(w, "matmul_f32_special", a, b)
    for name, sa, sb in (("matmul_f32_k_mismatch_rejected", (2, 3), (4, 2)),
                         ("matmul_f32_batch_mismatch_rejected", (2, 2, 3), (3, 3, 2)),
                         ("matmul_f32_rank0_rejected", (), (3,))):
        w.case(name, "matmul", [values(sa, "f32"), values(sb, "f32")],
               expect_error="any" if "rank0" in name else "shape")


# ---------------------------------------------------------------- shape ops

def gen_shape_ops(w):
    for dt in DTYPES:
        # reshape
        x = values((2, 3, 4), dt)
        for k, shape in enumerate([[4, -1], [24], [2, 3, 2, 2], [-1, 1, 3]]):
            w.case("reshape_%s_%d" % (dt, k), "reshape", [x],
                   x.reshape(shape), attrs={"shape": shape})
        x1 = values((1, 1), dt)
        w.case("reshape_%s_to_scalar" % dt, "reshape", [x1], x1.reshape(()),
               attrs={"shape": []})
        x0 = values((), dt)
        w.case("reshape_%s_from_scalar" % dt, "reshape", [x0], x0.reshape((1, 1, 1)),
               attrs={"shape": [1, 1, 1]})
        xz = values((0, 3), dt)
        w.case("reshape_%s_zero" % dt, "reshape", [xz], xz.reshape((3, 0, 2)),
               attrs={"shape": [3, 0, 2]})
        # permute
        x = values((2, 3, 4, 1), dt)
        for k, perm in enumerate([[3, 1, 0, 2], [0, 1, 2, 3], [1, 0, 3, 2]]):
            w.case("permute_%s_%d" % (dt, k), "permute", [x], np.transpose(x, perm),
                   attrs={"perm": perm})
        xz = values((2, 0, 3), dt)
        w.case("permute_%s_zero" % dt, "permute", [xz], np.transpose(xz, (2, 0, 1)),
               attrs={"perm": [2, 0, 1]})
        # transpose
        x = values((2, 3, 4), dt)
        for d0, d1 in ((0, 1), (0, -1), (-1, -2), (1, 1)):
            w.case("transpose_%s_%d_%d" % (dt, d0, d1), "transpose", [x],
                   np.swapaxes(x, d0, d1), attrs={"dim0": d0, "dim1": d1})
        # expand
        for k, (src, dst) in enumerate([((3, 1), [2, 3, 4]), ((1,), [5]), ((), [2, 3]),
                                        ((2, 1, 3), [-1, 4, -1]), ((1, 3), [0, 3]),
                                        ((4,), [2, 1, 4])]):
            x = values(src, dt)
            target = [x.shape[i - (len(dst) - x.ndim)] if v == -1 else v
                      for i, v in enumerate(dst)]
            w.case("expand_%s_%d" % (dt, k), "expand", [x], np.broadcast_to(x, target).copy(),
                   attrs={"shape": dst})
        # concat: 3 inputs, one empty along the axis; 1 input; negative axis
        a, b, c = values((2, 3), dt), values((2, 0), dt), values((2, 4), dt)
        w.case("concat_%s_three_axis1" % dt, "concat", [a, b, c],
               np.concatenate([a, b, c], axis=1), attrs={"axis": 1})
        a, b, c = values((1, 2, 2), dt), values((3, 2, 2), dt), values((2, 2, 2), dt)
        w.case("concat_%s_three_axis0" % dt, "concat", [a, b, c],
               np.concatenate([a, b, c], axis=0), attrs={"axis": 0})
        a, b = values((2, 3, 1), dt), values((2, 3, 2), dt)
        w.case("concat_%s_two_axis_neg" % dt, "concat", [a, b],
               np.concatenate([a, b], axis=-1), attrs={"axis": -1})
        a = values((4,), dt)
        w.case("concat_%s_one" % dt, "concat", [a], a.copy(), attrs={"axis": 0})
        # squeeze
        x = values((1, 3, 1, 2, 1), dt)
        w.case("squeeze_%s_all" % dt, "squeeze", [x], np.squeeze(x), attrs={})
        w.case("squeeze_%s_named" % dt, "squeeze", [x], np.squeeze(x, axis=(0, 2)),
               attrs={"axes": [0, 2]})
        w.case("squeeze_%s_named_neg" % dt, "squeeze", [x], np.squeeze(x, axis=-1),
               attrs={"axes": [-1]})
        x0 = values((), dt)
        w.case("squeeze_%s_scalar" % dt, "squeeze", [x0], np.squeeze(x0), attrs={})
        xz = values((1, 0, 1), dt)
        w.case("squeeze_%s_zero" % dt, "squeeze", [xz], np.squeeze(xz), attrs={})
        # unsqueeze (NumPy expand_dims: negative axis counts in the result)
        x = values((2, 3), dt)
        for axis in (0, 1, 2, -1, -3):
            w.case("unsqueeze_%s_%d" % (dt, axis), "unsqueeze", [x], np.expand_dims(x, axis),
                   attrs={"axis": axis})
        w.case("unsqueeze_%s_scalar" % dt, "unsqueeze", [x0], np.expand_dims(x0, 0),
               attrs={"axis": 0})
    # slice: Python semantics along one axis
    x = values((5, 7, 3), "f32")
    slices = [(1, 1, 5, 1), (1, -3, "end", 1), (1, 0, "end", 2), (1, -100, 100, 3),
              (0, 4, 2, 1), (0, 7, "end", 1), (2, -1, "end", 1), (-1, 0, 2, 1),
              (-2, 2, -1, 2), (1, 6, 100, 1), (0, -2, -1, 1), (1, 0, 0, 1)]
    for k, (axis, start, stop, step) in enumerate(slices):
        idx = [slice(None)] * 3
        idx[axis] = slice(start, None if stop == "end" else stop, step)
        w.case("slice_f32_%d" % k, "slice", [x], x[tuple(idx)].copy(),
               attrs={"axis": axis, "start": start, "stop": stop, "step": step})
    for dt in ("f64", "i32", "i64", "bool"):
        x = values((6, 4), dt)
        w.case("slice_%s" % dt, "slice", [x], x[:, 1:4:2].copy(),
               attrs={"axis": 1, "start": 1, "stop": 4, "step": 2})
        w.case("slice_%s_neg" % dt, "slice", [x], x[-4:-1].copy(),
               attrs={"axis": 0, "start": -4, "stop": -1, "step": 1})
    xz = values((0, 4), "f32")
    w.case("slice_f32_zero", "slice", [xz], xz[:, 1:3].copy(),
           attrs={"axis": 1, "start": 1, "stop": 3, "step": 1})
    # errors the rules define
    w.case("reshape_f32_bad_count_rejected", "reshape", [values((2, 3), "f32")],
           attrs={"shape": [4, 2]}, expect_error="any")
    w.case("squeeze_f32_not_one_rejected", "squeeze", [values((2, 3), "f32")],
           attrs={"axes": [0]}, expect_error="any")
    w.case("expand_f32_incompatible_rejected", "expand", [values((2, 3), "f32")],
           attrs={"shape": [2, 4]}, expect_error="any")
    w.case("concat_f32_shape_mismatch_rejected", "concat",
           [values((2, 3), "f32"), values((3, 2), "f32")], attrs={"axis": 0},
           expect_error="shape")
    w.case("slice_f32_step0_rejected", "slice", [values((4,), "f32")],
           attrs={"axis": 0, "start": 0, "stop": "end", "step": 0}, expect_error="any")
    w.case("permute_f32_not_a_perm_rejected", "permute", [values((2, 3), "f32")],
           attrs={"perm": [0, 0]}, expect_error="any")


# ---------------------------------------------------------------- creation

def arange_ref(start, stop, step, dt):
    n = max(0, int(math.ceil((stop - start) / step)))
    return (start + np.arange(n, dtype=np.float64) * step).astype(NP[dt])


def gen_creation(w):
    for dt in DTYPES:
        for k, shape in enumerate([(), (3,), (2, 0, 4), (2, 3, 1, 2)]):
            value = {"bool": 1.0, "i32": -7.0, "i64": 123456789012.0}.get(dt, 2.5)
            if dt == "i32" and k == 1:
                value = 0.0
            y = np.full(shape, value).astype(NP[dt])
            w.case("full_%s_%d" % (dt, k), "full", [], y, dtype=dt,
                   attrs={"shape": list(shape), "value": float(value), "dtype": dt})
        for k, shape in enumerate([(), (4,), (2, 3), (0, 2), (2, 1, 2, 3)]):
            data = values(shape, dt)
            if is_float(dt) and k == 2:
                data = specials(dt)[:6].reshape(2, 3)
            w.case("constant_%s_%d" % (dt, k), "constant", [], data.copy(), dtype=dt,
                   attrs={"data": data})
    w.case("full_bool_zero", "full", [], np.full((2, 2), False), dtype="bool",
           attrs={"shape": [2, 2], "value": 0.0, "dtype": "bool"})
    for dt in FLOATS:
        for v in (math.nan, -math.inf, -0.0):
            w.case("full_%s_%r" % (dt, v), "full", [], np.full((3,), v).astype(NP[dt]),
                   dtype=dt, attrs={"shape": [3], "value": v, "dtype": dt})
    ranges = {
        "f32": [(0.0, 1.0, 0.1), (5.0, -5.0, -1.5), (0.0, 100.0, 0.37), (-1.0, 1.0, 0.25),
                (5.0, 0.0, 1.0), (0.0, 10.0, 1.0), (2.0, 3.0, 1.0)],
        "f64": [(0.0, 1.0, 0.1), (-2.5, 2.5, 0.5), (10.0, -3.0, -0.7), (1.0, 1.0, 1.0)],
        "i32": [(0.0, 10.0, 1.0), (10.0, 0.0, -3.0), (-5.0, 5.0, 2.0), (3.0, 3.0, 1.0)],
        "i64": [(0.0, 7.0, 1.0), (100.0, -100.0, -25.0), (0.0, 5000.0, 7.0)],
    }
    for dt, rs in ranges.items():
        for k, (start, stop, step) in enumerate(rs):
            w.case("arange_%s_%d" % (dt, k), "arange", [], arange_ref(start, stop, step, dt),
                   tol="simple", dtype=dt,
                   attrs={"range_start": start, "range_stop": stop, "range_step": step,
                          "dtype": dt})
    w.case("arange_bool_rejected", "arange", [], dtype="bool",
           attrs={"range_start": 0.0, "range_stop": 2.0, "range_step": 1.0, "dtype": "bool"},
           expect_error="dtype")
    # step 0 has no meaning
    w.case("arange_f32_step0_rejected", "arange", [], dtype="f32",
           attrs={"range_start": 0.0, "range_stop": 1.0, "range_step": 0.0, "dtype": "f32"},
           expect_error="any")
    w.case("full_f32_negative_dim_rejected", "full", [], dtype="f32",
           attrs={"shape": [2, -1], "value": 1.0, "dtype": "f32"}, expect_error="any")


# ---------------------------------------------------------------- composites

def softmax_ref(x, axis):
    m = np.max(x, axis=axis, keepdims=True)
    m = np.where(np.isfinite(m), m, 0.0)
    e = np.exp(x - m)
    return e / np.sum(e, axis=axis, keepdims=True)


def log_softmax_ref(x, axis):
    m = np.max(x, axis=axis, keepdims=True)
    m = np.where(np.isfinite(m), m, 0.0)
    return x - m - np.log(np.sum(np.exp(x - m), axis=axis, keepdims=True))


def layer_norm_ref(x, w, b, axis, eps):
    axes = tuple(range(axis % x.ndim, x.ndim))
    mean = np.mean(x, axis=axes, keepdims=True)
    var = np.mean((x - mean) ** 2, axis=axes, keepdims=True)
    y = (x - mean) / np.sqrt(var + eps)
    if w is not None:
        y = y * w
    if b is not None:
        y = y + b
    return y


erf_vec = np.vectorize(math.erf, otypes=[np.float64])


def gelu_ref(x, approximate):
    if approximate == "tanh":
        return 0.5 * x * (1.0 + np.tanh(math.sqrt(2.0 / math.pi) * (x + 0.044715 * x ** 3)))
    return 0.5 * x * (1.0 + erf_vec(x / math.sqrt(2.0)))


def silu_ref(x):
    return x / (1.0 + np.exp(-x))


def softplus_ref(x, beta, threshold):
    bx = beta * x
    with np.errstate(over="ignore"):
        soft = np.log1p(np.exp(bx)) / beta
    return np.where(bx > threshold, x, soft)


def float_result(dt):
    return dt if is_float(dt) else "f32"


def unary_composite(w, name, op, x, fn, attrs):
    dt = dt_of(x)
    out = float_result(dt)
    with np.errstate(all="ignore"):
        y = fn(up(x, out))
    w.case(name, op, [x], cast_out(y, out), "accum", attrs=attrs)


def gen_composites(w):
    for dt in DTYPES:
        for op, fn in (("softmax", softmax_ref), ("log_softmax", log_softmax_ref)):
            for rank in ((1, 2, 3, 4) if is_float(dt) else (2,)):
                shape = rand_shape(rank, maxdim=5)
                axis = int(rng.integers(-rank, rank))
                x = values(shape, dt)
                unary_composite(w, "%s_%s_r%d_ax%d" % (op, dt, rank, axis), op, x,
                                lambda v, a=axis, f=fn: f(v, a), {"axis": axis})
            if is_float(dt):
                x = np.array([[1000.0, 1001.0, 999.0], [-1000.0, -1001.0, -1002.0],
                              [-math.inf, 0.0, 1.0], [0.0, 0.0, 0.0]], dtype=NP[dt])
                unary_composite(w, "%s_%s_stable" % (op, dt), op, x,
                                lambda v, f=fn: f(v, -1), {"axis": -1})
                x = np.array([[1.0, math.nan, 2.0], [3.0, 4.0, 5.0]], dtype=NP[dt])
                unary_composite(w, "%s_%s_nan_row" % (op, dt), op, x,
                                lambda v, f=fn: f(v, 1), {"axis": 1})
                x = values((0, 4), dt)
                unary_composite(w, "%s_%s_zero" % (op, dt), op, x,
                                lambda v, f=fn: f(v, 1), {"axis": 1})
        # gelu, silu, softplus
        shapes = [rand_shape(), rand_shape(zero=True)] if is_float(dt) else [rand_shape()]
        for k, shape in enumerate(shapes):
            x = values(shape, dt)
            for approx in ("none", "tanh"):
                unary_composite(w, "gelu_%s_%s_%d" % (dt, approx, k), "gelu", x,
                                lambda v, a=approx: gelu_ref(v, a), {"approximate": approx})
            unary_composite(w, "silu_%s_%d" % (dt, k), "silu", x, silu_ref, {})
            unary_composite(w, "softplus_%s_%d" % (dt, k), "softplus", x,
                            lambda v: softplus_ref(v, 1.0, 20.0), {})
        if is_float(dt):
            x = np.array([math.nan, -0.0, 0.0, 1e-20, -30.0, 30.0, -5.0, 5.0, 2.5, -2.5],
                         dtype=NP[dt])
            for approx in ("none", "tanh"):
                unary_composite(w, "gelu_%s_%s_special" % (dt, approx), "gelu", x,
                                lambda v, a=approx: gelu_ref(v, a), {"approximate": approx})
            unary_composite(w, "silu_%s_special" % dt, "silu", x, silu_ref, {})
            # threshold crossing: beta * x around the threshold, +-inf
            x = np.array([-math.inf, math.inf, math.nan, -100.0, -3.0, 0.0, 0.9, 1.1, 4.9,
                          5.1, 9.9, 10.1, 40.0], dtype=NP[dt])
            for beta, threshold in ((1.0, 20.0), (2.0, 10.0), (0.5, 2.0)):
                unary_composite(w, "softplus_%s_b%g_t%g" % (dt, beta, threshold), "softplus", x,
                                lambda v, b=beta, t=threshold: softplus_ref(v, b, t),
                                {"beta": beta, "threshold": threshold})
    gen_layer_norm(w)
    gen_linear(w)


def gen_layer_norm(w):
    for dt in DTYPES:
        configs = [((4, 6), -1, 1e-5, "none"), ((2, 3, 5), 1, 1e-5, "weight"),
                   ((3, 4), 1, 1e-3, "both"), ((2, 2, 3), 0, 1e-5, "both"),
                   ((0, 5), -1, 1e-5, "both"), ((5,), 0, 1e-5, "both"),
                   ((2, 3, 1, 4), -2, 1e-2, "none")]
        if not is_float(dt):
            configs = configs[:1]
        for k, (shape, axis, eps, affine) in enumerate(configs):
            x = values(shape, dt)
            nshape = shape[axis % len(shape):]
            inputs = [x]
            out = float_result(dt)
            wt = bs = None
            if affine in ("weight", "both"):
                wt = values(nshape, dt)
                inputs.append(wt)
            if affine == "both":
                bs = values(nshape, dt)
                inputs.append(bs)
            y = layer_norm_ref(up(x, out), None if wt is None else up(wt, out),
                               None if bs is None else up(bs, out), axis, eps)
            attrs = {"axis": axis}
            if eps != 1e-5:
                attrs["eps"] = eps
            w.case("layer_norm_%s_%d_%s" % (dt, k, affine), "layer_norm", inputs,
                   cast_out(y, out), "accum", attrs=attrs)
    # constant rows: variance 0, result (x - mean) / sqrt(eps) = 0
    x = np.array([[2.0, 2.0, 2.0], [1.0, math.nan, 0.0]], dtype=np.float32)
    w.case("layer_norm_f32_constant_and_nan_rows", "layer_norm", [x],
           cast_out(layer_norm_ref(up(x, "f32"), None, None, -1, 1e-5), "f32"), "accum",
           attrs={"axis": -1})
    w.case("layer_norm_f32_bad_weight_rejected", "layer_norm",
           [values((2, 3), "f32"), values((4,), "f32")], attrs={"axis": -1},
           expect_error="any")


def gen_linear(w):
    configs = [((3,), 4, True), ((2, 3), 4, True), ((2, 3), 4, False), ((2, 5, 3), 2, True),
               ((0, 3), 4, True), ((4, 16), 8, False)]
    for dt in ("f32", "f64", "i32", "i64"):
        for k, (xs, nout, bias) in enumerate(configs if is_float(dt) else configs[:3]):
            x = values(xs, dt, lo=-4, hi=4)
            wt = values((nout, xs[-1]), dt, lo=-4, hi=4)
            inputs = [x, wt]
            y = np.matmul(up(x, dt), up(wt, dt).T)
            if bias:
                b = values((nout,), dt, lo=-4, hi=4)
                inputs.append(b)
                y = y + up(b, dt)
            w.case("linear_%s_%d%s" % (dt, k, "_bias" if bias else ""), "linear", inputs,
                   cast_out(y, dt), "accum", min_atol=dot_atol(x, wt.T, dt))
    x, wt = values((2, 3), "i32"), values((4, 3), "f32")
    w.case("linear_i32_f32", "linear", [x, wt],
           cast_out(np.matmul(up(x, "f32"), up(wt, "f32").T), "f32"), "accum")
    x, wt = values((2, 3), "bool"), values((4, 3), "i32")
    w.case("linear_bool_i32", "linear", [x, wt],
           cast_out(np.matmul(up(x, "i32"), up(wt, "i32").T), "i32"), "accum")
    w.case("linear_bool_rejected", "linear", [values((2, 3), "bool"), values((4, 3), "bool")],
           expect_error="dtype")
    w.case("linear_f32_in_mismatch_rejected", "linear",
           [values((2, 3), "f32"), values((4, 5), "f32")], expect_error="shape")


def gen_large_and_deep(w):
    """Sizes that cross any blocking, vectorising or threading boundaries in
    the kernels, and ranks up to TP_MAX_DIMS (8)."""
    a, b = values((300, 257), "f32"), values((257,), "f32")
    binary_case(w, "add_f32_large_bcast", "add", a, b)
    a, b = values((1031, 67), "f64"), values((1031, 1), "f64")
    binary_case(w, "mul_f64_large_bcast", "mul", a, b)
    a, b = values((70001,), "i32"), values((), "i32", lo=1, hi=5)
    binary_case(w, "maximum_i32_large", "maximum", a, b)
    x = values((70001,), "f32")
    w.case("exp_f32_large", "exp", [x], cast_out(np.exp(up(x, "f32")), "f32"), "transc")
    w.case("tanh_f32_large", "tanh", [x], cast_out(np.tanh(up(x, "f32")), "f32"), "transc")
    x = values((512, 300), "f32")
    reduce_case(w, "sum_f32_large_rows", "sum", x, [1], False)
    reduce_case(w, "max_f32_large_cols", "max", x, [0], True)
    reduce_case(w, "mean_f64_large_all", "mean", values((256, 300), "f64"), None, False)
    w.case("argmax_f32_large", "argmax", [x], argmax_ref(up(x, "f32"), 0, False),
           attrs={"axis": 0, "keepdim": False})
    matmul_case(w, "matmul_f32_large", values((64, 128), "f32"), values((128, 96), "f32"))
    matmul_case(w, "matmul_f64_large_batched", values((3, 33, 65), "f64"),
                values((65, 17), "f64"))
    matmul_case(w, "matmul_i64_large", values((40, 70), "i64"), values((70, 30), "i64"))
    x = values((128, 513), "f32")
    unary_composite(w, "softmax_f32_large", "softmax", x, lambda v: softmax_ref(v, -1),
                    {"axis": -1})
    unary_composite(w, "gelu_f32_large", "gelu", values((40000,), "f32"),
                    lambda v: gelu_ref(v, "none"), {"approximate": "none"})
    x, wt = values((32, 768), "f32"), values((768,), "f32")
    w.case("layer_norm_f32_large", "layer_norm", [x, wt],
           cast_out(layer_norm_ref(up(x, "f32"), up(wt, "f32"), None, -1, 1e-5), "f32"),
           "accum", attrs={"axis": -1})
    x = values((100, 300), "f32")
    w.case("permute_f32_large", "permute", [x], x.T.copy(), attrs={"perm": [1, 0]})
    w.case("slice_f32_large", "slice", [x], x[:, 7:290:5].copy(),
           attrs={"axis": 1, "start": 7, "stop": 290, "step": 5})
    # rank 8 (TP_MAX_DIMS)
    s8 = (2, 1, 3, 1, 2, 2, 1, 3)
    a, b = values(s8, "f32"), values((3, 1, 2, 1, 4, 1), "f32")
    binary_case(w, "add_f32_rank8_bcast", "add", a, b)
    x = values(s8, "i64")
    reduce_case(w, "sum_i64_rank8", "sum", x, [0, 2, -1], True)
    perm = [7, 6, 5, 4, 3, 2, 1, 0]
    w.case("permute_i64_rank8", "permute", [x], np.transpose(x, perm), attrs={"perm": perm})
    w.case("squeeze_i64_rank8", "squeeze", [x], np.squeeze(x), attrs={})
    # concat of many inputs, some empty along the axis
    parts = [values((2, n), "f32") for n in (1, 0, 3, 2, 0, 5, 1)]
    w.case("concat_f32_seven", "concat", parts, np.concatenate(parts, axis=1),
           attrs={"axis": 1})


def main():
    if len(sys.argv) != 2:
        sys.exit("usage: %s OUTPUT_DIR" % sys.argv[0])
    outdir = sys.argv[1]
    os.makedirs(outdir, exist_ok=True)
    for f in os.listdir(outdir):
        if f.endswith(".npy") or f == "manifest.txt":
            os.remove(os.path.join(outdir, f))
    t0 = time.time()
    w = Writer(outdir)
    with np.errstate(all="ignore"):
        run_generators(w)
        for storage in ("f16", "bf16"):
            storage_pass(w, storage)
        gen_storage_casts(w)
        gen_storage_extras(w)
    w.finish()
    print("gen_op_cases: %d cases, %.1f MB in %s (%.1f s)" %
          (len(w.lines), w.nbytes / 1e6, outdir, time.time() - t0))


def gen_indexing(w):
    # gather = np.take, gather_elements = np.take_along_axis; negative
    # indices count from the end (normalised here before NumPy sees them).
    r = np.random.default_rng(20261201)
    for dt in DTYPES:
        for idx_dt in ("i64", "i32"):
            x = values((3, 4, 5), dt) if dt != "bool" else (r.integers(0, 2, (3, 4, 5)) == 1)
            for axis in (0, 1, -1):
                length = x.shape[axis]
                for ishape in ((), (2,), (2, 3)):
                    idx = r.integers(-length, length, ishape).astype(NP[idx_dt])
                    w.case("gather_%s_%s_ax%d_r%d" % (dt, idx_dt, axis, len(ishape)), "gather",
                           [x, idx], np.take(x, idx % length, axis=axis), attrs={"axis": axis})
                ishape = list(x.shape)
                ishape[axis] = 2
                idx = r.integers(-length, length, ishape).astype(NP[idx_dt])
                w.case("gather_elements_%s_%s_ax%d" % (dt, idx_dt, axis), "gather_elements",
                       [x, idx], np.take_along_axis(x, idx % length, axis=axis),
                       attrs={"axis": axis})
        # the coverage probe: indices of the data's own dtype
        if dt in ("f32", "f64", "bool"):
            x = values((2, 2), dt) if dt != "bool" else np.ones((2, 2), dtype=bool)
            for op in ("gather", "gather_elements"):
                w.case("%s_%s_float_indices_rejected" % (op, dt), op, [x, x.copy()],
                       attrs={"axis": 0}, expect_error="dtype")
    x = values((4, 3), "f32")
    # smaller than the data along a non-gathered axis (ONNX allows it)
    idx = np.array([[3, 0], [1, 1]], dtype=np.int64)
    w.case("gather_elements_f32_narrower_indices", "gather_elements", [x, idx],
           np.take_along_axis(x[:, :2], idx, axis=0), attrs={"axis": 0})
    for op in ("gather", "gather_elements"):
        idx = np.array([[4, 0]], dtype=np.int64) if op == "gather_elements" else np.array([4])
        w.case("%s_f32_index_out_of_range" % op, op, [x, idx], attrs={"axis": 0},
               expect_error="invalid_argument")
    w.case("gather_f32_empty_indices", "gather", [x, np.zeros((0,), dtype=np.int64)],
           np.take(x, np.zeros((0,), dtype=np.int64), axis=1), attrs={"axis": 1})


def run_generators(w):
    gen_unary(w)
    gen_cast(w)
    gen_binary(w)
    gen_where(w)
    gen_reduce(w)
    gen_argmax(w)
    gen_matmul(w)
    gen_shape_ops(w)
    gen_creation(w)
    gen_composites(w)
    gen_large_and_deep(w)
    gen_indexing(w)
    gen_windows(w)
    gen_model_ops(w)


def storage_pass(w, storage):
    """Every generator again with DTYPES = [storage], keeping only the cases
    of that dtype (module docstring). Runs after the main run, so the main
    cases stay byte for byte what they were."""
    global STORAGE, DTYPES, FLOATS
    saved = DTYPES, FLOATS, dict(NP), dict(RANK)
    STORAGE, DTYPES, FLOATS = storage, [storage], [storage, "f32", "f64"]
    NP[storage] = np.float16 if storage == "f16" else np.float32
    RANK[storage] = 2.5  # above the integers, below f32
    try:
        run_generators(w)
    finally:
        STORAGE = None
        DTYPES, FLOATS = saved[0], saved[1]
        NP.clear()
        NP.update(saved[2])
        RANK.clear()
        RANK.update(saved[3])


def gen_storage_casts(w):
    """Casts between the storage dtypes and the others, by hand: each value
    is exact in every dtype involved or its rounding is worked out here."""
    f16 = np.array([1.0, -2.5, 65504.0, 6.1e-5, 3.0e-8, 0.0, -0.0, np.inf, np.nan], np.float16)
    for dst in ("f32", "f64"):
        w.case("cast_f16_to_%s" % dst, "cast", [f16], f16.astype(NP[dst]), attrs={"dtype": dst})
    f32 = np.array([1.0, 0.1, 65519.0, 65520.0, 1e-8, -3.0, np.nan, -np.inf], np.float32)
    w.case("cast_f32_to_f16", "cast", [f32], f32.astype(np.float16), attrs={"dtype": "f16"})
    f64 = np.array([1 + 2**-11 + 2**-30, 0.1, -7.25, 1e300], np.float64)
    w.case("cast_f64_to_f16", "cast", [f64], f64.astype(np.float16), attrs={"dtype": "f16"})
    ints = np.array([0, 1, -3, 2049, 70000], np.int32)
    w.case("cast_i32_to_f16", "cast", [ints], ints.astype(np.float16), attrs={"dtype": "f16"})
    # bf16 <-> f32 and f64: widening is exact; narrowing from f32 by bf16_round
    bf16 = bf16_round(np.array([1.0, -2.5, 3.0e38, 1e-40, 0.1, -0.0, np.inf, np.nan]))
    w.case("cast_bf16_to_f64", "cast", [bf16_bits(bf16)], bf16.astype(np.float64),
           attrs={"dtype": "f64"})
    w.case("cast_f32_to_bf16", "cast", [f32], bf16_bits_expected(f32), attrs={"dtype": "bf16"})
    w.case("cast_bf16_to_f32", "cast", [bf16_bits(bf16)], bf16, attrs={"dtype": "f32"})


def gen_storage_extras(w):
    """The ops whose main-run cases spell f32 by hand (where, matmul, slice,
    arange, linear), for f16 and bf16: inputs drawn on the format's grid,
    expected values from the exact math rounded to the format."""
    for s in ("f16", "bf16"):
        def grid(shape):
            x = values(shape, "f32")
            return x.astype(np.float16) if s == "f16" else bf16_round(x)

        def stored(x):  # a grid array as the file holds it
            return x if s == "f16" else bf16_bits(x)

        def rounded(y):  # exact result, rounded to the format, as the file holds it
            y = np.asarray(y, dtype=np.float64)
            return y.astype(np.float16) if s == "f16" else bf16_bits(bf16_round(y))

        c, a, b = values((3, 4), "bool"), grid((3, 4)), grid((4,))
        w.case("where_bool_%s" % s, "where", [c, stored(a), stored(b)],
               stored(np.where(c, a, b)), dtype=s)
        a, b = grid((3, 5)), grid((5, 2))
        w.case("matmul_%s" % s, "matmul", [stored(a), stored(b)],
               rounded(a.astype(np.float64) @ b.astype(np.float64)), tol="accum")
        x, wt, bias = grid((2, 3)), grid((4, 3)), grid((4,))
        w.case("linear_%s_bias" % s, "linear", [stored(x), stored(wt), stored(bias)],
               rounded(x.astype(np.float64) @ wt.astype(np.float64).T + bias), tol="accum")
        x = grid((6, 4))
        w.case("slice_%s" % s, "slice", [stored(x)], stored(x[:, 1:4:2].copy()),
               attrs={"axis": 1, "start": 1, "stop": 4, "step": 2})
        for k, (start, stop, step) in enumerate([(0.0, 2.0, 0.25), (4.0, -4.0, -1.5)]):
            w.case("arange_%s_%d" % (s, k), "arange", [],
                   rounded(start + np.arange(math.ceil((stop - start) / step)) * step),
                   dtype=s, attrs={"range_start": start, "range_stop": stop,
                                   "range_step": step, "dtype": s})


def bf16_bits_expected(f32):
    return bf16_bits(bf16_round(f32))
# ---- sliding windows: conv, conv_transpose, max_pool, avg_pool ----
# The oracles work on whole strided slices of a padded copy (one slice per
# kernel tap), not per output element as the C kernels do; 1-D cases go
# through the same code with the spatial axes generalised.

def _window_params(nsp, strides, pads, dilations):
    strides = list(strides) if strides else [1] * nsp
    dilations = list(dilations) if dilations else [1] * nsp
    pads = list(pads) if pads else [0] * (2 * nsp)
    return strides, pads[:nsp], pads[nsp:], dilations


def _tap_slices(kernel, starts, counts, strides, dilations):
    """Per kernel tap: (tap index tuple, slice tuple over the spatial axes)."""
    for tap in np.ndindex(*kernel):
        yield tap, tuple(slice(t * d + s0, t * d + s0 + (c - 1) * st + 1, st)
                         for t, d, s0, c, st in zip(tap, dilations, starts, counts, strides))


def conv_ref(x, wt, b, strides=None, pads=None, dilations=None, group=1):
    nsp = x.ndim - 2
    st, pb, pe, dl = _window_params(nsp, strides, pads, dilations)
    xp = np.pad(x.astype(np.float64), [(0, 0), (0, 0)] + list(zip(pb, pe)))
    k = wt.shape[2:]
    out_sz = [(xp.shape[2 + i] - dl[i] * (k[i] - 1) - 1) // st[i] + 1 for i in range(nsp)]
    n, c = x.shape[:2]
    co = wt.shape[0]
    cig, cog = c // group, co // group
    out = np.zeros((n, co) + tuple(out_sz))
    w64 = wt.astype(np.float64)
    for tap, sl in _tap_slices(k, [0] * nsp, out_sz, st, dl):
        patch = xp[(slice(None), slice(None)) + sl]
        for g in range(group):
            wg = w64[(slice(g * cog, (g + 1) * cog), slice(None)) + tap]
            out[:, g * cog:(g + 1) * cog] += np.einsum("nc...,oc->no...",
                                                       patch[:, g * cig:(g + 1) * cig], wg)
    if b is not None:
        out += b.astype(np.float64).reshape((1, co) + (1,) * nsp)
    return out.astype(x.dtype)


def conv_transpose_ref(x, wt, b, strides=None, pads=None, dilations=None, group=1,
                       output_padding=None):
    nsp = x.ndim - 2
    st, pb, pe, dl = _window_params(nsp, strides, pads, dilations)
    op = list(output_padding) if output_padding else [0] * nsp
    k = wt.shape[2:]
    n, c = x.shape[:2]
    cog = wt.shape[1]
    co, cig = cog * group, c // group
    full = [st[i] * (x.shape[2 + i] - 1) + dl[i] * (k[i] - 1) + 1 + op[i] for i in range(nsp)]
    acc = np.zeros((n, co) + tuple(full))
    x64, w64 = x.astype(np.float64), wt.astype(np.float64)
    for tap, sl in _tap_slices(k, [0] * nsp, x.shape[2:], st, dl):
        for g in range(group):
            wg = w64[(slice(g * cig, (g + 1) * cig), slice(None)) + tap]
            acc[(slice(None), slice(g * cog, (g + 1) * cog)) + sl] += np.einsum(
                "nc...,co->no...", x64[:, g * cig:(g + 1) * cig], wg)
    out_sz = [full[i] - pb[i] - pe[i] for i in range(nsp)]
    out = acc[(slice(None), slice(None)) + tuple(slice(pb[i], pb[i] + out_sz[i])
                                                 for i in range(nsp))]
    if b is not None:
        out = out + b.astype(np.float64).reshape((1, co) + (1,) * nsp)
    return out.astype(x.dtype)


def pool_ref(x, kind, kernel, strides=None, pads=None, dilations=None, ceil_mode=False,
             count_include_pad=False):
    nsp = x.ndim - 2
    st, pb, pe, dl = _window_params(nsp, strides, pads, dilations)
    out_sz = []
    for i in range(nsp):
        room = x.shape[2 + i] + pb[i] + pe[i] - dl[i] * (kernel[i] - 1) - 1
        o = (-(-room // st[i]) if ceil_mode else room // st[i]) + 1
        if ceil_mode and (o - 1) * st[i] >= x.shape[2 + i] + pb[i]:
            o -= 1
        out_sz.append(o)
    # room for every tap of every window, beyond the end padding if need be
    extra = [max(0, (out_sz[i] - 1) * st[i] + dl[i] * (kernel[i] - 1) + 1
                 - (x.shape[2 + i] + pb[i] + pe[i])) for i in range(nsp)]
    widths = [(0, 0), (0, 0)] + [(pb[i], pe[i] + extra[i]) for i in range(nsp)]
    xv = np.pad(x.astype(np.float64), widths)
    inside = np.pad(np.ones(x.shape, bool), widths)
    padded = np.ones(x.shape[:2] + tuple(x.shape[2 + i] + pb[i] + pe[i] for i in range(nsp)), bool)
    padded = np.pad(padded, [(0, 0), (0, 0)] + [(0, extra[i]) for i in range(nsp)])
    taps = [(xv[(Ellipsis,) + sl], inside[(Ellipsis,) + sl], padded[(Ellipsis,) + sl])
            for _, sl in _tap_slices(kernel, [0] * nsp, out_sz, st, dl)]
    values = np.stack([t[0] for t in taps])
    ins = np.stack([t[1] for t in taps])
    pads_ok = np.stack([t[2] for t in taps])
    if kind == "max":
        if np.issubdtype(x.dtype, np.integer):
            return _int_max(x, kernel, st, widths, dl, out_sz, np.iinfo(x.dtype).min)
        return np.where(ins, values, -np.inf).max(0).astype(x.dtype)
    counts = (pads_ok if count_include_pad else ins).sum(0)
    return ((values * ins).sum(0) / counts).astype(x.dtype)


def _int_max(x, kernel, st, widths, dl, out_sz, lowest):
    """max_pool of integers, exact (no float64 round trip)."""
    nsp = x.ndim - 2
    xv = np.pad(x.astype(np.int64), widths, constant_values=np.int64(lowest))
    best = np.full(x.shape[:2] + tuple(out_sz), np.int64(lowest))
    for _, sl in _tap_slices(kernel, [0] * nsp, out_sz, st, dl):
        best = np.maximum(best, xv[(Ellipsis,) + sl])
    return best.astype(x.dtype)


def gen_windows(w):
    r = np.random.default_rng(20261202)

    def normal(shape, dt):
        x = r.standard_normal(shape).astype(NP[dt])
        return bf16_round(x) if dt == "bf16" else x  # bf16: on the format's grid

    conv_cases = [
        # name, x shape, w shape, bias, attrs
        ("2d_basic", (1, 3, 5, 5), (4, 3, 3, 3), True, {}),
        ("2d_pad1", (2, 3, 6, 6), (4, 3, 3, 3), True, {"pads": [1, 1, 1, 1]}),
        ("2d_stride2_asym_pads", (1, 2, 7, 6), (3, 2, 3, 2), False,
         {"strides": [2, 2], "pads": [1, 0, 2, 1]}),
        ("2d_dilation2", (1, 2, 9, 9), (2, 2, 3, 3), True, {"dilations": [2, 2], "pads": [2, 2, 2, 2]}),
        ("2d_groups2", (1, 4, 6, 6), (6, 2, 3, 3), True, {"group": 2, "pads": [1, 1, 1, 1]}),
        ("2d_depthwise", (2, 4, 7, 7), (4, 1, 3, 3), True,
         {"group": 4, "pads": [1, 1, 1, 1], "strides": [2, 2]}),
        ("2d_depthwise_multiplier2", (1, 3, 5, 5), (6, 1, 3, 3), False, {"group": 3}),
        ("2d_1x1", (1, 8, 4, 4), (5, 8, 1, 1), True, {}),
        ("2d_rect_kernel_stride", (1, 2, 8, 7), (3, 2, 1, 3), True, {"strides": [3, 1]}),
        ("1d_basic", (2, 3, 9), (4, 3, 3), True, {}),
        ("1d_stride_pad_dilation", (1, 2, 11), (3, 2, 3), False,
         {"strides": [2], "pads": [2, 1], "dilations": [2]}),
        ("1d_groups", (1, 4, 8), (4, 2, 2), True, {"group": 2}),
    ]
    for dt in FLOATS:  # f16/bf16 in the storage passes
        for name, xs, ws, has_bias, attrs in conv_cases:
            x, wt = normal(xs, dt), normal(ws, dt)
            b = normal((ws[0],), dt) if has_bias else None
            inputs = [x, wt] + ([b] if has_bias else [])
            w.case("conv_%s_%s" % (dt, name), "conv", inputs,
                   conv_ref(x, wt, b, attrs.get("strides"), attrs.get("pads"),
                            attrs.get("dilations"), attrs.get("group", 1)), "accum", attrs=attrs)
    transpose_cases = [
        ("2d_basic", (1, 2, 3, 3), (2, 3, 3, 3), True, {}),
        ("2d_stride2", (1, 2, 3, 4), (2, 2, 3, 3), False, {"strides": [2, 2]}),
        ("2d_stride2_pads_output_padding", (2, 3, 4, 4), (3, 2, 3, 3), True,
         {"strides": [2, 2], "pads": [1, 1, 1, 1], "output_padding": [1, 1]}),
        ("2d_dilation_groups", (1, 4, 3, 3), (4, 1, 2, 2), True,
         {"dilations": [2, 2], "group": 2}),
        ("2d_asym_pads", (1, 1, 4, 3), (1, 2, 3, 2), False,
         {"strides": [2, 1], "pads": [0, 1, 2, 0]}),
        ("1d_stride", (1, 2, 5), (2, 3, 3), True, {"strides": [2]}),
    ]
    for dt in FLOATS:
        for name, xs, ws, has_bias, attrs in transpose_cases:
            x, wt = normal(xs, dt), normal(ws, dt)
            b = normal((ws[1] * attrs.get("group", 1),), dt) if has_bias else None
            inputs = [x, wt] + ([b] if has_bias else [])
            w.case("conv_transpose_%s_%s" % (dt, name), "conv_transpose", inputs,
                   conv_transpose_ref(x, wt, b, attrs.get("strides"), attrs.get("pads"),
                                      attrs.get("dilations"), attrs.get("group", 1),
                                      attrs.get("output_padding")), "accum", attrs=attrs)
    pool_cases = [
        ("2d_2x2_stride2", (1, 2, 6, 6), {"kernel_shape": [2, 2], "strides": [2, 2]}),
        ("2d_3x3_pad1", (2, 3, 5, 5), {"kernel_shape": [3, 3], "pads": [1, 1, 1, 1]}),
        ("2d_3x3_stride2_pad1_resnet", (1, 2, 9, 9),
         {"kernel_shape": [3, 3], "strides": [2, 2], "pads": [1, 1, 1, 1]}),
        ("2d_ceil_mode", (1, 1, 7, 6), {"kernel_shape": [3, 2], "strides": [2, 2],
                                        "ceil_mode": True}),
        ("2d_ceil_mode_pads", (1, 2, 6, 6), {"kernel_shape": [3, 3], "strides": [2, 2],
                                             "pads": [1, 1, 1, 1], "ceil_mode": True}),
        ("2d_asym_pads", (1, 1, 5, 4), {"kernel_shape": [2, 3], "pads": [1, 0, 0, 2]}),
        ("2d_dilation", (1, 1, 7, 7), {"kernel_shape": [2, 2], "dilations": [2, 3]}),
        ("1d", (2, 3, 10), {"kernel_shape": [3], "strides": [2], "pads": [1, 1]}),
    ]
    for dt in FLOATS + INTS:
        for name, xs, attrs in pool_cases:
            x = values(xs, dt) if dt in INTS else normal(xs, dt)
            w.case("max_pool_%s_%s" % (dt, name), "max_pool", [x],
                   pool_ref(x, "max", attrs["kernel_shape"], attrs.get("strides"),
                            attrs.get("pads"), attrs.get("dilations"),
                            attrs.get("ceil_mode", False)), attrs=attrs)
    for dt in FLOATS:
        for name, xs, attrs in pool_cases:
            for include in (False, True):
                if include and not attrs.get("pads"):
                    continue
                a = dict(attrs, count_include_pad=include)
                x = normal(xs, dt)
                w.case("avg_pool_%s_%s%s" % (dt, name, "_include_pad" if include else ""),
                       "avg_pool", [x],
                       pool_ref(x, "avg", a["kernel_shape"], a.get("strides"), a.get("pads"),
                                a.get("dilations"), a.get("ceil_mode", False), include),
                       "accum", attrs=a)
    x = values((1, 1, 4, 4), "f32")
    x[0, 0, 1, 1] = np.nan
    w.case("max_pool_f32_nan_propagates", "max_pool", [x],
           pool_ref(x, "max", [2, 2], [2, 2]), attrs={"kernel_shape": [2, 2], "strides": [2, 2]})
    # the rejected dtypes, and the shape errors that name the operands
    for dt in ("i32", "i64", "bool"):
        x = values((1, 2, 4, 4), dt)
        wt = values((2, 2, 3, 3), dt)
        w.case("conv_%s_rejected" % dt, "conv", [x, wt], expect_error="dtype")
        w.case("conv_transpose_%s_rejected" % dt, "conv_transpose", [x, wt], expect_error="dtype")
        w.case("avg_pool_%s_rejected" % dt, "avg_pool", [x], attrs={"kernel_shape": [2, 2]},
               expect_error="dtype")
    w.case("max_pool_bool_rejected", "max_pool", [values((1, 1, 2, 2), "bool")],
           attrs={"kernel_shape": [2, 2]}, expect_error="dtype")
    for dt in ("f32", "f64"):
        w.case("conv_%s_mixed_dtypes_rejected" % dt, "conv",
               [normal((1, 2, 4, 4), dt), normal((2, 2, 3, 3), "f64" if dt == "f32" else "f32")],
               expect_error="dtype")
    x = normal((1, 4, 5, 5), "f32")
    w.case("conv_f32_channel_mismatch", "conv", [x, normal((2, 3, 3, 3), "f32")],
           expect_error="shape")
    w.case("conv_f32_group_channel_mismatch", "conv", [x, normal((3, 2, 3, 3), "f32")],
           attrs={"group": 2}, expect_error="shape")
    w.case("conv_f32_bias_wrong_size", "conv",
           [x, normal((2, 4, 3, 3), "f32"), normal((3,), "f32")], expect_error="shape")
    w.case("conv_f32_kernel_larger_than_input", "conv", [x, normal((2, 4, 6, 6), "f32")],
           expect_error="shape")
    w.case("conv_f32_pads_wrong_count", "conv", [x, normal((2, 4, 3, 3), "f32")],
           attrs={"pads": [1, 1]}, expect_error="invalid_argument")
    w.case("conv_f32_rank5_rejected", "conv",
           [normal((1, 1, 2, 2, 2), "f32"), normal((1, 1, 1, 1, 1), "f32")], expect_error="shape")
    w.case("max_pool_f32_kernel_shape_missing", "max_pool", [x], expect_error="invalid_argument")
    w.case("conv_f32_zero_stride_rejected", "conv", [x, normal((2, 4, 3, 3), "f32")],
           attrs={"strides": [0, 1]}, expect_error="invalid_argument")
# ---------------------------------------------------------------- pad clip topk cumsum resize batch_norm

def resize_coordinate(o, n, out, scale, rule):
    s = scale if scale > 0 else out / n
    length = n * scale if scale > 0 else out
    if rule == "asymmetric":
        return o / s
    if rule == "align_corners":
        return 0.0 if length == 1 else o * (n - 1) / (length - 1)
    if rule == "pytorch_half_pixel":
        return (o + 0.5) / s - 0.5 if length > 1 else 0.0
    return (o + 0.5) / s - 0.5


def resize_ref(x, out_h, out_w, mode, rule, rounding="round_prefer_floor", scale_h=0.0,
               scale_w=0.0):
    """ONNX Resize on the last two axes, written per output element."""
    n_h, n_w = x.shape[-2], x.shape[-1]
    y = np.zeros(x.shape[:-2] + (out_h, out_w), dtype=np.float64)
    xs = x.astype(np.float64)

    def nearest(c, n):
        r = {"round_prefer_floor": math.ceil(c - 0.5), "round_prefer_ceil": math.floor(c + 0.5),
             "floor": math.floor(c), "ceil": math.ceil(c)}[rounding]
        return min(max(int(r), 0), n - 1)

    for oh in range(out_h):
        ch = resize_coordinate(oh, n_h, out_h, scale_h, rule)
        for ow in range(out_w):
            cw = resize_coordinate(ow, n_w, out_w, scale_w, rule)
            if mode == "nearest":
                y[..., oh, ow] = xs[..., nearest(ch, n_h), nearest(cw, n_w)]
                continue
            h0, w0 = math.floor(ch), math.floor(cw)
            th, tw = ch - h0, cw - w0
            h_lo, h_hi = min(max(h0, 0), n_h - 1), min(max(h0 + 1, 0), n_h - 1)
            w_lo, w_hi = min(max(w0, 0), n_w - 1), min(max(w0 + 1, 0), n_w - 1)
            top = xs[..., h_lo, w_lo] * (1 - tw) + xs[..., h_lo, w_hi] * tw
            bottom = xs[..., h_hi, w_lo] * (1 - tw) + xs[..., h_hi, w_hi] * tw
            y[..., oh, ow] = top * (1 - th) + bottom * th
    return y.astype(x.dtype)


def topk_ref(x, axis, k, largest):
    """Stable order along the axis (ties: lower position first)."""
    keys = -x.astype(np.float64) if largest else x.astype(np.float64)
    order = np.argsort(keys, axis=axis, kind="stable")
    indices = np.take(order, np.arange(k), axis=axis).astype(np.int64)
    return np.take_along_axis(x, indices, axis=axis), indices


def gen_model_ops(w):
    r = np.random.default_rng(20261202)
    for dt in DTYPES:
        x = values((3, 4), dt)
        for mode in ("constant", "reflect", "edge", "wrap"):
            np_mode = {"wrap": "wrap", "edge": "edge", "reflect": "reflect"}.get(mode, "constant")
            kwargs = {"constant_values": 1} if mode == "constant" else {}
            expected = np.pad(x, ((1, 2), (2, 0)), mode=np_mode, **kwargs)
            w.case("pad_%s_%s" % (dt, mode), "pad", [x], expected,
                   attrs={"before": [1, 2], "after": [2, 0], "mode": mode, "value": 1.0})
        w.case("pad_%s_crop" % dt, "pad", [x], x[1:, :3],
               attrs={"before": [-1, 0], "after": [0, -1], "mode": "constant", "value": 0.0})
        xs = values((2, 3, 4, 5), dt)
        w.case("resize_%s_nearest_up" % dt, "resize", [xs],
               resize_ref(xs, 8, 10, "nearest", "asymmetric", "floor"),
               attrs={"shape": [-1, -1, 8, 10], "mode": "nearest", "coordinates": "asymmetric",
                      "rounding": "floor"})
        w.case("resize_%s_nearest_down" % dt, "resize", [xs],
               resize_ref(xs, 3, 2, "nearest", "half_pixel", "round_prefer_ceil"),
               attrs={"shape": [2, 3, 3, 2], "mode": "nearest", "coordinates": "half_pixel",
                      "rounding": "round_prefer_ceil"})
        params = [values((3,), dt) for _ in range(3)] + [np.abs(values((3,), dt)) + 1]
        if dt == "bool":
            params[3] = np.ones(3, dtype=bool)
        if STORAGE == "bf16":
            params[3] = bf16_round(params[3])  # |v| + 1 left the bf16 grid
        xb = values((2, 3, 4), dt)
        f = lambda a: up(a, dt).astype(np.float64)
        bn = ((f(xb) - f(params[2])[:, None]) / np.sqrt(f(params[3])[:, None] + 1e-3)
              * f(params[0])[:, None] + f(params[1])[:, None])
        w.case("batch_norm_%s" % dt, "batch_norm", [xb] + params,
               cast_out(bn, dt if is_float(dt) else "f32"), tol="accum", attrs={"eps": 1e-3})
        if dt == "bool":
            for op in ("clip", "topk", "topk_indices", "cumsum"):
                w.case("%s_bool_rejected" % op, op, [x], attrs={"k": 1}
                       if op.startswith("topk") else None, expect_error="dtype")
            continue
        xf = specials(dt) if is_float(dt) else values((14,), dt)
        w.case("clip_%s" % dt, "clip", [xf], cast_out(np.minimum(np.maximum(up(xf, dt), -2.5), 3),
                                                       dt),
               attrs={"min": -2.5, "max": 3.0})
        low = np.ceil(-2.5) if not is_float(dt) else -2.5
        w.case("clip_%s_min_only" % dt, "clip", [xf],
               cast_out(np.where(up(xf, dt) < low, low, up(xf, dt)), dt), attrs={"min": -2.5})
        w.case("clip_%s_crossed" % dt, "clip", [x], cast_out(np.full(x.shape, 1), dt),
               attrs={"min": 2.0, "max": 1.0})
        ties = r.integers(-3, 3, (3, 6)).astype(NP[dt])  # many equal elements
        for axis, k, largest in ((1, 3, True), (0, 2, False), (-1, 6, False)):
            values_out, indices_out = topk_ref(ties, axis, k, largest)
            attrs = {"axis": axis, "k": k, "largest": largest}
            w.case("topk_%s_ax%d_k%d" % (dt, axis, k), "topk", [ties], values_out, attrs=attrs)
            w.case("topk_indices_%s_ax%d_k%d" % (dt, axis, k), "topk_indices", [ties],
                   indices_out, attrs=attrs)
        xc = values((3, 4, 2), dt)
        for axis in (0, 1, -1):
            for exclusive in (False, True):
                for reverse in (False, True):
                    a = up(xc, dt)
                    a = np.flip(a, axis) if reverse else a
                    c = np.cumsum(a, axis=axis)
                    if exclusive:
                        c = c - a
                    c = np.flip(c, axis) if reverse else c
                    w.case("cumsum_%s_ax%d_e%d_r%d" % (dt, axis, exclusive, reverse), "cumsum",
                           [xc], cast_out(c, dt), tol="accum",
                           attrs={"axis": axis, "exclusive": exclusive, "reverse": reverse})
    for dt in FLOATS:
        xs = values((1, 2, 4, 4), dt)
        for rule in ("half_pixel", "asymmetric", "align_corners", "pytorch_half_pixel"):
            w.case("resize_%s_linear_%s" % (dt, rule), "resize", [xs],
                   resize_ref(xs, 7, 3, "linear", rule), tol="accum",
                   attrs={"shape": [-1, -1, 7, 3], "mode": "linear", "coordinates": rule})
        w.case("resize_%s_linear_scales" % dt, "resize", [xs],
               resize_ref(xs, 2, 9, "linear", "align_corners", scale_h=0.6, scale_w=2.4),
               tol="accum", attrs={"shape": [-1, -1, 2, 9], "mode": "linear",
                                   "coordinates": "align_corners", "scale_h": 0.6,
                                   "scale_w": 2.4})
    for dt in FLOATS:  # NaN is the greatest element (hand-worked: NumPy sorts NaN last)
        xn = np.array([1, math.nan, 3, math.nan, -2], dtype=NP[dt])
        for largest, order in ((True, [1, 3, 2]), (False, [4, 0, 2])):
            attrs = {"axis": 0, "k": 3, "largest": largest}
            w.case("topk_%s_nan_largest%d" % (dt, largest), "topk", [xn], xn[order], attrs=attrs)
            w.case("topk_indices_%s_nan_largest%d" % (dt, largest), "topk_indices", [xn],
                   np.array(order, dtype=np.int64), attrs=attrs)
        w.case("topk_%s_smallest_reaches_nan" % dt, "topk", [xn], xn[[4, 0, 2, 1]],
               attrs={"axis": 0, "k": 4, "largest": False})
    xi = values((1, 1, 2, 2), "i32")
    w.case("resize_i32_linear_rejected", "resize", [xi],
           attrs={"shape": [-1, -1, 4, 4], "mode": "linear"}, expect_error="dtype")
    x = values((3, 4), "f32")
    w.case("pad_f32_reflect_too_far", "pad", [x],
           attrs={"before": [3, 0], "after": [0, 0], "mode": "reflect"}, expect_error="shape")
    w.case("pad_f32_wrong_rank", "pad", [x], attrs={"before": [1], "after": [1]},
           expect_error="invalid_argument")
    w.case("topk_f32_k_too_large", "topk", [x], attrs={"axis": 1, "k": 5},
           expect_error="invalid_argument")
    w.case("batch_norm_f32_wrong_channels", "batch_norm",
           [values((2, 3, 4), "f32")] + [values((4,), "f32")] * 4, expect_error="shape")


if __name__ == "__main__":
    main()
