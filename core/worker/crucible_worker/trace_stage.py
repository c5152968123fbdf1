"""The `trace` stage: the reference's forward as an op graph with shapes (docs/WORKER_PROTOCOL.md,
"trace"), for Crucible's built-in synthesizer.

The model is built as the verifier builds it (`torch.manual_seed(seed); Model(*init)`), traced
with torch.fx (torch.export when fx cannot follow the code), and run once on `get_inputs()` under
`seed + 1` to give every value its shape and dtype. Each node is reduced to a canonical op name
from a small vocabulary (`relu`, `add`, `linear`, `softmax`, `layer_norm`, `sum`, ...) with its
operands and attributes by name, so the C++ side never needs to know the many spellings
(`torch.relu`, `F.relu`, `x.relu()`, `nn.ReLU`, `aten.relu.default`) of one operation.

The stage also reports the pieces of the reference's source a candidate must repeat to build its
parameters exactly as the reference does: the module-level statements and Model's methods other
than `forward`.
"""
import ast
import builtins
import math
import operator
import re

import torch
import torch.fx
import torch.nn as nn
from torch.fx.passes.shape_prop import ShapeProp

from . import loader
from .loader import UserCodeError

STAGE = "trace"
MODULE_NAME = "crucible_reference"
REQUIRED_NAMES = ("Model", "get_inputs", "get_init_inputs")
ENTRY_NAMES = ("Model", "get_inputs", "get_init_inputs")

# ---------------------------------------------------------------------------------------------
# The vocabulary: canonical name -> parameter names in call order (tensor or scalar operands and
# attributes alike). Operands that are graph values become the node's `inputs`; the rest become
# `attrs`, completed with the defaults below.

SIGNATURES = {
    # pointwise, one operand
    "relu": ["input"], "sigmoid": ["input"], "tanh": ["input"], "exp": ["input"],
    "log": ["input"], "sqrt": ["input"], "rsqrt": ["input"], "abs": ["input"], "neg": ["input"],
    "silu": ["input"], "hardswish": ["input"], "hardsigmoid": ["input"], "mish": ["input"],
    "sin": ["input"], "cos": ["input"], "erf": ["input"], "log1p": ["input"],
    "expm1": ["input"], "square": ["input"], "reciprocal": ["input"], "selu": ["input"],
    "relu6": ["input"], "softsign": ["input"], "logsigmoid": ["input"], "tanhshrink": ["input"],
    "hardshrink": ["input", "lambd"], "softshrink": ["input", "lambd"],
    "celu": ["input", "alpha"],
    "gelu": ["input", "approximate"],
    "leaky_relu": ["input", "negative_slope"],
    "elu": ["input", "alpha"],
    "softplus": ["input", "beta", "threshold"],
    "hardtanh": ["input", "min_val", "max_val"],
    "clamp": ["input", "min", "max"],
    "pow": ["input", "exponent"],
    "to_dtype": ["input", "dtype"],
    # pointwise, two operands
    "add": ["input", "other", "alpha"], "sub": ["input", "other", "alpha"],
    "mul": ["input", "other"], "div": ["input", "other"],
    "maximum": ["input", "other"], "minimum": ["input", "other"],
    "eq": ["input", "other"], "ne": ["input", "other"], "gt": ["input", "other"],
    "ge": ["input", "other"], "lt": ["input", "other"], "le": ["input", "other"],
    "where": ["condition", "input", "other"], "masked_fill": ["input", "mask", "value"],
    "logical_not": ["input"],
    "addcmul": ["input", "tensor1", "tensor2", "value"],
    "lerp": ["input", "end", "weight"],
    "std": ["input", "dim", "unbiased", "keepdim"],
    "rms_norm": ["input", "normalized_shape", "weight", "eps"],
    # reductions
    "sum": ["input", "dim", "keepdim"], "mean": ["input", "dim", "keepdim"],
    "amax": ["input", "dim", "keepdim"], "amin": ["input", "dim", "keepdim"],
    "max": ["input", "dim", "keepdim"], "min": ["input", "dim", "keepdim"],
    "argmax": ["input", "dim", "keepdim"], "argmin": ["input", "dim", "keepdim"],
    "logsumexp": ["input", "dim", "keepdim"],
    "var": ["input", "dim", "unbiased", "keepdim"],
    "cumsum": ["input", "dim"], "cumprod": ["input", "dim"],
    "prod": ["input", "dim", "keepdim"],
    "flip": ["input", "dims"], "tril": ["input", "diagonal"], "triu": ["input", "diagonal"],
    "pad": ["input", "pad", "mode", "value"],
    "diag": ["input", "diagonal"], "diagonal": ["input", "offset", "dim1", "dim2"],
    "norm": ["input", "p", "dim", "keepdim"],
    "linalg_vector_norm": ["input", "ord", "dim", "keepdim"],
    "normalize": ["input", "p", "dim", "eps"],
    "softmax": ["input", "dim"], "log_softmax": ["input", "dim"],
    # normalisations
    "layer_norm": ["input", "normalized_shape", "weight", "bias", "eps"],
    "batch_norm": ["input", "running_mean", "running_var", "weight", "bias", "training",
                   "momentum", "eps"],
    "group_norm": ["input", "num_groups", "weight", "bias", "eps"],
    "instance_norm": ["input", "running_mean", "running_var", "weight", "bias",
                      "use_input_stats", "momentum", "eps"],
    # matrix products
    "linear": ["input", "weight", "bias"], "matmul": ["input", "other"],
    "bmm": ["input", "other"], "mm": ["input", "other"],
    # convolutions and pooling
    "conv1d": ["input", "weight", "bias", "stride", "padding", "dilation", "groups"],
    "conv2d": ["input", "weight", "bias", "stride", "padding", "dilation", "groups"],
    "conv3d": ["input", "weight", "bias", "stride", "padding", "dilation", "groups"],
    "conv_transpose1d": ["input", "weight", "bias", "stride", "padding", "output_padding",
                         "groups", "dilation"],
    "conv_transpose2d": ["input", "weight", "bias", "stride", "padding", "output_padding",
                         "groups", "dilation"],
    "conv_transpose3d": ["input", "weight", "bias", "stride", "padding", "output_padding",
                         "groups", "dilation"],
    "max_pool1d": ["input", "kernel_size", "stride", "padding", "dilation", "ceil_mode"],
    "max_pool2d": ["input", "kernel_size", "stride", "padding", "dilation", "ceil_mode"],
    "max_pool3d": ["input", "kernel_size", "stride", "padding", "dilation", "ceil_mode"],
    "avg_pool1d": ["input", "kernel_size", "stride", "padding", "ceil_mode", "count_include_pad"],
    "avg_pool2d": ["input", "kernel_size", "stride", "padding", "ceil_mode", "count_include_pad",
                   "divisor_override"],
    "adaptive_avg_pool1d": ["input", "output_size"],
    "adaptive_avg_pool2d": ["input", "output_size"],
    "adaptive_avg_pool3d": ["input", "output_size"],
    "adaptive_max_pool1d": ["input", "output_size", "return_indices"],
    "adaptive_max_pool2d": ["input", "output_size", "return_indices"],
    "adaptive_max_pool3d": ["input", "output_size", "return_indices"],
    "avg_pool3d": ["input", "kernel_size", "stride", "padding", "ceil_mode", "count_include_pad",
                   "divisor_override"],
    # losses and similarities
    "mse_loss": ["input", "target", "reduction"],
    "smooth_l1_loss": ["input", "target", "reduction", "beta"],
    "huber_loss": ["input", "target", "reduction", "delta"],
    "l1_loss": ["input", "target", "reduction"],
    "binary_cross_entropy_with_logits": ["input", "target", "weight", "size_average", "reduce",
                                         "reduction", "pos_weight"],
    "binary_cross_entropy": ["input", "target", "weight", "size_average", "reduce", "reduction"],
    "cross_entropy": ["input", "target", "weight", "size_average", "ignore_index", "reduce",
                      "reduction", "label_smoothing"],
    "kl_div": ["input", "target", "reduction", "log_target"],
    "cosine_similarity": ["x1", "x2", "dim", "eps"],
    "nll_loss": ["input", "target", "weight", "size_average", "ignore_index", "reduce",
                 "reduction"],
    "triplet_margin_loss": ["anchor", "positive", "negative", "margin", "p", "eps", "swap",
                            "size_average", "reduce", "reduction"],
    "cosine_embedding_loss": ["input1", "input2", "target", "margin", "size_average", "reduce",
                              "reduction"],
    "hinge_embedding_loss": ["input", "target", "margin", "size_average", "reduce", "reduction"],
    "pairwise_distance": ["x1", "x2", "p", "eps", "keepdim"],
    "scaled_dot_product_attention": ["query", "key", "value", "attn_mask", "dropout_p",
                                     "is_causal", "scale"],
    # layout (views: run on the host by a candidate)
    "transpose": ["input", "dim0", "dim1"], "permute": ["input", "dims"],
    "reshape": ["input", "shape"], "flatten": ["input", "start_dim", "end_dim"],
    "expand": ["input", "size"], "expand_as": ["input", "other"],
    "unsqueeze": ["input", "dim"], "squeeze": ["input", "dim"],
    "contiguous": ["input"], "t": ["input"], "identity": ["input"],
}

DEFAULTS = {
    "gelu": {"approximate": "none"}, "leaky_relu": {"negative_slope": 0.01},
    "elu": {"alpha": 1.0}, "softplus": {"beta": 1.0, "threshold": 20.0},
    "hardshrink": {"lambd": 0.5}, "softshrink": {"lambd": 0.5}, "celu": {"alpha": 1.0},
    "hardtanh": {"min_val": -1.0, "max_val": 1.0}, "clamp": {"min": None, "max": None},
    "add": {"alpha": 1}, "sub": {"alpha": 1},
    "sum": {"dim": None, "keepdim": False}, "mean": {"dim": None, "keepdim": False},
    "amax": {"dim": None, "keepdim": False}, "amin": {"dim": None, "keepdim": False},
    "max": {"dim": None, "keepdim": False}, "min": {"dim": None, "keepdim": False},
    "argmax": {"dim": None, "keepdim": False}, "argmin": {"dim": None, "keepdim": False},
    "logsumexp": {"keepdim": False}, "var": {"dim": None, "unbiased": True, "keepdim": False},
    "std": {"dim": None, "unbiased": True, "keepdim": False},
    "addcmul": {"value": 1}, "rms_norm": {"weight": None, "eps": None},
    "layer_norm": {"weight": None, "bias": None, "eps": 1e-5},
    "group_norm": {"weight": None, "bias": None, "eps": 1e-5},
    "batch_norm": {"weight": None, "bias": None, "training": False, "momentum": 0.1,
                   "eps": 1e-5},
    "linear": {"bias": None},
    "mse_loss": {"reduction": "mean"}, "smooth_l1_loss": {"reduction": "mean", "beta": 1.0},
    "cross_entropy": {"weight": None, "ignore_index": -100, "reduction": "mean",
                      "label_smoothing": 0.0},
    "huber_loss": {"reduction": "mean", "delta": 1.0}, "l1_loss": {"reduction": "mean"},
    "binary_cross_entropy_with_logits": {"weight": None, "reduction": "mean",
                                         "pos_weight": None},
    "binary_cross_entropy": {"weight": None, "reduction": "mean"},
    "norm": {"p": "fro", "dim": None, "keepdim": False},
    "linalg_vector_norm": {"ord": 2, "dim": None, "keepdim": False},
    "normalize": {"p": 2.0, "dim": 1, "eps": 1e-12},
    "prod": {"dim": None, "keepdim": False}, "tril": {"diagonal": 0}, "triu": {"diagonal": 0},
    "pad": {"mode": "constant", "value": None},
    "diag": {"diagonal": 0}, "diagonal": {"offset": 0, "dim1": 0, "dim2": 1},
    "kl_div": {"reduction": "mean", "log_target": False},
    "cosine_similarity": {"dim": 1, "eps": 1e-8},
    "nll_loss": {"weight": None, "ignore_index": -100, "reduction": "mean"},
    "triplet_margin_loss": {"margin": 1.0, "p": 2.0, "eps": 1e-6, "swap": False,
                            "reduction": "mean"},
    "cosine_embedding_loss": {"margin": 0.0, "reduction": "mean"},
    "hinge_embedding_loss": {"margin": 1.0, "reduction": "mean"},
    "pairwise_distance": {"p": 2.0, "eps": 1e-6, "keepdim": False},
    "scaled_dot_product_attention": {"attn_mask": None, "dropout_p": 0.0, "is_causal": False,
                                     "scale": None},
    "flatten": {"start_dim": 0, "end_dim": -1}, "squeeze": {"dim": None},
    "conv1d": {"bias": None, "stride": 1, "padding": 0, "dilation": 1, "groups": 1},
    "conv2d": {"bias": None, "stride": 1, "padding": 0, "dilation": 1, "groups": 1},
    "conv3d": {"bias": None, "stride": 1, "padding": 0, "dilation": 1, "groups": 1},
    "conv_transpose1d": {"bias": None, "stride": 1, "padding": 0, "output_padding": 0,
                         "groups": 1, "dilation": 1},
    "conv_transpose2d": {"bias": None, "stride": 1, "padding": 0, "output_padding": 0,
                         "groups": 1, "dilation": 1},
    "conv_transpose3d": {"bias": None, "stride": 1, "padding": 0, "output_padding": 0,
                         "groups": 1, "dilation": 1},
    "adaptive_max_pool1d": {"return_indices": False},
    "adaptive_max_pool2d": {"return_indices": False},
    "adaptive_max_pool3d": {"return_indices": False},
    "instance_norm": {"running_mean": None, "running_var": None, "weight": None, "bias": None,
                      "use_input_stats": True, "momentum": 0.1, "eps": 1e-5},
}

# Operands that are tensors (or a number in a tensor's place): they become `inputs`, in the
# signature's order, null when absent.
TENSOR_SLOTS = frozenset(["input", "other", "weight", "bias", "running_mean", "running_var",
                          "target", "x1", "x2", "condition", "mask", "anchor", "positive",
                          "negative", "input1", "input2", "query", "key", "value", "attn_mask",
                          "pos_weight", "tensor1", "tensor2", "end"])

# Python operators and builtins (what `x + y`, `x * 0.5`, `-x` trace to).
OPERATORS = {
    operator.add: "add", operator.iadd: "add", operator.sub: "sub", operator.isub: "sub",
    operator.mul: "mul", operator.imul: "mul", operator.truediv: "div", operator.itruediv: "div",
    operator.neg: "neg", operator.pow: "pow", operator.matmul: "matmul",
    operator.eq: "eq", operator.ne: "ne", operator.gt: "gt", operator.ge: "ge",
    operator.lt: "lt", operator.le: "le", operator.invert: "invert",
}

# Names that are another spelling of a canonical op (torch.*, F.*, Tensor methods, aten).
ALIASES = {
    "multiply": "mul", "true_divide": "div", "divide": "div", "subtract": "sub",
    "clip": "clamp", "clamp_min": "clamp", "clamp_max": "clamp", "negative": "neg",
    "swish": "silu", "view": "reshape", "_softmax": "softmax", "_log_softmax": "log_softmax",
    "relu_": "relu", "mul_": "mul", "add_": "add", "sub_": "sub", "div_": "div",
    "sigmoid_": "sigmoid", "tanh_": "tanh", "clamp_": "clamp", "hardtanh_": "hardtanh",
    "leaky_relu_": "leaky_relu", "elu_": "elu", "silu_": "silu", "type_as": "to_dtype",
    "addmm": "addmm", "expand": "expand", "float": "to_dtype", "log_sigmoid": "logsigmoid",
    "split_with_sizes": "split", "concat": "cat", "concatenate": "cat",
    "clone": "identity", "detach": "identity",
    "masked_fill_": "masked_fill", "greater": "gt", "less": "lt", "equal_": "eq",
    "greater_equal": "ge", "less_equal": "le", "not_equal": "ne", "nll_loss_nd": "nll_loss",
}

# Dropout in every spelling: (input, p, training) by position. It is the identity where it draws
# nothing (eval mode or p = 0); with p > 0 in training its random mask cannot be repeated by a
# kernel, so it stays unknown.
DROPOUTS = {
    "dropout": ["input", "p", "training"], "dropout1d": ["input", "p", "training"],
    "dropout2d": ["input", "p", "training"], "dropout3d": ["input", "p", "training"],
    "alpha_dropout": ["input", "p", "training"],
    "feature_alpha_dropout": ["input", "p", "training"],
    "feature_dropout": ["input", "p", "train"], "native_dropout": ["input", "p", "train"],
}

# Tensors made of one value (`torch.zeros_like(x)`, `torch.ones(n, c)`): a fill, whatever their
# shape arguments, since the traced shape is the node's.
FILLS = {"zeros_like": 0.0, "ones_like": 1.0, "zeros": 0.0, "ones": 1.0, "full_like": None,
         "full": None}

# Operations that split a tensor into pieces along a dim: the pieces become basic-index views.
SPLITS = {"chunk": ["input", "chunks", "dim"], "split": ["input", "split_size", "dim"],
          "unbind": ["input", "dim"], "tensor_split": ["input", "sections", "dim"]}

# Leaf modules: class -> (canonical op, attribute names read from the module, parameter slots).
MODULES = {
    nn.ReLU: ("relu", [], []), nn.Sigmoid: ("sigmoid", [], []), nn.Tanh: ("tanh", [], []),
    nn.SiLU: ("silu", [], []), nn.Hardswish: ("hardswish", [], []), nn.Mish: ("mish", [], []),
    nn.GELU: ("gelu", ["approximate"], []),
    nn.LeakyReLU: ("leaky_relu", ["negative_slope"], []), nn.ELU: ("elu", ["alpha"], []),
    nn.Softplus: ("softplus", ["beta", "threshold"], []),
    nn.SELU: ("selu", [], []), nn.ReLU6: ("relu6", [], []), nn.Softsign: ("softsign", [], []),
    nn.LogSigmoid: ("logsigmoid", [], []), nn.Tanhshrink: ("tanhshrink", [], []),
    nn.Hardsigmoid: ("hardsigmoid", [], []),
    nn.Hardshrink: ("hardshrink", ["lambd"], []), nn.Softshrink: ("softshrink", ["lambd"], []),
    nn.CELU: ("celu", ["alpha"], []),
    nn.Hardtanh: ("hardtanh", ["min_val", "max_val"], []),
    nn.Softmax: ("softmax", ["dim"], []), nn.LogSoftmax: ("log_softmax", ["dim"], []),
    nn.Identity: ("identity", [], []), nn.Flatten: ("flatten", ["start_dim", "end_dim"], []),
    nn.Linear: ("linear", [], ["weight", "bias"]),
    nn.LayerNorm: ("layer_norm", ["normalized_shape", "eps"], ["weight", "bias"]),
    nn.GroupNorm: ("group_norm", ["num_groups", "eps"], ["weight", "bias"]),
    nn.BatchNorm1d: ("batch_norm", ["eps", "momentum"],
                     ["running_mean", "running_var", "weight", "bias"]),
    nn.BatchNorm2d: ("batch_norm", ["eps", "momentum"],
                     ["running_mean", "running_var", "weight", "bias"]),
    nn.BatchNorm3d: ("batch_norm", ["eps", "momentum"],
                     ["running_mean", "running_var", "weight", "bias"]),
    nn.InstanceNorm1d: ("instance_norm", ["eps", "affine"],
                        ["running_mean", "running_var", "weight", "bias"]),
    nn.InstanceNorm2d: ("instance_norm", ["eps", "affine"],
                        ["running_mean", "running_var", "weight", "bias"]),
    nn.InstanceNorm3d: ("instance_norm", ["eps", "affine"],
                        ["running_mean", "running_var", "weight", "bias"]),
    nn.Conv1d: ("conv1d", ["stride", "padding", "dilation", "groups"], ["weight", "bias"]),
    nn.Conv2d: ("conv2d", ["stride", "padding", "dilation", "groups"], ["weight", "bias"]),
    nn.Conv3d: ("conv3d", ["stride", "padding", "dilation", "groups"], ["weight", "bias"]),
    nn.ConvTranspose1d: ("conv_transpose1d",
                         ["stride", "padding", "output_padding", "groups", "dilation"],
                         ["weight", "bias"]),
    nn.ConvTranspose2d: ("conv_transpose2d",
                         ["stride", "padding", "output_padding", "groups", "dilation"],
                         ["weight", "bias"]),
    nn.ConvTranspose3d: ("conv_transpose3d",
                         ["stride", "padding", "output_padding", "groups", "dilation"],
                         ["weight", "bias"]),
    nn.MaxPool3d: ("max_pool3d", ["kernel_size", "stride", "padding", "dilation", "ceil_mode"],
                   []),
    nn.AvgPool3d: ("avg_pool3d", ["kernel_size", "stride", "padding", "ceil_mode",
                                  "count_include_pad", "divisor_override"], []),
    nn.AdaptiveAvgPool3d: ("adaptive_avg_pool3d", ["output_size"], []),
    nn.AdaptiveMaxPool1d: ("adaptive_max_pool1d", ["output_size", "return_indices"], []),
    nn.AdaptiveMaxPool2d: ("adaptive_max_pool2d", ["output_size", "return_indices"], []),
    nn.AdaptiveMaxPool3d: ("adaptive_max_pool3d", ["output_size", "return_indices"], []),
    nn.MaxPool1d: ("max_pool1d", ["kernel_size", "stride", "padding", "dilation", "ceil_mode"],
                   []),
    nn.MaxPool2d: ("max_pool2d", ["kernel_size", "stride", "padding", "dilation", "ceil_mode"],
                   []),
    nn.AvgPool1d: ("avg_pool1d", ["kernel_size", "stride", "padding", "ceil_mode",
                                  "count_include_pad"], []),
    nn.AvgPool2d: ("avg_pool2d", ["kernel_size", "stride", "padding", "ceil_mode",
                                  "count_include_pad", "divisor_override"], []),
    nn.AdaptiveAvgPool1d: ("adaptive_avg_pool1d", ["output_size"], []),
    nn.AdaptiveAvgPool2d: ("adaptive_avg_pool2d", ["output_size"], []),
    nn.MSELoss: ("mse_loss", ["reduction"], []), nn.L1Loss: ("l1_loss", ["reduction"], []),
    nn.SmoothL1Loss: ("smooth_l1_loss", ["reduction", "beta"], []),
    nn.HuberLoss: ("huber_loss", ["reduction", "delta"], []),
    nn.KLDivLoss: ("kl_div", ["reduction", "log_target"], []),
    nn.NLLLoss: ("nll_loss", ["reduction", "ignore_index"], ["weight"]),
    nn.TripletMarginLoss: ("triplet_margin_loss", ["margin", "p", "eps", "swap", "reduction"],
                           []),
    nn.CosineEmbeddingLoss: ("cosine_embedding_loss", ["margin", "reduction"], []),
    nn.HingeEmbeddingLoss: ("hinge_embedding_loss", ["margin", "reduction"], []),
    nn.BCEWithLogitsLoss: ("binary_cross_entropy_with_logits", ["reduction"],
                           ["weight", "pos_weight"]),
    nn.BCELoss: ("binary_cross_entropy", ["reduction"], ["weight"]),
}


def run(job, channel):
    facts = {"graph": None, "source": None, "error": None}
    try:
        _trace(job, channel, facts)
    except UserCodeError as exc:
        facts["error"] = exc.to_fact()
    return facts


def _trace(job, channel, facts):
    path = job["reference_path"]
    seed = int(job.get("seed", 42))
    channel.phase("trace-source")
    facts["source"] = source_pieces(path)
    channel.phase("trace-import")
    with _user_code(path):
        module = loader.import_file(path, MODULE_NAME)
    missing = [n for n in REQUIRED_NAMES if not callable(getattr(module, n, None))]
    if missing:
        raise UserCodeError(f"the reference does not define {', '.join(missing)}", STAGE)
    with _user_code(path):
        loader.seed_all(seed)
        init = module.get_init_inputs()
        model = loader.build_model(module.Model, init, seed, "cpu")
        loader.seed_all(seed + 1)
        inputs = list(module.get_inputs())
    channel.phase("trace-graph")
    graph, rerun = trace_model(model, inputs, path)
    batch = _batch_constant(module)
    graph["batch"] = batch
    if batch is not None and rerun is not None:
        # The same graph on the alternative batch size the verifier also tries: dims that change
        # with it are written as multiples of the batch in a candidate's host code.
        channel.phase("trace-alt-batch")
        setattr(module, batch["name"], batch["value"] + 1)
        try:
            with _user_code(path):
                loader.seed_all(seed + 1000)
                alt_inputs = list(module.get_inputs())
            graph["alt_shapes"] = rerun(alt_inputs)
        except Exception as exc:  # the graph still stands; only its batch dims are unknown
            graph["alt_error"] = f"{type(exc).__name__}: {exc}"[:500]
        finally:
            setattr(module, batch["name"], batch["value"])
    facts["graph"] = graph


def _batch_constant(module):
    for name in ("batch_size", "batch", "B"):
        value = getattr(module, name, None)
        if isinstance(value, int) and not isinstance(value, bool):
            return {"name": name, "value": value}
    return None


class _user_code:
    def __init__(self, path):
        self.path = path

    def __enter__(self):
        return self

    def __exit__(self, kind, exc, tb):
        if exc is not None and isinstance(exc, (Exception, SystemExit)) \
                and not isinstance(exc, UserCodeError):
            raise UserCodeError.from_exception(exc, self.path, STAGE) from exc
        return False


# ---------------------------------------------------------------------------------------------
# Source pieces a candidate repeats


def source_pieces(path):
    """The module-level statements (other than Model and the two entry points) and Model's
    methods other than forward, as source text, with their first lines."""
    with open(path, encoding="utf-8") as f:
        text = f.read()
    try:
        tree = ast.parse(text, filename=path)
    except SyntaxError as exc:
        raise UserCodeError(f"syntax error: {exc.msg}", STAGE, exc.lineno) from exc
    lines = text.splitlines(keepends=True)

    def segment(node):
        start = node.lineno - 1
        if getattr(node, "decorator_list", None):
            start = min(d.lineno for d in node.decorator_list) - 1
        return "".join(lines[start:node.end_lineno])

    prelude, methods, model_line, forward_line = [], [], None, None
    for node in tree.body:
        name = getattr(node, "name", None)
        if isinstance(node, ast.Assign) and any(
                isinstance(t, ast.Name) and t.id in ENTRY_NAMES for t in node.targets):
            continue
        if name in ENTRY_NAMES:
            if name == "Model" and isinstance(node, ast.ClassDef):
                model_line = node.lineno
                for item in node.body:
                    if isinstance(item, (ast.FunctionDef, ast.AsyncFunctionDef)):
                        if item.name == "forward":
                            forward_line = item.lineno
                        else:
                            methods.append({"name": item.name, "line": item.lineno,
                                            "text": segment(item)})
            continue
        prelude.append({"line": node.lineno, "text": segment(node)})
    return {"prelude": prelude, "methods": methods, "model_line": model_line,
            "forward_line": forward_line}


# ---------------------------------------------------------------------------------------------
# Tracing


class _ShapeProp(ShapeProp):
    """ShapeProp that also keeps the sizes the forward computes on the host (`c - 2`,
    `x.size(1)`), so a split by computed sizes still has its pieces."""

    def run_node(self, n):
        result = super().run_node(n)
        if isinstance(result, (int, float)) and not isinstance(result, bool) or (
                isinstance(result, (tuple, list, torch.Size))
                and all(isinstance(v, int) for v in result)):
            n.meta["host_value"] = result
        return result


class _Tracer(torch.fx.Tracer):
    def __init__(self):
        super().__init__()
        self.record_stack_traces = True
        # buffers as graph values, so that forward may slice them by traced sizes
        # (`self.mask[:t, :t]`) as it does parameters
        self.proxy_buffer_attributes = True


# Factory functions fx cannot follow when a size is traced (`torch.ones(t, t)` with t from
# `x.size(1)`): while tracing, they become graph nodes whenever an argument is traced.
FACTORIES = ("ones", "zeros", "full", "empty")


class _traced_factories:
    def __init__(self, tracer):
        self.tracer = tracer
        self.saved = {}

    def __enter__(self):
        for name in FACTORIES:
            original = getattr(torch, name)
            self.saved[name] = original

            def factory(*args, _original=original, **kwargs):
                if any(isinstance(a, torch.fx.Proxy) for a in _flat([list(args), kwargs])):
                    return self.tracer.create_proxy("call_function", _original, args, kwargs)
                return _original(*args, **kwargs)
            setattr(torch, name, factory)
        return self

    def __exit__(self, *exc):
        for name, original in self.saved.items():
            setattr(torch, name, original)
        return False


def _plain_error(exc):
    """An exception as a person reads it, on one line: its innermost cause (ShapeProp wraps the
    reference's own error in a dump of the failing node, with its stack trace escaped)."""
    seen = set()
    while exc.__cause__ is not None and id(exc) not in seen:
        seen.add(id(exc))
        exc = exc.__cause__
    lines = [line.strip() for line in str(exc).splitlines() if line.strip()]
    return f"{type(exc).__name__}: {lines[0] if lines else ''}".rstrip(": ")


def _raise_if_it_fails_eagerly(model, inputs, path):
    """When tracing failed: a reference that fails on its own inputs is reported as that, at
    its line, rather than as two tracers' accounts of the same error."""
    try:
        with torch.no_grad():
            model(*inputs)
    except Exception as exc:
        error = UserCodeError.from_exception(exc, path, STAGE)
        error.message = f"the reference fails on its inputs: {_plain_error(exc)[:600]}"
        raise error from exc


def trace_model(model, inputs, path):
    """(graph, rerun): the op graph of `model` on `inputs`, torch.fx first and torch.export
    when fx fails; rerun(other_inputs) gives every value's shape on other inputs (fx only)."""
    fx_error = None
    try:
        gm = _fx_module(model)
        with torch.no_grad():
            _ShapeProp(gm).propagate(*inputs)
        converted = _Converter(gm, path, "fx").convert()

        def rerun(other_inputs):
            again = _retraced(model)
            same = again is not None and _structure(again) == _structure(gm)
            return _shapes_on(again if same else gm, other_inputs)
        return converted, rerun
    except UserCodeError:
        raise
    except Exception as exc:
        fx_error = _plain_error(exc)
    _raise_if_it_fails_eagerly(model, inputs, path)
    try:
        with torch.no_grad():
            exported = torch.export.export(model, tuple(inputs))
    except Exception as exc:
        error = UserCodeError.from_exception(exc, path, STAGE)
        error.message = (f"the reference could not be traced (torch.fx: {fx_error[:300]}; "
                         f"torch.export: {_plain_error(exc)[:300]})")
        raise error from exc
    result = _Converter(exported.graph_module, path, "export",
                        signature=exported.graph_signature, root=model).convert()
    result["fx_error"] = fx_error[:2000]
    return result, None


def _fx_module(model):
    """`model` traced by torch.fx, without the values nothing uses."""
    tracer = _Tracer()
    with _traced_factories(tracer):
        graph = tracer.trace(model)
    gm = torch.fx.GraphModule(tracer.root, graph)
    # unused values (the `_` of `out, _ = attn(x, x, x)`) are not the reference's work
    gm.graph.eliminate_dead_code()
    gm.recompile()
    return gm


def _retraced(model):
    """`model` traced again (None where that fails): a forward that reads a module-level size
    (`x.reshape(B * H, L, L)`) has it baked into the graph as a number, so other inputs are run
    through a graph traced with the size they were made for."""
    try:
        return _fx_module(model)
    except Exception:
        return None


def _structure(gm):
    """What makes two traces the same graph: each node's name, kind and target, in order."""
    return [(n.name, n.op, str(n.target)) for n in gm.graph.nodes]


def _shapes_on(gm, inputs):
    """Every value's shape when `gm` runs on `inputs`, by node name."""
    with torch.no_grad():
        ShapeProp(gm).propagate(*inputs)
    shapes = {}
    for node in gm.graph.nodes:
        meta = node.meta.get("tensor_meta")
        if hasattr(meta, "shape"):
            shapes[node.name] = [int(d) for d in meta.shape]
    return shapes


def _dtype_name(dtype):
    return str(dtype).replace("torch.", "")


def _line_of(node, path):
    trace = node.meta.get("stack_trace") or getattr(node, "stack_trace", None) or ""
    line = None
    for match in re.finditer(r'File "([^"]+)", line (\d+)', trace):
        if match.group(1) == path or match.group(1).endswith("/" + path.rsplit("/", 1)[-1]):
            line = int(match.group(2))
    return line


def _basic_index(key):
    """A basic index (ints, constant slices, None, Ellipsis, or a tuple of them) as the Python
    text between the brackets; None for anything else (tensors, traced values). Sizes forward
    computed (`[:t, :t]` with t from x.size(1)) count as their traced value."""
    def one(k):
        k = _host_value(k) if isinstance(k, torch.fx.Node) else k
        if isinstance(k, slice):
            k = slice(*(_host_value(p) for p in (k.start, k.stop, k.step)))
        if isinstance(k, bool):
            return None
        if isinstance(k, int):
            return str(k)
        if k is None:
            return "None"
        if k is Ellipsis:
            return "..."
        if isinstance(k, slice):
            parts = [k.start, k.stop, k.step]
            if any(p is not None and (isinstance(p, bool) or not isinstance(p, int))
                   for p in parts):
                return None
            text = ":".join("" if p is None else str(p) for p in parts[:2])
            return text + (f":{k.step}" if k.step is not None else "")
        return None
    items = key if isinstance(key, tuple) else (key,)
    texts = [one(k) for k in items]
    if any(t is None for t in texts):
        return None
    return ", ".join(texts) + ("," if isinstance(key, tuple) and len(texts) == 1 else "")


def _flat(value):
    if isinstance(value, (list, tuple)):
        return [x for v in value for x in _flat(v)]
    if isinstance(value, dict):
        return [x for v in value.values() for x in _flat(v)]
    return [value]


def _einsum_as_matmul(equation, operands):
    """"plain" or "transposed" when `equation` over two operands is torch.matmul of the first
    by the second (or by the second with its last two dims swapped); None otherwise."""
    if len(operands) != 2 or "->" not in equation or "." in equation:
        return None
    inputs, out = equation.split("->")
    if inputs.count(",") != 1:
        return None
    a, b = inputs.split(",")
    contracted = (set(a) & set(b)) - set(out)
    if len(contracted) != 1 or not a or a[-1] not in contracted or len(b) < 2:
        return None
    k = a[-1]
    batch_b = b[:-2]
    if batch_b and batch_b != a[:len(batch_b)] or len(set(a)) != len(a) or len(set(b)) != len(b):
        return None
    if batch_b and len(a) != len(b):
        return None
    if b[-2] == k and out == a[:-1] + b[-1]:
        return "plain"
    if b[-1] == k and out == a[:-1] + b[-2]:
        return "transposed"
    return None


def _host_value(value):
    """A size the forward computed, as the traced run saw it (a node's `host_value`)."""
    if isinstance(value, torch.fx.Node):
        return value.meta.get("host_value", value)
    if isinstance(value, (list, tuple)):
        return [_host_value(v) for v in value]
    return value


def _split_bounds(op, bound, extent):
    """The pieces of a dim of `extent` as (start, stop) pairs (unbind: indices); None when a
    size is not a constant."""
    def pairs(sizes):
        starts = [sum(sizes[:i]) for i in range(len(sizes))]
        return [(a, a + n) for a, n in zip(starts, sizes)]
    if op == "unbind":
        return list(range(extent))
    if op == "chunk":
        n = bound.get("chunks")
        if not isinstance(n, int) or n < 1:
            return None
        step = -(-extent // n)  # torch.chunk: pieces of ceil(extent / n), the last shorter
        return pairs([min(step, extent - a) for a in range(0, extent, step)])
    if op == "split":
        size = bound.get("split_size")
        if isinstance(size, int) and size > 0:
            return pairs([min(size, extent - a) for a in range(0, extent, size)])
        if isinstance(size, (list, tuple)) and all(isinstance(v, int) for v in size):
            return pairs(list(size))
        return None
    sections = bound.get("sections")  # tensor_split: n sections, or the split indices
    if isinstance(sections, int) and sections > 0:
        q, r = divmod(extent, sections)
        return pairs([q + 1 if i < r else q for i in range(sections)])
    if isinstance(sections, (list, tuple)) and all(isinstance(v, int) for v in sections):
        cuts = [0] + [min(max(c, 0), extent) for c in sections] + [extent]
        return [(a, max(a, b)) for a, b in zip(cuts, cuts[1:])]
    return None


def _jsonable(value):
    """Attributes as JSON: tuples as lists, dtypes as names, anything else as text."""
    if value is None or isinstance(value, (bool, int, str)):
        return value
    if isinstance(value, float):
        return value if math.isfinite(value) else str(value)
    if isinstance(value, (list, tuple, torch.Size)):
        return [_jsonable(v) for v in value]
    if isinstance(value, torch.dtype):
        return _dtype_name(value)
    return str(value)


class _Converter:
    def __init__(self, gm, path, tracer, signature=None, root=None):
        self.gm = gm
        self.root = root if root is not None else gm  # where parameters and buffers live
        self.path = path
        self.tracer = tracer
        self.names = {}      # fx node -> value name in the JSON (or a constant)
        self.params = {}     # attribute path -> entry
        self.inputs = []
        self.nodes = []
        self.outputs = []
        self.placeholder_params = {}
        self.meta_values = set()  # shapes and sizes: host bookkeeping, not tensors
        self.tuples = {}     # max/min over a dim: (op, inputs, attrs) until .values/.indices
        self.pieces = {}     # chunk / split / unbind: (input, index keys) until selected
        if signature is not None:
            for spec in signature.input_specs:
                target = getattr(spec, "target", None)
                if target is not None:
                    self.placeholder_params[spec.arg.name] = target

    def convert(self):
        for node in self.gm.graph.nodes:
            handler = getattr(self, "_" + node.op)
            handler(node)
        return {"tracer": self.tracer, "inputs": self.inputs,
                "params": list(self.params.values()), "nodes": self.nodes,
                "outputs": self.outputs}

    # -- values

    def _param(self, target):
        if target not in self.params:
            value = self.root
            for part in target.split("."):
                value = getattr(value, part)
            if not isinstance(value, torch.Tensor):
                return None
            kind = "parameter" if isinstance(value, nn.Parameter) else "buffer"
            self.params[target] = {"name": target, "shape": list(value.shape),
                                   "dtype": _dtype_name(value.dtype), "kind": kind}
        return target

    def _operand(self, value):
        if isinstance(value, torch.fx.Node):
            host = value.meta.get("host_value")
            if value in self.meta_values and isinstance(host, (int, float, tuple, list,
                                                               torch.Size)):
                return _jsonable(host)  # sizes computed on the host (`d ** 0.5`): their values
            return self.names.get(value, value.name)
        if isinstance(value, (list, tuple)):
            return [self._operand(v) for v in value]
        return _jsonable(value)

    def _values_in(self, args):
        """An unknown op's operands: the traced values among its arguments (lists of sizes and
        other constants are the op's business, and it has none)."""
        return [self._operand(a) for a in _flat(list(args)) if isinstance(a, torch.fx.Node)]

    def _meta(self, node):
        meta = node.meta.get("tensor_meta")
        if meta is None and isinstance(node.meta.get("val"), torch.Tensor):
            meta = node.meta["val"]
        if meta is None or not hasattr(meta, "shape"):
            return None, None
        return [int(s) for s in meta.shape], _dtype_name(meta.dtype)

    # -- fx node kinds

    def _placeholder(self, node):
        if node.name in self.placeholder_params:
            self.names[node] = self._param(self.placeholder_params[node.name])
            return
        shape, dtype = self._meta(node)
        self.inputs.append({"name": node.name, "shape": shape, "dtype": dtype})

    def _get_attr(self, node):
        if node.target.startswith("_tensor_constant"):
            # a tensor forward made from constants, which fx computed while tracing: a fill
            # where it holds one value, else named (the candidate's model has no such attribute)
            value = getattr(self.gm, node.target)
            if value.numel() > 0 and bool((value == value.flatten()[0]).all()):
                entry = {"name": node.name, "op": "full", "inputs": [],
                         "attrs": {"value": _jsonable(value.flatten()[0].item())},
                         "shape": list(value.shape), "dtype": _dtype_name(value.dtype),
                         "line": _line_of(node, self.path)}
                self.names[node] = node.name
                self.nodes.append(entry)
                return
            self._emit(node, "unknown", [], {"target": "a tensor forward makes from constants "
                                                       "(build it in __init__ as a buffer)"})
            return
        name = self._param(node.target)
        if name is None:
            self._emit(node, "unknown", [], {"target": f"get_attr {node.target}"})
            return
        self.names[node] = name

    def _output(self, node):
        value = node.args[0]
        values = value if isinstance(value, (list, tuple)) else [value]
        self.outputs = [self._operand(v) for v in values]

    def _call_module(self, node):
        module = self.gm.get_submodule(node.target)
        if isinstance(module, nn.modules.dropout._DropoutNd):
            self._dropout(node, node.args[0], module.p, module.training,
                          f"{type(module).__qualname__} in training mode")
            return
        if isinstance(module, nn.MultiheadAttention):
            self._multi_head_attention(node, module)
            return
        if isinstance(module, nn.RNNBase):
            self._recurrent(node, module)
            return
        entry = MODULES.get(type(module))
        if entry is None:
            self._emit(node, "unknown", self._values_in(node.args),
                       {"target": f"{type(module).__module__}.{type(module).__qualname__}"})
            return
        op, attr_names, slots = entry
        attrs = {a: _jsonable(getattr(module, a)) for a in attr_names}
        if op == "batch_norm":
            attrs["training"] = bool(module.training or module.running_mean is None)
        if op == "instance_norm":  # torch uses batch statistics unless it tracks and is in eval
            attrs["use_input_stats"] = bool(module.training or not module.track_running_stats)
        inputs = [self._operand(a) for a in node.args]
        for slot in slots:
            tensor = getattr(module, slot, None)
            inputs.append(self._param(f"{node.target}.{slot}") if tensor is not None else None)
        attrs["module"] = node.target
        self._emit(node, op, inputs, attrs)

    def _multi_head_attention(self, node, module):
        """nn.MultiheadAttention: its output and weights are a tuple, so the node waits for the
        selection of the output (`out, _ = self.attn(x, x, x)`); the graph rewrite writes it as
        projections, attention and the output projection. What it cannot follow is named."""
        names = ["query", "key", "value", "key_padding_mask", "need_weights", "attn_mask",
                 "average_attn_weights", "is_causal"]
        bound = dict(zip(names, node.args))
        bound.update(node.kwargs)
        why = None
        if not module._qkv_same_embed_dim or module.bias_k is not None or module.add_zero_attn:
            why = "with separate q/k/v weights, bias_k or add_zero_attn"
        elif bound.get("key_padding_mask") is not None:
            why = "with a key_padding_mask"
        elif module.training and module.dropout > 0:
            why = f"in training mode with dropout={module.dropout}: a random mask"
        if why is not None:
            self._emit(node, "unknown", self._values_in(node.args),
                       {"target": f"nn.MultiheadAttention {why}"})
            return
        prefix = node.target
        inputs = [self._operand(bound.get(k)) for k in ("query", "key", "value", "attn_mask")]
        for slot in ("in_proj_weight", "in_proj_bias", "out_proj.weight", "out_proj.bias"):
            owner, _, leaf = f"{prefix}.{slot}".rpartition(".")
            present = getattr(self.gm.get_submodule(owner), leaf, None) is not None
            inputs.append(self._param(f"{prefix}.{slot}") if present else None)
        attrs = {"num_heads": module.num_heads, "batch_first": bool(module.batch_first),
                 "is_causal": bool(bound.get("is_causal", False)), "module": prefix}
        self.tuples[node] = ("multi_head_attention", inputs, attrs, _line_of(node, self.path))

    def _recurrent_output(self, node, source, key):
        kind, inputs, attrs, line = self.tuples[source]
        if kind == "recurrent" and key == 1 and attrs["mode"] == "LSTM":
            self.tuples[node] = ("recurrent_state", inputs, attrs, line)  # (h_n, c_n)
            return
        if not isinstance(key, int) or key not in (0, 1):
            self._emit(node, "unknown", [], {"target": f"output {key!r} of a recurrent layer"})
            return
        output = ("sequence", "h_n")[key] if kind == "recurrent" else ("h_n", "c_n")[key]
        self._emit(node, "recurrent", list(inputs), dict(attrs, output=output), line)

    def _recurrent(self, node, module):
        """nn.RNN / LSTM / GRU: the sequence output and the final states are a tuple (a tuple in
        a tuple for LSTM's (h_n, c_n)), so the node waits for a selection; each selected output
        becomes one `recurrent` node naming which output it is."""
        why = None
        if getattr(module, "proj_size", 0):
            why = "with proj_size"
        elif module.training and module.num_layers > 1 and module.dropout > 0:
            why = f"in training mode with dropout={module.dropout} between layers: a random mask"
        if why is not None:
            self._emit(node, "unknown", self._values_in(node.args),
                       {"target": f"nn.{type(module).__name__} {why}"})
            return
        hx = node.args[1] if len(node.args) > 1 else node.kwargs.get("hx")
        states = list(hx) if isinstance(hx, (list, tuple)) else [hx]
        states = (states + [None, None])[:2]
        inputs = [self._operand(node.args[0])] + [self._operand(s) for s in states]
        for name in module._flat_weights_names:
            inputs.append(self._param(f"{node.target}.{name}"))
        attrs = {"mode": module.mode, "num_layers": module.num_layers,
                 "hidden_size": module.hidden_size, "bidirectional": module.bidirectional,
                 "batch_first": module.batch_first, "bias": module.bias,
                 "module": node.target}
        self.tuples[node] = ("recurrent", inputs, attrs, _line_of(node, self.path))

    def _call_method(self, node):
        self._call(node, node.target, node.args, node.kwargs)

    def _call_function(self, node):
        target = node.target
        if self._host_arithmetic(node):
            self.meta_values.add(node)
            self._emit(node, "meta", [], {"target": getattr(target, "__name__", str(target))})
            return
        if target in OPERATORS:
            self._call(node, OPERATORS[target], node.args, node.kwargs, canonical=True)
            return
        if target is operator.getitem or target is builtins.getattr:
            self._select(node)
            return
        if isinstance(target, torch._ops.OpOverload):
            self._aten(node, target)
            return
        self._call(node, getattr(target, "__name__", str(target)), node.args, node.kwargs)

    # -- calls

    def _call(self, node, name, args, kwargs, canonical=False):
        op = name if canonical else ALIASES.get(name, name)
        if name in ("clamp_min", "clamp_max"):
            key = "min" if name == "clamp_min" else "max"
            kwargs = dict(kwargs, **{key: args[1]})
            args = args[:1]
        if op in ("size", "dim", "numel", "shape"):
            self.meta_values.add(node)
            self._emit(node, "meta", [], {"target": name})
            return
        if op == "to_dtype":
            # The source's dtype: a half-precision value widened to fp32 was rounded first.
            source = self._meta(args[0])[1] if isinstance(args[0], torch.fx.Node) else None
            self._emit(node, "to_dtype", [self._operand(args[0])],
                       {"from": source} if source else {})
            return
        if op in ("invert", "bitwise_not"):  # `~mask`: a logical not of booleans only
            value = args[0] if args else None
            dtype = self._meta(value)[1] if isinstance(value, torch.fx.Node) else None
            self._emit(node, "logical_not" if dtype == "bool" else "unknown",
                       [self._operand(value)], {} if dtype == "bool" else {"target": "~ of "
                                                                           f"{dtype} values"})
            return
        if op in DROPOUTS:
            bound = dict(zip(DROPOUTS[op], args))
            bound.update({("input" if k == "self" else k): v for k, v in kwargs.items()})
            training = bound.get("training", bound.get("train", True))
            self._dropout(node, bound.get("input"), bound.get("p", 0.5), training,
                          f"{name} with training=True")
            return
        if op in SPLITS:
            self._split(node, op, args, kwargs)
            return
        if op in FILLS:
            value = FILLS[op]
            if value is None:  # full / full_like: the value is an argument
                value = kwargs.get("fill_value", args[1] if len(args) > 1 else None)
            if isinstance(value, (int, float)):  # a boolean fill is 1 or 0 in a bool tensor
                self._emit(node, "full", [], {"value": float(value)})
                return
        if op == "einsum":
            self._einsum(node, args)
            return
        if op == "narrow":
            self._narrow(node, args, kwargs)
            return
        if op in ("cat", "stack"):
            bound = dict(zip(["tensors", "dim"], args))
            bound.update(kwargs)
            tensors = bound.get("tensors")
            if isinstance(tensors, (list, tuple)) and all(
                    isinstance(t, torch.fx.Node) for t in tensors):
                self._emit(node, op, [self._operand(t) for t in tensors],
                           {"dim": bound.get("dim", 0)})
                return
        if op in ("reshape", "permute", "flip", "expand") and len(args) > 2:
            args = (args[0], list(args[1:]))  # x.view(a, b) -> reshape(x, [a, b])
        tuple_op = op in ("max", "min") and self._dim_given(args, kwargs)
        signature = SIGNATURES.get(op)
        if signature is None:
            self._emit(node, "unknown", self._values_in(args), {"target": name})
            return
        bound = dict(zip(signature, args))
        for key, value in kwargs.items():
            bound["input" if key == "self" else key] = value
        values = dict(DEFAULTS.get(op, {}))
        values.update(bound)
        inputs, attrs = [], {}
        for key in signature:
            if key in TENSOR_SLOTS:
                inputs.append(self._operand(values.get(key)))
            elif key in values:
                attrs[key] = self._operand(values[key])
        if tuple_op:  # (values, indices): the selections that follow become max / argmax
            self.tuples[node] = (op, inputs, attrs, _line_of(node, self.path))
            return
        self._emit(node, op, inputs, attrs)

    def _host_arithmetic(self, node):
        """Python arithmetic on sizes (`c // groups`, `h * w`, `b, c, h, w = x.shape`): no
        tensor comes out and every traced operand is a size, so it is host bookkeeping."""
        if node.meta.get("tensor_meta") is not None or isinstance(node.meta.get("val"),
                                                                   torch.Tensor):
            return False
        operands = [a for a in _flat([node.args, node.kwargs]) if isinstance(a, torch.fx.Node)]
        return bool(operands) and all(a in self.meta_values for a in operands)

    def _dropout(self, node, value, p, training, what):
        if not isinstance(p, (int, float)) or not isinstance(training, bool):
            self._emit(node, "unknown", [self._operand(value)],
                       {"target": f"{what.split(' ')[0]} with a computed p or training flag"})
        elif training and p > 0:
            self._emit(node, "unknown", [self._operand(value)],
                       {"target": f"{what} (p={p}): a random mask no kernel can repeat"})
        else:
            self._emit(node, "identity", [self._operand(value)], {})

    def _split(self, node, op, args, kwargs):
        """chunk / split / unbind / tensor_split: the pieces' index keys, kept until the
        selections (`a, b = x.chunk(2, -1)`) that follow."""
        bound = dict(zip(SPLITS[op], args))
        bound.update({("input" if k == "self" else k): v for k, v in kwargs.items()})
        bound.setdefault("split_size", bound.pop("split_size_or_sections", None))
        for key in ("chunks", "split_size", "sections"):
            bound[key] = _host_value(bound.get(key))
        source = bound.get("input")
        shape = self._meta(source)[0] if isinstance(source, torch.fx.Node) else None
        dim = bound.get("dim", 0)
        if shape is None or not isinstance(dim, int) or not -len(shape) <= dim < len(shape):
            self._emit(node, "unknown", [self._operand(source)], {"target": f"{op} of a value "
                                                                            "without a shape"})
            return
        dim %= len(shape)
        extent = shape[dim]
        bounds = _split_bounds(op, bound, extent)
        if bounds is None or dim == 0:
            why = "along dim 0 (the batch)" if dim == 0 else "with computed sizes"
            self._emit(node, "unknown", [self._operand(source)], {"target": f"{op} {why}"})
            return
        prefix = ":, " * dim
        keys = [prefix + (str(b) if op == "unbind" else f"{b[0]}:{b[1]}") for b in bounds]
        self.pieces[node] = (source, keys, _line_of(node, self.path))

    def _narrow(self, node, args, kwargs):
        """x.narrow(dim, start, length): a basic-index view along `dim`."""
        bound = dict(zip(["input", "dim", "start", "length"], args))
        bound.update(kwargs)
        source = bound.get("input")
        dim, start, length = (_host_value(bound.get(k)) for k in ("dim", "start", "length"))
        shape = self._meta(source)[0] if isinstance(source, torch.fx.Node) else None
        if shape is None or not all(isinstance(v, int) for v in (dim, start, length)):
            self._emit(node, "unknown", self._values_in(args), {"target": "narrow with a "
                                                                          "computed size"})
            return
        dim %= len(shape)
        start += shape[dim] if start < 0 else 0
        self._emit(node, "index", [self._operand(source)],
                   {"key": ":, " * dim + f"{start}:{start + length}"})

    def _einsum(self, node, args):
        """A two-operand einsum that is a matrix product (`bijl,lk->bijk`, `bik,bkj->bij`,
        `ik,jk->ij`): matmul, with the second operand transposed by a view where its contracted
        index comes last. Other equations stay unknown, named with the equation."""
        operands = list(args[1]) if len(args) == 2 and isinstance(args[1], (list, tuple)) \
            else list(args[1:])
        equation = args[0].replace(" ", "") if isinstance(args[0], str) else ""
        plan = _einsum_as_matmul(equation, operands)
        if plan is None or not all(isinstance(o, torch.fx.Node) for o in operands):
            self._emit(node, "unknown", self._values_in(operands),
                       {"target": f"einsum {equation!r}"})
            return
        a, b = (self._operand(o) for o in operands)
        if plan == "transposed":
            shape, dtype = self._meta(operands[1])
            name = node.name + "__bt"
            self.nodes.append({"name": name, "op": "transpose", "inputs": [b],
                               "attrs": {"dim0": -2, "dim1": -1},
                               "shape": shape[:-2] + shape[-2:][::-1], "dtype": dtype,
                               "line": _line_of(node, self.path)})
            b = name
        self._emit(node, "matmul", [a, b], {})

    @staticmethod
    def _dim_given(args, kwargs):
        return len(args) > 1 and not isinstance(args[1], torch.fx.Node) or "dim" in kwargs

    def _select(self, node):
        """getitem / getattr on a traced value: `.values` / `[0]` and `.indices` / `[1]` of
        max and min over a dim become `max` / `argmax` nodes; `.shape` and friends stay
        unknown (they are bookkeeping a candidate would do on the host)."""
        source, key = node.args[0], node.args[1]
        if source in self.pieces and isinstance(key, int):
            value, keys, line = self.pieces[source]
            self._emit(node, "index", [self._operand(value)], {"key": keys[key]}, line)
            return
        if source in self.tuples:
            kind, inputs, attrs, line = self.tuples[source]
            if kind == "multi_head_attention" and key != 0:
                self._emit(node, "unknown", [],
                           {"target": "the attention weights of nn.MultiheadAttention"}, line)
                return
            if kind in ("recurrent", "recurrent_state"):
                self._recurrent_output(node, source, key)
                return
            op = kind if key in (0, "values") else "arg" + kind
            self._emit(node, op, list(inputs), dict(attrs), line)
            return
        if key in ("T", "mT"):  # x.T of a matrix: a transposed view
            self._emit(node, "transpose", [self._operand(source)], {"dim0": -2, "dim1": -1})
            return
        if key in ("shape", "dtype", "device", "ndim") or source in self.meta_values:
            self.meta_values.add(node)
            self._emit(node, "meta", [], {"target": str(key)})
            return
        index = _basic_index(key)
        if index is not None and isinstance(source, torch.fx.Node):
            # x[0], x[:, 1:3], q, k, v = t: basic indexing, a view of the tensor
            self._emit(node, "index", [self._operand(source)], {"key": index})
            return
        self._emit(node, "unknown", [self._operand(source)],
                   {"target": f"{node.target.__name__} {key!r}"})

    def _aten(self, node, target):
        """A node of torch.export's ATen graph, its arguments named by the op's schema."""
        name = target.overloadpacket.__name__
        schema_args = [a.name for a in target._schema.arguments]
        bound = dict(zip(schema_args, node.args))
        bound.update(node.kwargs)
        bound = {("input" if k == "self" else k): v for k, v in bound.items()}
        op = ALIASES.get(name, name)
        signature = SIGNATURES.get(op)
        if signature is None:
            self._emit(node, "unknown", self._values_in(node.args),
                       {"target": str(target)})
            return
        self._call(node, op, (), {k: bound[k] for k in signature if k in bound},
                   canonical=True)

    def _emit(self, node, op, inputs, attrs, line=None):
        shape, dtype = self._meta(node)
        entry = {"name": node.name, "op": op, "inputs": inputs, "attrs": attrs,
                 "shape": shape, "dtype": dtype, "line": _line_of(node, self.path) or line}
        self.names[node] = node.name
        self.nodes.append(entry)

