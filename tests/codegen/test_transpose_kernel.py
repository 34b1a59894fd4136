"""The in-register transpose kernel (xlac/codegen/kernels/transpose.py) against numpy."""
import itertools

import ml_dtypes
import numpy as np
import pytest

import xlac
from xlac import ops
from xlac.codegen.compiler import lower
from xlac.codegen.kernels.transpose import plan_for

DTYPES = [(xlac.U8, np.uint8), (xlac.S8, np.int8), (xlac.F16, np.float16),
          (xlac.BF16, ml_dtypes.bfloat16), (xlac.F32, np.float32), (xlac.S32, np.int32),
          (xlac.F64, np.float64), (xlac.S64, np.int64), (xlac.C64, np.complex64)]


def _array(shape, npdt, seed=0):
    rng = np.random.default_rng(seed)
    x = (rng.random(shape) * 100 - 50).astype(npdt)
    if np.issubdtype(npdt, np.complexfloating):
        x = x + 1j * rng.random(shape).astype(npdt)
    return x


def _transpose(shape, perm, xdt):
    b = xlac.XlaBuilder("transpose")
    p = ops.parameter(b, 0, xlac.Shape(xdt, shape), "x")
    return b.build(ops.transpose(p, list(perm)))


def _check(shape, perm, xdt, npdt, threads):
    x = _array(shape, npdt)
    got = xlac.jit(_transpose(shape, perm, xdt), num_threads=threads)(x)
    want = np.ascontiguousarray(x.transpose(perm))
    assert got.shape == want.shape
    # Bitwise: the kernel moves bytes (NaN payloads, -0.0 included).
    assert np.array_equal(got.view(np.uint8), want.view(np.uint8)), (shape, perm, npdt)


@pytest.mark.parametrize("xdt,npdt", DTYPES, ids=[d[1].__name__ for d in DTYPES])
def test_2d_all_dtypes_odd_sizes(xdt, npdt):
    shapes = [(1, 7), (17, 63), (63, 65), (65, 17), (1000, 3), (130, 200), (257, 64)]
    for k, shape in enumerate(shapes):
        _check(shape, (1, 0), xdt, npdt, threads=1 + k % 2)


@pytest.mark.parametrize("threads", [1, 2])
def test_2d_f32_big_non_temporal(threads):
    # 16 MiB result: written with non-temporal stores (+ scalar edges).
    _check((2048, 2049), (1, 0), xlac.F32, np.float32, threads)


@pytest.mark.parametrize("xdt,npdt", [DTYPES[0], DTYPES[2], DTYPES[4], DTYPES[6]],
                         ids=["u8", "f16", "f32", "f64"])
def test_rank3_all_permutations(xdt, npdt):
    for perm in itertools.permutations(range(3)):
        _check((3, 70, 67), perm, xdt, npdt, threads=2)


@pytest.mark.parametrize("xdt,npdt", [DTYPES[0], DTYPES[3], DTYPES[4], DTYPES[8]],
                         ids=["u8", "bf16", "f32", "c64"])
def test_rank4_batched(xdt, npdt):
    for k, perm in enumerate([(0, 1, 3, 2), (0, 3, 2, 1), (3, 2, 1, 0), (2, 0, 3, 1), (1, 0, 3, 2)]):
        _check((3, 5, 40, 66), perm, xdt, npdt, threads=1 + k % 2)


def test_fast_path_is_taken_and_declines():
    def plan(shape, perm, xdt=xlac.F32):
        inst = _transpose(shape, perm, xdt).module.entry.root
        return plan_for(inst)

    p = plan((64, 128, 128), (0, 2, 1))
    assert p is not None and p.batch == [(64, 128 * 128, 128 * 128)]
    # (2, 0, 1) of [a, b, c]: a and b stay neighbours, one 2-D transpose.
    p = plan((8, 9, 100), (2, 0, 1))
    assert p is not None and p.batch == [] and (p.a, p.b) == (100, 8 * 9)
    assert plan((100, 100), (1, 0), xlac.PRED) is None     # pred: elemental loop
    assert plan((100, 100), (1, 0), xlac.C128) is None     # 16-byte elements
    assert plan((5, 100), (1, 0)) is None                  # smaller than one block
    assert plan((4, 100, 100), (1, 0, 2)) is None          # minor dimension unchanged
    assert plan((0, 100, 100), (0, 2, 1), xlac.C64) is None  # no elements (jax: a batch of none)


def test_no_elements():
    for shape, perm in (((0, 100, 100), (0, 2, 1)), ((100, 0), (1, 0))):
        got = xlac.jit(_transpose(shape, perm, xlac.C64), num_threads=2)(np.zeros(shape, np.complex64))
        assert got.shape == tuple(shape[d] for d in perm)


def test_llvm_ir_uses_vector_shuffles(pinned_target):
    ir = lower(_transpose((256, 256), (1, 0), xlac.F32).module).llvm_ir
    assert f"shufflevector <{pinned_target.vector_bits // 32} x i32>" in ir
    assert "!nontemporal" not in ir  # 256 KiB: stays in cache
    ir = lower(_transpose((2048, 2048), (1, 0), xlac.F32).module).llvm_ir
    # 16 MiB: non-temporal where a block's row vector is a whole cache line
    # (AVX-512); AVX2's half-line vectors keep ordinary stores.
    assert ("!nontemporal" in ir) == (pinned_target.vector_bits >= 512)


COPY_2D = """
HloModule copy2d, entry_computation_layout={(f32[100,70]{1,0})->f32[100,70]{0,1}}

ENTRY main {
  x = f32[100,70]{1,0} parameter(0)
  ROOT c = f32[100,70]{0,1} copy(x)
}
"""

COPY_3D = """
HloModule copy3d, entry_computation_layout={(s16[6,33,40]{2,1,0})->s16[6,33,40]{1,2,0}}

ENTRY main {
  x = s16[6,33,40]{2,1,0} parameter(0)
  ROOT c = s16[6,33,40]{1,2,0} copy(x)
}
"""

COPY_PADDED = """
HloModule copypad, entry_computation_layout={(f32[40,50]{1,0})->f32[40,50]{0,1:P(48,56)}}

ENTRY main {
  x = f32[40,50]{1,0} parameter(0)
  ROOT c = f32[40,50]{0,1:P(48,56)} copy(x)
}
"""


@pytest.mark.parametrize("text,npdt,shape", [(COPY_2D, np.float32, (100, 70)),
                                             (COPY_3D, np.int16, (6, 33, 40)),
                                             (COPY_PADDED, np.float32, (40, 50))],
                         ids=["2d", "3d", "padded"])
@pytest.mark.parametrize("threads", [1, 2])
def test_layout_changing_copy(text, npdt, shape, threads):
    module = xlac.parse_hlo(text)
    x = _array(shape, npdt)
    got = xlac.jit(module, num_threads=threads)(x)
    np.testing.assert_array_equal(np.asarray(got), x)
    assert np.array_equal(xlac.evaluate(module, x), x)


def test_copy_plan():
    module = xlac.parse_hlo(COPY_2D)
    assert plan_for(module.entry.root) is not None
    assert "shufflevector" in lower(module).llvm_ir
    assert plan_for(xlac.parse_hlo(COPY_PADDED).entry.root) is None
