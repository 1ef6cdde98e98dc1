"""A minimal ONNX model writer for the tests: the protobuf wire format of
the few ModelProto fields a small model needs (field numbers from onnx.proto),
so tensorplay.load's ONNX path is tested without the onnx wheel. When the
wheel is installed, the tests also check the bytes with onnx.checker."""
import struct
from typing import Dict, List, Sequence, Tuple

import numpy as np

FLOAT = 1  # TensorProto.DataType
ELEMENT_TYPES = {np.dtype(np.float32): FLOAT, np.dtype(np.int64): 7}
ATTRIBUTE_INT, ATTRIBUTE_INTS = 2, 7  # AttributeProto.AttributeType


def _varint(value: int) -> bytes:
    value &= (1 << 64) - 1  # negative int64s as ten-byte varints
    out = bytearray()
    while True:
        byte = value & 0x7F
        value >>= 7
        out.append(byte | (0x80 if value else 0))
        if not value:
            return bytes(out)


def _field(number: int, payload: bytes) -> bytes:
    """A length-delimited field (wire type 2): strings, bytes, messages."""
    return _varint(number << 3 | 2) + _varint(len(payload)) + payload


def _int_field(number: int, value: int) -> bytes:
    return _varint(number << 3) + _varint(value)


def _text(number: int, text: str) -> bytes:
    return _field(number, text.encode())


def value_info(name: str, dtype, shape: Sequence[int]) -> bytes:
    """ValueInfoProto: name, TypeProto.tensor_type (elem_type, shape)."""
    dims = b"".join(_field(1, _int_field(1, size)) for size in shape)
    tensor_type = _int_field(1, ELEMENT_TYPES[np.dtype(dtype)]) + _field(2, dims)
    return _text(1, name) + _field(2, _field(1, tensor_type))


def initializer(name: str, array: np.ndarray) -> bytes:
    """TensorProto: dims, data_type, name, raw_data (little-endian)."""
    array = np.ascontiguousarray(array)
    dims = b"".join(_int_field(1, size) for size in array.shape)
    return (dims + _int_field(2, ELEMENT_TYPES[array.dtype]) + _text(8, name) +
            _field(9, array.astype(array.dtype.newbyteorder("<")).tobytes()))


def attribute_int(name: str, value: int) -> bytes:
    return _text(1, name) + _int_field(3, value) + _int_field(20, ATTRIBUTE_INT)


def node(op_type: str, inputs: List[str], outputs: List[str], name: str = "",
         attributes: Sequence[bytes] = ()) -> bytes:
    """NodeProto: input, output, name, op_type, attribute."""
    return (b"".join(_text(1, i) for i in inputs) + b"".join(_text(2, o) for o in outputs) +
            _text(3, name or outputs[0]) + _text(4, op_type) +
            b"".join(_field(5, a) for a in attributes))


def model(name: str, nodes: List[bytes], inputs: List[bytes], outputs: List[bytes],
          initializers: Dict[str, np.ndarray], opset: int = 17) -> bytes:
    """ModelProto: ir_version 8, producer, the graph, one default-domain opset."""
    graph = (b"".join(_field(1, n) for n in nodes) + _text(2, name) +
             b"".join(_field(5, initializer(k, v)) for k, v in initializers.items()) +
             b"".join(_field(11, i) for i in inputs) + b"".join(_field(12, o) for o in outputs))
    opset_import = _text(1, "") + _int_field(2, opset)
    return (_int_field(1, 8) + _text(2, "tensorplay-tests") + _field(7, graph) +
            _field(8, opset_import))
