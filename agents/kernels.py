"""The engine's rule kernels, compiled by numba from their own source, for the solver.

:mod:`cuatrola_env.core` writes every rule once, as small functions over a *kit* (NumPy arrays
or Python ints). The double-dummy solver runs inside numba, which cannot call those functions
with a kit object, so this module builds a third kit at import: it takes each kernel's source,
turns ``K.name`` into a numba-compiled helper or an int64 table of the same name, turns each
``rules.option`` into a parameter of the same name (in order of first use), and compiles the
result. A change to a rule in ``core.py`` is therefore a change to the solver too.

>>> from agents.kernels import legal_play, play
>>> legal_play(True, False, 0b11, 0, -1, -1, -1, 0)   # a lead: any card of the hand
3
"""

from __future__ import annotations

import ast
import inspect
import textwrap

import numpy as np
from numba import njit

from cuatrola_env import bitboards as bb
from cuatrola_env import core
from cuatrola_env.rules import CONTRACT_VALUE


@njit(cache=True)
def _where(condition, a, b):
    return a if condition else b


@njit(cache=True)
def _lowest_bit(m):
    return m & -m


@njit(cache=True)
def _lowest_index(m):
    i = 0
    while m and not (m >> i) & 1:
        i += 1
    return i if m else -1


_PTS_LO, _PTS_HI = bb.PTS_LO.astype(np.int64), bb.PTS_HI.astype(np.int64)


@njit(cache=True)
def _mask_points(m):
    return _PTS_LO[m & 0x3FF] + _PTS_HI[(m >> 10) & 0x3FF]


#: what each ``K.<name>`` of a kernel becomes in the compiled kit
NUMBA_KIT = {
    "where": _where, "lowest_bit": _lowest_bit, "lowest_index": _lowest_index, "mask_points": _mask_points,
    "clip": None,  # only the bidding uses it; the solver plays cards
    "suit_or_none": np.array(core.SUIT_OR_NONE, np.int64), "above": bb.ABOVE.astype(np.int64),
    "caballo_of_suit": np.array(core.CABALLO_OF_SUIT, np.int64), "caballo_bits": int(bb.CABALLO_BITS),
    "contract_value": CONTRACT_VALUE.astype(np.int64),
}


class _ToNumba(ast.NodeTransformer):
    """``K.name`` -> ``_kit_name``; ``rules.option`` -> ``option`` (remembered, in order of use)."""

    def __init__(self):
        self.options: list[str] = []

    def visit_Attribute(self, node):
        if isinstance(node.value, ast.Name) and node.value.id == "K":
            return ast.copy_location(ast.Name(f"_kit_{node.attr}", ast.Load()), node)
        if isinstance(node.value, ast.Name) and node.value.id == "rules":
            if node.attr not in self.options:
                self.options.append(node.attr)
            return ast.copy_location(ast.Name(node.attr, ast.Load()), node)
        return self.generic_visit(node)


def compile_kernel(kernel):
    """``kernel`` of :mod:`cuatrola_env.core` compiled by numba: ``K`` dropped from its
    parameters, ``rules`` replaced by one parameter per option it reads (in order of use)."""
    fn = ast.parse(textwrap.dedent(inspect.getsource(kernel))).body[0]
    if not isinstance(fn, ast.FunctionDef) or not fn.args.args or fn.args.args[0].arg != "K":
        raise ValueError(f"{kernel!r} is not a kernel: a function whose first parameter is the kit K")
    if ast.get_docstring(fn) is not None:
        fn.body = fn.body[1:]
    to_numba = _ToNumba()
    fn = to_numba.visit(fn)
    params = [a.arg for a in fn.args.args]
    names = [o if p == "rules" else p for p in params[1:] for o in (to_numba.options if p == "rules" else [p])]
    fn.args.args = [ast.arg(name) for name in names]
    fn.returns = None
    left = {n.id for n in ast.walk(fn) if isinstance(n, ast.Name)} & {"K", "rules"}
    if left:
        raise ValueError(f"{kernel.__name__} uses {sorted(left)} in a way this compiler does not translate")
    namespace = {**vars(core), **{f"_kit_{k}": v for k, v in NUMBA_KIT.items()}}
    module = ast.fix_missing_locations(ast.Module([fn], type_ignores=[]))
    exec(compile(module, f"<{kernel.__module__}.{kernel.__name__}, compiled>", "exec"), namespace)
    return njit(namespace[kernel.__name__])


legal_play = compile_kernel(core.legal_play)  #: (overtake_when_trumped, must_trump, hand, trick_len, led, ...)
play = compile_kernel(core.play)  #: a card enters the trick: the new (led, best_led, best_trump, win_seat)
next_seat = compile_kernel(core.next_seat)
trick_size = compile_kernel(core.trick_size)  #: cards in each trick: 4, or 3 when a seat sits out
trick_points = compile_kernel(core.trick_points)  #: a finished trick's card points, the last trick's 10 included
cante = compile_kernel(core.cante)  #: (caballo bit sung or 0, its points, its suit or -1)

__all__ = ["NUMBA_KIT", "cante", "compile_kernel", "legal_play", "next_seat", "play", "trick_points", "trick_size"]
