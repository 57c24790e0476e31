"""A small GGUF v3 writer and reader (float32 tensors only), written against the GGUF spec.

Layout (all numbers little-endian):

  header       magic "GGUF", u32 version (3), u64 tensor_count, u64 metadata_kv_count
  metadata     key (string), u32 value type, value
  tensor infos name (string), u32 n_dims, u64 ne[n_dims] (fastest dim first),
               u32 ggml type (0 = F32), u64 offset from the start of the data section
  padding      zero bytes up to a multiple of the alignment
  data         tensor bytes; every tensor starts at a multiple of the alignment

A string is a u64 byte length followed by UTF-8 bytes (no terminator). An array is a u32
element type, a u64 count and the elements. The alignment is 32 unless the file has a
``general.alignment`` key; the writer does not write that key and uses 32.
"""

import struct

import numpy as np

GGUF_MAGIC = b"GGUF"
GGUF_VERSION = 3
ALIGNMENT = 32
GGML_TYPE_F32 = 0

# Metadata value types.
UINT8, INT8, UINT16, INT16, UINT32, INT32, FLOAT32, BOOL, STRING, ARRAY, UINT64, INT64, FLOAT64 = range(13)

_SCALAR_FORMATS = {
    UINT8: "<B", INT8: "<b", UINT16: "<H", INT16: "<h", UINT32: "<I", INT32: "<i",
    FLOAT32: "<f", BOOL: "<?", UINT64: "<Q", INT64: "<q", FLOAT64: "<d",
}


class GGUFError(Exception):
    """Raised for a malformed or unsupported GGUF file."""


def _pad(n, alignment=ALIGNMENT):
    """Number of bytes needed to pad ``n`` up to a multiple of ``alignment``."""
    return (-n) % alignment


class Value:
    """A typed metadata value: ``Value(UINT32, 128)``, ``Value(ARRAY, [...], elem=STRING)``."""

    def __init__(self, vtype, value, elem=None):
        self.vtype = vtype
        self.value = value
        self.elem = elem

    def __repr__(self):
        return f"Value({self.vtype}, {self.value!r}, elem={self.elem})"


def _encode_string(s):
    b = s.encode("utf-8")
    return struct.pack("<Q", len(b)) + b


def _encode_scalar(vtype, value):
    if vtype == STRING:
        return _encode_string(value)
    if vtype not in _SCALAR_FORMATS:
        raise GGUFError(f"unsupported metadata type {vtype}")
    return struct.pack(_SCALAR_FORMATS[vtype], value)


def _encode_value(v):
    out = struct.pack("<I", v.vtype)
    if v.vtype == ARRAY:
        if v.elem is None or v.elem == ARRAY:
            raise GGUFError("an array needs a non-array element type")
        out += struct.pack("<IQ", v.elem, len(v.value))
        out += b"".join(_encode_scalar(v.elem, e) for e in v.value)
    else:
        out += _encode_scalar(v.vtype, v.value)
    return out


def write_gguf(path, metadata, tensors):
    """Write a GGUF v3 file.

    ``metadata`` is a list of (key, Value) pairs, written in order. ``tensors`` is a list of
    (name, numpy array) pairs; each array is written as contiguous row-major float32 with
    its dims reversed (GGUF lists the fastest-varying dimension first).
    """
    keys = [k for k, _ in metadata]
    if len(set(keys)) != len(keys):
        raise GGUFError("duplicate metadata key")
    names = [n for n, _ in tensors]
    if len(set(names)) != len(names):
        raise GGUFError("duplicate tensor name")

    header = GGUF_MAGIC + struct.pack("<IQQ", GGUF_VERSION, len(tensors), len(metadata))
    kv = b"".join(_encode_string(k) + _encode_value(v) for k, v in metadata)

    infos = []
    blobs = []
    offset = 0
    for name, arr in tensors:
        a = np.ascontiguousarray(arr, dtype="<f4")
        if a.ndim < 1 or a.ndim > 4:
            raise GGUFError(f"tensor {name!r} has {a.ndim} dims (1..4 allowed)")
        ne = list(reversed(a.shape))
        info = _encode_string(name) + struct.pack("<I", a.ndim)
        info += b"".join(struct.pack("<Q", n) for n in ne)
        info += struct.pack("<IQ", GGML_TYPE_F32, offset)
        infos.append(info)
        data = a.tobytes()
        data += b"\0" * _pad(len(data))
        blobs.append(data)
        offset += len(data)

    head = header + kv + b"".join(infos)
    head += b"\0" * _pad(len(head))
    with open(path, "wb") as f:
        f.write(head)
        for data in blobs:
            f.write(data)


class _Reader:
    def __init__(self, buf):
        self.buf = buf
        self.pos = 0

    def take(self, n, what):
        if n < 0 or self.pos + n > len(self.buf):
            raise GGUFError(f"truncated file reading {what} at byte {self.pos}")
        b = self.buf[self.pos: self.pos + n]
        self.pos += n
        return b

    def unpack(self, fmt, what):
        size = struct.calcsize(fmt)
        return struct.unpack(fmt, self.take(size, what))[0]

    def string(self, what):
        n = self.unpack("<Q", what + " length")
        return self.take(n, what).decode("utf-8")

    def scalar(self, vtype, what):
        if vtype == STRING:
            return self.string(what)
        if vtype not in _SCALAR_FORMATS:
            raise GGUFError(f"{what}: unknown value type {vtype}")
        return self.unpack(_SCALAR_FORMATS[vtype], what)


class GGUFFile:
    """A parsed GGUF file: ``version``, ``metadata`` {key: Value}, ``tensors`` {name: array}.

    Tensors are returned as float32 numpy arrays in PyTorch (row-major) shape, i.e. with
    the GGUF dims reversed. ``tensor_infos`` keeps (name, ne, type, offset) in file order.
    """

    def __init__(self, path):
        with open(path, "rb") as f:
            buf = f.read()
        r = _Reader(buf)
        if r.take(4, "magic") != GGUF_MAGIC:
            raise GGUFError(f"{path}: not a GGUF file (bad magic)")
        self.version = r.unpack("<I", "version")
        if self.version != 3:
            raise GGUFError(f"{path}: GGUF version {self.version}, expected 3")
        n_tensors = r.unpack("<Q", "tensor_count")
        n_kv = r.unpack("<Q", "metadata_kv_count")

        self.metadata = {}
        for i in range(n_kv):
            key = r.string(f"metadata {i} key")
            if key in self.metadata:
                raise GGUFError(f"{path}: duplicate metadata key {key!r}")
            vtype = r.unpack("<I", f"metadata {key!r} type")
            if vtype == ARRAY:
                elem = r.unpack("<I", f"metadata {key!r} element type")
                count = r.unpack("<Q", f"metadata {key!r} count")
                if elem == ARRAY:
                    raise GGUFError(f"{path}: metadata {key!r} is an array of arrays")
                items = [r.scalar(elem, f"metadata {key!r} element {j}") for j in range(count)]
                self.metadata[key] = Value(ARRAY, items, elem=elem)
            else:
                self.metadata[key] = Value(vtype, r.scalar(vtype, f"metadata {key!r}"))

        alignment = ALIGNMENT
        if "general.alignment" in self.metadata:
            alignment = int(self.metadata["general.alignment"].value)
        self.alignment = alignment

        self.tensor_infos = []
        for i in range(n_tensors):
            name = r.string(f"tensor {i} name")
            n_dims = r.unpack("<I", f"tensor {name!r} n_dims")
            if not 1 <= n_dims <= 4:
                raise GGUFError(f"{path}: tensor {name!r} has {n_dims} dims")
            ne = [r.unpack("<Q", f"tensor {name!r} dims[{d}]") for d in range(n_dims)]
            ttype = r.unpack("<I", f"tensor {name!r} type")
            offset = r.unpack("<Q", f"tensor {name!r} offset")
            self.tensor_infos.append((name, ne, ttype, offset))

        self.data_start = r.pos + _pad(r.pos, alignment)
        self.file_size = len(buf)
        self.tensors = {}
        for name, ne, ttype, offset in self.tensor_infos:
            if name in self.tensors:
                raise GGUFError(f"{path}: duplicate tensor {name!r}")
            if ttype != GGML_TYPE_F32:
                raise GGUFError(f"{path}: tensor {name!r} has type {ttype}, only F32 is read")
            if offset % alignment:
                raise GGUFError(f"{path}: tensor {name!r} offset {offset} is not aligned")
            count = int(np.prod(ne))
            start = self.data_start + offset
            end = start + 4 * count
            if end > len(buf):
                raise GGUFError(f"{path}: tensor {name!r} data runs past the end of the file")
            arr = np.frombuffer(buf, dtype="<f4", count=count, offset=start)
            self.tensors[name] = arr.reshape(list(reversed(ne))).astype(np.float32)

    def get(self, key):
        """The plain value of metadata ``key`` (KeyError if missing)."""
        return self.metadata[key].value
