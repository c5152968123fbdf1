"""ATen ops by class (allocation, view, copy, metadata, compute) as the guards count them.
"""
import torch


ALLOCATION_OPS = frozenset("""
    empty empty_like empty_strided empty_permuted new_empty new_empty_strided
    zeros zeros_like ones ones_like full full_like new_zeros new_ones new_full scalar_tensor
    fill fill_ zero zero_ resize_ resize_as_
""".split())
POISONED_OPS = frozenset("empty empty_like empty_strided empty_permuted new_empty "
                         "new_empty_strided".split())
VIEW_OPS = frozenset("""
    view _unsafe_view reshape _reshape_alias permute transpose transpose_ t t_ expand expand_as
    squeeze squeeze_ unsqueeze unsqueeze_ slice select as_strided as_strided_ alias detach detach_
    unbind split split_with_sizes unsafe_split unsafe_split_with_sizes chunk unsafe_chunk
    tensor_split narrow view_as flatten unflatten movedim moveaxis swapaxes swapdims diagonal
    unfold view_as_real view_as_complex contiguous _conj _neg_view resolve_conj resolve_neg
    lift _reshape_from_tensor
""".split())
COPY_OPS = frozenset("""
    clone copy copy_ _to_copy to lift_fresh lift_fresh_copy _copy_from _copy_from_and_resize
""".split())
METADATA_OPS = frozenset("""
    sym_size sym_stride sym_numel sym_storage_offset size stride dim numel storage_offset
    is_contiguous is_same_size is_nonzero _has_compatible_shallow_copy_type set_ record_stream
    is_pinned
""".split())
SCALAR_READ_OPS = frozenset(["_local_scalar_dense"])

_FLOAT_BITS = {torch.float64: 64, torch.float32: 32, torch.float16: 16, torch.bfloat16: 16}
for _name in ("float8_e4m3fn", "float8_e5m2", "float8_e4m3fnuz", "float8_e5m2fnuz",
              "float8_e8m0fnu", "float4_e2m1fn_x2"):
    if hasattr(torch, _name):
        _FLOAT_BITS[getattr(torch, _name)] = 8


def op_name(func):
    """"aten::add.Tensor" from an OpOverload (str(func) is "aten.add.Tensor")."""
    text = str(func)
    namespace, dot, rest = text.partition(".")
    return f"{namespace}::{rest}" if dot else text


def op_base(func):
    """"add" for aten.add.Tensor."""
    packet = getattr(func, "overloadpacket", None)
    name = getattr(packet, "__name__", None)
    if isinstance(name, str):
        return name
    parts = str(func).split(".")
    return parts[1] if len(parts) > 1 else parts[0]


def op_class(base):
    if base in ALLOCATION_OPS:
        return "allocation"
    if base in VIEW_OPS:
        return "view"
    if base in COPY_OPS:
        return "copy"
    if base in METADATA_OPS:
        return "metadata"
    if base in SCALAR_READ_OPS:
        return "scalar_read"
    return "compute"


def _is_downcast(src_dtype, dst_dtype):
    src = _FLOAT_BITS.get(src_dtype)
    dst = _FLOAT_BITS.get(dst_dtype)
    return src is not None and dst is not None and dst < src


