"""Value packs (.ctp): round trips, the exact on-disk layout, corruption, poison."""
import json
import math
import os
import struct

import pytest
import torch

from crucible_worker import value_pack as vp

ALL_DTYPES = list(vp.DTYPES.values())


def _random_tensor(dtype, shape):
    if dtype == torch.bool:
        return torch.rand(shape) > 0.5
    if dtype.is_floating_point:
        return torch.randn(shape).to(dtype)
    info = torch.iinfo(dtype)
    return torch.randint(info.min, info.max, shape, dtype=dtype)


def _bits(tensor):
    """The tensor's raw bytes, so NaN payloads and -0.0 compare exactly."""
    return tensor.contiguous().reshape(-1).view(torch.uint8)


def _round_trip(tmp_path, value):
    path = tmp_path / "value.ctp"
    vp.save(path, value)
    return vp.load(path)


def _raw_header(path):
    data = open(path, "rb").read()
    (length,) = struct.unpack_from("<Q", data, 8)
    return json.loads(data[16:16 + length]), data, 16 + length


@pytest.mark.parametrize("dtype", ALL_DTYPES, ids=lambda d: vp.dtype_name(d))
@pytest.mark.parametrize("shape", [(), (0,), (7,), (3, 5), (2, 0, 4), (2, 3, 4, 5)])
def test_every_dtype_round_trips_bit_exactly(tmp_path, dtype, shape):
    tensor = _random_tensor(dtype, shape)
    back = _round_trip(tmp_path, tensor)
    assert back.dtype == dtype and back.shape == tensor.shape
    assert torch.equal(_bits(back), _bits(tensor))


@pytest.mark.parametrize("dtype", [torch.float16, torch.bfloat16, torch.float32, torch.float64])
def test_non_finite_tensor_values_and_nan_payloads_survive(tmp_path, dtype):
    tensor = torch.tensor([float("nan"), float("inf"), float("-inf"), -0.0, 1.5], dtype=dtype)
    vp.poison_(tensor[:1])  # a NaN with a payload: must come back with the same bits
    back = _round_trip(tmp_path, tensor)
    assert torch.equal(_bits(back), _bits(tensor))


def test_non_contiguous_and_offset_views_are_stored_as_their_values(tmp_path):
    base = torch.arange(24, dtype=torch.float32).reshape(4, 6)
    view = base[1:, ::2].t()
    back = _round_trip(tmp_path, view)
    assert back.is_contiguous()
    assert torch.equal(back, view)


def test_nested_value_keeps_every_type(tmp_path):
    value = {
        "tensors": [torch.ones(2, dtype=torch.bfloat16), (torch.zeros(1, dtype=torch.bool),)],
        "numbers": [3, -2**62, 2.5, True, False],
        "text": "ünïcödé",
        "nothing": None,
        "empty": {"list": [], "tuple": ()},
    }
    back = _round_trip(tmp_path, value)
    assert list(back) == list(value)
    assert isinstance(back["tensors"][1], tuple)
    assert back["numbers"] == [3, -2**62, 2.5, True, False]
    assert [type(x) for x in back["numbers"]] == [int, int, float, bool, bool]
    assert back["text"] == "ünïcödé" and back["nothing"] is None
    assert back["empty"] == {"list": [], "tuple": ()}
    assert isinstance(back["empty"]["tuple"], tuple)
    assert torch.equal(back["tensors"][0], value["tensors"][0])


def test_numpy_scalars_are_stored_as_python_numbers(tmp_path):
    import numpy

    back = _round_trip(tmp_path, [numpy.int64(7), numpy.float32(0.5), numpy.float64(-1.25)])
    assert back == [7, 0.5, -1.25]
    assert [type(x) for x in back] == [int, float, float]


def test_non_finite_python_floats_are_strings_in_the_header(tmp_path):
    path = tmp_path / "floats.ctp"
    vp.save(path, [float("nan"), float("inf"), float("-inf"), 0.1])
    header, _, _ = _raw_header(path)
    assert header["value"] == {"list": [{"float": "nan"}, {"float": "inf"}, {"float": "-inf"},
                                        {"float": 0.1}]}
    back = vp.load(path)
    assert math.isnan(back[0]) and back[1] == math.inf and back[2] == -math.inf
    assert back[3] == 0.1


def test_layout_matches_the_protocol(tmp_path):
    path = tmp_path / "layout.ctp"
    a = torch.arange(20, dtype=torch.float32).reshape(4, 5)
    b = torch.tensor([1, 2, 3], dtype=torch.int16)
    vp.save(path, (a, 3, {"b": b}))
    header, data, data_start = _raw_header(path)
    assert data[:8] == b"CRUCTP01"
    assert header["value"] == {"tuple": [{"tensor": 0}, {"int": 3},
                                         {"dict": [["b", {"tensor": 1}]]}]}
    first, second = header["tensors"]
    assert first == {"dtype": "float32", "shape": [4, 5], "offset": 0, "nbytes": 80}
    assert second["dtype"] == "int16" and second["shape"] == [3] and second["nbytes"] == 6
    assert data[data_start:data_start + 80] == a.numpy().astype("<f4").tobytes()
    start = data_start + second["offset"]
    assert data[start:start + 6] == b.numpy().astype("<i2").tobytes()


def test_tensors_are_stored_depth_first(tmp_path):
    t = [torch.full((1,), float(i)) for i in range(4)]
    value = {"x": [t[0], (t[1], {"y": t[2]})], "z": t[3]}
    assert [x.item() for x in vp.tensors_in(value)] == [0.0, 1.0, 2.0, 3.0]
    path = tmp_path / "order.ctp"
    vp.save(path, value)
    header, _, _ = _raw_header(path)
    assert json.dumps(header["value"]).count('"tensor"') == 4
    back = vp.load(path)
    assert [x.item() for x in vp.tensors_in(back)] == [0.0, 1.0, 2.0, 3.0]


def test_loaded_tensors_own_their_memory(tmp_path):
    path = tmp_path / "own.ctp"
    vp.save(path, [torch.zeros(4), torch.ones(4)])
    first, second = vp.load(path)
    first += 1  # writable, and independent of the other tensor and of a second load
    assert torch.equal(second, torch.ones(4))
    assert torch.equal(vp.load(path)[0], torch.zeros(4))


def test_gradients_and_subclasses_are_stored_as_plain_data(tmp_path):
    class Tagged(torch.Tensor):
        pass

    grad = torch.ones(3, requires_grad=True) * 2
    tagged = torch.arange(3.0).as_subclass(Tagged)
    back = _round_trip(tmp_path, [grad, tagged])
    assert type(back[1]) is torch.Tensor and not back[0].requires_grad
    assert torch.equal(back[0], torch.full((3,), 2.0)) and torch.equal(back[1], torch.arange(3.0))


def test_save_replaces_atomically_and_leaves_no_temporary_files(tmp_path):
    path = tmp_path / "x.ctp"
    vp.save(path, 1)
    vp.save(path, torch.ones(3))
    assert os.listdir(tmp_path) == ["x.ctp"]
    assert torch.equal(vp.load(path), torch.ones(3))
    assert os.stat(path).st_mode & 0o044 == 0o044  # readable by the candidate's sandbox


@pytest.mark.parametrize("value, match", [
    (torch.zeros(2, dtype=torch.complex64), "complex64"),
    ({1: 2}, "string keys"),
    (object(), "object"),
    ([1, {2, 3}], "set"),
])
def test_values_a_pack_cannot_hold_are_type_errors(tmp_path, value, match):
    with pytest.raises(TypeError, match=match):
        vp.save(tmp_path / "bad.ctp", value)
    assert os.listdir(tmp_path) == []


# --- corruption --------------------------------------------------------------------------------


def _write_pack(path, header, data=b""):
    raw = json.dumps(header).encode()
    path.write_bytes(b"CRUCTP01" + struct.pack("<Q", len(raw)) + raw + data)


GOOD_TENSOR = {"dtype": "float32", "shape": [2], "offset": 0, "nbytes": 8}


@pytest.mark.parametrize("header, data, match", [
    ({"value": {"tensor": 0}, "tensors": [dict(GOOD_TENSOR, dtype="complex64")]}, bytes(8),
     "unknown dtype"),
    ({"value": {"tensor": 0}, "tensors": [dict(GOOD_TENSOR, nbytes=12)]}, bytes(12),
     "does not match"),
    ({"value": {"tensor": 0}, "tensors": [GOOD_TENSOR]}, bytes(4), "past the end"),
    ({"value": {"tensor": 0}, "tensors": [dict(GOOD_TENSOR, offset=-8)]}, bytes(8),
     "non-negative"),
    ({"value": {"tensor": 0}, "tensors": [dict(GOOD_TENSOR, shape=[-2])]}, bytes(8), "shape"),
    ({"value": {"tensor": 1}, "tensors": [GOOD_TENSOR]}, bytes(8), "out of range"),
    ({"value": {"pickle": "x"}, "tensors": []}, b"", "unknown value kind"),
    ({"value": {"int": 1, "str": "a"}, "tensors": []}, b"", "bad value node"),
    ({"value": {"int": "1"}, "tensors": []}, b"", "bad int"),
    ({"value": {"float": "NaNish"}, "tensors": []}, b"", "bad float"),
    ({"value": {"dict": [[1, {"int": 1}]]}, "tensors": []}, b"", "bad dict entry"),
    ({"tensors": []}, b"", "needs a"),
])
def test_corrupt_headers_are_value_errors(tmp_path, header, data, match):
    path = tmp_path / "corrupt.ctp"
    _write_pack(path, header, data)
    with pytest.raises(ValueError, match=match):
        vp.load(path)


def test_corrupt_files_are_value_errors(tmp_path):
    path = tmp_path / "c.ctp"
    vp.save(path, [torch.ones(16), "tail"])
    good = path.read_bytes()
    cases = {
        "magic": b"CRUCTP02" + good[8:],
        "short": good[:10],
        "header length": good[:8] + struct.pack("<Q", 10**9) + good[16:],
        "JSON": good[:16] + b"\xff" * (len(good) - 16),
        "truncated data": good[:-20],
    }
    for what, data in cases.items():
        path.write_bytes(data)
        with pytest.raises(ValueError):
            vp.load(path)
        assert what  # the case name shows in the traceback when one does not raise


# --- poison -------------------------------------------------------------------------------------


EXPECTED_BITS = {
    torch.float32: 0x7FC0DEAD, torch.float64: 0x7FF8DEADDEADDEAD, torch.float16: 0x7E6D,
    torch.bfloat16: 0x7FDE, torch.int64: 0x7EADBEEFDEADBEEF, torch.int32: 0x7EADBEEF,
    torch.int16: 0x7EAD, torch.int8: 0x5A, torch.uint8: 0x5A,
}
SAME_WIDTH_INT = {1: torch.uint8, 2: torch.int16, 4: torch.int32, 8: torch.int64}


def test_poison_table_is_the_protocols():
    assert vp.POISON_BITS == EXPECTED_BITS
    assert torch.bool not in vp.POISON_BITS


@pytest.mark.parametrize("dtype", list(EXPECTED_BITS), ids=lambda d: vp.dtype_name(d))
def test_poison_fills_the_exact_bits_and_is_counted(dtype):
    tensor = torch.zeros(3, 4, dtype=dtype)
    assert vp.count_poison(tensor) == 0
    assert vp.poison_(tensor) is tensor
    raw = tensor.view(SAME_WIDTH_INT[tensor.element_size()])
    assert all(int(x) & (2 ** (8 * tensor.element_size()) - 1) == EXPECTED_BITS[dtype]
               for x in raw.reshape(-1).tolist())
    assert vp.count_poison(tensor) == 12
    if dtype.is_floating_point:
        assert torch.isnan(tensor).all()  # a poisoned float never compares equal to anything
    tensor[0, 0] = 1
    assert vp.count_poison(tensor) == 11


def test_poison_touches_only_the_view():
    base = torch.zeros(4, 4)
    vp.poison_(base[:, 1])
    assert vp.count_poison(base) == 4
    assert vp.count_poison(base[:, 1]) == 4 and vp.count_poison(base[:, 0]) == 0


def test_bool_is_never_poisoned():
    flags = torch.zeros(5, dtype=torch.bool)
    vp.poison_(flags)
    assert not flags.any() and vp.count_poison(flags) == 0


def test_poison_survives_a_round_trip(tmp_path):
    tensor = vp.poison_(torch.empty(10, dtype=torch.bfloat16))
    assert vp.count_poison(_round_trip(tmp_path, tensor)) == 10


@pytest.mark.skipif(not torch.cuda.is_available(), reason="needs a CUDA device")
def test_poison_on_cuda(tmp_path):
    tensor = vp.poison_(torch.empty(1000, device="cuda"))
    assert vp.count_poison(tensor) == 1000
    path = tmp_path / "cuda.ctp"
    vp.save(path, tensor)
    assert vp.load(path, device="cuda").device.type == "cuda"
    assert vp.count_poison(vp.load(path)) == 1000
