"""rng-bit-generator (spec: RngBitGenerator) in every stage: XLA:CPU's bits, bit
for bit (the HLO jax emits and its outputs, ``data/``, written by
``data/generate.py``), from the evaluator and from compiled code; the
builder, the shape rule and its errors, HLO text."""
import json
from pathlib import Path

import numpy as np
import pytest

import xlac
from xlac import ops
from xlac.hlo import rng

DATA = Path(__file__).resolve().parent / "data"
MANIFEST = json.loads((DATA / "manifest.json").read_text(encoding="utf-8"))
SHAPES = [tuple(s) for s in MANIFEST["shapes"]]
CASES = [c["name"] for c in MANIFEST["cases"]]


def _runs(name: str):
    """[(state, [expected outputs])] of case ``name``."""
    case = next(c for c in MANIFEST["cases"] if c["name"] == name)
    with np.load(DATA / f"{name}.npz") as z:
        return [(z[f"state_{k}"], [z[f"out_{k}_{j}"] for j in range(2 * len(SHAPES))])
                for k in range(case["states"])]


def _assert_bits(got, want, what):
    assert len(got) == len(want), what
    for j, (g, w) in enumerate(zip(got, want)):
        g = np.asarray(g)
        assert g.dtype == w.dtype and g.shape == w.shape, f"{what} output {j}: {g.dtype}{g.shape} vs {w.dtype}{w.shape}"
        assert np.array_equal(g, w), f"{what} output {j} (shape {SHAPES[j // 2]}): {g.ravel()[:6]} vs {w.ravel()[:6]}"


def test_the_data_covers_what_it_says():
    assert len(CASES) == 15
    assert {(), (7,), (3, 5), (2, 3, 5), (0,)} <= set(SHAPES)
    for name in CASES:
        text = (DATA / f"{name}.hlo").read_text(encoding="utf-8")
        assert text.count("rng-bit-generator(") == len(SHAPES), name


@pytest.mark.parametrize("name", CASES)
def test_compiled_code_gives_xlas_bits(name):
    text = (DATA / f"{name}.hlo").read_text(encoding="utf-8")
    exe = xlac.jit(text)
    for k, (state, want) in enumerate(_runs(name)):
        _assert_bits(exe(state), want, f"{name} state {k}")


@pytest.mark.parametrize("name", CASES)
def test_evaluator_gives_xlas_bits(name):
    text = (DATA / f"{name}.hlo").read_text(encoding="utf-8")
    for k, (state, want) in enumerate(_runs(name)):
        _assert_bits(xlac.evaluate(text, state), want, f"{name} state {k}")


def test_numpy_reference_matches_every_shape_alone():
    # xlac.hlo.rng.rng_bit_generator is what the evaluator runs.
    for name in ("three_fry_u32", "philox_u64", "philox_state3_u8"):
        alg = "rng_three_fry" if name.startswith("three") else "rng_philox"
        width = int(name.rsplit("_u", 1)[1])
        for state, want in _runs(name):
            for j, dims in enumerate(SHAPES):
                new_state, bits = rng.rng_bit_generator(alg, state, dims, width)
                assert np.array_equal(new_state, want[2 * j]) and np.array_equal(bits, want[2 * j + 1])


def _module(alg: str, state: str, bits: str, layout: str = "") -> str:
    return (f"HloModule m\nENTRY e {{\n  s = {state} parameter(0)\n"
            f"  ROOT r = ({state}, {bits}{layout}) rng-bit-generator(s), algorithm={alg}\n}}\n")


@pytest.mark.parametrize("alg, state", [("rng_three_fry", "u64[2]"), ("rng_philox", "u64[3]")])
def test_unoptimised_code_gives_the_same_bits(alg, state):
    text = _module(alg, state, "u32[3,5]")
    s = np.array([7, 2 ** 64 - 3, 5][:int(state[4])], np.uint64)
    want = xlac.evaluate(text, s)
    _assert_bits(xlac.jit(text, optimize=False)(s), list(want), alg)


@pytest.mark.parametrize("alg", ["rng_three_fry", "rng_philox"])
def test_big_output_split_into_parallel_tasks(alg):
    # 600 x 301 elements: above the threshold that splits a loop into tasks.
    text = _module(alg, "u64[2]", "u32[600,301]")
    s = np.array([123, 456], np.uint64)
    want = xlac.evaluate(text, s)
    _assert_bits(xlac.jit(text)(s), list(want), alg)
    _assert_bits(xlac.jit(text, num_threads=1)(s), list(want), alg)


@pytest.mark.parametrize("alg, bits", [("rng_three_fry", "u32[4,3,2]"), ("rng_philox", "u64[5,3]"),
                                       ("rng_three_fry", "u64[2,5]")])
def test_non_default_result_layout(alg, bits):
    rank = bits.count(",") + 1
    layout = "{" + ",".join(str(d) for d in range(rank)) + "}"     # column-major
    text = _module(alg, "u64[2]", bits, layout)
    s = np.array([1, 2], np.uint64)
    want = xlac.evaluate(text, s)
    got = xlac.jit(text)(s)
    _assert_bits(got, list(want), alg)
    # The same bits as the row-major module: a layout changes where they are stored only.
    _assert_bits(got, list(xlac.evaluate(_module(alg, "u64[2]", bits), s)), alg)


def test_expands_into_one_loop_per_result():
    from xlac.codegen.compiler import lower
    lowered = lower(xlac.parse_hlo(_module("rng_philox", "u64[2]", "u32[16,16]")))
    opcodes = [i.opcode for i in lowered.hlo.entry.instructions]
    assert "rng-bit-generator" not in opcodes
    assert opcodes.count("fusion") == 2       # the bits, the new state


# -- the builder ------------------------------------------------------------------------

def _build(state_shape: str, shape, algorithm="rng_default"):
    b = xlac.XlaBuilder("rbg")
    s = ops.parameter(b, 0, xlac.shape(state_shape), "state")
    return b.build(ops.rng_bit_generator(s, shape, algorithm))


@pytest.mark.parametrize("algorithm, name", [("rng_three_fry", "rng_three_fry"), ("THREE_FRY", "rng_three_fry"),
                                             ("philox", "rng_philox"), ("RNG_DEFAULT", "rng_default")])
def test_builder_names_the_algorithm_as_hlo_does(algorithm, name):
    comp = _build("u64[2]", "u32[4]", algorithm)
    assert f"algorithm={name}" in comp.as_hlo_text()


def test_builder_takes_jax_random_algorithm_like_enums():
    import enum

    class RandomAlgorithm(enum.IntEnum):
        RNG_DEFAULT = 0
        RNG_THREE_FRY = 1
        RNG_PHILOX = 2

    assert "algorithm=rng_philox" in _build("u64[2]", "u32[4]", RandomAlgorithm.RNG_PHILOX).as_hlo_text()


@pytest.mark.parametrize("requested, made", [("u32", "u32"), ("f32", "u32"), ("s64", "u64"), ("f64", "u64"),
                                             ("u8", "u8"), ("s16", "u16"), ("bf16", "u16")])
def test_builder_makes_the_unsigned_type_of_the_width_asked(requested, made):
    comp = _build("u64[2]", f"{requested}[3,2]")
    assert str(comp.module.entry.root.shape) == f"(u64[2]{{0}}, {made}[3,2]{{1,0}})"


def test_builder_matches_the_data_and_takes_xlas_argument_order():
    state, want = _runs("three_fry_u32")[2]
    j = SHAPES.index((2, 3, 5))
    b = xlac.XlaBuilder("rbg")
    s = ops.parameter(b, 0, xlac.shape("u64[2]"), "state")
    r = ops.rng_bit_generator("rng_three_fry", s, xlac.Shape(xlac.U32, (2, 3, 5)))   # XLA's order
    comp = b.build(r)
    for got in (xlac.evaluate(comp, state), xlac.jit(comp)(state)):
        _assert_bits(list(got), want[2 * j:2 * j + 2], "builder")


def test_builder_philox_u64_3_state():
    state, want = _runs("philox_state3_u64")[1]
    j = SHAPES.index((13,))
    comp = _build("u64[3]", "u64[13]", "rng_philox")
    _assert_bits(list(xlac.jit(comp)(state)), want[2 * j:2 * j + 2], "philox u64[3]")


@pytest.mark.parametrize("shape, algorithm, error, message", [
    ("pred[3]", "rng_philox", TypeError, "8, 16, 32 or 64-bit"),
    ("c64[3]", "rng_philox", TypeError, "not pred or complex"),
    ("u32[3]", "mersenne", ValueError, "unknown random algorithm 'mersenne'"),
    ("u32[3]", 7, ValueError, "rng_three_fry, rng_philox, rng_default"),
])
def test_builder_argument_errors(shape, algorithm, error, message):
    with pytest.raises(error, match="rng_bit_generator") as info:
        _build("u64[2]", shape, algorithm)
    assert message in str(info.value)


@pytest.mark.parametrize("state, algorithm, message", [
    ("u64[3]", "rng_three_fry", "the state of rng_three_fry must be u64[2], got u64[3]"),
    ("u64[4]", "rng_philox", "the state of rng_philox must be u64[2] or u64[3], got u64[4]"),
    ("u32[2]", "rng_default", "must be u64[2] or u64[3], got u32[2]"),
    ("u64[]", "rng_philox", "got u64[]"),
])
def test_builder_state_shape_errors(state, algorithm, message):
    with pytest.raises(xlac.ShapeError, match="rng-bit-generator") as info:
        _build(state, "u32[4]", algorithm)
    assert message in str(info.value)


# -- HLO text ---------------------------------------------------------------------------

def test_text_round_trip():
    text = (DATA / "philox_state3_u32.hlo").read_text(encoding="utf-8")
    once = xlac.parse_hlo(text).to_text()
    assert "rng-bit-generator(state), algorithm=rng_philox" in once
    assert xlac.parse_hlo(once).to_text() == once


@pytest.mark.parametrize("state, result, message", [
    ("u64[2]", "(u64[2], s32[4])", "the bits must be an array of u8, u16, u32 or u64, got s32[4]"),
    ("u64[2]", "(u64[2], f32[4])", "got f32[4]"),
    ("u64[2]", "(u64[3], u32[4])", "the new state u64[3]"),
    ("u64[2]", "u32[4]", "must be a tuple (new state, bits)"),
    ("u64[2]", "(u64[2], u32[4], u32[4])", "must be a tuple (new state, bits)"),
])
def test_parsed_text_is_verified(state, result, message):
    text = (f"HloModule m\nENTRY e {{\n  s = {state} parameter(0)\n"
            f"  ROOT r = {result} rng-bit-generator(s), algorithm=rng_philox\n}}\n")
    with pytest.raises(xlac.ShapeError, match="rng-bit-generator") as info:
        xlac.jit(text)
    assert message in str(info.value)


def test_unknown_algorithm_in_text_is_an_error():
    with pytest.raises(xlac.ShapeError, match="algorithm=rng_mt19937 is not one of rng_three_fry"):
        xlac.jit(_module("rng_mt19937", "u64[2]", "u32[4]"))
