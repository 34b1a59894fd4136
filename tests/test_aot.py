"""Ahead-of-time compilation: object + header, linked into plain C programs.

Each case is compiled with ``xlac.compile_aot``, linked with a C driver built
by the system C compiler, run on the case's inputs (raw files), and its outputs
are compared bit for bit with ``xlac.jit`` and within the corpus tolerances
with JAX's expected outputs. Skipped (with the reason) only if there is no C
compiler.
"""
from __future__ import annotations

import ctypes
import ctypes.util
import json
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

import xlac
from xlac import aot
from xlac import ops
from xlac.cli import main as cli_main
from xlac.codegen import target as targets
from xlac.runtime import abi
from xlac.shape import from_buffer, to_buffer

ROOT = Path(__file__).resolve().parents[1]
RUNTIME = ROOT / "runtime"
CORPUS = ROOT / "tests" / "hlo_corpus"
CC = next((c for c in (os.environ.get("CC"), "cc", "gcc", "clang") if c and shutil.which(c)), None)
CFLAGS = ["-std=c99", "-pedantic", "-Wall", "-Wextra", "-Werror", "-O1", f"-I{RUNTIME}"]

needs_cc = pytest.mark.skipif(CC is None, reason="no C compiler (cc, gcc or clang) on PATH")
needs_nm = pytest.mark.skipif(shutil.which("nm") is None, reason="no nm (binutils) on PATH")


def _manifest() -> dict:
    if not CORPUS.is_dir():
        return {}
    return {c["name"]: c for c in json.loads((CORPUS / "manifest.json").read_text(encoding="utf-8"))["cases"]}


MANIFEST = _manifest()


def _run(cmd, **kw) -> subprocess.CompletedProcess:
    proc = subprocess.run([str(c) for c in cmd], capture_output=True, encoding="utf-8", **kw)
    if proc.returncode != 0:
        raise AssertionError(f"{' '.join(map(str, cmd))} failed ({proc.returncode}):\n"
                             f"{proc.stdout}\n{proc.stderr}")
    return proc


@pytest.fixture(scope="module")
def runtime_obj(tmp_path_factory) -> Path:
    if CC is None:
        pytest.skip("no C compiler (cc, gcc or clang) on PATH")
    out = tmp_path_factory.mktemp("xlac_runtime") / "xlac_runtime.o"
    _run([CC, *CFLAGS, "-pthread", "-c", RUNTIME / "xlac_runtime.c", "-o", out])
    return out


# ------------------------------------------------------------------------------------
# A generic C driver: reads in<k>.bin, calls NAME_run, writes out<k>.bin, prints info
# ------------------------------------------------------------------------------------

DRIVER = r"""
#include "@NAME@.h"
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static void *aligned_buffer(size_t n) {   /* 64-byte aligned, never NULL; leaked on exit */
  unsigned char *raw = (unsigned char *)malloc(n + 64);
  if (raw == NULL) { fprintf(stderr, "out of memory\n"); exit(3); }
  return raw + (64 - (uintptr_t)raw % 64);
}

static void *read_file(const char *dir, const char *stem, int k, size_t n) {
  char path[4096];
  FILE *f;
  void *buf = aligned_buffer(n);
  sprintf(path, "%s/%s%d.bin", dir, stem, k);
  f = fopen(path, "rb");
  if (f == NULL || fread(buf, 1, n, f) != n) { fprintf(stderr, "cannot read %s\n", path); exit(3); }
  fclose(f);
  return buf;
}

static void write_file(const char *dir, int k, const void *buf, size_t n) {
  char path[4096];
  FILE *f;
  sprintf(path, "%s/out%d.bin", dir, k);
  f = fopen(path, "wb");
  if (f == NULL || fwrite(buf, 1, n, f) != n) { fprintf(stderr, "cannot write %s\n", path); exit(3); }
  fclose(f);
}

static void print_leaf(const char *kind, int64_t k, const xlac_shape_info *s) {
  int64_t d;
  printf("%s %lld name=%s shape=%s type=%d esize=%d rank=%lld count=%lld bytes=%lld dims=", kind,
         (long long)k, s->name, s->shape, (int)s->element_type, (int)s->element_size,
         (long long)s->rank, (long long)s->element_count, (long long)s->byte_size);
  for (d = 0; d < s->rank; ++d) printf("%s%lld", d ? "," : "", (long long)s->dimensions[d]);
  printf(" m2m=");
  for (d = 0; d < s->rank; ++d) printf("%s%lld", d ? "," : "", (long long)s->minor_to_major[d]);
  printf(" padded=%s\n", s->padded_dimensions ? "yes" : "no");
}

int main(int argc, char **argv) {
  static const size_t param_bytes[] = {@PARAM_BYTES@};
  static const size_t result_bytes[] = {@RESULT_BYTES@};
  void *in[@NP1@], *out[@NR1@];
  const char *dir = argc > 1 ? argv[1] : ".";
  xlac_run_options opts;
  xlac_thread_pool *pool = NULL;
  int k, status;
  (void)param_bytes;
  (void)in;
  for (k = 0; k < @NAME_UPPER@_NUM_PARAMS; ++k) in[k] = read_file(dir, "in", k, param_bytes[k]);
  for (k = 0; k < @NAME_UPPER@_NUM_RESULTS; ++k) {
    out[k] = aligned_buffer(result_bytes[k]);
    memset(out[k], 0xAB, result_bytes[k]);
  }
  xlac_run_options_init(&opts);
  if (argc > 2 && strncmp(argv[2], "threads", 7) == 0) {   /* "threads" (3) or "threads=N" */
    pool = xlac_thread_pool_create(argv[2][7] == '=' ? atoi(argv[2] + 8) : 3);
    xlac_run_options_use_thread_pool(&opts, pool);
    if (opts.num_threads != xlac_thread_pool_size(pool)) return 5;
  }
  if (xlac_check_options(&@NAME@_info, &opts) != XLAC_OK) return 4;
  status = @NAME@_run(@CALL_ARGS@);
  xlac_thread_pool_destroy(pool);
  if (status != XLAC_OK) { fprintf(stderr, "@NAME@_run: %s\n", xlac_status_string(status)); return 2; }
  for (k = 0; k < @NAME_UPPER@_NUM_RESULTS; ++k) write_file(dir, k, out[k], result_bytes[k]);
  printf("name=%s module=%s abi=%lld params=%lld results=%lld temp=%lld align=%lld services=%llu\n",
         @NAME@_info.name, @NAME@_info.module_name, (long long)@NAME@_info.abi_version,
         (long long)@NAME@_info.num_params, (long long)@NAME@_info.num_results,
         (long long)@NAME@_info.temp_size, (long long)@NAME@_info.temp_alignment,
         (unsigned long long)@NAME@_info.required_services);
  printf("result_shape=%s entry_ok=%d fingerprint_ok=%d\n", @NAME@_info.result_shape,
         @NAME@_info.entry == @NAME@, strcmp(@NAME@_info.fingerprint, @NAME_UPPER@_FINGERPRINT) == 0);
  for (k = 0; k < @NAME@_info.num_params; ++k) print_leaf("param", k, &@NAME@_info.params[k]);
  for (k = 0; k < @NAME@_info.num_results; ++k) print_leaf("result", k, &@NAME@_info.results[k]);
  return 0;
}
"""


def _driver_source(res: aot.AotResult, null_opts: bool = False) -> str:
    args = [f"in[{p.index}]" for p in res.params] + [f"out[{r.index}]" for r in res.results]
    args.append("NULL" if null_opts else "&opts")
    subs = {
        "@NAME_UPPER@": res.name.upper(), "@NAME@": res.name,
        "@PARAM_BYTES@": ", ".join(str(p.byte_size) for p in res.params) or "0",
        "@RESULT_BYTES@": ", ".join(str(r.byte_size) for r in res.results) or "0",
        "@NP1@": str(max(1, len(res.params))), "@NR1@": str(max(1, len(res.results))),
        "@CALL_ARGS@": ", ".join(args),
    }
    src = DRIVER
    for k, v in subs.items():
        src = src.replace(k, v)
    return src


def _leaves(value) -> list:
    if isinstance(value, tuple):
        return [leaf for v in value for leaf in _leaves(v)]
    return [np.asarray(value)]


def build_and_run(module, inputs, tmp: Path, runtime_obj: Path, name: str = "fn",
                  null_opts: bool = False, threads: bool | int = False):
    """Compile ``module`` AOT, link a driver, run it; returns (result, outputs, stdout).
    ``threads``: run on an ``xlac_thread_pool`` of 3 threads (True) or of that many."""
    tmp.mkdir(parents=True, exist_ok=True)
    res = xlac.compile_aot(module, tmp / f"{name}.o", header=tmp / f"{name}.h", name=name)
    (tmp / "main.c").write_text(_driver_source(res, null_opts), encoding="utf-8")
    exe = tmp / "driver"
    _run([CC, *CFLAGS, f"-I{tmp}", tmp / "main.c", tmp / f"{name}.o", runtime_obj, "-o", exe,
          "-lm", "-lpthread"])
    for p, a in zip(res.params, inputs):
        (tmp / f"in{p.index}.bin").write_bytes(to_buffer(np.asarray(a), p.shape).tobytes())
    return (res, *rerun(res, tmp, threads))


def rerun(res: aot.AotResult, tmp: Path, threads: bool | int = False):
    """Run the driver ``build_and_run`` linked again (the same inputs); returns (outputs, stdout)."""
    arg = [] if threads is False else ["threads"] if threads is True else [f"threads={int(threads)}"]
    proc = _run([tmp / "driver", tmp] + arg)
    outputs = []
    for r in res.results:
        raw = np.frombuffer((tmp / f"out{r.index}.bin").read_bytes(), dtype=r.shape.dtype)
        outputs.append(from_buffer(raw, r.shape))
    return outputs, proc.stdout


def _load_case(name: str):
    text = (CORPUS / f"{name}.hlo").read_text(encoding="utf-8")
    with np.load(CORPUS / f"{name}.npz") as d:
        inputs = [d[f"arr_{k}"] for k in range(len(d.files))]
    with np.load(CORPUS / f"{name}.expected.npz") as d:
        expected = [d[f"arr_{k}"] for k in range(len(d.files))]
    return text, inputs, expected


def _assert_same_bits(actual: np.ndarray, ref: np.ndarray, what: str) -> None:
    assert actual.dtype == ref.dtype and actual.shape == ref.shape, \
        f"{what}: {actual.dtype}{actual.shape} vs {ref.dtype}{ref.shape}"
    a, b = np.ascontiguousarray(actual), np.ascontiguousarray(ref)
    if a.tobytes() != b.tobytes():
        raise AssertionError(f"{what}: AOT and JIT results are not bit-identical:\n{a}\nvs\n{b}")


def _check_object_symbols(obj: Path, name: str) -> None:
    """Exported: exactly NAME and NAME_info; undefined: only libc/libm/pthread functions."""
    defined = _run(["nm", "-g", "--defined-only", obj]).stdout.split("\n")
    exported = sorted(line.split()[-1] for line in defined if line.strip())
    assert exported == sorted([name, f"{name}_info"]), exported
    local = [line.split()[-1] for line in _run(["nm", "--defined-only", obj]).stdout.splitlines()
             if line.strip() and line.split()[-1] not in exported]
    assert all(s.startswith(".L") for s in local), f"named local symbols: {local}"
    undefined = [line.split()[-1] for line in _run(["nm", "-u", obj]).stdout.splitlines() if line.strip()]
    libs = [ctypes.CDLL(ctypes.util.find_library(n) or f"lib{n}.so.6") for n in ("c", "m")]
    for sym in undefined:
        assert any(hasattr(lib, sym) for lib in libs), f"{obj.name}: {sym} is not from libc/libm"


# ------------------------------------------------------------------------------------
# Corpus cases through C
# ------------------------------------------------------------------------------------

CASES = ["unary_basic_f32", "reduce_sum_max_min_prod", "matmul_f32", "mlp_forward", "mlp_loss_grad",
         "convert_basic", "x64_f64_s64_basic", "argmax_argmin"]


@needs_cc
@needs_nm
@pytest.mark.parametrize("case", CASES)
def test_corpus_case_from_c_matches_jit_and_jax(case, tmp_path, runtime_obj):
    text, inputs, expected = _load_case(case)
    module = xlac.parse_hlo(text)
    res, outputs, stdout = build_and_run(module, inputs, tmp_path, runtime_obj, name=f"{case}_fn",
                                         threads=case == "mlp_forward")
    jit_out = _leaves(xlac.jit(module)(*inputs))
    assert len(outputs) == len(jit_out) == len(expected)
    entry = MANIFEST[case]
    for k, (a, j, e) in enumerate(zip(outputs, jit_out, expected)):
        _assert_same_bits(a, j, f"{case} output {k}")
        tol = entry["outputs"][k]
        assert a.dtype == e.dtype and a.shape == e.shape
        if a.dtype.kind in "fc":
            np.testing.assert_allclose(a, e, rtol=tol["rtol"], atol=tol["atol"],
                                       equal_nan=entry["equal_nan"], err_msg=f"{case} output {k}")
        else:
            np.testing.assert_array_equal(a, e, err_msg=f"{case} output {k}")
    _check_object_symbols(tmp_path / f"{case}_fn.o", f"{case}_fn")
    _check_info_printout(stdout, res, module)


def _check_info_printout(stdout: str, res: aot.AotResult, module) -> None:
    """What the object's NAME_info says (printed by the C driver) is what Python knows."""
    lines = stdout.splitlines()
    assert lines[0] == (f"name={res.name} module={module.name} abi={abi.ABI_VERSION} params={len(res.params)} "
                        f"results={len(res.results)} temp={res.temp_size} align=64 "
                        f"services={res.required_services}")
    assert lines[1] == f"result_shape={res.result_shape} entry_ok=1 fingerprint_ok=1"
    exe = xlac.jit(module)
    assert res.temp_size == exe.temp_size
    want = []
    for kind, leaves in (("param", res.params), ("result", res.results)):
        for leaf in leaves:
            s = leaf.shape
            want.append(f"{kind} {leaf.index} name={leaf.name} shape={s} "
                        f"type={aot.ELEMENT_TYPE_NUMBERS[s.element_type]} esize={s.element_type.byte_size} "
                        f"rank={s.rank} count={s.element_count()} bytes={s.byte_size()} "
                        f"dims={','.join(map(str, s.dimensions))} "
                        f"m2m={','.join(map(str, s.layout.minor_to_major))} "
                        f"padded={'yes' if s.layout.is_padded else 'no'}")
    assert lines[2:] == want


# ------------------------------------------------------------------------------------
# Layouts, no parameters, NULL opts, header hygiene
# ------------------------------------------------------------------------------------

LAYOUT_HLO = """
HloModule layouts

ENTRY main {
  a = f32[3,4]{0,1} parameter(0)
  b = s32[4,3]{1,0} parameter(1)
  t = f32[4,3]{0,1} transpose(a), dimensions={1,0}
  c = f32[4,3]{0,1} convert(b)
  s = f32[4,3]{0,1} add(t, c)
  e = f32[4,3]{0,1} exponential(s)
  n = pred[4,3]{1,0} compare(s, c), direction=GT
  ROOT r = (f32[4,3]{0,1}, pred[4,3]{1,0}, s32[4,3]{1,0}) tuple(e, n, b)
}
"""

CONST_HLO = """
HloModule constants

ENTRY main {
  c = f64[2,2]{1,0} constant({{1.5, -2}, {3.25, 4}})
  ROOT r = f64[2,2]{1,0} multiply(c, c)
}
"""


@needs_cc
@needs_nm
def test_non_default_layouts_and_tuple_result(tmp_path, runtime_obj):
    rng = np.random.default_rng(0)
    a = rng.standard_normal((3, 4)).astype(np.float32)
    b = rng.integers(-3, 3, (4, 3)).astype(np.int32)
    module = xlac.parse_hlo(LAYOUT_HLO)
    res, outputs, _ = build_and_run(module, [a, b], tmp_path, runtime_obj, name="layouts")
    assert [str(r.shape) for r in res.results] == ["f32[4,3]{0,1}", "pred[4,3]{1,0}", "s32[4,3]{1,0}"]
    for k, (x, j) in enumerate(zip(outputs, _leaves(xlac.jit(module)(a, b)))):
        _assert_same_bits(x, j, f"leaf {k}")
    np.testing.assert_array_equal(outputs[2], b)
    header = (tmp_path / "layouts.h").read_text(encoding="utf-8")
    assert "minor_to_major={0,1} (dimension 0 varies fastest)" in header
    _check_object_symbols(tmp_path / "layouts.o", "layouts")


SPARSE_PRODUCT_HLO = """HloModule csr

ENTRY main {
  d = f32[4096]{0} parameter(0)
  p = s32[513]{0} parameter(1)
  i = s32[4096]{0} parameter(2)
  x = f32[300,32]{1,0} parameter(3)
  ROOT c = f32[512,32]{1,0} custom-call(d, p, i, x), custom_call_target="cpu_csr_sparse_dense_ffi", api_version=API_VERSION_TYPED_FFI
}
"""


@needs_cc
@pytest.mark.parametrize("threads", [False, True])
def test_sparse_product_scatter_fusion_split_between_threads(tmp_path, runtime_obj, threads):
    # jaxlib's sparse product expands to a scatter fusion (gathered, scaled rows)
    # whose 131,072 sorted update elements the object splits between threads.
    rng = np.random.default_rng(5)
    rows = np.sort(rng.integers(0, 512, 4096))
    indptr = np.searchsorted(rows, np.arange(513)).astype(np.int32)
    args = [rng.standard_normal(4096).astype(np.float32), indptr,
            rng.integers(0, 310, 4096).astype(np.int32), rng.standard_normal((300, 32)).astype(np.float32)]
    module = xlac.parse_hlo(SPARSE_PRODUCT_HLO)
    _, outputs, _ = build_and_run(module, args, tmp_path, runtime_obj, name="csr", threads=threads)
    _assert_same_bits(outputs[0], xlac.jit(SPARSE_PRODUCT_HLO)(*args), "sparse product")
    np.testing.assert_array_equal(outputs[0], xlac.evaluate(SPARSE_PRODUCT_HLO, *args))


GEMM_LIBRARY_HLO = """HloModule gemmlib

ENTRY main {
  a = f32[70,90]{1,0} parameter(0)
  b = f32[90,50]{1,0} parameter(1)
  x = f32[2,9,9,4]{3,2,1,0} parameter(2)
  w = f32[3,3,4,8]{3,2,1,0} parameter(3)
  d = f32[70,50]{1,0} dot(a, b), lhs_contracting_dims={1}, rhs_contracting_dims={0}
  c = f32[2,9,9,8]{3,2,1,0} convolution(x, w), window={size=3x3 pad=1_1x1_1}, dim_labels=b01f_01io->b01f
  f = c64[70,46]{1,0} fft(a), fft_type=RFFT, fft_length={90}
  ROOT t = (f32[70,50]{1,0}, f32[2,9,9,8]{3,2,1,0}, c64[70,46]{1,0}) tuple(d, c, f)
}
"""


@needs_cc
@needs_nm
def test_object_carries_the_gemm_library_code(tmp_path, runtime_obj):
    """The JIT calls the process-wide GEMM library (the dot's and the
    convolution's code, the FFT's passes); an AOT object links in the
    library functions it calls (as local code): no undefined xlac_gemm_
    symbols, and the same bits as the JIT, threaded."""
    rng = np.random.default_rng(3)
    args = [rng.uniform(-1, 1, s).astype(np.float32) for s in ((70, 90), (90, 50), (2, 9, 9, 4), (3, 3, 4, 8))]
    module = xlac.parse_hlo(GEMM_LIBRARY_HLO)
    exe = xlac.jit(module)
    assert "xlac_gemm_" in exe.llvm_ir      # the JIT build calls the library
    res, outputs, _ = build_and_run(module, args, tmp_path, runtime_obj, name="gemmlib", threads=True)
    for k, (x, j) in enumerate(zip(outputs, _leaves(exe(*args)))):
        _assert_same_bits(x, j, f"leaf {k}")
    _check_object_symbols(tmp_path / "gemmlib.o", "gemmlib")


def _shared_layers(n: int):
    """``n`` identical dense layers: one shared kernel, its sites' slot arrays
    filled by the library's ``fill_slots``."""
    b = xlac.XlaBuilder("layers")
    h = ops.parameter(b, 0, xlac.shape("f32[64,32]"), "x")
    for k in range(n):
        w = ops.parameter(b, 1 + k, xlac.shape("f32[32,32]"), f"w{k}")
        h = ops.tanh(ops.dot(h, w) + ops.constant(b, np.float32(1)))
    return b.build(h).module


@needs_nm
def test_object_carries_the_library_helpers(tmp_path, runtime_obj):
    """Shared-kernel sites call the library's fill_slots (not emitted in the
    module): the object links it in, and runs as the JIT does."""
    from xlac.codegen import gemm_library
    module = _shared_layers(4)
    exe = xlac.jit(module)
    assert gemm_library.symbol(gemm_library.HELPERS, "fill_slots") in exe.llvm_ir
    rng = np.random.default_rng(5)
    args = [rng.uniform(-1, 1, (64, 32)).astype(np.float32)] + \
        [rng.uniform(-0.3, 0.3, (32, 32)).astype(np.float32) for _ in range(4)]
    res, outputs, _ = build_and_run(module, args, tmp_path, runtime_obj, name="layers", threads=True)
    _assert_same_bits(outputs[0], np.asarray(exe(*args)), "result")
    _check_object_symbols(tmp_path / "layers.o", "layers")


SIZE_GENERIC_HLO = """HloModule sizes

ENTRY main {
  a = f32[3]{0} parameter(0)
  b = f32[40]{0} parameter(1)
  c = f32[2,50]{1,0} parameter(2)
  ea = f32[3]{0} exponential(a)
  eb = f32[40]{0} exponential(b)
  ec = f32[2,50]{1,0} exponential(c)
  ROOT t = (f32[3]{0}, f32[40]{0}, f32[2,50]{1,0}) tuple(ea, eb, ec)
}
"""


@needs_cc
def test_size_generic_kernel_gets_its_counts_in_the_object(tmp_path, runtime_obj):
    """One kernel for the three sizes (``kernel_sharing``): each site's slot
    array carries its element count in the object as in the JIT."""
    rng = np.random.default_rng(8)
    args = [rng.standard_normal(s).astype(np.float32) for s in ((3,), (40,), (2, 50))]
    module = xlac.parse_hlo(SIZE_GENERIC_HLO)
    exe = xlac.jit(module)
    assert len(re.findall(r'^define internal void @"?[\w.]+"?\(ptr %"results"', exe.llvm_ir, re.M)) == 1
    res, outputs, _ = build_and_run(module, args, tmp_path, runtime_obj, name="sizes")
    for k, (x, j) in enumerate(zip(outputs, _leaves(exe(*args)))):
        _assert_same_bits(x, j, f"leaf {k}")
        np.testing.assert_allclose(x, np.exp(args[k]), rtol=1e-6)


AMX_HLO = """HloModule amxdots

ENTRY main {
  a = bf16[70,90]{1,0} parameter(0)
  b = bf16[90,50]{1,0} parameter(1)
  x = s8[40,130]{1,0} parameter(2)
  y = u8[130,36]{1,0} parameter(3)
  cx = s8[2,3,20,5]{3,2,1,0} parameter(4)
  ck = s8[3,3,5,7]{3,2,1,0} parameter(5)
  d = f32[70,50]{1,0} dot(a, b), lhs_contracting_dims={1}, rhs_contracting_dims={0}
  i = s32[40,36]{1,0} dot(x, y), lhs_contracting_dims={1}, rhs_contracting_dims={0}
  c = s32[2,3,20,7]{3,2,1,0} convolution(cx, ck), window={size=3x3 pad=1_1x1_1}, dim_labels=b01f_01io->b01f
  ROOT t = (f32[70,50]{1,0}, s32[40,36]{1,0}, s32[2,3,20,7]{3,2,1,0}) tuple(d, i, c)
}
"""


@needs_cc
def test_object_with_amx_dots_asks_linux_for_the_tiles(tmp_path, runtime_obj):
    """A host object whose dots and convolution run on AMX tiles (the library's
    kernels and the module's own): the header's CPU check asks Linux for tile
    data before the first call (without it the first tile instruction stops
    the program: SIGILL), and the results are the JIT's."""
    from xlac.codegen import gemm_native
    if gemm_native.unavailable("amxbf16") or gemm_native.unavailable("amxint8"):
        pytest.skip("no AMX here")
    rng = np.random.default_rng(6)
    bf16 = xlac.Shape(xlac.BF16, ()).dtype
    args = [rng.uniform(-1, 1, (70, 90)).astype(bf16), rng.uniform(-1, 1, (90, 50)).astype(bf16),
            rng.integers(-128, 128, (40, 130)).astype(np.int8), rng.integers(0, 256, (130, 36)).astype(np.uint8),
            rng.integers(-128, 128, (2, 3, 20, 5)).astype(np.int8), rng.integers(-128, 128, (3, 3, 5, 7)).astype(np.int8)]
    module = xlac.parse_hlo(AMX_HLO)
    res, outputs, _ = build_and_run(module, args, tmp_path, runtime_obj, name="amxdots", threads=True)
    assert "amx-tile" in res.cpu_features
    if shutil.which("objdump"):
        asm = _run(["objdump", "-d", tmp_path / "amxdots.o"]).stdout
        assert "tdpbf16ps" in asm and "tdpbsud" in asm and "tdpbssd" in asm and "ldtilecfg" in asm
    for k, (x, j) in enumerate(zip(outputs, _leaves(xlac.jit(module)(*args)))):
        _assert_same_bits(x, j, f"leaf {k}")


TASK_GRID_HLO = """HloModule grids

ENTRY main {
  a = f32[301,257]{1,0} parameter(0)
  b = f32[257,203]{1,0} parameter(1)
  x = f32[2,17,19,24]{3,2,1,0} parameter(2)
  w = f32[3,3,24,40]{3,2,1,0} parameter(3)
  na = f32[301,257]{1,0} negate(a)
  d = f32[301,203]{1,0} dot(a, b), lhs_contracting_dims={1}, rhs_contracting_dims={0}
  e = f32[301,203]{1,0} dot(na, b), lhs_contracting_dims={1}, rhs_contracting_dims={0}
  c = f32[2,17,19,40]{3,2,1,0} convolution(x, w), window={size=3x3 pad=1_1x1_1}, dim_labels=b01f_01io->b01f
  ROOT t = (f32[301,203]{1,0}, f32[301,203]{1,0}, f32[2,17,19,40]{3,2,1,0}) tuple(d, e, c)
}
"""


@needs_cc
@pytest.mark.timeout(600)
def test_task_grids_follow_the_c_pool_size(tmp_path, runtime_obj):
    """The C pool's size reaches generated code (``opts->num_threads``), which
    picks the GEMM (library and per-module) and convolution task grids from
    it: every pool size computes the JIT's single-thread bits, edge tiles
    included, on pools larger than the machine too."""
    rng = np.random.default_rng(5)
    shapes = ((301, 257), (257, 203), (2, 17, 19, 24), (3, 3, 24, 40))
    args = [rng.uniform(-1, 1, s).astype(np.float32) for s in shapes]
    module = xlac.parse_hlo(TASK_GRID_HLO)
    want = _leaves(xlac.jit(module, num_threads=1)(*args))
    res, outputs, _ = build_and_run(module, args, tmp_path, runtime_obj, name="grids")
    for threads in (1, 2, 3, 5, 8, 16):
        outputs, _ = rerun(res, tmp_path, threads)
        for k, (x, j) in enumerate(zip(outputs, want)):
            _assert_same_bits(x, j, f"leaf {k}, a pool of {threads}")


@needs_cc
@needs_nm
@pytest.mark.parametrize("case", ["mlp_loss_grad", "reduce_sum_max_min_prod"])
def test_one_object_while_the_jit_compiles_in_parts(case, tmp_path, runtime_obj, monkeypatch):
    """The JIT splits the module into parts on several threads; the AOT object
    stays one self-contained module with its two symbols, and both compute the
    same bits."""
    from xlac.codegen import jit as jit_backend
    monkeypatch.setattr(jit_backend, "MIN_PART_INSTRUCTIONS", 1)
    monkeypatch.setenv("XLAC_COMPILE_THREADS", "3")
    text, inputs, _expected = _load_case(case)
    module = xlac.parse_hlo(text)
    _res, outputs, _stdout = build_and_run(module, inputs, tmp_path, runtime_obj, name="parts_fn")
    _check_object_symbols(tmp_path / "parts_fn.o", "parts_fn")
    xlac.clear_caches()               # compiled whole by another test
    exe = xlac.jit(module)
    assert len(exe._program.jit.object_parts) > 1
    for k, (a, j) in enumerate(zip(outputs, _leaves(exe(*inputs)))):
        _assert_same_bits(a, j, f"{case} output {k}")


@needs_cc
def test_two_objects_link_into_one_program(tmp_path, runtime_obj):
    for nm in ("sq1", "sq2"):
        xlac.compile_aot(CONST_HLO, tmp_path / f"{nm}.o", header=tmp_path / f"{nm}.h", name=nm)
    (tmp_path / "two.c").write_text(r"""
#include "sq1.h"
#include "sq2.h"
#include <stdio.h>
int main(void) {
  double a[4], b[4];
  int s1 = sq1_run(a, NULL), s2 = sq2_run(b, NULL);
  printf("%d %d %g %g\n", s1, s2, a[3], b[2]);
  return 0;
}
""", encoding="utf-8")
    _run([CC, *CFLAGS, f"-I{tmp_path}", tmp_path / "two.c", tmp_path / "sq1.o", tmp_path / "sq2.o",
          "-o", tmp_path / "two", "-lm"])
    assert _run([tmp_path / "two"]).stdout.split() == ["0", "0", "16", "10.5625"]


@needs_cc
def test_module_without_parameters_and_null_opts(tmp_path, runtime_obj):
    res, outputs, stdout = build_and_run(CONST_HLO, [], tmp_path, runtime_obj, name="consts",
                                         null_opts=True)
    assert res.params == [] and stdout.startswith(f"name=consts module=constants abi={abi.ABI_VERSION} params=0")
    np.testing.assert_array_equal(outputs[0], np.array([[2.25, 4], [10.5625, 16]]))


TUPLE_PARAM_HLO = """
HloModule tuple_param

ENTRY main {
  p = (f32[2], s32[3]) parameter(0)
  q = f32[2] parameter(1)
  a = f32[2] get-tuple-element(p), index=0
  b = s32[3] get-tuple-element(p), index=1
  s = f32[2] add(a, q)
  ROOT r = (f32[2], s32[3]) tuple(s, b)
}
"""


@needs_cc
def test_tuple_parameter_is_flattened_into_slots(tmp_path, runtime_obj):
    a, b, q = np.float32([1.5, 2]), np.int32([3, -4, 5]), np.float32([10, 20])
    module = xlac.parse_hlo(TUPLE_PARAM_HLO)
    res, outputs, stdout = build_and_run(module, [a, b, q], tmp_path, runtime_obj, name="tp")
    assert [(p.name, p.c_name, str(p.shape)) for p in res.params] == \
        [("p{0}", "p_0", "f32[2]{0}"), ("p{1}", "p_1", "s32[3]{0}"), ("q", "q", "f32[2]{0}")]
    for x, e in zip(outputs, xlac.evaluate(module, (a, b), q)):
        np.testing.assert_array_equal(x, e)
    assert "param 0 name=p{0} shape=f32[2]{0}" in stdout


@needs_cc
def test_header_is_self_contained_c99(tmp_path):
    res = xlac.compile_aot(LAYOUT_HLO, tmp_path / "lay.o", header=tmp_path / "lay.h", name="lay")
    text = (tmp_path / "lay.h").read_text(encoding="utf-8")
    includes = re.findall(r"#include\s*[<\"]([^>\"]+)[>\"]", text)
    assert set(includes) <= {"xlac_runtime.h", "stddef.h", "stdint.h", "stdlib.h", "string.h"}, includes
    assert text == res.header_text
    for pat in (r"param 0 \(a\): f32\[3,4\]\{0,1\}", r"result 1: pred\[4,3\]\{1,0\}", "LAY_TEMP_SIZE",
                r"LAY_PARAM0_BYTES 48", "lay_run", "cannot check"):
        assert re.search(pat, text), pat
    # The header alone (twice: include guard), in a translation unit of its own.
    (tmp_path / "only.c").write_text('#include "lay.h"\n#include "lay.h"\nint main(void) { return 0; }\n', encoding="utf-8")
    _run([CC, *CFLAGS, f"-I{tmp_path}", "-c", tmp_path / "only.c", "-o", tmp_path / "only.o"])


@needs_cc
def test_wrapper_rejects_bad_buffers(tmp_path, runtime_obj):
    res = xlac.compile_aot(LAYOUT_HLO, tmp_path / "lay.o", header=tmp_path / "lay.h", name="lay")
    assert len(res.params) == 2
    (tmp_path / "bad.c").write_text(r"""
#include "lay.h"
#include <stdio.h>
int main(void) {
  static float a[12 + 1];
  static int32_t b[12];
  static float e[12];
  static uint8_t n[12];
  static int32_t r[12];
  xlac_run_options opts, old;
  xlac_run_options_init(&opts);
  old = opts;
  old.abi_version = 0;
  printf("%d", lay_run(a, b, e, n, r, &opts));                        /* ok */
  printf(" %d", lay_run(NULL, b, e, n, r, &opts));                    /* NULL param */
  printf(" %d", lay_run(a, b, e, n, NULL, &opts));                    /* NULL result */
  printf(" %d", lay_run((const float *)((char *)a + 1), b, e, n, r, &opts)); /* misaligned */
  printf(" %d", lay_run(a, b, (float *)a, n, r, &opts));              /* result overlaps param */
  printf(" %d", lay_run(a, b, e, n, (int32_t *)e, &opts));            /* results overlap */
  printf(" %d", lay_run(a, b, e, n, r, &old));                        /* wrong ABI version */
  printf(" %d\n", lay_run(a, b, e, n, r, NULL));                      /* no services needed */
  return 0;
}
""", encoding="utf-8")
    exe = tmp_path / "bad"
    _run([CC, *CFLAGS, f"-I{tmp_path}", tmp_path / "bad.c", tmp_path / "lay.o", runtime_obj, "-o", exe,
          "-lm", "-lpthread"])
    assert _run([exe]).stdout.split() == ["0", "1", "1", "1", "1", "1", "4", "0"]


# ------------------------------------------------------------------------------------
# The C support library
# ------------------------------------------------------------------------------------

RUNTIME_TEST = r"""
#define _POSIX_C_SOURCE 200809L
#include "xlac_runtime.h"
#include <pthread.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

static int64_t squares[1000];
static xlac_thread_pool *pool;

static void square(void *ctx, int64_t i) { (void)ctx; squares[i] = i * i; }
static void count_once(void *ctx, int64_t i) { (void)ctx; __sync_fetch_and_add(&squares[i], 1); }

static int64_t inner_sum[8];
static void inner(void *ctx, int64_t i) { int64_t *row = (int64_t *)ctx; (void)i; __sync_fetch_and_add(row, 1); }
static void outer(void *ctx, int64_t i) {
  (void)ctx;
  xlac_parallel_for_thread_pool(pool, 10, inner, &inner_sum[i]);  /* nested: runs inline */
}

static void *caller(void *arg) {
  static int64_t sums[2][200];
  int64_t k = (int64_t)(size_t)arg, i, total = 0;
  int rep;
  for (rep = 0; rep < 50; ++rep) {
    memset(sums[k], 0, sizeof sums[k]);
    xlac_parallel_for_thread_pool(pool, 200, inner, &sums[k][0]);
    total += sums[k][0];
  }
  for (i = 1; i < 200; ++i) total += sums[k][i];
  return (void *)(size_t)total;
}

int main(void) {
  xlac_run_options opts;
  xlac_program_info info;
  xlac_custom_call_op op;
  char message[XLAC_CUSTOM_CALL_MESSAGE_MAX];
  pthread_t t[2];
  void *r0, *r1;
  int64_t i;
  int ok = 1;
  xlac_run_options_init(&opts);
  printf("defaults abi=%lld seq=%d replicas=%lld threads=%lld\n", (long long)opts.abi_version,
         opts.parallel_for == xlac_parallel_for_sequential, (long long)opts.num_replicas,
         (long long)opts.num_threads);
  opts.parallel_for(opts.runtime_ctx, 1000, square, NULL);
  for (i = 0; i < 1000; ++i) ok &= squares[i] == i * i;
  memset(squares, 0, sizeof squares);
  pool = xlac_thread_pool_create(4);
  xlac_run_options_use_thread_pool(&opts, pool);
  printf("pool size=%d threads=%lld\n", xlac_thread_pool_size(pool), (long long)opts.num_threads);
  opts.parallel_for(opts.runtime_ctx, 1000, square, NULL);
  for (i = 0; i < 1000; ++i) ok &= squares[i] == i * i;
  xlac_parallel_for_thread_pool(pool, 8, outer, NULL);
  for (i = 0; i < 8; ++i) ok &= inner_sum[i] == 10;
  pthread_create(&t[0], NULL, caller, (void *)0);
  pthread_create(&t[1], NULL, caller, (void *)1);
  pthread_join(t[0], &r0);
  pthread_join(t[1], &r1);
  ok &= (size_t)r0 == 10000 && (size_t)r1 == 10000;
  xlac_parallel_for_thread_pool(pool, 0, square, NULL);
  xlac_thread_pool_destroy(pool);
  /* Jobs with fewer tasks than workers: the workers refused (no place left
   * in the job) must not take tasks or hang, spinning or woken from sleep. */
  pool = xlac_thread_pool_create(8);
  for (i = 0; i < 400; ++i) {
    int64_t n = 2 + i % 4, j;
    struct timespec nap = {0, 200000};
    memset(squares, 0, sizeof squares);
    if (i % 40 == 39) nanosleep(&nap, NULL);
    xlac_parallel_for_thread_pool(pool, n, count_once, NULL);
    for (j = 0; j < n; ++j) ok &= squares[j] == 1;
    ok &= squares[n] == 0;
  }
  xlac_thread_pool_destroy(pool);
  printf("parallel ok=%d\n", ok);

  memset(&info, 0, sizeof info);
  info.abi_version = XLAC_ABI_VERSION;
  info.name = "needs_infeed";
  info.required_services = XLAC_SERVICE_INFEED | XLAC_SERVICE_PARALLEL_FOR;
  xlac_run_options_init(&opts);
  printf("check default=%d\n", xlac_check_options(&info, &opts));
  printf("check null=%d\n", xlac_check_options(&info, NULL));
  printf("stub=%d\n", opts.infeed(NULL, NULL, 0, "f32[]"));
  memset(&op, 0, sizeof op);
  op.target = "my_target";
  op.instruction = "cc.1";
  op.error = message;
  op.error_capacity = sizeof message;
  printf("custom stub=%d\n", opts.custom_call(NULL, &op));
  printf("custom message=%d\n", strstr(message, "my_target") != NULL);
  info.required_services = XLAC_SERVICE_PARALLEL_FOR;
  printf("check optional=%d\n", xlac_check_options(&info, NULL));
  printf("status=%s\n", xlac_status_string(XLAC_ERROR_MISSING_SERVICE));
  return 0;
}
"""


@needs_cc
def test_runtime_support_library(tmp_path, runtime_obj):
    (tmp_path / "rt.c").write_text(RUNTIME_TEST, encoding="utf-8")
    exe = tmp_path / "rt"
    _run([CC, *[f for f in CFLAGS if f != "-pedantic"], "-pthread", tmp_path / "rt.c", runtime_obj,
          "-o", exe, "-lpthread"])
    proc = _run([exe])
    assert proc.stdout.splitlines() == [
        f"defaults abi={abi.ABI_VERSION} seq=1 replicas=1 threads=1",
        "pool size=4 threads=4",
        "parallel ok=1",
        "check default=3",
        "check null=3",
        "stub=3",
        "custom stub=3",
        "custom message=1",
        "check optional=0",
        "status=a service the module needs was not provided",
    ]
    err = proc.stderr
    assert "needs_infeed needs the infeed service, which the caller did not provide" in err
    assert "set xlac_run_options.infeed" in err
    assert 'custom call target "my_target" (instruction cc.1)' in err


# ------------------------------------------------------------------------------------
# Infeed and outfeed: a C program serves them
# ------------------------------------------------------------------------------------

FEED_LOOP = """HloModule feed_loop
cond {
  s = (s32[], f32[2,3], token[]) parameter(0)
  i = s32[] get-tuple-element(s), index=0
  n = s32[] constant(3)
  ROOT lt = pred[] compare(i, n), direction=LT
}
body {
  s = (s32[], f32[2,3], token[]) parameter(0)
  i = s32[] get-tuple-element(s), index=0
  acc = f32[2,3] get-tuple-element(s), index=1
  tok = token[] get-tuple-element(s), index=2
  in = ((f32[2,3]{0,1}, s32[]), token[]) infeed(tok), infeed_config="batch"
  d = (f32[2,3]{0,1}, s32[]) get-tuple-element(in), index=0
  x = f32[2,3]{0,1} get-tuple-element(d), index=0
  k = s32[] get-tuple-element(d), index=1
  kf = f32[] convert(k)
  kb = f32[2,3] broadcast(kf), dimensions={}
  xk = f32[2,3] multiply(x, kb)
  acc2 = f32[2,3] add(acc, xk)
  t2 = token[] get-tuple-element(in), index=1
  t3 = token[] outfeed(acc2, t2), outfeed_shape=f32[2,3]{1,0}
  one = s32[] constant(1)
  j = s32[] add(i, one)
  ROOT r = (s32[], f32[2,3], token[]) tuple(j, acc2, t3)
}
ENTRY main {
  a0 = f32[2,3] parameter(0)
  zero = s32[] constant(0)
  t0 = token[] after-all()
  init = (s32[], f32[2,3], token[]) tuple(zero, a0, t0)
  w = (s32[], f32[2,3], token[]) while(init), condition=cond, body=body
  ROOT acc = f32[2,3] get-tuple-element(w), index=1
}
"""

FEED_DRIVER = r"""
#include "loop.h"
#include <stdio.h>
#include <string.h>

/* Three (x, k) batches; x is sent column-major, as the infeed's layout {0,1} says. */
static const float xs[3][6] = {{1, 4, 2, 5, 3, 6}, {0.5f, 0, 0, 0.5f, 1, 1}, {-1, -1, -1, -1, -1, -1}};
static const int32_t ks[3] = {2, -4, 3};
static int fed = 0, sent = 0, fail_at = -1;
static volatile int32_t stop = 0;

static int infeed(void *ctx, void *buffer, int64_t n, const char *shape) {
  const char *inst = shape + strlen(shape) + 1, *data = inst + strlen(inst) + 1;
  const char *leaf = data + strlen(data) + 1;
  (void)ctx;
  printf("infeed %s data=%s leaf=%s shape=%s bytes=%lld\n", inst, data, leaf, shape, (long long)n);
  if (fed == fail_at) { stop = 1; return XLAC_ERROR_SERVICE_FAILED; }
  if (strcmp(leaf, "0") == 0) {
    memcpy(buffer, xs[fed], sizeof xs[fed]);
  } else {
    memcpy(buffer, &ks[fed], sizeof ks[fed]);
    ++fed;
  }
  return XLAC_OK;
}

static int outfeed(void *ctx, const void *buffer, int64_t n, const char *shape) {
  const char *inst = shape + strlen(shape) + 1;
  const float *v = (const float *)buffer;
  int i;
  (void)ctx;
  printf("outfeed %s shape=%s bytes=%lld values=", inst, shape, (long long)n);
  for (i = 0; i < 6; ++i) printf("%s%g", i ? "," : "", v[i]);
  printf("\n");
  ++sent;
  return XLAC_OK;
}

int main(int argc, char **argv) {
  float a0[6] = {0, 0, 0, 0, 0, 0}, acc[6];
  xlac_run_options opts;
  int status, i;
  xlac_run_options_init(&opts);
  if (argc > 1 && strcmp(argv[1], "fail") == 0) fail_at = 1;
  if (!(argc > 1 && strcmp(argv[1], "stub") == 0)) {
    opts.infeed = infeed;
    opts.outfeed = outfeed;
  }
  opts.cancel = &stop;
  status = xlac_check_options(&loop_info, &opts);   /* finds the stubs of services not set */
  if (status == XLAC_OK) status = loop_run(a0, acc, &opts);
  else memset(acc, 0, sizeof acc);
  printf("status=%d fed=%d sent=%d stop=%d acc=", status, fed, sent, (int)stop);
  for (i = 0; i < 6; ++i) printf("%s%g", i ? "," : "", acc[i]);
  printf("\n");
  return 0;
}
"""


def _feed_reference():
    xs = [np.array(v, np.float32).reshape(3, 2).T for v in
          ([1, 4, 2, 5, 3, 6], [0.5, 0, 0, 0.5, 1, 1], [-1] * 6)]
    return [(x, np.int32(k)) for x, k in zip(xs, (2, -4, 3))]


@needs_cc
def test_infeed_and_outfeed_served_from_c(tmp_path, runtime_obj):
    res = xlac.compile_aot(FEED_LOOP, tmp_path / "loop.o", header=tmp_path / "loop.h", name="loop")
    assert res.required_services == aot.SERVICE_BITS["infeed"] | aot.SERVICE_BITS["outfeed"]
    header = res.header_text
    assert "infeed in of (f32[2,3]{0,1}, s32[]):" in header
    assert "leaf 0: f32[2,3]{0,1}, 24 bytes, minor_to_major={0,1}" in header
    assert "outfeed t3 of f32[2,3]{1,0}:" in header
    (tmp_path / "main.c").write_text(FEED_DRIVER, encoding="utf-8")
    exe = tmp_path / "driver"
    _run([CC, *CFLAGS, f"-I{tmp_path}", tmp_path / "main.c", tmp_path / "loop.o", runtime_obj, "-o", exe,
          "-lm", "-lpthread"])

    # The reference: the same module through the JIT, fed from Python.
    jit = xlac.jit(FEED_LOOP)
    for value in _feed_reference():
        jit.infeed.put(value)
    want = jit(np.zeros((2, 3), np.float32))
    partial = [jit.outfeed.get(timeout=1) for _ in range(3)]

    lines = _run([exe]).stdout.splitlines()
    infeeds = [ln for ln in lines if ln.startswith("infeed ")]
    assert infeeds[:2] == ["infeed in data=(f32[2,3]{0,1}, s32[]) leaf=0 shape=f32[2,3]{0,1} bytes=24",
                           "infeed in data=(f32[2,3]{0,1}, s32[]) leaf=1 shape=s32[] bytes=4"]
    assert len(infeeds) == 6
    outfeeds = [ln for ln in lines if ln.startswith("outfeed ")]
    for line, p in zip(outfeeds, partial):
        assert line.startswith("outfeed t3 shape=f32[2,3]{1,0} bytes=24 values=")
        got = np.array([float(v) for v in line.split("values=")[1].split(",")], np.float32)
        np.testing.assert_array_equal(got.reshape(2, 3), p)
    assert len(outfeeds) == 3
    last = lines[-1]
    assert last.startswith("status=0 fed=3 sent=3 stop=0 acc=")
    acc = np.array([float(v) for v in last.split("acc=")[1].split(",")], np.float32).reshape(2, 3)
    np.testing.assert_array_equal(acc, want)
    np.testing.assert_allclose(want, sum(x * k for x, k in _feed_reference()))

    # A service that fails and sets the cancel flag stops the call: nothing after it runs.
    proc = _run([exe, "fail"])
    assert proc.stdout.splitlines()[-1].startswith("status=0 fed=1 sent=1 stop=1")
    assert "infeed in of (f32[2,3]{0,1}, s32[]): the infeed service failed on leaf 0" in proc.stderr
    # Without the services (xlac_run_options_init's stubs), xlac_check_options says so.
    proc = _run([exe, "stub"])
    assert proc.stdout.splitlines()[-1].startswith(f"status={abi.XLAC_ERROR_MISSING_SERVICE} fed=0 sent=0")
    assert "infeed" in proc.stderr


# ------------------------------------------------------------------------------------
# Python API details
# ------------------------------------------------------------------------------------

def test_object_is_elf_with_only_documented_symbols_for_a_named_triple(tmp_path):
    try:
        res = xlac.compile_aot(CONST_HLO, tmp_path / "a.o", name="k", target="aarch64-unknown-linux-gnu",
                               cpu="generic")
    except ValueError as ex:  # pragma: no cover - llvmlite built without AArch64
        pytest.skip(f"no AArch64 target in this llvmlite: {ex}")
    data = (tmp_path / "a.o").read_bytes()
    assert data[:4] == b"\x7fELF" and data[4] == 2                 # ELFCLASS64
    assert int.from_bytes(data[16:18], "little") == 1              # ET_REL
    assert int.from_bytes(data[18:20], "little") == 183            # EM_AARCH64
    assert res.triple == "aarch64-unknown-linux-gnu" and res.header_path is None
    assert not (tmp_path / "a.h").exists()


def test_host_object_is_relocatable_elf(tmp_path):
    res = xlac.compile_aot(CONST_HLO, tmp_path / "h.o", name="h")
    data = (tmp_path / "h.o").read_bytes()
    assert data[:4] == b"\x7fELF" and int.from_bytes(data[16:18], "little") == 1
    assert res.symbols == ("h", "h_info") and res.temp_size == xlac.jit(CONST_HLO).temp_size


def test_accepts_computation_module_and_text(tmp_path):
    b = xlac.XlaBuilder("axpy")
    x = xlac.ops.parameter(b, 0, xlac.shape("f32[8]"), "x")
    comp = b.build(xlac.ops.mul(xlac.ops.constant(b, np.float32(2)), x))
    for k, thing in enumerate((comp, comp.module, comp.as_hlo_text())):
        res = xlac.compile_aot(thing, tmp_path / f"c{k}.o", name="axpy")
        assert [str(p.shape) for p in res.params] == ["f32[8]{0}"]


@pytest.mark.parametrize("name", ["", "1abc", "a-b", "int", "main", "xlac_thing", "__x", "temp", "expf",
                                  "memset"])
def test_bad_names_are_rejected(tmp_path, name):
    with pytest.raises(ValueError, match="name"):
        xlac.compile_aot(CONST_HLO, tmp_path / "x.o", name=name)
    assert not (tmp_path / "x.o").exists()


def test_bad_cpu_and_triple_are_errors(tmp_path):
    with pytest.raises(ValueError, match="not a recognized processor"):
        xlac.compile_aot(CONST_HLO, tmp_path / "x.o", cpu="no-such-cpu")
    with pytest.raises(ValueError, match="no-such-triple"):
        xlac.compile_aot(CONST_HLO, tmp_path / "x.o", target="no-such-triple")


def test_parameter_names_become_safe_c_identifiers(tmp_path):
    text = """
HloModule names
ENTRY main {
  int = f32[2] parameter(0)
  fn_info = f32[2] parameter(1)
  a.1 = f32[2] parameter(2)
  a_1 = f32[2] parameter(3)
  s0 = f32[2] add(int, fn_info)
  s1 = f32[2] add(a.1, a_1)
  ROOT r = f32[2] add(s0, s1)
}
"""
    res = xlac.compile_aot(text, tmp_path / "n.o", header=tmp_path / "n.h", name="fn")
    names = [p.c_name for p in res.params]
    assert len(set(names)) == 4 and "int" not in names and "fn_info" not in names
    assert all(re.fullmatch(r"[A-Za-z_][A-Za-z0-9_]*", n) for n in names)


def test_required_services_from_opcodes():
    assert aot.required_services(xlac.parse_hlo(CONST_HLO)) == 0
    m = xlac.parse_hlo("""
HloModule feeds
ENTRY main {
  t = token[] after-all()
  i = (f32[2], token[]) infeed(t)
  ROOT v = f32[2] get-tuple-element(i), index=0
}
""")
    assert aot.required_services(m) == aot.SERVICE_BITS["infeed"]


# ------------------------------------------------------------------------------------
# The CPU an object is for
# ------------------------------------------------------------------------------------

#: What LLVM's x86-64-v3 (the x86-64 psABI's level 3) has among the recorded extensions.
X86_64_V3 = ("sse2", "sse3", "ssse3", "fma", "sse4.1", "sse4.2", "movbe", "popcnt", "avx", "f16c", "bmi",
             "avx2", "bmi2", "lzcnt")
needs_x86 = pytest.mark.skipif(not targets.host().is_x86, reason="x86 CPU features")

VECTOR_HLO = """
HloModule vec
ENTRY main {
  x = f32[4096] parameter(0)
  e = f32[4096] exponential(x)
  ROOT r = f32[4096] multiply(e, x)
}
"""

CPU_CHECK = r"""
#include "v3.h"
#include <stdio.h>
#include <string.h>

int main(void) {
  static float x[4096], r[4096];
  static const char *fake_names[] = {"avx2", "no-such-feature"};
  xlac_program_info fake = v3_info;
  const char *missing = xlac_cpu_missing_feature(&v3_info);
  xlac_run_options opts;
  int k, status;
  for (k = 0; k < 4096; ++k) { x[k] = 1.0f; r[k] = -7.0f; }
  printf("cpu=%s n=%lld features=", v3_info.target_cpu, (long long)v3_info.num_cpu_features);
  for (k = 0; k < v3_info.num_cpu_features; ++k) printf("%s%s", k ? "," : "", v3_info.cpu_features[k]);
  printf(" target_features=[%s] macro=%d\n", v3_info.target_features,
         strcmp(V3_CPU_FEATURES, "sse2,sse3,ssse3,fma,sse4.1,sse4.2,movbe,popcnt,avx,f16c,bmi,avx2,bmi2,lzcnt") == 0);
  status = v3_run(x, r, NULL);
  printf("run=%d again=%d missing=%s untouched=%d\n", status, v3_run(x, r, NULL), missing ? missing : "-",
         r[0] == -7.0f);
  xlac_run_options_init(&opts);
  printf("options=%d\n", xlac_check_options(&v3_info, &opts));
  fake.cpu_features = fake_names;
  fake.num_cpu_features = 2;
  missing = xlac_cpu_missing_feature(&fake);
  printf("fake=%d missing=%s\n", xlac_check_cpu(&fake), missing ? missing : "-");
  fake.abi_version = 5;   /* an object from before the CPU fields: nothing to check */
  printf("old=%d\n", xlac_check_cpu(&fake));
  return 0;
}
"""


def test_object_for_x86_64_v3_records_its_features(tmp_path):
    res = xlac.compile_aot(VECTOR_HLO, tmp_path / "v3.o", header=tmp_path / "v3.h", name="v3", cpu="x86-64-v3")
    assert res.cpu == "x86-64-v3" and res.target_features == "" and res.cpu_features == X86_64_V3
    text = res.header_text
    assert '#define V3_TARGET_CPU "x86-64-v3"' in text
    assert f'#define V3_CPU_FEATURES "{",".join(X86_64_V3)}"' in text
    assert "XLAC_ERROR_CPU_UNSUPPORTED" in text and "cpu x86-64-v3" in text
    if shutil.which("objdump"):
        asm = _run(["objdump", "-d", tmp_path / "v3.o"]).stdout
        assert "ymm" in asm                                           # AVX2 code ...
        assert not re.search(r"zmm|%k[0-7]", asm)                     # ... and no AVX-512


def test_host_object_records_the_host_cpu(tmp_path):
    res = xlac.compile_aot(VECTOR_HLO, tmp_path / "h.o", name="h")
    host = targets.current()            # this machine (unless XLAC_TARGET_CPU names another CPU)
    assert (res.cpu, res.target_features) == (host.cpu, host.features)
    assert res.cpu_features == targets.features_of(host)
    named = xlac.compile_aot(VECTOR_HLO, tmp_path / "n.o", name="n", cpu="haswell", features="-avx2")
    assert "avx2" not in named.cpu_features and "avx" in named.cpu_features
    assert named.target_features == "-avx2"


@needs_cc
@needs_x86
@pytest.mark.parametrize("disable, status, missing", [(None, 0, "-"), ("avx2", 6, "avx2"),
                                                      ("sse4.1,f16c", 6, "sse4.1")])
def test_wrapper_refuses_a_cpu_without_a_feature(tmp_path, runtime_obj, disable, status, missing):
    """XLAC_CPU_DISABLE makes the check see a CPU without those features: the
    wrapper returns XLAC_ERROR_CPU_UNSUPPORTED without running the code and
    names the first one missing (as on an older CPU, instead of SIGILL)."""
    if not set(X86_64_V3) <= set(targets.features_of(targets.host())):
        pytest.skip("this CPU is older than x86-64-v3")
    xlac.compile_aot(VECTOR_HLO, tmp_path / "v3.o", header=tmp_path / "v3.h", name="v3", cpu="x86-64-v3")
    (tmp_path / "check.c").write_text(CPU_CHECK, encoding="utf-8")
    exe = tmp_path / "check"
    _run([CC, *CFLAGS, f"-I{tmp_path}", tmp_path / "check.c", tmp_path / "v3.o", runtime_obj, "-o", exe,
          "-lm", "-lpthread"])
    env = {k: v for k, v in os.environ.items() if k != "XLAC_CPU_DISABLE"}
    if disable:
        env["XLAC_CPU_DISABLE"] = disable
    proc = _run([exe], env=env)
    lines = proc.stdout.splitlines()
    assert lines[0] == f"cpu=x86-64-v3 n={len(X86_64_V3)} features={','.join(X86_64_V3)} target_features=[] macro=1"
    assert lines[1] == f"run={status} again={status} missing={missing} untouched={int(status != 0)}"
    assert lines[2] == f"options={status}"
    if status:
        assert proc.stderr.count("\n") == 1 and f"uses {missing}, which this CPU lacks" in proc.stderr
        assert "x86-64-v3" in proc.stderr
    else:
        assert proc.stderr == ""
    assert lines[3] == ("fake=6 missing=no-such-feature" if not disable or "avx2" not in disable
                        else "fake=6 missing=avx2")
    assert lines[4] == "old=0"


@needs_cc
@needs_x86
def test_runtime_feature_table_matches_xlac_and_llvm(tmp_path):
    """xlac_runtime.h knows every feature xlac records, and its CPUID bits say
    what LLVM's host detection says, feature by feature."""
    names = targets.X86_FEATURES
    (tmp_path / "table.c").write_text(
        '#include "xlac_runtime.h"\n#include <stdio.h>\nint main(int argc, char **argv) {\n'
        '  int k;\n  for (k = 1; k < argc; ++k) printf("%s %d\\n", argv[k], xlac_cpu_has_feature(argv[k]));\n'
        '  return 0;\n}\n', encoding="utf-8")
    _run([CC, *CFLAGS, tmp_path / "table.c", "-o", tmp_path / "table"])
    env = {k: v for k, v in os.environ.items() if k != "XLAC_CPU_DISABLE"}
    out = _run([tmp_path / "table", *names, "no-such-feature"], env=env).stdout.split()
    got = dict(zip(out[::2], map(int, out[1::2])))
    assert got.pop("no-such-feature") == -1
    host = set(targets.features_of(targets.host()))
    assert got == {name: int(name in host) for name in names}


@needs_cc
@needs_x86
def test_cpu_check_is_clean_under_sanitizers(tmp_path):
    """ASan and UBSan see nothing wrong in the check, the wrapper and the
    runtime's report (with a feature disabled, and without)."""
    if not set(X86_64_V3) <= set(targets.features_of(targets.host())):
        pytest.skip("this CPU is older than x86-64-v3")
    xlac.compile_aot(VECTOR_HLO, tmp_path / "v3.o", header=tmp_path / "v3.h", name="v3", cpu="x86-64-v3")
    (tmp_path / "check.c").write_text(CPU_CHECK, encoding="utf-8")
    exe = tmp_path / "check"
    san = ["-fsanitize=address,undefined", "-fno-sanitize-recover=all", "-g"]
    try:
        _run([CC, *CFLAGS, *san, "-pthread", f"-I{tmp_path}", tmp_path / "check.c", tmp_path / "v3.o",
              RUNTIME / "xlac_runtime.c", "-o", exe, "-lm", "-lpthread"])
    except AssertionError as ex:
        pytest.skip(f"no sanitizer runtime for {CC}: {str(ex).splitlines()[0]}")
    for disable in (None, "avx2"):
        env = {k: v for k, v in os.environ.items() if k != "XLAC_CPU_DISABLE"}
        if disable:
            env["XLAC_CPU_DISABLE"] = disable
        proc = subprocess.run([str(exe)], capture_output=True, encoding="utf-8", env=env, timeout=120)
        assert proc.returncode == 0 and "Sanitizer" not in proc.stderr and "runtime error" not in proc.stderr, \
            proc.stderr


# ------------------------------------------------------------------------------------
# Command line
# ------------------------------------------------------------------------------------

def test_cli_compile_writes_object_and_header(tmp_path, capsys):
    hlo = tmp_path / "m.hlo"
    hlo.write_text(CONST_HLO, encoding="utf-8")
    assert cli_main(["compile", str(hlo), "-o", str(tmp_path / "m.o"), "--name", "m"]) == 0
    assert (tmp_path / "m.o").read_bytes()[:4] == b"\x7fELF"
    assert "extern const xlac_program_info m_info;" in (tmp_path / "m.h").read_text(encoding="utf-8")
    assert "wrote" in capsys.readouterr().out
    assert cli_main(["compile", str(hlo), "-o", str(tmp_path / "v3.o"), "--name", "v3", "--cpu", "x86-64-v3"]) == 0
    assert "for CPU x86-64-v3" in capsys.readouterr().out
    assert '#define V3_TARGET_CPU "x86-64-v3"' in (tmp_path / "v3.h").read_text(encoding="utf-8")


@pytest.mark.parametrize("content, args, message", [
    (None, [], "No such file"),
    ("HloModule broken\nENTRY main {\n  ROOT x = f32[ parameter(0)\n}\n", [], "m.hlo:3:"),
    ("HloModule u\nENTRY main {\n  x = f32[4,4] parameter(0)\n  ROOT f = f32[4,4] "
     "xlac-test-unimplemented(x)\n}\n", [], "not supported yet: xlac-test-unimplemented"),
    (CONST_HLO, ["--name", "a b"], "not a C identifier"),
    (CONST_HLO, ["--target-triple", "bogus-triple"], "bogus-triple"),
    (CONST_HLO, ["--cpu", "no-such-cpu"], "not a recognized processor"),
    (CONST_HLO, ["--features", "+no-such-feature"], "not a recognized feature"),
])
def test_cli_compile_errors_are_one_line(tmp_path, capsys, content, args, message):
    hlo = tmp_path / "m.hlo"
    if content is not None:
        hlo.write_text(content, encoding="utf-8")
    status = cli_main(["compile", str(hlo), "-o", str(tmp_path / "m.o"), *args])
    err = capsys.readouterr().err
    assert status != 0
    assert message in err and err.count("\n") == 1 and "Traceback" not in err, err
    assert not (tmp_path / "m.o").exists()


def test_cli_compile_unwritable_output(tmp_path, capsys):
    hlo = tmp_path / "m.hlo"
    hlo.write_text(CONST_HLO, encoding="utf-8")
    status = cli_main(["compile", str(hlo), "-o", str(tmp_path / "missing" / "m.o")])
    err = capsys.readouterr().err
    assert status == 1 and err.count("\n") == 1 and "m.o" in err


# ------------------------------------------------------------------------------------
# The Makefile example
# ------------------------------------------------------------------------------------

@needs_cc
@pytest.mark.skipif(shutil.which("make") is None, reason="no make on PATH")
def test_make_runtime_examples(tmp_path):
    env = dict(os.environ, PYTHON=sys.executable, CC=CC)
    proc = _run(["make", "-C", RUNTIME / "examples", f"BUILD={tmp_path / 'build'}"], env=env)
    lines = proc.stdout.splitlines()
    start = next(k for k, line in enumerate(lines) if line.startswith("result f32[16,10]"))
    printed = np.array([[float(v) for v in line.split("->")[0].split()] for line in lines[start + 1:start + 17]],
                       dtype=np.float32)
    module = xlac.parse_hlo((RUNTIME / "examples" / "mlp.hlo").read_text(encoding="utf-8"))
    inputs = []
    for p, param in enumerate(module.entry.parameters):
        n = param.shape.element_count()
        k = np.arange(n)
        inputs.append((((7 * k + 3 * p) % 17 - 8).astype(np.float32) / np.float32(16)).reshape(param.shape.dimensions))
    np.testing.assert_array_equal(printed, xlac.jit(module)(*inputs))   # %.9g round-trips f32


@needs_cc
def test_gather_of_empty_slices_from_c(tmp_path, runtime_obj):
    # Issue 12, item 1: found linking the object into a C harness under
    # AddressSanitizer; the collapsed slice of size 0 read operand[4].
    from codegen.test_zero_size import CASES
    text, args = CASES["gather_collapsed_slice_size_0"]
    _, outputs, _ = build_and_run(xlac.parse_hlo(text), list(args), tmp_path, runtime_obj, name="g0")
    np.testing.assert_array_equal(outputs[0], np.zeros(3, np.float32))


@needs_cc
def test_narrow_types_from_c_match_jit(tmp_path, runtime_obj):
    # f8/f4 and sub-byte integer buffers: one byte per element, as the header says.
    text = """HloModule narrow
ENTRY e {
  x = f32[64] parameter(0)
  q = s4[64] parameter(1)
  a = f8e4m3fn[64] convert(x)
  b = f8e5m2[64] convert(x)
  c = f4e2m1fn[64] convert(x)
  d = f8e8m0fnu[64] convert(x)
  s = f32[64] convert(a)
  t = f32[64] convert(q)
  u = f32[64] add(s, t)
  n = s4[64] negate(q)
  ROOT r = (f8e4m3fn[64], f8e5m2[64], f4e2m1fn[64], f8e8m0fnu[64], f32[64], s4[64]) tuple(a, b, c, d, u, n)
}
"""
    import ml_dtypes
    rng = np.random.default_rng(2)
    x = (rng.standard_normal(64) * 10.0 ** rng.integers(-3, 4, 64)).astype(np.float32)
    x[:4] = [np.nan, np.inf, -np.inf, 500]
    q = np.arange(64).astype(np.int8).astype(ml_dtypes.int4)
    res, outputs, _ = build_and_run(text, [x, q], tmp_path, runtime_obj, name="narrow")
    header = (tmp_path / "narrow.h").read_text(encoding="utf-8")
    assert "uint8_t" in header and "f8e4m3fn[64]" in header
    expected = xlac.jit(text)(x, q)
    for k, (got, want) in enumerate(zip(outputs, expected)):
        _assert_same_bits(got, np.asarray(want), f"result {k}")


@needs_cc
def test_declared_entry_layout_is_the_c_calling_convention(tmp_path, runtime_obj):
    # The header's entry_computation_layout differs from the parameter's and the
    # root's layouts: a C caller passes and gets buffers in the declared ones.
    text = """HloModule declared, entry_computation_layout={(f32[4,6]{0,1})->f32[6,4]{0,1}}

ENTRY e {
  p = f32[4,6]{1,0} parameter(0)
  ROOT t = f32[6,4]{1,0} transpose(p), dimensions={1,0}
}
"""
    x = np.arange(24, dtype=np.float32).reshape(4, 6)
    res, outputs, _ = build_and_run(text, [x], tmp_path, runtime_obj, name="declared")
    assert [str(p.shape) for p in res.params] == ["f32[4,6]{0,1}"]
    assert [str(r.shape) for r in res.results] == ["f32[6,4]{0,1}"]
    header = (tmp_path / "declared.h").read_text(encoding="utf-8")
    assert "minor_to_major={0,1}" in header
    np.testing.assert_array_equal(outputs[0], x.T)
    np.testing.assert_array_equal(xlac.jit(text)(x), x.T)


def test_an_object_written_to_a_pipe_leaves_the_pipe_in_place(tmp_path):
    """``-o /dev/null`` and pipes: a path that is not a regular file is written
    to, not replaced by a new file (as root, a replaced ``/dev/null`` broke the
    machine).  Tested on a FIFO, whose reader gets the object."""
    import stat
    import threading
    fifo = tmp_path / "obj.fifo"
    os.mkfifo(fifo)
    got = []
    reader = threading.Thread(target=lambda: got.append(fifo.read_bytes()), daemon=True)
    reader.start()
    try:
        aot.compile_aot(xlac.parse_hlo(CONST_HLO), str(fifo))
    finally:
        if reader.is_alive():
            with open(fifo, "wb"):       # a reader still waiting: let it go
                pass
        reader.join(timeout=30)
    assert stat.S_ISFIFO(os.stat(fifo).st_mode)
    assert got and got[0][:4] == b"\x7fELF"
    assert not list(tmp_path.glob("obj.fifo.tmp*"))
