"""Value packs (`.ctp`): one Python value with its tensors as raw bytes (docs/WORKER_PROTOCOL.md).

Layout: magic "CRUCTP01", a uint64 little-endian header length H, H bytes of UTF-8 JSON, then
the tensor data. The C++ side reads the same files, so the format is plain JSON + raw bytes and
never pickle: a value pack written by one process can be read by another without running code.

Also here: the poison pattern the candidate stage writes into tensors it did not initialise,
and the helpers to find it again.
"""
import hashlib
import json
import math
import numbers
import os
import struct
import sys
import tempfile

import torch

MAGIC = b"CRUCTP01"
_PREFIX = len(MAGIC) + 8
# Tensor data is aligned inside the data block so a reader that maps the file gets aligned
# pointers whenever the data block itself is aligned; it costs at most 63 bytes per tensor.
_ALIGN = 64

DTYPES = {
    "float64": torch.float64,
    "float32": torch.float32,
    "float16": torch.float16,
    "bfloat16": torch.bfloat16,
    "int64": torch.int64,
    "int32": torch.int32,
    "int16": torch.int16,
    "int8": torch.int8,
    "uint8": torch.uint8,
    "bool": torch.bool,
}
DTYPE_NAMES = {dtype: name for name, dtype in DTYPES.items()}

# The bits of one poisoned element, as a non-negative integer. Every value fits the signed
# integer type of the same width, so it can be written through that view with fill_().
POISON_BITS = {
    torch.float32: 0x7FC0DEAD,
    torch.float64: 0x7FF8DEADDEADDEAD,
    torch.float16: 0x7E6D,
    torch.bfloat16: 0x7FDE,
    torch.int64: 0x7EADBEEFDEADBEEF,
    torch.int32: 0x7EADBEEF,
    torch.int16: 0x7EAD,
    torch.int8: 0x5A,
    torch.uint8: 0x5A,
}

# The integer dtype each poisonable dtype is viewed as to read or write raw bits.
_BITS_VIEW = {
    torch.float32: torch.int32,
    torch.float64: torch.int64,
    torch.float16: torch.int16,
    torch.bfloat16: torch.int16,
    torch.int64: torch.int64,
    torch.int32: torch.int32,
    torch.int16: torch.int16,
    torch.int8: torch.int8,
    torch.uint8: torch.uint8,
}


def dtype_name(dtype):
    """The value-pack name of a torch dtype ("float32"); TypeError for one packs cannot hold."""
    try:
        return DTYPE_NAMES[dtype]
    except KeyError:
        raise TypeError(f"value packs cannot hold tensors of dtype {dtype}") from None


# ---------------------------------------------------------------------------------------------
# Poison


def poison_(tensor):
    """Fill `tensor` in place with its dtype's poison bits; bool (and unknown dtypes) untouched.

    Works on any device and any strides: the same-width integer view shares the storage.
    """
    view_dtype = _BITS_VIEW.get(tensor.dtype)
    if view_dtype is not None and tensor.numel() > 0:
        with torch.no_grad():
            tensor.view(view_dtype).fill_(POISON_BITS[tensor.dtype])
    return tensor


def count_poison(tensor):
    """How many elements of `tensor` hold exactly the poison bits (0 for unpoisonable dtypes)."""
    view_dtype = _BITS_VIEW.get(tensor.dtype)
    if view_dtype is None or tensor.numel() == 0:
        return 0
    return int((tensor.detach().view(view_dtype) == POISON_BITS[tensor.dtype]).sum().item())


# ---------------------------------------------------------------------------------------------
# Walking values


def tensors_in(value):
    """The tensors of a nested value, depth-first, in the order a value pack stores them."""
    found = []
    _collect(value, found)
    return found


def _collect(value, found):
    if isinstance(value, torch.Tensor):
        found.append(value)
    elif isinstance(value, (list, tuple)):
        for item in value:
            _collect(item, found)
    elif isinstance(value, dict):
        for item in value.values():
            _collect(item, found)


# ---------------------------------------------------------------------------------------------
# Saving


def save(path, value, digest=False):
    """Write `value` to `path` as a value pack, atomically (a reader never sees half a file).

    With `digest`, returns the file's SHA-256 (hex), taken from the bytes as they are written."""
    tensors = []
    header = {"value": _encode(value, tensors), "tensors": []}
    offset = 0
    for tensor in tensors:
        nbytes = tensor.numel() * tensor.element_size()
        offset = _aligned(offset)
        header["tensors"].append({"dtype": dtype_name(tensor.dtype), "shape": list(tensor.shape),
                                  "offset": offset, "nbytes": nbytes})
        offset += nbytes
    header_bytes = json.dumps(header, allow_nan=False, separators=(",", ":")).encode("utf-8")
    hasher = hashlib.sha256() if digest else None
    _write_atomically(path, header_bytes, tensors, header["tensors"], hasher)
    return hasher.hexdigest() if hasher is not None else None


def _aligned(offset):
    return (offset + _ALIGN - 1) // _ALIGN * _ALIGN


def _encode(value, tensors):
    """The JSON form of `value`; plain CPU contiguous copies of its tensors go to `tensors`."""
    # bool before int: bool is a subclass of int in Python.
    if isinstance(value, torch.Tensor):
        tensors.append(_plain_cpu(value))
        return {"tensor": len(tensors) - 1}
    if isinstance(value, bool):
        return {"bool": value}
    if isinstance(value, int):
        return {"int": int(value)}
    if isinstance(value, float):
        return {"float": _encode_float(float(value))}
    if isinstance(value, numbers.Integral):  # NumPy integers, which get_init_inputs may return
        return {"int": int(value)}
    if isinstance(value, numbers.Real):
        return {"float": _encode_float(float(value))}
    if isinstance(value, str):
        return {"str": str(value)}
    if value is None:
        return {"none": True}
    if isinstance(value, list):
        return {"list": [_encode(item, tensors) for item in value]}
    if isinstance(value, tuple):
        return {"tuple": [_encode(item, tensors) for item in value]}
    if isinstance(value, dict):
        return {"dict": [[_check_key(key), _encode(item, tensors)] for key, item in value.items()]}
    raise TypeError(f"value packs cannot hold a value of type {type(value).__qualname__}")


def _check_key(key):
    if not isinstance(key, str):
        raise TypeError("value packs hold dicts with string keys only, "
                        f"not {type(key).__qualname__}")
    return str(key)


def _encode_float(x):
    if math.isnan(x):
        return "nan"
    if math.isinf(x):
        return "inf" if x > 0 else "-inf"
    return x


def _plain_cpu(tensor):
    """A dense, contiguous, CPU, plain `torch.Tensor` copy of the data of `tensor`."""
    dtype_name(tensor.dtype)  # fail before copying anything
    # Subclass hooks must not run while the harness writes results: strip the subclass first.
    with torch._C.DisableTorchFunctionSubclass():
        plain = tensor.detach()
        if type(plain) is not torch.Tensor:
            plain = plain.as_subclass(torch.Tensor)
        if plain.layout != torch.strided:
            plain = plain.to_dense()
        return plain.cpu().contiguous()


def _tensor_bytes(tensor):
    """The raw bytes of a contiguous CPU tensor as a uint8 numpy array (any dtype, bf16 too)."""
    if sys.byteorder != "little":
        raise RuntimeError("value packs are little-endian; this machine is not")
    return tensor.reshape(-1).view(torch.uint8).numpy()


def _write_atomically(path, header_bytes, tensors, entries, hasher=None):
    directory = os.path.dirname(os.path.abspath(path))
    fd, temp_path = tempfile.mkstemp(prefix=".ctp-", dir=directory)
    try:
        # mkstemp makes the file private (0600); the candidate's sandbox must be able to read
        # the inputs, so give it the permissions an ordinary file would have.
        os.fchmod(fd, 0o644)
        with os.fdopen(fd, "wb") as f:

            def put(data):
                f.write(data)
                if hasher is not None:
                    hasher.update(data)

            put(MAGIC)
            put(struct.pack("<Q", len(header_bytes)))
            put(header_bytes)
            data_start = f.tell()
            for tensor, entry in zip(tensors, entries):
                put(b"\0" * (data_start + entry["offset"] - f.tell()))
                if entry["nbytes"]:
                    put(memoryview(_tensor_bytes(tensor)))
        os.replace(temp_path, path)
    except BaseException:
        try:
            os.unlink(temp_path)
        except OSError:
            pass
        raise


# ---------------------------------------------------------------------------------------------
# Loading


def load(path, device="cpu"):
    """Read a value pack; its tensors are owned copies placed on `device`. ValueError if corrupt."""
    with open(path, "rb") as f:
        data = bytearray(os.fstat(f.fileno()).st_size)
        if f.readinto(data) != len(data):
            raise ValueError(f"{path}: file changed while it was read")
    return loads(data, path, device)


def loads(data, path, device="cpu"):
    """A value pack from its bytes (`path` names it in errors)."""
    data = bytearray(data)
    header, data_start = _parse_header(data, path)
    tensors = [_read_tensor(data, data_start, entry, i, path)
               for i, entry in enumerate(header["tensors"])]
    if device is not None and torch.device(device).type != "cpu":
        tensors = [t.to(device) for t in tensors]
    return _decode(header["value"], tensors, path)


def _parse_header(data, path):
    if len(data) < _PREFIX:
        raise ValueError(f"{path}: too short to be a value pack ({len(data)} bytes)")
    if bytes(data[:len(MAGIC)]) != MAGIC:
        raise ValueError(f"{path}: bad magic {bytes(data[:len(MAGIC)])!r}, expected {MAGIC!r}")
    (length,) = struct.unpack_from("<Q", data, len(MAGIC))
    if length > len(data) - _PREFIX:
        raise ValueError(f"{path}: header length {length} runs past the end of the file")
    try:
        header = json.loads(bytes(data[_PREFIX:_PREFIX + length]).decode("utf-8"))
    except (UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise ValueError(f"{path}: header is not UTF-8 JSON: {exc}") from None
    if not isinstance(header, dict) or "value" not in header \
            or not isinstance(header.get("tensors"), list):
        raise ValueError(f"{path}: header needs a \"value\" and a \"tensors\" list")
    return header, _PREFIX + length


def _read_tensor(data, data_start, entry, index, path):
    where = f"{path}: tensor {index}"
    if not isinstance(entry, dict):
        raise ValueError(f"{where}: entry is not an object")
    dtype = DTYPES.get(entry.get("dtype"))
    if dtype is None:
        raise ValueError(f"{where}: unknown dtype {entry.get('dtype')!r}")
    shape, offset, nbytes = entry.get("shape"), entry.get("offset"), entry.get("nbytes")
    if not isinstance(shape, list) or not all(_is_count(d) for d in shape):
        raise ValueError(f"{where}: shape must be a list of non-negative ints, got {shape!r}")
    if not _is_count(offset) or not _is_count(nbytes):
        raise ValueError(f"{where}: offset and nbytes must be non-negative ints")
    expected = math.prod(shape) * torch.empty((), dtype=dtype).element_size()
    if nbytes != expected:
        raise ValueError(f"{where}: nbytes {nbytes} does not match shape {shape} of "
                         f"{entry['dtype']} ({expected} bytes)")
    start = data_start + offset
    if start + nbytes > len(data):
        raise ValueError(f"{where}: bytes {offset}..{offset + nbytes} run past the end of "
                         "the data")
    if nbytes == 0:
        return torch.empty(shape, dtype=dtype)
    # Read as bytes and clone: the clone owns aligned memory whatever the file's alignment,
    # and viewing it as the real dtype afterwards never needs an aligned source.
    raw = torch.frombuffer(data, dtype=torch.uint8, count=nbytes, offset=start).clone()
    return raw.view(dtype).reshape(shape)


def _is_count(x):
    return isinstance(x, int) and not isinstance(x, bool) and x >= 0


def _decode(node, tensors, path):
    if not isinstance(node, dict) or len(node) != 1:
        raise ValueError(f"{path}: bad value node {str(node)[:80]!r}")
    ((kind, payload),) = node.items()
    decoder = _DECODERS.get(kind)
    if decoder is None:
        raise ValueError(f"{path}: unknown value kind {kind!r}")
    return decoder(payload, tensors, path)


def _decode_tensor(index, tensors, path):
    if not _is_count(index) or index >= len(tensors):
        raise ValueError(f"{path}: tensor index {index!r} out of range ({len(tensors)} tensors)")
    return tensors[index]


def _decode_scalar(kind, types):
    def decode(payload, tensors, path):
        if not isinstance(payload, types) or (kind != "bool" and isinstance(payload, bool)):
            raise ValueError(f"{path}: bad {kind} value {payload!r}")
        return payload
    return decode


def _decode_float(payload, tensors, path):
    if isinstance(payload, str) and payload in ("nan", "inf", "-inf"):
        return float(payload)
    if isinstance(payload, (int, float)) and not isinstance(payload, bool):
        return float(payload)
    raise ValueError(f"{path}: bad float value {payload!r}")


def _decode_none(payload, tensors, path):
    return None


def _decode_sequence(make):
    def decode(payload, tensors, path):
        if not isinstance(payload, list):
            raise ValueError(f"{path}: a list or tuple node needs a JSON array")
        return make(_decode(item, tensors, path) for item in payload)
    return decode


def _decode_dict(payload, tensors, path):
    if not isinstance(payload, list):
        raise ValueError(f"{path}: a dict node needs a JSON array of [key, value] pairs")
    result = {}
    for pair in payload:
        if not isinstance(pair, list) or len(pair) != 2 or not isinstance(pair[0], str):
            raise ValueError(f"{path}: bad dict entry {str(pair)[:80]!r}")
        result[pair[0]] = _decode(pair[1], tensors, path)
    return result


_DECODERS = {
    "tensor": _decode_tensor,
    "int": _decode_scalar("int", int),
    "float": _decode_float,
    "bool": _decode_scalar("bool", bool),
    "str": _decode_scalar("str", str),
    "none": _decode_none,
    "list": _decode_sequence(list),
    "tuple": _decode_sequence(tuple),
    "dict": _decode_dict,
}
