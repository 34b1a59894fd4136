"""bf16 and f16 convolutions on the implicit GEMM
(``convolution.implicit-gemm.widen``): the input widened to f32 by the
feature-minor copy, the kernel by the packing, f32 accumulation in the
task's C block, one rounding to the result type as it is written out.
Checked against the evaluator (f32 sums rounded once), within one unit in
the last place of the result type plus f32 reassociation error."""
import re

import numpy as np
import pytest

import xlac
from xlac.codegen import target
from xlac.codegen.compiler import lower

@pytest.fixture(autouse=True)
def no_native_bf16():
    """A target without native bf16 dot kernels: with them, bf16 x bf16
    convolutions become dots (``test_conv_native.py``)."""
    with target.override(features="-avx512bf16,-amx-bf16"):
        yield


DTYPES = {"bf16": xlac.Shape(xlac.BF16, ()).dtype, "f16": np.float16, "f32": np.float32}
ULP = {"bf16": 2.0 ** -7, "f16": 2.0 ** -10, "f32": 2.0 ** -23}


def conv_text(xt, kt, ot, labels, xs, ks, os_, epilogue=""):
    dims = lambda d: ",".join(map(str, d))    # noqa: E731
    root = "c" if epilogue else "ROOT c"
    lines = [f"  x = {xt}[{dims(xs)}] parameter(0)", f"  k = {kt}[{dims(ks)}] parameter(1)",
             f"  {root} = {ot}[{dims(os_)}] convolution(x, k), window={{size=3x3 pad=1_1x1_1}}, "
             f"dim_labels={labels}"]
    if epilogue:
        lines.append(epilogue)
    return "HloModule m\n\nENTRY e {\n" + "\n".join(lines) + "\n}\n"


def check(text, ot, xt, kt, xs, ks, k_len):
    rng = np.random.default_rng(0)
    x = rng.uniform(-1, 1, xs).astype(DTYPES[xt])
    k = rng.uniform(-1, 1, ks).astype(DTYPES[kt])
    exe = xlac.jit(text)
    got = np.asarray(exe(x, k)).astype(np.float64)
    want = np.asarray(xlac.evaluate(text, x, k)).astype(np.float64)
    err = np.abs(got - want)
    bound = ULP[ot] * np.abs(want) + 4e-7 * k_len + 1e-30
    assert np.all(err <= bound), f"max error {err.max()}"
    return exe


NHWC = ("b01f_01io->b01f", (2, 9, 10, 24), (3, 3, 24, 40), (2, 9, 10, 40))
NCHW = ("bf01_oi01->bf01", (2, 24, 9, 10), (40, 24, 3, 3), (2, 40, 9, 10))


@pytest.mark.parametrize("layout", [NHWC, NCHW], ids=["nhwc", "nchw"])
@pytest.mark.parametrize("xt,kt,ot", [("bf16", "bf16", "bf16"), ("f16", "f16", "f16"), ("bf16", "bf16", "f32"),
                                      ("f16", "f16", "f32"), ("bf16", "f32", "bf16"), ("f32", "f16", "f16")])
def test_types_and_layouts_match_the_evaluator(xt, kt, ot, layout):
    labels, xs, ks, os_ = layout
    text = conv_text(xt, kt, ot, labels, xs, ks, os_)
    exe = check(text, ot, xt, kt, xs, ks, 9 * 24)
    assert re.search(r"xlac_gemm_\w+_conv\w+_uk", exe.optimized_llvm_ir)   # the implicit GEMM's micro-kernel
    if xt == kt != "f32":
        notes = [str(d) for d in lower(xlac.parse_hlo(text)).hlo.diagnostics if d.source == "kernel-choice"]
        (note,) = notes
        # (After the 8-bit AMX kernel's reason, where it is registered first.)
        assert re.match(r"kernel \S+: convolution.implicit-gemm.widen \((not convolution.amx: [^;]*; )?"
                        r"not convolution.implicit-gemm: bf16/f16/f8/f4", note), note


def test_bias_relu_epilogue_sees_the_rounded_convolution():
    labels, xs, ks, os_ = NHWC
    epi = ("  z = bf16[] constant(0)\n  zb = bf16[2,9,10,40] broadcast(z), dimensions={}\n"
           "  ROOT r = bf16[2,9,10,40] maximum(c, zb)")
    check(conv_text("bf16", "bf16", "bf16", labels, xs, ks, os_, epi), "bf16", "bf16", "bf16", xs, ks, 9 * 24)


def test_a_narrow_nhwc_result_is_written_out_by_vectors():
    """The C block of an f16 result with unit-stride features is written row by
    row, so the rounding and the stores are vectorised (column by column, it
    was scalar: 5x the convolution's own time on 8x32x32x64)."""
    text = conv_text("f16", "f16", "f16", "b01f_01io->b01f", (2, 8, 8, 64), (3, 3, 64, 64), (2, 8, 8, 64))
    ir_text = xlac.jit(text).optimized_llvm_ir
    assert re.search(r"store <\d+ x (i16|half)>", ir_text)    # integer rounding or F16C's
