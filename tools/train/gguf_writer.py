"""gguf_writer: writes GGUF version 3 files.

Layout (little-endian): magic "GGUF", uint32 version, uint64 tensor count,
uint64 metadata count; the metadata (key string, uint32 value type, value);
the tensor infos (name, uint32 n_dims, uint64 dims with ne0 first, uint32
ggml type, uint64 offset into the data section); padding to the alignment;
then the tensor data, each tensor starting at a multiple of the alignment.
A string is a uint64 byte length followed by UTF-8 bytes; an array is a
uint32 element type, a uint64 count and the elements.
"""

import struct

ALIGNMENT = 32

# Metadata value types.
UINT8, INT8, UINT16, INT16, UINT32, INT32, FLOAT32, BOOL, STRING, ARRAY, UINT64, INT64, FLOAT64 = range(13)

_SCALAR = {
    UINT8: "<B", INT8: "<b", UINT16: "<H", INT16: "<h", UINT32: "<I", INT32: "<i",
    FLOAT32: "<f", BOOL: "<?", UINT64: "<Q", INT64: "<q", FLOAT64: "<d",
}

# ggml tensor types used here.
GGML_F32 = 0
GGML_F16 = 1


def _str(s):
    b = s.encode("utf-8")
    return struct.pack("<Q", len(b)) + b


class Writer:
    def __init__(self):
        self.kv = []  # (key, type, value, elem_type)
        self.tensors = []  # (name, dims, ggml_type, bytes)

    def add(self, key, vtype, value, elem_type=None):
        if any(k == key for k, _, _, _ in self.kv):
            raise ValueError("gguf: duplicate key %r" % key)
        self.kv.append((key, vtype, value, elem_type))

    def add_string(self, key, v):
        self.add(key, STRING, v)

    def add_uint32(self, key, v):
        self.add(key, UINT32, v)

    def add_int32(self, key, v):
        self.add(key, INT32, v)

    def add_float32(self, key, v):
        self.add(key, FLOAT32, v)

    def add_bool(self, key, v):
        self.add(key, BOOL, v)

    def add_array(self, key, elem_type, values):
        self.add(key, ARRAY, list(values), elem_type)

    def add_tensor(self, name, dims, ggml_type, data):
        """dims are ne0 first (the innermost, contiguous dimension)."""
        if any(n == name for n, _, _, _ in self.tensors):
            raise ValueError("gguf: duplicate tensor %r" % name)
        self.tensors.append((name, list(dims), ggml_type, bytes(data)))

    @staticmethod
    def _value(vtype, v):
        if vtype == STRING:
            return _str(v)
        return struct.pack(_SCALAR[vtype], v)

    def to_bytes(self):
        out = bytearray()
        out += b"GGUF"
        out += struct.pack("<IQQ", 3, len(self.tensors), len(self.kv))
        for key, vtype, v, et in self.kv:
            out += _str(key) + struct.pack("<I", vtype)
            if vtype == ARRAY:
                out += struct.pack("<IQ", et, len(v))
                for e in v:
                    out += self._value(et, e)
            else:
                out += self._value(vtype, v)
        offset = 0
        offsets = []
        for name, dims, gt, data in self.tensors:
            offsets.append(offset)
            out += _str(name) + struct.pack("<I", len(dims))
            for d in dims:
                out += struct.pack("<Q", d)
            out += struct.pack("<IQ", gt, offset)
            offset += (len(data) + ALIGNMENT - 1) // ALIGNMENT * ALIGNMENT
        out += b"\0" * (-len(out) % ALIGNMENT)
        for (name, dims, gt, data), off in zip(self.tensors, offsets):
            out += data
            out += b"\0" * (-len(data) % ALIGNMENT)
        return bytes(out)

    def write(self, path):
        with open(path, "wb") as f:
            f.write(self.to_bytes())
