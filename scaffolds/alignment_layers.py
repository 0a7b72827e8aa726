"""Layers that cannot follow one another: a stack whose sizes do not chain.

In `nn.Sequential(nn.Linear(d, 128), nn.ReLU(), nn.Linear(128, out))` each layer takes what
the one before it gives. Where two layers of one stack write both sizes as numbers and those
differ (`nn.Linear(d, 1280)` before `nn.Linear(128, out)`), the model fails on its first
forward pass: one of the two is not the size the code means, whatever the paper says. The
sizes a stack names (`hidden_dim`) are not compared, nor are stacks with a layer this rule
does not know between two sized ones.
"""

from __future__ import annotations

import ast

from sabench.verifiers.stubs import call_name

#: Layers by what they take and give: the keyword of each size and its position.
TAKES_AND_GIVES = {name: (("in_features", 0), ("out_features", 1))
                   for name in ("Linear", "Bilinear")} | {
    name: (("in_channels", 0), ("out_channels", 1))
    for name in ("Conv1d", "Conv2d", "Conv3d", "ConvTranspose1d", "ConvTranspose2d",
                 "ConvTranspose3d")}
#: Layers that take and give one size.
KEEPS_ITS_SIZE = {"BatchNorm1d": ("num_features", 0), "BatchNorm2d": ("num_features", 0),
                  "BatchNorm3d": ("num_features", 0), "InstanceNorm1d": ("num_features", 0),
                  "InstanceNorm2d": ("num_features", 0), "LayerNorm": ("normalized_shape", 0),
                  "GroupNorm": ("num_channels", 1)}
#: Layers that take no size (indices) and give one.
GIVES_A_SIZE = {"Embedding": ("embedding_dim", 1)}
#: Layers whose sizes this rule reads.
SIZED_LAYERS = TAKES_AND_GIVES.keys() | KEEPS_ITS_SIZE.keys() | GIVES_A_SIZE.keys()
#: Layers that give what they take, whatever its size.
PASSES_ITS_SIZE = frozenset({
    "ReLU", "GELU", "SiLU", "Tanh", "Sigmoid", "LeakyReLU", "ELU", "SELU", "Mish", "Softplus",
    "Hardswish", "Softmax", "Dropout", "Dropout1d", "Dropout2d", "AlphaDropout", "Identity",
    "MaxPool1d", "MaxPool2d", "AvgPool1d", "AvgPool2d"})


def unchained_layers(node: ast.AST) -> tuple[ast.Call, int, ast.Call, int] | None:
    """(layer, size it gives, next sized layer, size it takes) for the first two layers of a
    `Sequential` stack whose sizes, both written as numbers, differ."""
    if not (isinstance(node, ast.Call) and call_name(node) == "Sequential"):
        return None
    layers = node.args
    if len(layers) == 1 and isinstance(layers[0], ast.Starred) and \
            isinstance(layers[0].value, (ast.List, ast.Tuple)):
        layers = layers[0].value.elts  # `nn.Sequential(*[...])`
    given: tuple[ast.Call, int | None] | None = None  # the last sized layer and what it gives
    for layer in layers:
        name = call_name(layer) if isinstance(layer, ast.Call) else ""
        if name in PASSES_ITS_SIZE:
            continue
        if name not in SIZED_LAYERS:
            given = None  # a layer of unknown sizes: the chain starts again after it
            continue
        takes, gives = _sizes(layer)
        if (broken := _broken(given, layer, takes)) is not None:
            return broken
        given = (layer, gives)
    return None


def _broken(given: tuple[ast.Call, int | None] | None, layer: ast.Call, takes: int | None
            ) -> tuple[ast.Call, int, ast.Call, int] | None:
    """(layer before, size it gives, `layer`, size it takes) where the two differ."""
    if given is None or given[1] is None or takes is None or given[1] == takes:
        return None
    return given[0], given[1], layer, takes


def _sizes(layer: ast.Call) -> tuple[int | None, int | None]:
    """What a layer of `SIZED_LAYERS` takes and gives, where written as numbers."""
    name = call_name(layer)
    if name in TAKES_AND_GIVES:
        takes, gives = TAKES_AND_GIVES[name]
        return _size(layer, *takes), _size(layer, *gives)
    if name in KEEPS_ITS_SIZE:
        size = _size(layer, *KEEPS_ITS_SIZE[name])
        return size, size
    return None, _size(layer, *GIVES_A_SIZE[name])


def _size(call: ast.Call, keyword: str, position: int) -> int | None:
    """The size a layer writes as a whole number at `keyword` or `position` (None: a name,
    an expression, or not written)."""
    value = next((k.value for k in call.keywords if k.arg == keyword), None)
    if value is None and len(call.args) > position:
        value = call.args[position]
    if isinstance(value, ast.Constant) and isinstance(value.value, int) and \
            not isinstance(value.value, bool):
        return value.value
    return None


#: Functions that give what they take, whatever its size (`F.relu(x)`, `torch.tanh(x)`).
PASSING_FUNCTIONS = frozenset({"relu", "gelu", "silu", "tanh", "sigmoid", "leaky_relu", "elu",
                               "selu", "mish", "softplus", "dropout", "softmax"})


def unchained_applications(cls: ast.ClassDef, method: ast.FunctionDef | ast.AsyncFunctionDef
                           ) -> tuple[ast.Call, int, ast.Call, int] | None:
    """(layer, size it gives, next layer, size it takes) where `method` applies two layers
    its class builds (`self.fc1 = nn.Linear(d, 128)`) one to what the other gave, in one
    expression (`self.fc2(F.relu(self.fc1(x)))`) or in statements that pass one name on
    (`h = self.fc1(x)`, `h = F.relu(h)`, `h = self.fc2(h)`), and the sizes, both written as
    numbers, differ."""
    layers = _built_layers(cls)
    if not layers:
        return None
    given: dict[str, tuple[ast.Call, int | None]] = {}  # name -> the last layer applied
    for statement in method.body:
        value = statement.value if isinstance(statement, (ast.Assign, ast.Return)) else None
        if value is not None:
            found, gives = _applied(value, layers, given)
            if found is not None:
                return found
        if isinstance(statement, ast.Assign):
            targets = [t.id for t in statement.targets if isinstance(t, ast.Name)]
            for target in targets:
                given.pop(target, None)
                if len(targets) == len(statement.targets) == 1 and gives is not None:
                    given[target] = gives
        else:  # a branch or a loop may rebind what it names: forget those names
            for node in ast.walk(statement):
                if isinstance(node, ast.Name) and isinstance(node.ctx, ast.Store):
                    given.pop(node.id, None)
    return None


def _built_layers(cls: ast.ClassDef) -> dict[str, ast.Call]:
    """The sized layers a class binds to attributes once (`self.fc1 = nn.Linear(d, 128)`),
    and the size-keeping ones (activations, dropout) by attribute name."""
    found: dict[str, ast.Call] = {}
    seen: set[str] = set()
    for node in ast.walk(cls):
        if isinstance(node, ast.Assign) and len(node.targets) == 1:
            target = node.targets[0]
            if isinstance(target, ast.Attribute) and isinstance(target.value, ast.Name) and \
                    target.value.id == "self":
                if target.attr in seen:
                    found.pop(target.attr, None)  # bound twice: not one layer
                elif isinstance(node.value, ast.Call) and call_name(node.value) in (
                        SIZED_LAYERS | PASSES_ITS_SIZE):
                    found[target.attr] = node.value
                seen.add(target.attr)
    return found


def _applied(value: ast.AST, layers: dict[str, ast.Call],
             given: dict[str, tuple[ast.Call, int | None]]
             ) -> tuple[tuple[ast.Call, int, ast.Call, int] | None,
                        tuple[ast.Call, int | None] | None]:
    """(the first two layers that do not chain, the last layer applied) along a nesting of
    calls of one argument down to a name (`self.fc2(F.relu(self.fc1(x)))`)."""
    chain: list[ast.Call] = []
    node = value
    while isinstance(node, ast.Call) and len(node.args) >= 1:
        chain.append(node)
        node = node.args[0]
    if not isinstance(node, ast.Name):
        return None, None
    last = given.get(node.id)
    for call in reversed(chain):  # innermost first
        func = call.func
        layer = layers.get(func.attr) if isinstance(func, ast.Attribute) and \
            isinstance(func.value, ast.Name) and func.value.id == "self" else None
        if layer is None and call_name(call) in PASSING_FUNCTIONS:
            continue
        if layer is None:
            return None, None  # another call: its size is not known
        if call_name(layer) in PASSES_ITS_SIZE:
            continue
        takes, gives = _sizes(layer)
        if (broken := _broken(last, layer, takes)) is not None:
            return broken, None
        last = (layer, gives)
    return None, last
