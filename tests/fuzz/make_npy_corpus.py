#!/usr/bin/python3
"""Writes the seed corpus of fuzz_npy into tests/fuzz/corpus/npy/ (or the
folder given as argv[1]): valid files of every dtype and header version, and
the near misses the reader must reject. Deterministic; the output is
committed, rerun after changing this script."""
import io
import os
import sys

import numpy as np


def npy_bytes(array, version=None):
    buffer = io.BytesIO()
    np.lib.format.write_array(buffer, array, version=version, allow_pickle=False)
    return buffer.getvalue()


def handmade(header, data=b"", major=1):
    """A file with `header` verbatim (no padding), as a hostile writer makes it."""
    header = header.encode("latin1")
    length = len(header).to_bytes(2 if major == 1 else 4, "little")
    return b"\x93NUMPY" + bytes([major, 0]) + length + header + data


def seeds():
    counting = np.arange(6, dtype=np.float32).reshape(2, 3)
    yield "f32_2x3.npy", npy_bytes(counting)
    yield "f64_scalar.npy", npy_bytes(np.array(-2.5))
    yield "i32_empty.npy", npy_bytes(np.zeros((3, 0), dtype=np.int32))
    yield "i64_8d.npy", npy_bytes(np.arange(16, dtype=np.int64).reshape(2, 1, 2, 1, 2, 1, 2, 1))
    yield "bool_5.npy", npy_bytes(np.array([True, False, True, True, False]))
    yield "v2_f32.npy", npy_bytes(counting, version=(2, 0))
    yield "v3_i32.npy", npy_bytes(np.arange(4, dtype=np.int32), version=(3, 0))
    yield "fortran.npy", npy_bytes(np.asfortranarray(np.arange(6.0).reshape(2, 3)))
    yield "big_endian.npy", npy_bytes(np.arange(3, dtype=">f4"))
    yield "uint8.npy", npy_bytes(np.arange(3, dtype=np.uint8))
    yield "reordered_keys.npy", handmade(
        "{\"shape\":(2,),'fortran_order':False,'descr':'=i4'}\n", np.arange(2, dtype="<i4").tobytes())
    yield "truncated_data.npy", npy_bytes(counting)[:-5]
    yield "bool_bad_byte.npy", handmade(
        "{'descr': '|b1', 'fortran_order': False, 'shape': (3,), }", bytes([0, 1, 2]))


def main():
    here = os.path.dirname(os.path.abspath(__file__))
    folder = sys.argv[1] if len(sys.argv) > 1 else os.path.join(here, "corpus", "npy")
    os.makedirs(folder, exist_ok=True)
    count = 0
    for name, data in seeds():
        with open(os.path.join(folder, name), "wb") as f:
            f.write(data)
        count += 1
    print(f"wrote {count} seeds to {folder}")


if __name__ == "__main__":
    main()
