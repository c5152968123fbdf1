"""The trace stage: a reference's forward as a canonical op graph with shapes, for the
synthesizer (docs/WORKER_PROTOCOL.md, "trace")."""
import json
import os
import subprocess
import sys
import textwrap

from crucible_worker import trace_stage

REPO = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))
WORKER = os.path.join(REPO, "core", "worker", "worker.py")

REFERENCE = """\
import torch
import torch.nn as nn
import torch.nn.functional as F

SCALE = 0.5


class Model(nn.Module):
    def __init__(self, dim):
        super(Model, self).__init__()
        self.lin = nn.Linear(dim, dim)
        self.extra = nn.Parameter(torch.zeros(dim))

    def helper(self):
        return 1

    def forward(self, x):
        y = F.relu(self.lin(x)) * SCALE + self.extra
        z = torch.max(y, dim=1, keepdim=True).values
        return torch.softmax(y - z, dim=-1), x.T


batch_size = 4
dim = 8


def get_inputs():
    return [torch.randn(batch_size, dim)]


def get_init_inputs():
    return [dim]
"""


class Recorder:
    def __init__(self):
        self.phases = []

    def phase(self, name):
        self.phases.append(name)


def trace(tmp_path, source):
    path = tmp_path / "reference.py"
    path.write_text(textwrap.dedent(source))
    return trace_stage.run({"reference_path": str(path), "seed": 42}, Recorder())


def nodes_ending_with(tmp_path, lines):
    """The traced nodes of REFERENCE with forward's last line replaced by `lines`."""
    facts = trace(tmp_path, REFERENCE.replace("return torch.softmax(y - z, dim=-1), x.T", lines))
    assert facts["error"] is None
    return facts["graph"]["nodes"]


def test_graph_has_canonical_ops_shapes_lines_and_parameters(tmp_path):
    facts = trace(tmp_path, REFERENCE)
    assert facts["error"] is None
    g = facts["graph"]
    assert g["tracer"] == "fx"
    assert g["inputs"] == [{"name": "x", "shape": [4, 8], "dtype": "float32"}]
    params = {p["name"]: p for p in g["params"]}
    assert params["lin.weight"]["shape"] == [8, 8] and params["lin.weight"]["kind"] == "parameter"
    assert params["extra"]["shape"] == [8]
    ops = [(n["op"], n["inputs"]) for n in g["nodes"]]
    assert ops[0] == ("linear", ["x", "lin.weight", "lin.bias"])
    assert ops[1][0] == "relu"
    assert ops[2] == ("mul", [g["nodes"][1]["name"], 0.5])
    assert ops[3][0] == "add"
    # max over a dim with .values is a plain `max` reduction
    mx = g["nodes"][4]
    assert mx["op"] == "max" and mx["attrs"] == {"dim": 1, "keepdim": True}
    assert mx["shape"] == [4, 1]
    assert [n["op"] for n in g["nodes"][5:]] == ["sub", "softmax", "transpose"]
    assert all(n["line"] == 18 for n in g["nodes"][:4])
    assert g["nodes"][6]["attrs"] == {"dim": -1}
    assert len(g["outputs"]) == 2
    # the same graph on batch_size + 1
    assert g["batch"] == {"name": "batch_size", "value": 4}
    assert g["alt_shapes"]["x"] == [5, 8]
    assert g["alt_shapes"][g["outputs"][0]] == [5, 8]


def test_source_pieces_are_what_a_candidate_repeats(tmp_path):
    source = trace(tmp_path, REFERENCE)["source"]
    texts = "".join(p["text"] for p in source["prelude"])
    assert "SCALE = 0.5" in texts and "import torch.nn.functional as F" in texts
    assert "def get_inputs" not in texts and "class Model" not in texts
    assert [m["name"] for m in source["methods"]] == ["__init__", "helper"]
    assert "super(Model, self).__init__()" in source["methods"][0]["text"]
    assert source["forward_line"] == 17


def test_unknown_ops_are_kept_with_their_name(tmp_path):
    facts = trace(tmp_path, REFERENCE.replace("torch.softmax(y - z, dim=-1)",
                                              "torch.fft.fft(y - z).real"))
    unknown = [n for n in facts["graph"]["nodes"] if n["op"] == "unknown"]
    assert unknown and unknown[0]["attrs"]["target"] == "fft_fft"
    assert unknown[0]["line"] == 20


def test_a_failing_reference_is_an_error_with_its_line(tmp_path):
    facts = trace(tmp_path, REFERENCE.replace("self.lin = nn.Linear(dim, dim)",
                                              "self.lin = nn.Linear(dim, dim)\n"
                                              "        raise ValueError('bad init')"))
    assert facts["graph"] is None
    assert facts["error"]["line"] == 12
    assert "bad init" in facts["error"]["message"]


def test_a_reference_failing_in_forward_says_so_in_one_line(tmp_path):
    """Not a tracer's dump of the failing node (with its stack trace escaped into it), but the
    reference's own error at its line."""
    facts = trace(tmp_path, REFERENCE.replace("return torch.softmax(y - z, dim=-1), x.T",
                                              "return y @ torch.ones(3, 3)"))
    assert facts["graph"] is None
    message = facts["error"]["message"]
    assert message.startswith("the reference fails on its inputs: RuntimeError: "), message
    assert "\\n" not in message and "\n" not in message and "node=" not in message, message
    line = REFERENCE.splitlines().index("        return torch.softmax(y - z, dim=-1), x.T") + 1
    assert facts["error"]["line"] == line


def test_the_worker_runs_the_trace_stage(tmp_path):
    path = tmp_path / "reference.py"
    path.write_text(REFERENCE)
    job = tmp_path / "job.json"
    job.write_text(json.dumps({"reference_path": str(path), "seed": 1}))
    read, write = os.pipe()
    env = dict(os.environ, CRUCIBLE_RESULT_FD=str(write))
    env.pop("CRUCIBLE_CHANNEL_KEY", None)
    proc = subprocess.run([sys.executable, "-I", "-B", WORKER, "trace", str(job)],
                          env=env, pass_fds=(write,), capture_output=True, timeout=120)
    os.close(write)
    lines = os.read(read, 1 << 20).decode().splitlines()
    os.close(read)
    assert proc.returncode == 0, proc.stderr.decode()
    messages = [json.loads(json.loads(line)["body"]) for line in lines]
    facts = messages[-1]["facts"]
    assert facts["error"] is None and facts["graph"]["nodes"][0]["op"] == "linear"


NORMS = """\
import torch
import torch.nn as nn
import torch.nn.functional as F


class Model(nn.Module):
    def __init__(self):
        super().__init__()
        self.up = nn.ConvTranspose2d(4, 8, 3, stride=2, padding=1, output_padding=1)
        self.gn = nn.GroupNorm(2, 8)
        self.inorm = nn.InstanceNorm2d(8)
        self.bn = nn.BatchNorm2d(8)
        self.pool = nn.AdaptiveAvgPool1d(5)

    def forward(self, x):
        y = self.bn(self.inorm(self.gn(self.up(x))))
        z = F.instance_norm(y) + F.group_norm(y, 4)
        return self.pool(z.flatten(2)), F.avg_pool2d(z, 3, ceil_mode=True)


def get_inputs():
    return [torch.randn(2, 4, 5, 5)]


def get_init_inputs():
    return []
"""


def test_norms_and_transposed_convolutions_have_one_spelling(tmp_path):
    facts = trace(tmp_path, NORMS)
    assert facts["error"] is None
    nodes = {n["name"]: n for n in facts["graph"]["nodes"]}
    by_op = {}
    for n in facts["graph"]["nodes"]:
        by_op.setdefault(n["op"], []).append(n)
    up = by_op["conv_transpose2d"][0]
    assert up["inputs"] == ["x", "up.weight", "up.bias"] and up["shape"] == [2, 8, 10, 10]
    assert up["attrs"]["output_padding"] in (1, [1, 1])
    # module and functional norms alike: (x, weight, bias) for group norm, and (x, running
    # mean, running var, weight, bias) for instance norm, whose batch statistics are marked
    gn_module, gn_call = by_op["group_norm"]
    assert gn_module["inputs"] == [up["name"], "gn.weight", "gn.bias"]
    assert gn_module["attrs"]["num_groups"] == 2
    assert gn_call["inputs"] == [nodes[gn_call["inputs"][0]]["name"], None, None]
    assert gn_call["attrs"]["num_groups"] == 4
    in_module, in_call = by_op["instance_norm"]
    assert in_module["inputs"] == [gn_module["name"], None, None, None, None]
    assert in_module["attrs"]["use_input_stats"] is True
    assert len(in_call["inputs"]) == 5 and in_call["attrs"]["use_input_stats"] is True
    assert by_op["batch_norm"][0]["attrs"]["training"] is True
    assert by_op["adaptive_avg_pool1d"][0]["shape"] == [2, 8, 5]
    assert by_op["avg_pool2d"][0]["attrs"]["ceil_mode"] is True


def test_basic_indexing_is_an_index_view_with_its_key(tmp_path):
    facts = trace(tmp_path, REFERENCE.replace(
        "return torch.softmax(y - z, dim=-1), x.T",
        "a, b = y.reshape(2, 2, 8)\n        return a[:, 1:3] + b[..., None, 0], x[0]"))
    assert facts["error"] is None
    keys = [n["attrs"]["key"] for n in facts["graph"]["nodes"] if n["op"] == "index"]
    assert keys == ["0", "1", ":, 1:3", "..., None, 0", "0"]


def test_dropout_that_draws_nothing_is_the_identity_and_random_dropout_is_named(tmp_path):
    nodes = nodes_ending_with(
        tmp_path, "a = F.dropout(y, p=0.0) + nn.functional.dropout(y, 0.4, training=False)\n"
        "        return F.dropout(a, 0.1), x.T")
    assert [n["op"] for n in nodes].count("identity") == 2
    (random_one,) = [n for n in nodes if n["op"] == "unknown"]
    assert "random mask" in random_one["attrs"]["target"] and random_one["line"] == 21


def test_a_dropout_module_follows_its_mode(tmp_path):
    source = REFERENCE.replace("self.extra = nn.Parameter(torch.zeros(dim))",
                               "self.extra = nn.Parameter(torch.zeros(dim))\n"
                               "        self.drop = nn.Dropout(0.5)")
    source = source.replace("y = F.relu(self.lin(x))", "y = self.drop(F.relu(self.lin(x)))")
    training = trace(tmp_path, source)["graph"]["nodes"]
    assert [n["attrs"]["target"] for n in training if n["op"] == "unknown"] == [
        "Dropout in training mode (p=0.5): a random mask no kernel can repeat"]
    evaluated = trace(tmp_path, source.replace("self.drop = nn.Dropout(0.5)",
                                               "self.drop = nn.Dropout(0.5)\n"
                                               "        self.eval()"))["graph"]["nodes"]
    assert "unknown" not in [n["op"] for n in evaluated]
    assert "identity" in [n["op"] for n in evaluated]


def test_split_pieces_are_index_views_and_size_arithmetic_stays_on_the_host(tmp_path):
    nodes = nodes_ending_with(tmp_path, "n, d = y.shape\n"
                              "        a, b, c = torch.split(y, [3, d - 5, 2], dim=1)\n"
                              "        p, q, r = y.chunk(3, -1)\n"
                              "        u = y.reshape(n, 2, d // 2).unbind(1)\n"
                              "        return a, b, c, p, q, r, u[1]")
    keys = [n["attrs"]["key"] for n in nodes if n["op"] == "index"]
    assert keys == [":, 0:3", ":, 3:6", ":, 6:8", ":, 0:3", ":, 3:6", ":, 6:8", ":, 1"]
    assert [n["shape"] for n in nodes if n["op"] == "index"][1] == [4, 3]
    assert "unknown" not in [n["op"] for n in nodes]
    assert {n["attrs"]["target"] for n in nodes if n["op"] == "meta"} >= {"sub", "floordiv"}


def test_a_split_along_the_batch_is_named(tmp_path):
    nodes = nodes_ending_with(tmp_path, "a, b = y.chunk(2)\n        return a + b")
    assert [n["attrs"]["target"] for n in nodes if n["op"] == "unknown"] == [
        "chunk along dim 0 (the batch)"]


def test_cat_stack_and_fills_keep_their_pieces_in_order(tmp_path):
    nodes = nodes_ending_with(tmp_path, "c = torch.cat([y, torch.zeros_like(y), x], dim=-1)\n"
                              "        return torch.stack((c, c), 1), torch.full_like(x, 2.5)")
    by_op = {n["op"]: n for n in reversed(nodes)}  # the first of each op
    assert by_op["cat"]["inputs"][1:] == [by_op["full"]["name"], "x"]
    assert by_op["cat"]["attrs"] == {"dim": -1} and by_op["cat"]["shape"] == [4, 24]
    assert by_op["stack"]["inputs"] == [by_op["cat"]["name"]] * 2
    assert [n["attrs"]["value"] for n in nodes if n["op"] == "full"] == [0.0, 2.5]


def test_einsums_that_are_matrix_products_are_matmuls_and_others_are_named(tmp_path):
    nodes = nodes_ending_with(tmp_path, "w = torch.einsum('ik,jk->ij', y, y)\n"
                              "        v = torch.einsum('bi,ij->bj', w, x)\n"
                              "        return v, torch.einsum('bi,bi->b', x, x)")
    ops = [n["op"] for n in nodes]
    assert ops[-4:] == ["transpose", "matmul", "matmul", "unknown"]
    assert nodes[-3]["inputs"][1] == nodes[-4]["name"] and nodes[-4]["shape"] == [8, 4]
    assert nodes[-1]["attrs"]["target"] == "einsum 'bi,bi->b'"


def test_scans_triangles_and_diagonals_have_their_attributes(tmp_path):
    nodes = nodes_ending_with(tmp_path, "a = torch.tril(y.T @ y, -1) + y.T.matmul(y).triu()\n"
                              "        return x.flip(1, 0), torch.diag(a), a.prod(dim=1)")
    by_op = {n["op"]: n["attrs"] for n in nodes}
    assert by_op["tril"] == {"diagonal": -1} and by_op["triu"] == {"diagonal": 0}
    assert by_op["flip"] == {"dims": [1, 0]} and by_op["diag"] == {"diagonal": 0}
    assert by_op["prod"] == {"dim": 1, "keepdim": False}


def test_masks_made_in_forward_and_comparisons_are_traced(tmp_path):
    nodes = nodes_ending_with(tmp_path, "keep = torch.tril(torch.ones(x.size(0), x.size(0))) == 0\n"
                              "        ones = torch.ones(4, 4)\n"
                              "        s = (x @ x.T).masked_fill(keep, float('-inf')) + ones\n"
                              "        return torch.where(s > 0, s, 0.0), x.T")
    by_op = {n["op"]: n for n in reversed(nodes)}
    fills = [n for n in nodes if n["op"] == "full"]
    assert [(f["attrs"]["value"], f["shape"]) for f in fills] == [(1.0, [4, 4]), (1.0, [4, 4])]
    assert by_op["eq"]["inputs"] == [by_op["tril"]["name"], 0]
    assert by_op["masked_fill"]["inputs"][1:] == [by_op["eq"]["name"], "-inf"]
    assert by_op["where"]["inputs"][0] == by_op["gt"]["name"]


MULTI_HEAD = """
import torch
import torch.nn as nn


class Model(nn.Module):
    def __init__(self):
        super().__init__()
        self.attn = nn.MultiheadAttention(16, 4, batch_first=True)

    def forward(self, x):
        out, _ = self.attn(x, x, x)
        return out


def get_inputs():
    return [torch.randn(3, 5, 16)]


def get_init_inputs():
    return []
"""


def test_multi_head_attention_is_one_node_with_its_parameters_and_unused_weights_dropped(tmp_path):
    facts = trace(tmp_path, MULTI_HEAD)
    assert facts["error"] is None
    (node,) = facts["graph"]["nodes"]
    assert node["op"] == "multi_head_attention" and node["shape"] == [3, 5, 16]
    assert node["inputs"] == ["x", "x", "x", None, "attn.in_proj_weight", "attn.in_proj_bias",
                              "attn.out_proj.weight", "attn.out_proj.bias"]
    assert node["attrs"]["num_heads"] == 4 and node["attrs"]["batch_first"] is True
    weights = trace(tmp_path, MULTI_HEAD.replace("out, _ = self.attn(x, x, x)\n        return out",
                                                 "return self.attn(x, x, x)[1]"))
    assert [n["attrs"]["target"] for n in weights["graph"]["nodes"]] == [
        "the attention weights of nn.MultiheadAttention"]


def test_recurrent_layers_are_one_node_per_selected_output(tmp_path):
    source = MULTI_HEAD.replace("self.attn = nn.MultiheadAttention(16, 4, batch_first=True)",
                                "self.lstm = nn.LSTM(16, 8, num_layers=2, bidirectional=True)")
    source = source.replace("out, _ = self.attn(x, x, x)\n        return out",
                            "out, (h, c) = self.lstm(x)\n        return out, c")
    facts = trace(tmp_path, source)
    assert facts["error"] is None
    nodes = facts["graph"]["nodes"]
    assert [(n["op"], n["attrs"]["output"]) for n in nodes] == [("recurrent", "sequence"),
                                                               ("recurrent", "c_n")]
    assert nodes[0]["inputs"][:3] == ["x", None, None] and len(nodes[0]["inputs"]) == 3 + 4 * 4
    assert nodes[0]["inputs"][3:5] == ["lstm.weight_ih_l0", "lstm.weight_hh_l0"]
    assert nodes[0]["attrs"]["mode"] == "LSTM" and nodes[0]["attrs"]["bidirectional"] is True
    assert nodes[1]["shape"] == [4, 5, 8]


def test_narrow_is_an_index_view_whatever_computes_its_length(tmp_path):
    nodes = nodes_ending_with(tmp_path, "n = y.size(1)\n"
                              "        return y.narrow(1, 0, n - 1), torch.narrow(y, -1, -3, 2)")
    assert [n["attrs"]["key"] for n in nodes if n["op"] == "index"] == [":, 0:7", ":, 5:7"]


def test_a_buffer_sliced_by_traced_sizes_and_inverted_is_a_view_and_a_logical_not(tmp_path):
    source = REFERENCE.replace("self.extra = nn.Parameter(torch.zeros(dim))",
                               "self.extra = nn.Parameter(torch.zeros(dim))\n"
                               "        self.register_buffer('keep', torch.ones(8, 8).tril() > 0)")
    source = source.replace("return torch.softmax(y - z, dim=-1), x.T",
                            "t = x.size(1)\n"
                            "        return y.masked_fill(~self.keep[:t, :t][:4], 0.0), x.T")
    facts = trace(tmp_path, source)
    assert facts["error"] is None and facts["graph"]["tracer"] == "fx"
    nodes = facts["graph"]["nodes"]
    square, rows = [n for n in nodes if n["op"] == "index"]
    assert square["inputs"] == ["keep"] and square["attrs"]["key"] == ":8, :8"
    assert rows["attrs"]["key"] == ":4"
    assert [n["inputs"] for n in nodes if n["op"] == "logical_not"] == [[rows["name"]]]
    assert {"name": "keep", "shape": [8, 8], "dtype": "bool", "kind": "buffer"} in \
        facts["graph"]["params"]
