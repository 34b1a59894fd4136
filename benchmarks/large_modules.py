"""Large HLO modules shaped like a training step, for profiling the Python
lowering (``python -m benchmarks.large_modules --profile``) and for the test
that its cost grows linearly (``tests/passes/test_lowering_growth.py``).

:func:`training_step_hlo` writes the HLO text jax emits for one step of an
MLP with layer norm trained by Adam, ``layers`` layers deep:

* forward, per layer: ``dot`` + bias (``broadcast``, ``add``), ``tanh``,
  layer norm (two ``reduce``s over the features, ``broadcast``s,
  ``rsqrt``, scale and shift);
* backward, per layer: the layer norm's and tanh's gradients (elementwise
  chains, ``reduce``s), the two ``dot``s of the linear layer's gradient;
* an Adam update per parameter (weights, bias, scale, shift): moments,
  bias correction, ``sqrt``, division — scalar constants broadcast, as jax
  writes them, many of them equal (CSE's work);
* a ``while`` loop (the step counter and a learning-rate schedule, tuple and
  ``get-tuple-element``) and a gradient-norm loop over a few chunks;
* every parameter, moment and the batch are entry parameters; the result is
  the tuple of the new parameters, moments and the loss.

About 190 instructions per layer: ``layers_for(n)`` gives the depth for
roughly ``n`` instructions.  The text only uses ops xlac compiles, so
``xlac.jit`` of it runs (small feature sizes keep the kernels cheap).
"""
from __future__ import annotations

import argparse
import cProfile
import gc
import pstats
import sys
import time

#: Instructions per layer of :func:`training_step_hlo` (measured: the entry
#: grows by this much per layer; fixed overhead aside).
PER_LAYER = 190


class _Text:
    """An HLO computation written line by line, with fresh names."""

    def __init__(self):
        self.lines: list[str] = []
        self.count = 0

    def op(self, shape: str, opcode: str, *operands: str, attrs: str = "", base: str = "") -> str:
        self.count += 1
        name = f"{base or opcode.replace('-', '_')}.{self.count}"
        tail = f", {attrs}" if attrs else ""
        self.lines.append(f"  {name} = {shape} {opcode}({', '.join(operands)}){tail}")
        return name

    def const(self, shape: str, value) -> str:
        self.count += 1
        name = f"constant.{self.count}"
        self.lines.append(f"  {name} = {shape} constant({value})")
        return name


def _scalar_bcast(t: _Text, value, shape: str, dims: str = "{}") -> str:
    """A scalar f32 constant broadcast to ``shape`` (jax writes one per use)."""
    c = t.const("f32[]", value)
    return t.op(shape, "broadcast", c, attrs=f"dimensions={dims}")


def _layer_norm(t: _Text, x: str, gamma: str, beta: str, batch: int, width: int):
    """Forward layer norm over the features; returns (out, normed, rstd)."""
    bw, b = f"f32[{batch},{width}]", f"f32[{batch}]"
    zero = t.const("f32[]", 0)
    s = t.op(b, "reduce", x, zero, attrs="dimensions={1}, to_apply=region_add")
    mean = t.op(b, "divide", s, t.op(b, "broadcast", t.const("f32[]", float(width)), attrs="dimensions={}"))
    centred = t.op(bw, "subtract", x, t.op(bw, "broadcast", mean, attrs="dimensions={0}"))
    sq = t.op(bw, "multiply", centred, centred)
    var_sum = t.op(b, "reduce", sq, t.const("f32[]", 0), attrs="dimensions={1}, to_apply=region_add")
    var = t.op(b, "divide", var_sum, t.op(b, "broadcast", t.const("f32[]", float(width)), attrs="dimensions={}"))
    eps = t.op(b, "add", var, t.op(b, "broadcast", t.const("f32[]", 1e-05), attrs="dimensions={}"))
    rstd = t.op(b, "rsqrt", eps)
    normed = t.op(bw, "multiply", centred, t.op(bw, "broadcast", rstd, attrs="dimensions={0}"))
    scaled = t.op(bw, "multiply", normed, t.op(bw, "broadcast", gamma, attrs="dimensions={1}"))
    out = t.op(bw, "add", scaled, t.op(bw, "broadcast", beta, attrs="dimensions={1}"))
    return out, normed, rstd


def _adam(t: _Text, p: str, g: str, m: str, v: str, shape: str, dims: str, lr: str):
    """One Adam update; returns (new p, new m, new v).  ``lr`` is an f32[] value."""
    b1 = _scalar_bcast(t, 0.9, shape)
    m1 = t.op(shape, "multiply", b1, m)
    g1 = t.op(shape, "multiply", _scalar_bcast(t, 0.1, shape), g)
    new_m = t.op(shape, "add", m1, g1)
    gg = t.op(shape, "multiply", g, g)
    v1 = t.op(shape, "multiply", _scalar_bcast(t, 0.999, shape), v)
    g2 = t.op(shape, "multiply", _scalar_bcast(t, 0.001, shape), gg)
    new_v = t.op(shape, "add", v1, g2)
    m_hat = t.op(shape, "divide", new_m, _scalar_bcast(t, 0.1, shape))
    v_hat = t.op(shape, "divide", new_v, _scalar_bcast(t, 0.001, shape))
    root = t.op(shape, "sqrt", v_hat)
    denom = t.op(shape, "add", root, _scalar_bcast(t, 1e-08, shape))
    step = t.op(shape, "divide", m_hat, denom)
    scaled = t.op(shape, "multiply", t.op(shape, "broadcast", lr, attrs="dimensions={}"), step)
    new_p = t.op(shape, "subtract", p, scaled)
    return new_p, new_m, new_v


def _entry(layers: int, batch: int, width: int) -> tuple[list[str], list[str]]:
    """The entry computation's lines and its result names."""
    t = _Text()
    bw, w2, vec = f"f32[{batch},{width}]", f"f32[{width},{width}]", f"f32[{width}]"
    params = []

    def parameter(shape: str, base: str) -> str:
        name = f"{base}.{len(params)}"
        t.lines.append(f"  {name} = {shape} parameter({len(params)})")
        params.append(name)
        return name

    x = parameter(bw, "x")
    y = parameter(bw, "y")
    step0 = parameter("s32[]", "step")
    layer_params = []
    for _ in range(layers):
        names = {}
        for kind, shape in (("w", w2), ("b", vec), ("gamma", vec), ("beta", vec)):
            names[kind] = [parameter(shape, kind), parameter(shape, f"m_{kind}"), parameter(shape, f"v_{kind}")]
        layer_params.append(names)

    # The learning-rate schedule: a while loop counting to the step (tuple, get-tuple-element).
    init = t.op("(s32[], f32[])", "tuple", step0, t.const("f32[]", 0.001))
    loop = t.op("(s32[], f32[])", "while", init, attrs="condition=schedule_cond, body=schedule_body")
    lr = t.op("f32[]", "get-tuple-element", loop, attrs="index=1")

    # Forward.
    acts, saved = [x], []
    h = x
    for p in layer_params:
        z = t.op(bw, "dot", h, p["w"][0], attrs="lhs_contracting_dims={1}, rhs_contracting_dims={0}")
        z = t.op(bw, "add", z, t.op(bw, "broadcast", p["b"][0], attrs="dimensions={1}"))
        a = t.op(bw, "tanh", z)
        h, normed, rstd = _layer_norm(t, a, p["gamma"][0], p["beta"][0], batch, width)
        saved.append((a, normed, rstd))
        acts.append(h)
    diff = t.op(bw, "subtract", h, y)
    loss = t.op("f32[]", "reduce", t.op(bw, "multiply", diff, diff), t.const("f32[]", 0),
                attrs="dimensions={0,1}, to_apply=region_add")

    # Backward.
    grad = t.op(bw, "multiply", diff, _scalar_bcast(t, 2.0 / (batch * width), bw))
    grads = [None] * layers
    for i in reversed(range(layers)):
        p, (a, normed, rstd) = layer_params[i], saved[i]
        zero = t.const("f32[]", 0)
        g_beta = t.op(vec, "reduce", grad, zero, attrs="dimensions={0}, to_apply=region_add")
        g_gamma = t.op(vec, "reduce", t.op(bw, "multiply", grad, normed), t.const("f32[]", 0),
                       attrs="dimensions={0}, to_apply=region_add")
        g_norm = t.op(bw, "multiply", grad, t.op(bw, "broadcast", p["gamma"][0], attrs="dimensions={1}"))
        mean_g = t.op(f"f32[{batch}]", "reduce", g_norm, t.const("f32[]", 0),
                      attrs="dimensions={1}, to_apply=region_add")
        mean_gn = t.op(f"f32[{batch}]", "reduce", t.op(bw, "multiply", g_norm, normed), t.const("f32[]", 0),
                       attrs="dimensions={1}, to_apply=region_add")
        inv_w = _scalar_bcast(t, 1.0 / width, f"f32[{batch}]")
        mean_g = t.op(f"f32[{batch}]", "multiply", mean_g, inv_w)
        mean_gn = t.op(f"f32[{batch}]", "multiply", mean_gn, inv_w)
        g_a = t.op(bw, "subtract", g_norm, t.op(bw, "broadcast", mean_g, attrs="dimensions={0}"))
        g_a = t.op(bw, "subtract", g_a, t.op(bw, "multiply", normed,
                                              t.op(bw, "broadcast", mean_gn, attrs="dimensions={0}")))
        g_a = t.op(bw, "multiply", g_a, t.op(bw, "broadcast", rstd, attrs="dimensions={0}"))
        # tanh' = 1 - a*a
        g_z = t.op(bw, "multiply", g_a, t.op(bw, "subtract", _scalar_bcast(t, 1.0, bw),
                                              t.op(bw, "multiply", a, a)))
        g_b = t.op(vec, "reduce", g_z, t.const("f32[]", 0), attrs="dimensions={0}, to_apply=region_add")
        g_w = t.op(w2, "dot", acts[i], g_z, attrs="lhs_contracting_dims={0}, rhs_contracting_dims={0}")
        grad = t.op(bw, "dot", g_z, p["w"][0], attrs="lhs_contracting_dims={1}, rhs_contracting_dims={1}")
        grads[i] = {"w": g_w, "b": g_b, "gamma": g_gamma, "beta": g_beta}

    # Global gradient norm through a while loop over the layers' bias gradients (a clipping factor).
    sq = [t.op("f32[]", "reduce", t.op(vec, "multiply", g["b"], g["b"]), t.const("f32[]", 0),
               attrs="dimensions={0}, to_apply=region_add") for g in grads]
    total = sq[0]
    for s in sq[1:]:
        total = t.op("f32[]", "add", total, s)
    norm_init = t.op("(s32[], f32[])", "tuple", t.const("s32[]", 0), total)
    norm_loop = t.op("(s32[], f32[])", "while", norm_init, attrs="condition=norm_cond, body=norm_body")
    clip = t.op("f32[]", "get-tuple-element", norm_loop, attrs="index=1")
    lr = t.op("f32[]", "divide", lr, t.op("f32[]", "add", clip, t.const("f32[]", 1.0)))

    # Adam.
    outputs = []
    for p, g in zip(layer_params, grads):
        for kind, shape in (("w", w2), ("b", vec), ("gamma", vec), ("beta", vec)):
            outputs.extend(_adam(t, *p[kind][:1], g[kind], *p[kind][1:], shape, "{}", lr))
    outputs.append(loss)
    next_step = t.op("s32[]", "add", step0, t.const("s32[]", 1))
    outputs.append(next_step)
    return t.lines, outputs


def _result_shape(layers: int, batch: int, width: int) -> str:
    w2, vec = f"f32[{width},{width}]", f"f32[{width}]"
    per_layer = [w2] * 3 + [vec] * 9
    return "(" + ", ".join(per_layer * layers + ["f32[]", "s32[]"]) + ")"


_HELPERS = """\
region_add {
  a = f32[] parameter(0)
  b = f32[] parameter(1)
  ROOT s = f32[] add(a, b)
}

schedule_cond {
  p = (s32[], f32[]) parameter(0)
  i = s32[] get-tuple-element(p), index=0
  zero = s32[] constant(0)
  ROOT gt = pred[] compare(i, zero), direction=GT
}

schedule_body {
  p = (s32[], f32[]) parameter(0)
  i = s32[] get-tuple-element(p), index=0
  lr = f32[] get-tuple-element(p), index=1
  one = s32[] constant(1)
  next = s32[] subtract(i, one)
  decay = f32[] constant(0.999)
  lr2 = f32[] multiply(lr, decay)
  ROOT t = (s32[], f32[]) tuple(next, lr2)
}

norm_cond {
  p = (s32[], f32[]) parameter(0)
  i = s32[] get-tuple-element(p), index=0
  four = s32[] constant(4)
  ROOT lt = pred[] compare(i, four), direction=LT
}

norm_body {
  p = (s32[], f32[]) parameter(0)
  i = s32[] get-tuple-element(p), index=0
  s = f32[] get-tuple-element(p), index=1
  one = s32[] constant(1)
  next = s32[] add(i, one)
  root = f32[] sqrt(s)
  half = f32[] constant(0.5)
  avg = f32[] multiply(root, half)
  mixed = f32[] add(avg, half)
  ROOT t = (s32[], f32[]) tuple(next, mixed)
}
"""


def training_step_hlo(layers: int, batch: int = 4, width: int = 8) -> str:
    """HLO text of one Adam training step of a ``layers``-deep MLP with layer
    norm (batch ``batch``, ``width`` features); see the module docstring."""
    if layers < 1:
        raise ValueError(f"layers must be at least 1, got {layers}")
    lines, outputs = _entry(layers, batch, width)
    result = _result_shape(layers, batch, width)
    body = "\n".join(lines)
    return (f"HloModule train_step_{layers}\n\n{_HELPERS}\nENTRY main {{\n{body}\n"
            f"  ROOT result = {result} tuple({', '.join(outputs)})\n}}\n")


def logaddexp_scan_hlo(steps: int) -> str:
    """A scan jax unrolled ``steps`` times, as in XLA's concat test module
    that compiled for ever: slices of a concatenate of reshapes of the input
    feed each step, which takes a numerically safe logaddexp of two sums of
    the previous step's value (``is-finite``, ``abs``, ``exponential``,
    ``log-plus-one``, ``select``).  Every step's value is read by several
    ops whose results meet again, so paths through a fusion fork and join
    once per step (``tests/passes/test_lowering_growth.py``)."""
    if steps < 1:
        raise ValueError(f"steps must be >= 1, got {steps}")
    t = ["  p = f32[4,2]{1,0} parameter(0)",
         "  r0 = f32[4,2,1]{2,1,0} reshape(p)",
         "  r1 = f32[4,2,1]{2,1,0} bitcast(p)",
         "  cat = f32[4,2,2]{2,1,0} concatenate(r0, r1), dimensions={2}",
         "  inf = f32[] constant(inf)",
         "  binf = f32[4]{0} broadcast(inf), dimensions={}",
         "  first = f32[4,1,1]{2,1,0} slice(cat), slice={[0:4], [0:1], [0:1]}",
         "  v0 = f32[4]{0} reshape(first)"]
    for k in range(steps):
        v, w = f"v{k}", f"v{k + 1}"
        t += [f"  sa{k} = f32[4,1,1]{{2,1,0}} slice(cat), slice={{[0:4], [{k % 2}:{k % 2 + 1}], [1:2]}}",
              f"  ra{k} = f32[4]{{0}} reshape(sa{k})",
              f"  a{k} = f32[4]{{0}} add({v}, ra{k})",
              f"  sb{k} = f32[4,1,1]{{2,1,0}} slice(cat), slice={{[0:4], [{k % 2}:{k % 2 + 1}], [0:1]}}",
              f"  rb{k} = f32[4]{{0}} bitcast(sb{k})",
              f"  b{k} = f32[4]{{0}} add({v}, rb{k})",
              f"  d{k} = f32[4]{{0}} subtract(a{k}, b{k})",
              f"  fin{k} = pred[4]{{0}} is-finite(d{k})",
              f"  nf{k} = pred[4]{{0}} not(fin{k})",
              f"  ad{k} = f32[4]{{0}} abs(d{k})",
              f"  eq{k} = pred[4]{{0}} compare(ad{k}, binf), direction=EQ",
              f"  ne{k} = pred[4]{{0}} not(eq{k})",
              f"  c{k} = pred[4]{{0}} and(nf{k}, ne{k})",
              f"  s{k} = f32[4]{{0}} add(a{k}, b{k})",
              f"  m{k} = f32[4]{{0}} maximum(a{k}, b{k})",
              f"  n{k} = f32[4]{{0}} negate(ad{k})",
              f"  e{k} = f32[4]{{0}} exponential(n{k})",
              f"  l{k} = f32[4]{{0}} log-plus-one(e{k})",
              f"  ml{k} = f32[4]{{0}} add(m{k}, l{k})",
              f"  {w} = f32[4]{{0}} select(c{k}, s{k}, ml{k})"]
    t += ["  zero = f32[] constant(0)",
          f"  ROOT sum = f32[] reduce(v{steps}, zero), dimensions={{0}}, to_apply=add"]
    return ("HloModule logaddexp_scan\n\nadd {\n  x = f32[] parameter(0)\n  y = f32[] parameter(1)\n"
            "  ROOT s = f32[] add(x, y)\n}\n\nENTRY main {\n" + "\n".join(t) + "\n}\n")


def layers_for(instructions: int) -> int:
    """The depth that gives about ``instructions`` instructions."""
    return max(1, round(instructions / PER_LAYER))


def instruction_count(text: str) -> int:
    """Instructions in HLO text (lines with ``=`` inside a computation)."""
    return sum(1 for line in text.splitlines() if line.startswith("  ") and " = " in line)


# -- profiling ---------------------------------------------------------------------


def _clock() -> float:
    """CPU seconds of this thread: lowering is single-threaded Python, and
    neither other jobs on the machine nor other threads of the process (a
    thread pool waking up) count, as they would in wall or process time."""
    return time.thread_time()


class _TimedPass:
    """A pass that adds its CPU seconds to ``times[name]`` (wraps another)."""

    def __init__(self, inner, times: dict):
        self.inner, self.times, self.name = inner, times, inner.name

    def run(self, module) -> bool:
        t0 = _clock()
        try:
            return self.inner.run(module)
        finally:
            self.times[self.name] = self.times.get(self.name, 0.0) + _clock() - t0


def _timed_pipeline(pipeline, times: dict):
    """``pipeline`` with every pass (nested pipelines' too) wrapped in :class:`_TimedPass`."""
    from xlac.passes.pipeline import Pipeline
    pipeline.passes = [_timed_pipeline(p, times) if isinstance(p, Pipeline) else _TimedPass(p, times)
                       for p in pipeline.passes]
    return pipeline


def phase_times(text: str, repeat: int = 1) -> dict:
    """CPU seconds (:func:`_clock`) of each Python phase from text to LLVM IR,
    best of ``repeat``: ``parse``, ``verify``, every pass of the codegen
    pipeline by name, ``emission`` (the rest of ``lower``: its own verify
    and clone, buffer assignment, LLVM IR), ``total``; and
    ``buffer-assignment (again)``, timed apart on the optimised module (not
    in the total)."""
    from xlac.codegen import compiler
    from xlac.hlo.parser import parse_hlo
    from xlac.hlo.verifier import verify
    from xlac.passes.buffer_assignment import BufferAssignment

    best: dict = {}
    make_pipeline = compiler.codegen_pipeline
    for _ in range(repeat):
        times: dict = {}
        # Collections are made outside the timed phases: parse and lower
        # pause the collector (``gc_paused``), and the collection that follows
        # would otherwise land in whichever phase runs next.
        gc.collect()
        t0 = _clock()
        module = parse_hlo(text)
        times["parse"] = _clock() - t0
        gc.collect()
        t0 = _clock()
        verify(module)
        times["verify"] = _clock() - t0
        compiler.codegen_pipeline = lambda **kw: _timed_pipeline(make_pipeline(**kw), times)
        gc.collect()
        try:
            t0 = _clock()
            lowered = compiler.lower(module)
            lower_s = _clock() - t0
        finally:
            compiler.codegen_pipeline = make_pipeline
        passes_s = sum(times.values()) - times["parse"] - times["verify"]
        gc.collect()
        t0 = _clock()
        BufferAssignment(lowered.hlo)
        times["buffer-assignment (again)"] = _clock() - t0
        times["emission"] = lower_s - passes_s
        times["total"] = times["parse"] + times["verify"] + lower_s
        for k, v in times.items():
            best[k] = min(best.get(k, v), v)
    return best


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("sizes", nargs="*", type=int,
                    help="instruction counts (default 5k 10k 20k 50k, none when --file is given)")
    ap.add_argument("--file", action="append", default=[], help="also time these HLO files")
    ap.add_argument("--repeat", type=int, default=3, help="best of this many (default 3)")
    ap.add_argument("--profile", metavar="OUT", help="cProfile the largest run into OUT (pstats)")
    args = ap.parse_args(argv)
    sizes = args.sizes or ([] if args.file else [5000, 10000, 20000, 50000])
    cases = [(f"train_step ~{n}", training_step_hlo(layers_for(n))) for n in sizes]
    for path in args.file:
        with open(path, encoding="utf-8") as fh:
            cases.append((path, fh.read()))
    for label, text in cases:
        times = phase_times(text, args.repeat)
        print(f"{label}: {instruction_count(text)} instructions (CPU seconds, best of {args.repeat})")
        for k, v in sorted(times.items(), key=lambda kv: -kv[1]):
            print(f"  {k:28s} {v:8.3f}")
        sys.stdout.flush()
    if args.profile:
        from xlac.hlo.parser import parse_hlo
        from xlac.codegen.compiler import lower
        label, text = cases[-1]
        prof = cProfile.Profile()
        prof.enable()
        lower(parse_hlo(text))
        prof.disable()
        prof.dump_stats(args.profile)
        pstats.Stats(prof).sort_stats("cumulative").print_stats(40)
    return 0


if __name__ == "__main__":
    from xlac.cli import utf8_stdout
    utf8_stdout()                  # reports are Markdown in UTF-8, whatever the locale
    sys.exit(main())
