"""The simplify pipeline as a whole: on every corpus module (verifier, same
values before and after), on hypothesis-generated graphs (evaluator and JIT),
and linear compile time."""
import copy
import json
import time
from pathlib import Path

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import xlac
from xlac.codegen.compiler import lower
from passtest import assert_same_values
from xlac.hlo.verifier import verify
from xlac.passes.call_inliner import CallInliner
from xlac.passes.pipeline import Pipeline, simplify_pipeline

CORPUS = Path(__file__).resolve().parents[1] / "hlo_corpus"
CASES = sorted(p.stem for p in CORPUS.glob("*.hlo"))


def _load(name):
    module = xlac.parse_hlo((CORPUS / f"{name}.hlo").read_text(encoding="utf-8"))
    with np.load(CORPUS / f"{name}.npz") as data:
        inputs = [data[f"arr_{k}"] for k in range(len(data.files))]
    return module, inputs


@pytest.mark.parametrize("name", CASES)
def test_corpus_module_simplifies_to_the_same_values(name):
    module, inputs = _load(name)
    simplified = copy.deepcopy(module)
    Pipeline("inline-and-simplify", [CallInliner(), simplify_pipeline(verify=True)], verify=True).run(simplified)
    verify(simplified)
    assert simplified.entry_computation_layout == module.entry_computation_layout
    assert xlac.parse_hlo(simplified.to_text()).to_text() == simplified.to_text()
    try:
        want = xlac.evaluate(module, *inputs)
    except xlac.UnsupportedError as ex:
        pytest.skip(f"evaluator: {ex}")
    assert_same_values(xlac.evaluate(simplified, *inputs), want)
    # Simplification reaches a fixed point: a second run finds nothing left to do.
    again = copy.deepcopy(module)
    simplify_pipeline().run(again)
    assert not simplify_pipeline().run(again)


# ---------------------------------------------------------------------------
# Random graphs: chains of elementwise and data-movement ops, with layouts
# ---------------------------------------------------------------------------

SPECIAL_F32 = np.array([0.0, -0.0, 1.0, -1.5, 2.0, np.inf, -np.inf, np.nan], np.float32)


class _Graph:
    def __init__(self, et):
        self.et = et
        self.lines = []
        self.values = []  # (name, dims)
        self.layout = {}  # name -> minor_to_major as written
        self.k = 0

    def fresh(self, base):
        self.k += 1
        return f"{base}.{self.k}"

    def shape(self, dims, layout=None):
        layout = layout if layout is not None else tuple(range(len(dims) - 1, -1, -1))
        if not dims:
            return f"{self.et}[]"
        return f"{self.et}[{','.join(map(str, dims))}]{{{','.join(map(str, layout))}}}"

    def add(self, base, dims, rhs, layout=None, et=None):
        name = self.fresh(base)
        shape = self.shape(dims, layout) if et is None else self.shape(dims, layout).replace(self.et, et, 1)
        self.lines.append(f"  {name} = {shape} {rhs}")
        if et is None:
            self.values.append((name, tuple(dims)))
            self.layout[name] = layout
        return name


def _layouts(draw, rank):
    if rank <= 1 or draw(st.booleans()):
        return None
    return tuple(draw(st.permutations(range(rank))))


@st.composite
def graphs(draw):
    et = draw(st.sampled_from(["f32", "f32", "s32"]))
    g = _Graph(et)
    dims = tuple(draw(st.lists(st.integers(1, 3), min_size=0, max_size=3)))
    p_layout = _layouts(draw, len(dims))
    g.lines.append(f"  p0 = {g.shape(dims, p_layout)} parameter(0)")
    g.values.append(("p0", dims))
    g.layout["p0"] = p_layout
    consts = ["0", "-0", "1", "2"] if et == "f32" else ["0", "1", "-1", "3"]
    for _ in range(draw(st.integers(1, 10))):
        x, xd = g.values[-1] if draw(st.booleans()) else draw(st.sampled_from(g.values))
        lay = _layouts(draw, len(xd))
        kind = draw(st.sampled_from(["unary", "negate2", "const", "self", "transpose", "reshape",
                                     "broadcast", "slice", "pad", "concat", "convert", "select",
                                     "copy", "reduce0"]))
        if kind == "unary":
            g.add("u", xd, f"{draw(st.sampled_from(['negate', 'abs']))}({x})", lay)
        elif kind == "negate2":
            a = g.add("n", xd, f"negate({x})", lay)
            g.add("n", xd, f"negate({a})", _layouts(draw, len(xd)))
        elif kind == "const":
            c = g.add("c", (), f"constant({draw(st.sampled_from(consts))})")
            g.values.pop()
            cb = g.add("cb", xd, f"broadcast({c}), dimensions={{}}")
            ops = ["add", "subtract", "multiply", "maximum"] + (["divide"] if et == "f32" else ["and", "or"])
            op = draw(st.sampled_from(ops))
            lhs, rhs = (x, cb) if draw(st.booleans()) else (cb, x)
            g.add("b", xd, f"{op}({lhs}, {rhs})", lay)
        elif kind == "self":
            same = [v for v, d in g.values if d == xd]
            y = draw(st.sampled_from(same))
            g.add("s", xd, f"{draw(st.sampled_from(['add', 'maximum', 'minimum', 'multiply']))}({x}, {y})", lay)
        elif kind == "transpose":
            perm = tuple(draw(st.permutations(range(len(xd)))))
            g.add("t", tuple(xd[p] for p in perm), f"transpose({x}), dimensions={{{','.join(map(str, perm))}}}", lay)
        elif kind == "reshape":
            n = int(np.prod(xd))
            target = draw(st.sampled_from([xd, tuple(reversed(xd)), (n,), (1, n), (n, 1)]))
            g.add("r", target, f"reshape({x})", _layouts(draw, len(target)))
        elif kind == "broadcast" and len(xd) < 3:
            perm = list(draw(st.permutations(range(len(xd)))))
            pos = draw(st.integers(0, len(xd)))
            order = perm[:pos] + [None] + perm[pos:]
            out = tuple(2 if o is None else xd[o] for o in order)
            bdims = [order.index(i) for i in range(len(xd))]
            g.add("bc", out, f"broadcast({x}), dimensions={{{','.join(map(str, bdims))}}}",
                  _layouts(draw, len(out)))
        elif kind == "slice" and xd:
            spec, out = [], []
            for n in xd:
                start = draw(st.integers(0, n - 1)) if draw(st.booleans()) else 0
                spec.append(f"[{start}:{n}]")
                out.append(n - start)
            g.add("sl", tuple(out), f"slice({x}), slice={{{', '.join(spec)}}}", lay if tuple(out) == xd else None)
        elif kind == "pad" and xd:
            z = g.add("z", (), "constant(0)")
            g.values.pop()
            lows = [draw(st.integers(0, 1)) for _ in xd]
            out = tuple(n + lo for n, lo in zip(xd, lows))
            g.add("pd", out, f"pad({x}, {z}), padding={'x'.join(f'{lo}_0' for lo in lows)}")
        elif kind == "concat" and xd:
            g.add("cc", xd, f"concatenate({x}), dimensions={{0}}", lay)
        elif kind == "convert":
            g.add("cv", xd, f"convert({x})", lay)
        elif kind == "select":
            c = g.add("pr", (), f"constant({draw(st.sampled_from(['true', 'false']))})", et="pred")
            y = draw(st.sampled_from([v for v, d in g.values if d == xd]))
            g.add("se", xd, f"select({c}, {x}, {y})", lay)
        elif kind == "copy":
            g.add("cp", xd, f"copy({x})", lay)
        elif kind == "reduce0":
            z = g.add("z", (), f"constant({draw(st.sampled_from(consts))})")
            g.values.pop()
            g.add("rd", xd, f"reduce({x}, {z}), dimensions={{}}, to_apply=red", lay)
    (a, ad), (b, bd) = g.values[-1], draw(st.sampled_from(g.values))
    if draw(st.booleans()):
        # A tuple's shape records its elements' layouts as they are.
        root = (f"  ROOT out = ({g.shape(ad, g.layout[a])}, {g.shape(bd, g.layout[b])}) "
                f"tuple({a}, {b})")
    else:
        root = f"  ROOT out = {g.shape(ad, _layouts(draw, len(ad)))} copy({a})"
    op = draw(st.sampled_from(["add", "maximum", "subtract"]))
    text = "\n".join([f"HloModule random\n\nred {{\n  x = {et}[] parameter(0)\n  y = {et}[] parameter(1)\n"
                      f"  ROOT r = {et}[] {op}(x, y)\n}}\n\nENTRY e {{"] + g.lines + [root, "}"])
    return text, dims, et


def _inputs(dims, et, seed):
    rng = np.random.default_rng(seed)
    n = int(np.prod(dims))
    if et == "f32":
        return [rng.choice(SPECIAL_F32, n).reshape(dims)]
    return [rng.integers(-5, 6, n).astype(np.int32).reshape(dims)]


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(graphs(), st.integers(0, 2**32 - 1))
def test_random_graphs_simplify_to_the_same_values(case, seed):
    text, dims, et = case
    module = xlac.parse_hlo(text)
    verify(module)
    simplified = copy.deepcopy(module)
    simplify_pipeline(verify=True).run(simplified)
    assert simplified.entry_computation_layout == module.entry_computation_layout
    args = _inputs(dims, et, seed)
    assert_same_values(xlac.evaluate(simplified, *args), xlac.evaluate(module, *args))


@settings(max_examples=20, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(graphs(), st.integers(0, 2**32 - 1))
def test_random_graphs_compiled_match_the_evaluator(case, seed):
    """The JIT (which simplifies first) agrees with the evaluator on the original module,
    non-default layouts included.  (Not on the sign of a zero: the JIT's and the
    evaluator's ``maximum(+0.0, -0.0)`` differ, and the spec leaves it open.)"""
    text, dims, et = case
    module = xlac.parse_hlo(text)
    args = _inputs(dims, et, seed)
    try:
        got = xlac.jit(module)(*args)
    except xlac.UnsupportedError as ex:
        pytest.skip(str(ex))
    assert_same_values(got, xlac.evaluate(module, *args), signed_zeros=False)


# ---------------------------------------------------------------------------
# Linear compile time
# ---------------------------------------------------------------------------

def _chain(n):
    ops = ["multiply({}, one)", "negate({})", "negate({})", "add({}, p1)", "exponential({})",
           "add({}, zero)", "maximum({}, {})"]
    lines = ["HloModule chain", "", "ENTRY e {", "  p0 = f32[8]{0} parameter(0)",
             "  p1 = f32[8]{0} parameter(1)", "  c1 = f32[] constant(1)",
             "  one = f32[8]{0} broadcast(c1), dimensions={}", "  cz = f32[] constant(-0)",
             "  zero = f32[8]{0} broadcast(cz), dimensions={}"]
    prev = "p0"
    for i in range(n):
        lines.append(f"  v{i} = f32[8]{{0}} " + ops[i % len(ops)].format(prev, prev))
        prev = f"v{i}"
    lines += [f"  ROOT r = f32[8]{{0}} negate({prev})", "}"]
    return "\n".join(lines) + "\n"


def _best_time(fn, repeat=3):
    # CPU time of this process: other jobs on the machine do not count.
    best = float("inf")
    for _ in range(repeat):
        t = time.process_time()
        fn()
        best = min(best, time.process_time() - t)
    return best


def test_compile_time_is_linear():
    per_inst = {}
    for n in (100, 1000, 10000):
        text = _chain(n)
        parse_print = _best_time(lambda: xlac.parse_hlo(text).to_text())

        def simplify():
            m = xlac.parse_hlo(text)
            t = time.process_time()
            simplify_pipeline().run(m)
            return time.process_time() - t

        simp = min(simplify() for _ in range(3))
        # The whole lowering: every pass (fusion included), buffer assignment, LLVM IR emission.
        module = xlac.parse_hlo(text)
        low = _best_time(lambda: lower(module), repeat=3)
        per_inst[n] = (parse_print / n, simp / n, low / n)
    # 100 only warms up; from 1,000 to 10,000 the time per instruction stays
    # about flat (a quadratic pass would make it 10x).  Lowering's grows ~1.6x
    # here (caches, the collector) and reached 3.15x once on a loaded machine:
    # its bound is 4x.
    small, big = per_inst[1000], per_inst[10000]
    assert big[0] < 3 * small[0], f"parse+print per instruction: {small[0]:.2e}s -> {big[0]:.2e}s"
    assert big[1] < 3 * small[1], f"simplify per instruction: {small[1]:.2e}s -> {big[1]:.2e}s"
    assert big[2] < 4 * small[2], f"lowering per instruction: {small[2]:.2e}s -> {big[2]:.2e}s"


def test_chain_simplifies_to_the_same_values():
    module = xlac.parse_hlo(_chain(50))
    simplified = copy.deepcopy(module)
    simplify_pipeline(verify=True).run(simplified)
    assert "multiply" not in simplified.to_text()
    x = np.linspace(-1, 1, 8, dtype=np.float32)
    assert_same_values(xlac.evaluate(simplified, x, x), xlac.evaluate(module, x, x))
