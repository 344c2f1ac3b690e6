"""The embedder's graph with its matrix products computed in int8.

The packaged all-MiniLM-L6-v2 graph stores each weight matrix as int8 with one
float scale per output column (``Cast`` then ``Mul`` before each ``MatMul``).
onnxruntime folds those into float32 matrices at load, so every query pays for
float32 products: about 5 ms for a 26-token query on one core.

:func:`int8_matmul_graph` rewrites each such ``MatMul`` into onnxruntime's
``MatMulNBits`` (8 bits, the same int8 values and scales, so the same weights)
with ``accuracy_level`` 4: the activations are quantized to int8 per block of
``block_size`` values along the inner dimension and the products run on the
CPU's int8 dot-product instructions. At block 32 a short query is 1.5-2x faster
on one thread and sentence vectors stay within cosine 0.999 of the float ones
(0.9997 to 0.9999 on typical texts; 0.9988 for the empty text).

onnxruntime's own ``MatMulNBitsQuantizer`` makes the same operator but only from
float weights held as initializers: it skips this graph's ``Cast``/``Mul``
products, and on a constant-folded copy it would quantize the weights a second
time (new scales per block, so not the same values) after writing a float copy
of the model to disk. Measured that way (bits 8, block 32, accuracy level 4): the
same speed, vectors a little further off (mean cosine 0.99955 against 0.99968 on
nine texts), 0.45-0.55 s to build against 0.06 s, and one more dependency
(``onnx-ir``). Rewriting keeps the packaged int8 values exactly.

:func:`probe` is the load-time check the embedder runs before it keeps this
graph: the same vector as the float graph on one sentence.

Both graphs read the token table as int8 (``_gather_int8``): onnxruntime would
otherwise fold its int8 values and row scales into a 47 MB float32 table in every
session; gathering a text's rows first and widening only those gives the same values.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np
import onnx
import onnxruntime as ort
from onnx import helper, numpy_helper

# Where the int8 products pay off and where the numbers stay put (see the module doc).
BLOCK_SIZE = 32
# The int8 graph is kept only if its vector for the probe is this close to the float one.
MIN_COSINE = 0.999
_MS_DOMAIN = "com.microsoft"


def float_graph(path: Path) -> bytes:
    """The graph at ``path`` with its token table read as int8 (:func:`_gather_int8`),
    serialized for ``onnxruntime.InferenceSession``: the same float products and the
    same vectors, 47 MB less per session. Unchanged when it has no such table."""
    model = onnx.load(str(path))
    _gather_int8(model.graph)
    serialized: bytes = model.SerializeToString()
    return serialized


def int8_matmul_graph(path: Path, block_size: int = BLOCK_SIZE) -> bytes:
    """The graph at ``path`` with its int8-weight ``MatMul`` nodes as ``MatMulNBits``
    (and its token table read as int8, as in :func:`float_graph`), serialized for
    ``onnxruntime.InferenceSession``. Raises ``ValueError`` when the graph has no such
    product (another export of the model)."""
    model = onnx.load(str(path))
    graph = model.graph
    _gather_int8(graph)
    initializers, producer, uses = _wiring(graph)
    dropped: set[int] = set()
    nodes = list(graph.node)
    for position, node in enumerate(nodes):
        found = _weight_of(node, producer, initializers, uses)
        if found is None or found[2].shape[0] % block_size:
            continue
        cast, mul, weights, scales = found
        packed = _pack(node.name, weights, scales, block_size)
        graph.initializer.extend(packed)
        nodes[position] = helper.make_node(
            "MatMulNBits",
            [node.input[0], packed[0].name, packed[1].name],
            list(node.output),
            name=f"{node.name}_int8",
            domain=_MS_DOMAIN,
            K=int(weights.shape[0]),
            N=int(weights.shape[1]),
            bits=8,
            block_size=block_size,
            accuracy_level=4,
        )
        dropped.update((id(cast), id(mul)))
    if not dropped:
        raise ValueError(f"{path.name} has no int8-weight MatMul to rewrite")
    kept = [n for n in nodes if id(n) not in dropped]
    del graph.node[:]
    graph.node.extend(kept)
    used = {name for node in graph.node for name in node.input}
    live = [i for i in graph.initializer if i.name in used]
    del graph.initializer[:]
    graph.initializer.extend(live)
    if not any(o.domain == _MS_DOMAIN for o in model.opset_import):
        model.opset_import.append(helper.make_opsetid(_MS_DOMAIN, 1))
    serialized: bytes = model.SerializeToString()
    return serialized


def _wiring(graph: Any) -> tuple[dict[str, Any], dict[str, Any], dict[str, int]]:
    """The graph's initializers by name, each output's producing node, and how many
    inputs each name feeds."""
    initializers = {i.name: i for i in graph.initializer}
    producer = {out: node for node in graph.node for out in node.output}
    uses: dict[str, int] = {}
    for node in graph.node:
        for name in node.input:
            uses[name] = uses.get(name, 0) + 1
    return initializers, producer, uses


def _gather_int8(graph: Any) -> None:
    """Rewrite ``Gather(Mul(Cast(int8 T), row scales), ids)`` as
    ``Mul(Cast(Gather(T, ids)), Gather(row scales, ids))`` in place.

    The packaged token table is 30,522 x 384 int8 values with one scale per row.
    onnxruntime folds ``Mul(Cast(T), scales)`` into a float32 table at load: 47 MB in
    every session, for the few rows a text uses. Gathering those rows first and widening
    only them gives each the same products (``T[i] * scales[i]``, elementwise), so the
    same vectors."""
    initializers, producer, uses = _wiring(graph)
    nodes = list(graph.node)
    dropped: set[int] = set()
    for position, node in enumerate(nodes):
        if node.op_type != "Gather" or any(a.name == "axis" and a.i != 0 for a in node.attribute):
            continue
        found = _row_scaled_table(node.input[0], producer, initializers, uses)
        if found is None:
            continue
        cast, mul = found
        ids, out = node.input[1], node.output[0]
        rows, widened, row_scales = f"{out}_int8_rows", f"{out}_rows_f", f"{out}_row_scales"
        nodes[position : position + 1] = [
            helper.make_node("Gather", [cast.input[0], ids], [rows], axis=0),
            helper.make_node("Cast", [rows], [widened], to=onnx.TensorProto.FLOAT),
            helper.make_node("Gather", [mul.input[1], ids], [row_scales], axis=0),
            helper.make_node("Mul", [widened, row_scales], [out], name=f"{node.name}_rows"),
        ]
        dropped.update((id(cast), id(mul)))
    if dropped:
        del graph.node[:]
        graph.node.extend(n for n in nodes if id(n) not in dropped)


def _row_scaled_table(
    name: str, producer: dict[str, Any], initializers: dict[str, Any], uses: dict[str, int]
) -> tuple[Any, Any] | None:
    """The Cast and the Mul when ``name`` is ``Mul(Cast(int8 T), scales)``, T an
    initializer of rows and scales one per row (shape ``(rows, 1)``), used only here."""
    mul = producer.get(name)
    if mul is None or mul.op_type != "Mul" or uses.get(mul.output[0]) != 1:
        return None
    cast = producer.get(mul.input[0])
    if cast is None or cast.op_type != "Cast" or uses.get(cast.output[0]) != 1:
        return None
    table, scales = initializers.get(cast.input[0]), initializers.get(mul.input[1])
    if table is None or scales is None:
        return None
    if table.data_type != onnx.TensorProto.INT8 or len(table.dims) != 2:
        return None
    if list(scales.dims) != [table.dims[0], 1] or scales.data_type != onnx.TensorProto.FLOAT:
        return None
    return cast, mul


def _weight_of(
    node: Any, producer: dict[str, Any], initializers: dict[str, Any], uses: dict[str, int]
) -> tuple[Any, Any, np.ndarray[Any, Any], np.ndarray[Any, Any]] | None:
    """For ``MatMul(x, Mul(Cast(int8 W), scale))`` whose dequantized W feeds only this
    node: the Cast, the Mul, W (K x N int8) and its per-column scales (N)."""
    if node.op_type != "MatMul":
        return None
    mul = producer.get(node.input[1])
    if mul is None or mul.op_type != "Mul" or uses.get(mul.output[0]) != 1:
        return None
    cast = producer.get(mul.input[0])
    if cast is None or cast.op_type != "Cast" or uses.get(cast.output[0]) != 1:
        return None
    if cast.input[0] not in initializers or mul.input[1] not in initializers:
        return None
    weights = numpy_helper.to_array(initializers[cast.input[0]])
    scales = numpy_helper.to_array(initializers[mul.input[1]]).reshape(-1)
    if weights.dtype != np.int8 or weights.ndim != 2 or scales.size != weights.shape[1]:
        return None
    return cast, mul, weights, scales.astype(np.float32)


def _pack(
    name: str, weights: np.ndarray[Any, Any], scales: np.ndarray[Any, Any], block_size: int
) -> list[Any]:
    """``MatMulNBits``' layout: per output column, its K values in blocks, offset to
    unsigned (the default zero point 128 takes the offset back), one scale per block."""
    k, n = weights.shape
    blocks = k // block_size
    unsigned = (weights.T.astype(np.int16) + 128).astype(np.uint8).reshape(n, blocks, block_size)
    per_block = np.repeat(scales, blocks)
    return [
        numpy_helper.from_array(unsigned, f"{name}_int8_weights"),
        numpy_helper.from_array(per_block, f"{name}_int8_scales"),
    ]


def probe(
    int8: ort.InferenceSession, reference: ort.InferenceSession, feeds: dict[str, Any]
) -> str | None:
    """Why the int8 session should not replace ``reference``, or None if it should: its
    mean-pooled vector for ``feeds`` must be within :data:`MIN_COSINE` of the reference's.
    Speed is not probed (a timing at load would make a service's graph depend on how busy
    the machine was as it started): ``make bench-embedder`` compares the two graphs, and
    ``EMBEDDER_INT8=false`` keeps the float one."""
    vectors = []
    for session in (int8, reference):
        pooled = session.run(["last_hidden_state"], feeds)[0].mean(axis=1)[0]
        vectors.append(pooled / max(float(np.linalg.norm(pooled)), 1e-12))
    cosine = float(vectors[0] @ vectors[1])
    if not cosine >= MIN_COSINE:
        return f"int8 vector off the float one (cosine {cosine:.5f})"
    return None
