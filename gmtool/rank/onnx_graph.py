"""The one-time CPU rewrite of an int8-weight sentence-embedding graph, with the `onnx` package.

Three patterns are rewritten; everything else is left exactly as it was:

- ``MatMul(A, Mul(Cast(W_q: int8), scale[1, N]))`` becomes
  ``com.microsoft.DynamicQuantizeMatMul(A, W_q, scale[N])``: the same int8 weights, multiplied
  by onnxruntime's int8 kernel instead of being dequantized to float on every run. A bias
  ``Add(that, b[N])`` that follows goes into the kernel too (its bias input: one op less per weight).
- ``x * (0.5 * (1 + Erf(x / sqrt 2)))`` (the exact GELU, five ops that onnxruntime does not fuse
  in this order) becomes ``com.microsoft.Gelu(x)``: the same formula in one pass over the tensor.
- ``Where(IsNaN(Softmax(x)), 0, Softmax(x))`` becomes ``Identity(Softmax(x))``: the NaN guard
  after each attention softmax is dead code, because no row is ever fully masked.

The caller (gmtool.rank.embed) checks the result against the source model before caching it.
Importing this module is cheap: onnx is imported on first use.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from onnx import GraphProto, ModelProto, NodeProto, TensorProto

MS_DOMAIN = "com.microsoft"
_DEFAULT_DOMAINS = ("", "ai.onnx")
_INT8 = 3  # onnx.TensorProto.INT8, named here so that matching needs no onnx import
_FLOAT = 1  # onnx.TensorProto.FLOAT


@dataclass
class _Graph:
    """Who produces and who consumes each tensor, by node position."""

    nodes: list[NodeProto]
    inits: dict[str, TensorProto]
    outputs: set[str]
    producer: dict[str, int] = field(default_factory=dict)
    consumers: dict[str, list[int]] = field(default_factory=dict)

    @classmethod
    def of(cls, graph: GraphProto) -> _Graph:
        g = cls(list(graph.node), {t.name: t for t in graph.initializer}, {o.name for o in graph.output})
        for i, node in enumerate(g.nodes):
            for name in node.output:
                g.producer[name] = i
            for name in node.input:
                g.consumers.setdefault(name, []).append(i)
        return g

    def made_by(self, tensor: str, op: str) -> int | None:
        """The position of the node that produces `tensor`, if it is an `op` node."""
        i = self.producer.get(tensor)
        return i if i is not None and self.nodes[i].op_type == op else None

    def used_once(self, tensor: str) -> bool:
        return len(self.consumers.get(tensor, [])) == 1 and tensor not in self.outputs


@dataclass
class _Plan:
    """What to change: nodes to drop, nodes to replace (by position), scales to flatten to 1-D."""

    drop: set[int] = field(default_factory=set)
    replace: dict[int, NodeProto] = field(default_factory=dict)
    flatten: dict[str, int] = field(default_factory=dict)


def _int8_weight(g: _Graph, weight: str) -> tuple[int, int, str, str, int] | None:
    """(Mul position, Cast position, int8 initializer, scale initializer, N) when `weight` is
    Mul(Cast(W_q: int8 [K, N]), scale: float [1, N] or [N]), each piece used only here."""
    mi = g.made_by(weight, "Mul")
    if mi is None or not g.used_once(weight) or len(g.nodes[mi].input) != 2:
        return None
    cast_out, scale = g.nodes[mi].input
    ci = g.made_by(cast_out, "Cast")
    if ci is None or not g.used_once(cast_out):
        return None
    q = g.nodes[ci].input[0]
    if q not in g.inits or scale not in g.inits or len(g.consumers.get(scale, [])) != 1:
        return None
    qt, st = g.inits[q], g.inits[scale]
    if qt.data_type != _INT8 or st.data_type != _FLOAT or len(qt.dims) != 2:
        return None
    n = qt.dims[1]
    if list(st.dims) not in ([1, n], [n]):
        return None
    return mi, ci, q, scale, n


def _plan_matmul(g: _Graph, i: int, node: NodeProto, plan: _Plan) -> None:
    from onnx import helper

    found = _int8_weight(g, node.input[1])
    if found is None:
        return
    mi, ci, q, scale, n = found
    plan.drop.update((mi, ci))
    plan.flatten[scale] = n
    inputs, outputs = [node.input[0], q, scale], list(node.output)
    bias = _bias_add(g, node.output[0], n)
    if bias is not None:
        plan.drop.add(bias[0])
        inputs, outputs = [*inputs, "", bias[1]], list(g.nodes[bias[0]].output)
    plan.replace[i] = helper.make_node("DynamicQuantizeMatMul", inputs, outputs,
                                       name=node.output[0] + "_dqmm", domain=MS_DOMAIN)


def _bias_add(g: _Graph, y: str, n: int) -> tuple[int, str] | None:
    """(Add position, bias initializer) when `y` feeds only ``Add(y, b)``, b a float [N] initializer."""
    found = _only_user(g, y, "Add")
    if found is None or found[1] not in g.inits:
        return None
    b = g.inits[found[1]]
    return found if b.data_type == _FLOAT and list(b.dims) == [n] else None


def _scalar(g: _Graph, name: str) -> float | None:
    """The value of a one-element float initializer, else None."""
    from onnx import numpy_helper

    t = g.inits.get(name)
    if t is None or t.data_type != _FLOAT:
        return None
    arr = numpy_helper.to_array(t)
    return float(arr.reshape(-1)[0]) if arr.size == 1 else None


def _only_user(g: _Graph, tensor: str, op: str) -> tuple[int, str] | None:
    """(position, other input) of the binary `op` node that is the only user of `tensor`."""
    users = g.consumers.get(tensor, [])
    if not g.used_once(tensor):
        return None
    node = g.nodes[users[0]]
    if node.op_type != op or node.domain not in _DEFAULT_DOMAINS or len(node.input) != 2 or tensor not in node.input:
        return None
    a, b = node.input
    return users[0], (b if a == tensor else a)


def _is(g: _Graph, name: str, value: float) -> bool:
    got = _scalar(g, name)
    return got is not None and abs(got - value) <= 1e-6


def _plan_gelu(g: _Graph, i: int, node: NodeProto, plan: _Plan) -> None:
    """`node` is an Erf: is it the middle of x * (0.5 * (1 + Erf(x / sqrt 2)))?"""
    from onnx import helper

    di = g.made_by(node.input[0], "Div")
    if di is None or not g.used_once(node.input[0]) or not _is(g, g.nodes[di].input[1], 2 ** 0.5):
        return
    x = g.nodes[di].input[0]
    add = _only_user(g, node.output[0], "Add")
    if add is None or not _is(g, add[1], 1.0):
        return
    half = _only_user(g, g.nodes[add[0]].output[0], "Mul")
    if half is None or not _is(g, half[1], 0.5):
        return
    last = _only_user(g, g.nodes[half[0]].output[0], "Mul")
    if last is None or last[1] != x:
        return
    plan.drop.update((di, i, add[0], half[0]))
    plan.replace[last[0]] = helper.make_node("Gelu", [x], list(g.nodes[last[0]].output),
                                             name=node.output[0] + "_gelu", domain=MS_DOMAIN)


def _plan_nan_guard(g: _Graph, i: int, node: NodeProto, plan: _Plan) -> None:
    from onnx import helper

    cond, _, x = node.input
    if g.made_by(x, "Softmax") is None:
        return
    ni = g.made_by(cond, "IsNaN")
    if ni is None or list(g.nodes[ni].input) != [x] or g.consumers.get(cond) != [i]:
        return
    plan.drop.add(ni)
    plan.replace[i] = helper.make_node("Identity", [x], list(node.output), name=node.output[0] + "_nonan")


def _plan(g: _Graph) -> _Plan:
    plan = _Plan()
    for i, node in enumerate(g.nodes):
        if node.domain not in _DEFAULT_DOMAINS:
            continue
        if node.op_type == "MatMul" and len(node.input) == 2:
            _plan_matmul(g, i, node, plan)
        elif node.op_type == "Where" and len(node.input) == 3:
            _plan_nan_guard(g, i, node, plan)
        elif node.op_type == "Erf" and len(node.input) == 1:
            _plan_gelu(g, i, node, plan)
    return plan


def _apply(model: ModelProto, g: _Graph, plan: _Plan) -> None:
    """Edit `model` in place; node order is kept, so the graph stays topologically sorted."""
    from onnx import helper

    graph = model.graph
    kept = [plan.replace.get(i, node) for i, node in enumerate(g.nodes) if i not in plan.drop]
    del graph.node[:]
    graph.node.extend(kept)
    for name, n in plan.flatten.items():
        dims = g.inits[name].dims
        del dims[:]
        dims.append(n)
    if not any(op.domain == MS_DOMAIN for op in model.opset_import):
        model.opset_import.append(helper.make_opsetid(MS_DOMAIN, 1))


def rewrite_model(data: bytes) -> tuple[bytes, int]:
    """(new model bytes, number of rewritten nodes); 0 rewritten nodes means nothing matched and
    `data` comes back unchanged."""
    import onnx

    model = onnx.load_model_from_string(data)
    g = _Graph.of(model.graph)
    plan = _plan(g)
    if not plan.replace:
        return data, 0
    _apply(model, g, plan)
    return model.SerializeToString(), len(plan.replace)


POOLED_OUTPUT = "sentence_embedding"


def add_pooling(data: bytes, hidden: str, mask: str = "attention_mask") -> bytes:
    """The model with mean pooling over `mask` and L2 normalisation appended, as one more output
    `sentence_embedding` [batch, dim]: on a GPU the token-level states then never leave the device
    (they are 100-250 times the size of the pooled vectors). Same arithmetic as Embedder._pool."""
    import onnx
    from onnx import TensorProto, helper

    model = onnx.load_model_from_string(data)
    g = model.graph
    p = "gmtool_pool_"
    consts = [
        helper.make_tensor(p + "ax1", TensorProto.INT64, [1], [1]),
        helper.make_tensor(p + "ax2", TensorProto.INT64, [1], [2]),
        helper.make_tensor(p + "eps_n", TensorProto.FLOAT, [], [1e-9]),
        helper.make_tensor(p + "eps_l2", TensorProto.FLOAT, [], [1e-12]),
    ]
    g.initializer.extend(consts)
    g.node.extend([
        helper.make_node("Cast", [mask], [p + "m"], to=TensorProto.FLOAT),
        helper.make_node("Unsqueeze", [p + "m", p + "ax2"], [p + "m3"]),
        helper.make_node("Mul", [hidden, p + "m3"], [p + "masked"]),
        helper.make_node("ReduceSum", [p + "masked", p + "ax1"], [p + "sum"], keepdims=0),
        helper.make_node("ReduceSum", [p + "m3", p + "ax1"], [p + "count"], keepdims=0),
        helper.make_node("Max", [p + "count", p + "eps_n"], [p + "count1"]),
        helper.make_node("Div", [p + "sum", p + "count1"], [p + "mean"]),
        helper.make_node("Mul", [p + "mean", p + "mean"], [p + "sq"]),
        helper.make_node("ReduceSum", [p + "sq", p + "ax1"], [p + "sumsq"], keepdims=1),
        helper.make_node("Sqrt", [p + "sumsq"], [p + "norm"]),
        helper.make_node("Max", [p + "norm", p + "eps_l2"], [p + "norm1"]),
        helper.make_node("Div", [p + "mean", p + "norm1"], [POOLED_OUTPUT]),
    ])
    del g.output[:]
    g.output.append(helper.make_tensor_value_info(POOLED_OUTPUT, TensorProto.FLOAT, ["batch", None]))
    return model.SerializeToString()
