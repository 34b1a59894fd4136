"""Ahead-of-time compilation: an ELF object file and a C header.

``compile_aot(x, "fn.o", header="fn.h", name="fn")`` compiles an
XlaComputation, HloModule or HLO text with the same code generator as
``xlac.jit`` (:func:`xlac.codegen.compiler.lower`, then LLVM's O2, its library code's O3) and writes a
relocatable object (position independent, so it links into PIE executables and
shared libraries) that a plain C program links and calls without Python.

The object defines exactly two external symbols (everything else is local):

``NAME``
    the entry function of ``runtime/xlac_runtime.h``:
    ``void NAME(void **results, const void *const *params, void *temp, const xlac_run_options *opts)``
``NAME_info``
    a ``const xlac_program_info``: number of parameters and results, each one's
    element type, dimensions, layout and byte size, the temp arena size, the
    services the module needs, the target it was built for: triple, CPU name,
    feature string and the instruction-set extensions its code may use.

The code is for one CPU: this machine's by default (its CPU name and every
extension it has, as the JIT's; or ``XLAC_TARGET_CPU``'s), else the ``cpu``
and ``features`` given (``x86-64-v3``, ``generic``, ...: an object that runs
on older machines).  The module is lowered for that target (its vector width
picks tiles and loop widths, as in the JIT), and the extensions
(``xlac.codegen.target.features_of``) are recorded; the header's wrapper
checks them before the first call (``xlac_check_cpu``) and returns
``XLAC_ERROR_CPU_UNSUPPORTED`` on a CPU without one, instead of the illegal
instruction the code would stop on.

Its undefined symbols are libc/libm functions only.  exp, expm1, log, log1p,
tanh, logistic (f32, f64) and erf (f32) are emitted inline as vectorisable
polynomials (``xlac/codegen/math_approx.py``); the other math (sin, cos, tan,
pow, cbrt, atan2, f64 erf, ...) is called from the system libm, and LLVM may
call ``memset``/``memcpy``.  With ``XLAC_EXACT_MATH=1`` all math goes to libm.

The header (C99; includes only ``xlac_runtime.h`` and standard headers)
declares both symbols, defines the sizes as macros (``NAME_TEMP_SIZE``,
``NAME_PARAM0_BYTES``, ...), documents every parameter and result with its HLO
shape, and defines ``static inline int NAME_run(params..., results..., opts)``,
a one-call wrapper that checks what can be checked (the CPU too), allocates the
temp arena, calls ``NAME`` and frees the arena.
"""
from __future__ import annotations

import os
import re
import textwrap
from dataclasses import dataclass, field

import llvmlite.binding as llvm
from llvmlite import ir

from .codegen.compiler import lower
from .codegen.gemm_library import link_into
from .codegen import target as targets
from .codegen.jit import LIBRARY_SPEED_LEVEL, PROGRAM_SPEED_LEVEL, emit_object, optimize, slp_vectorizes
from .codegen.nontemporal import NAMED as NONTEMPORAL
from .codegen.nontemporal import prepare as prepare_nontemporal
from .hlo.feeds import data_leaves, feed_instructions
from .hlo import custom_call
from .hlo.ir import HloModule
from .program import as_module
from .runtime.abi import ABI_VERSION, ELEMENT_TYPE_NUMBERS
from .shape import PrimitiveType as PT
from .shape import Shape

__all__ = ["compile_aot", "aot_target", "AotResult", "LeafInfo", "ELEMENT_TYPE_NUMBERS", "SERVICE_BITS"]

#: XLAC_SERVICE_* bits of xlac_runtime.h.
SERVICE_BITS = {"parallel_for": 1, "collective": 2, "infeed": 4, "outfeed": 8, "custom_call": 16}

#: Which opcodes need which mandatory service.
_SERVICE_OPCODES = {
    "collective": {"all-reduce", "all-reduce-start", "all-gather", "all-gather-start", "reduce-scatter",
                   "all-to-all", "collective-permute", "collective-permute-start", "collective-broadcast"},
    "infeed": {"infeed"},
    "outfeed": {"outfeed"},
    "custom_call": {"custom-call"},
}

_C_TYPES = {
    PT.PRED: "uint8_t", PT.S8: "int8_t", PT.S16: "int16_t", PT.S32: "int32_t", PT.S64: "int64_t",
    PT.U8: "uint8_t", PT.U16: "uint16_t", PT.U32: "uint32_t", PT.U64: "uint64_t",
    PT.F16: "uint16_t", PT.BF16: "uint16_t", PT.F32: "float", PT.F64: "double",
    PT.C64: "xlac_c64", PT.C128: "xlac_c128", PT.TOKEN: "void",
    # The narrow types: one byte per element (bits of an f8/f4, low bits of an s4...).
    **{pt: "uint8_t" for pt in PT if pt.is_sub_byte or pt.float_format is not None},
}

#: C keywords, plus names the generated header uses itself (macros, the wrapper's locals).
_RESERVED = set("""auto break case char const continue default do double else enum extern float
for goto if inline int long register restrict return short signed sizeof static struct switch
typedef union unsigned void volatile while _Bool _Complex _Imaginary _Alignas _Alignof _Atomic
_Generic _Noreturn _Static_assert _Thread_local bool true false main opts params results temp
raw NULL""".split())

_IDENT = re.compile(r"[A-Za-z_][A-Za-z0-9_]*\Z")

#: libc/libm functions generated code may call: an entry of that name would
#: clash with (and in a program, replace) the library's.
_MATH = """acos acosh asin asinh atan atan2 atanh cbrt ceil copysign cos cosh erf erfc exp exp2 exp10
expm1 fabs fdim floor fma fmax fmin fmod frexp hypot ilogb ldexp lgamma llrint llround log log10
log1p log2 logb lrint lround modf nan nearbyint nextafter pow remainder remquo rint round roundeven
scalbn sin sincos sinh sqrt tan tanh tgamma trunc""".split()
_LIBC_NAMES = {f + suffix for f in _MATH for suffix in ("", "f", "l")} | {
    "memset", "memcpy", "memmove", "memcmp", "malloc", "free", "abort", "exit"}

PTR = ir.PointerType()
I8, I32, I64 = ir.IntType(8), ir.IntType(32), ir.IntType(64)
SHAPE_INFO = ir.LiteralStructType([PTR, PTR, I32, I32, I64, PTR, PTR, PTR, I64, I64])
PROGRAM_INFO = ir.LiteralStructType([I64, PTR, PTR, PTR, PTR, I64, PTR, I64, PTR, PTR, I64, I64, I64,
                                     PTR, PTR, PTR, I64, PTR])
ALIGNMENT = 64


@dataclass
class LeafInfo:
    """One parameter or result buffer as the object and header describe it."""

    index: int
    name: str            # HLO parameter name ("" for results)
    c_name: str          # the wrapper's argument name
    shape: Shape

    @property
    def c_type(self) -> str:
        return _C_TYPES[self.shape.element_type]

    @property
    def byte_size(self) -> int:
        return self.shape.byte_size()

    @property
    def element_size(self) -> int:
        return self.shape.element_type.byte_size if self.shape.is_array else 0

    @property
    def alignment(self) -> int:
        """The alignment the generated code needs: one element (one component if complex)."""
        if not self.shape.is_array:
            return 1
        return self.shape.element_type.component_type.byte_size


@dataclass
class AotResult:
    """What :func:`compile_aot` wrote."""

    name: str
    object_path: str
    header_path: str | None
    params: list[LeafInfo]
    results: list[LeafInfo]
    result_shape: Shape
    temp_size: int
    required_services: int
    triple: str
    cpu: str
    fingerprint: str
    module_name: str
    symbols: tuple = field(default=())   # the external symbols the object defines
    header_text: str = ""
    #: For a module with dynamic dimensions: the lines of the header that say
    #: which buffers hold which sizes (see :func:`_dynamic_doc`).
    dynamic_doc: list = field(default_factory=list)
    #: the infeeds and outfeeds the code runs (``xlac.hlo.feeds.FeedInstruction``)
    feeds: list = field(default_factory=list)
    #: the LAPACK/BLAS routines the object calls (jax's lapack_*_ffi custom calls): link a LAPACK
    lapack_symbols: tuple = field(default=())
    #: the LLVM feature string the code was compiled with ("": the CPU's own)
    target_features: str = ""
    #: the instruction-set extensions the code may use (LLVM's names), which the wrapper checks
    cpu_features: tuple = field(default=())


def _check_name(name: str) -> None:
    if not isinstance(name, str) or not _IDENT.match(name):
        raise ValueError(f"name {name!r} is not a C identifier ([A-Za-z_][A-Za-z0-9_]*)")
    if name in _RESERVED or name in _LIBC_NAMES or name.startswith(("xlac_", "llvm", "__")):
        raise ValueError(f"name {name!r} is reserved (a C keyword, a libc/libm function, main, "
                         "or an xlac_/llvm/__ prefix)")


def _c_names(names: list[str], fallback: str, taken: set, reserved_prefix: str) -> list[str]:
    """Distinct C identifiers for ``names`` that are no keyword, local or macro of the header."""
    out = []
    for k, raw in enumerate(names):
        base = re.sub(r"[^A-Za-z0-9_]+", "_", raw or "").strip("_")
        if (not base or not _IDENT.match(base) or base in _RESERVED or base.startswith(("__", "xlac_"))
                or base.upper().startswith(reserved_prefix)):
            base = f"{fallback}{k}"
        cand, n = base, 1
        while cand in taken:
            n += 1
            cand = f"{base}_{n}"
        taken.add(cand)
        out.append(cand)
    return out


def _lapack_symbols(module: HloModule) -> tuple:
    """The Fortran symbols of the LAPACK routines ``module``'s custom calls call."""
    out = set()
    for comp in module.computations:
        for inst in comp.instructions:
            if inst.opcode == "custom-call":
                t = custom_call.lapack_target(custom_call.target_of(inst))
                if t is not None:
                    out.add(t.symbol)
    return tuple(sorted(out))


def required_services(module: HloModule) -> int:
    """XLAC_SERVICE_* bits for the services ``module``'s instructions call (a
    custom call of jax's LAPACK targets calls LAPACK itself, no service)."""
    opcodes = {inst.opcode for comp in module.computations for inst in comp.instructions
               if not (inst.opcode == "custom-call" and custom_call.is_builtin(custom_call.target_of(inst)))}
    bits = 0
    for service, ops in _SERVICE_OPCODES.items():
        if opcodes & ops:
            bits |= SERVICE_BITS[service]
    return bits


# ---------------------------------------------------------------------------------------
# Metadata in the LLVM module
# ---------------------------------------------------------------------------------------

class _Meta:
    def __init__(self, module: ir.Module, name: str):
        self.m = module
        self.prefix = f"{name}.xlac_meta"
        self._strings: dict[str, ir.GlobalVariable] = {}

    def _global(self, ty, init) -> ir.GlobalVariable:
        g = ir.GlobalVariable(self.m, ty, self.m.get_unique_name(self.prefix))
        g.initializer = init
        g.global_constant = True
        g.linkage = "private"
        g.unnamed_addr = True
        return g

    def string(self, s: str) -> ir.GlobalVariable:
        g = self._strings.get(s)
        if g is None:
            data = bytearray(s.encode() + b"\0")
            ty = ir.ArrayType(I8, len(data))
            g = self._strings[s] = self._global(ty, ir.Constant(ty, data))
        return g

    def i64_array(self, values) -> ir.Constant | ir.GlobalVariable:
        values = list(values)
        if not values:
            return ir.Constant(PTR, None)
        ty = ir.ArrayType(I64, len(values))
        g = self._global(ty, ir.Constant(ty, [ir.Constant(I64, int(v)) for v in values]))
        g.align = 8
        return g

    def shape_info(self, leaf: LeafInfo) -> ir.Constant:
        s = leaf.shape
        if s.is_array:
            dims, m2m = s.dimensions, s.layout.minor_to_major
            padded = self.i64_array(s.layout.padded_dimensions) if s.layout.is_padded and s.rank \
                else ir.Constant(PTR, None)
        else:
            dims, m2m, padded = (), (), ir.Constant(PTR, None)
        return ir.Constant(SHAPE_INFO, [
            self.string(leaf.name), self.string(str(s)),
            ir.Constant(I32, ELEMENT_TYPE_NUMBERS[s.element_type]), ir.Constant(I32, leaf.element_size),
            ir.Constant(I64, len(dims)), self.i64_array(dims), self.i64_array(m2m), padded,
            ir.Constant(I64, s.element_count() if s.is_array else 0), ir.Constant(I64, leaf.byte_size),
        ])

    def string_table(self, strings) -> ir.Constant | ir.GlobalVariable:
        """A ``const char *const[]`` of ``strings`` (NULL when there are none)."""
        strings = list(strings)
        if not strings:
            return ir.Constant(PTR, None)
        ty = ir.ArrayType(PTR, len(strings))
        g = self._global(ty, ir.Constant(ty, [self.string(x) for x in strings]))
        g.align = 8
        return g

    def leaf_table(self, leaves: list[LeafInfo]):
        if not leaves:
            return ir.Constant(PTR, None)
        ty = ir.ArrayType(SHAPE_INFO, len(leaves))
        g = self._global(ty, ir.Constant(ty, [self.shape_info(leaf) for leaf in leaves]))
        g.align = 8
        return g


def _emit_metadata(llvm_module: ir.Module, res: AotResult) -> None:
    meta = _Meta(llvm_module, res.name)
    entry = llvm_module.get_global(res.name)
    info = ir.GlobalVariable(llvm_module, PROGRAM_INFO, f"{res.name}_info")
    info.global_constant = True
    info.align = 8
    info.initializer = ir.Constant(PROGRAM_INFO, [
        ir.Constant(I64, ABI_VERSION), meta.string(res.name), meta.string(res.module_name),
        meta.string(res.fingerprint), entry,
        ir.Constant(I64, len(res.params)), meta.leaf_table(res.params),
        ir.Constant(I64, len(res.results)), meta.leaf_table(res.results),
        meta.string(str(res.result_shape)),
        ir.Constant(I64, res.temp_size), ir.Constant(I64, ALIGNMENT), ir.Constant(I64, res.required_services),
        meta.string(res.triple), meta.string(res.cpu),
        meta.string(res.target_features), ir.Constant(I64, len(res.cpu_features)),
        meta.string_table(res.cpu_features),
    ])


# ---------------------------------------------------------------------------------------
# The header
# ---------------------------------------------------------------------------------------

def _layout_words(s: Shape) -> str:
    if not s.is_array:
        return "no storage"
    if s.rank <= 1:
        words = "contiguous"
    elif s.has_default_layout():
        words = "row-major (C order)"
    else:
        m2m = s.layout.minor_to_major
        words = f"minor_to_major={{{','.join(map(str, m2m))}}} (dimension {m2m[0]} varies fastest)"
    if s.layout.is_padded:
        words += (f", padded to [{','.join(map(str, s.layout.padded_dimensions))}]"
                  f" with padding value {s.layout.padding_value}")
    return words


def _leaf_doc(kind: str, leaf: LeafInfo) -> str:
    s = leaf.shape
    label = f" ({leaf.name})" if leaf.name else ""
    if not s.is_array:
        return f" *   {kind} {leaf.index}{label}: {s} -- a token, no buffer (pass NULL)"
    dims = "".join(f"[{d}]" for d in s.physical_dimensions()) or ""
    return (f" *   {kind} {leaf.index}{label}: {s}\n"
            f" *       {leaf.c_type}{dims}, {leaf.byte_size} bytes, {_layout_words(s)},"
            f" aligned to >= {leaf.alignment}")


def _dynamic_doc(signature, first_slot: dict, num_slots: int) -> list[str]:
    """Header lines for a module with dynamic dimensions (padded by
    ``xlac.passes.dynamic_padder``): which int32 buffers hold which sizes."""
    if signature is None:
        return []
    params = ", ".join(str(s) for s in signature.parameter_shapes)
    lines = [f" * Dynamic dimensions (HLO signature ({params}) -> {signature.result_shape}): every",
             " * buffer holds the bound's worth of elements, laid out over the bounds; the size of",
             " * each dynamic dimension travels in an int32_t buffer of its own. Elements past a",
             " * size are padding: the code never reads a parameter's, a result's are undefined."]
    first = num_slots - len(signature.parameter_sizes)
    for j, (p, d) in enumerate(signature.parameter_sizes):
        bound = signature.parameter_shapes[p].dimensions[d]
        lines.append(f" *   param {first + j}: size of dimension {d} of param {first_slot[p]}, 0..{bound}")
    leaves = len(signature.result_shape.leaves())
    for j, (k, d) in enumerate(signature.result_sizes):
        lines.append(f" *   result {leaves + j}: size of dimension {d} of result {k}")
    return lines


def _feeds_doc(res: AotResult) -> list[str]:
    """The header's account of the module's infeeds and outfeeds (xlac_runtime.h has the contract)."""
    if not res.feeds:
        return []
    lines = [" * Infeed and outfeed: each run of these instructions calls opts->infeed or",
             " * opts->outfeed once per array leaf, in this order (see xlac_runtime.h):"]
    for f in res.feeds:
        leaves = data_leaves(f.shape)
        lines.append(f" *   {f}:" + ("" if leaves else " no call (an empty tuple)"))
        lines += [f" *       leaf {k}: {s}, {s.byte_size()} bytes, {_layout_words(s)}"
                  for k, s in enumerate(leaves)]
    return lines


def _features_doc(res: AotResult, limit: int = 60) -> str:
    """The LLVM feature string for a comment (the host's has ~1000 characters)."""
    f = res.target_features
    return f if len(f) <= limit else f"{f[:limit]}... (all in {res.name}_info.target_features)"


def _cpu_doc(res: AotResult) -> list[str]:
    """The header's lines on the CPU the code needs."""
    if not res.cpu_features:
        return []
    words = ", ".join(res.cpu_features)
    lines = textwrap.wrap(f"The code uses {words}: {res.name}_run returns XLAC_ERROR_CPU_UNSUPPORTED on a "
                          f"CPU without one of them ({res.name.upper()}_CPU_FEATURES; xlac_check_cpu, "
                          "xlac_cpu_missing_feature). For older CPUs compile with --cpu (x86-64-v2, ...).",
                          width=84)
    return [f" * {line}" for line in lines]


def _header(res: AotResult) -> str:
    n, N = res.name, res.name.upper()
    guard = f"XLAC_GENERATED_{N}_H_"
    lines = [
        f"/* {n}.h -- generated by xlac from HLO module {res.module_name}. Do not edit.",
        " *",
        f" * Link with the object file compiled with it (xlac compile ... --name {n}); it defines",
        f" * exactly {n} and {n}_info. Its other undefined symbols are libc/libm only (link with -lm)"
        + ("," if res.lapack_symbols else "."),
        *([" * and the LAPACK/BLAS routines " + ", ".join(res.lapack_symbols) + " (jax's LAPACK custom",
           " * calls): link with -llapack -lblas, or -lopenblas (LP64, 32-bit integers)."]
          if res.lapack_symbols else []),
        f" * Target: {res.triple}, cpu {res.cpu or 'generic'}"
        + (f", features {_features_doc(res)}." if res.target_features else "."),
        *_cpu_doc(res),
        f" * Module fingerprint: {res.fingerprint}",
        " *",
        " * Parameters (read only):",
        *([_leaf_doc("param", p) for p in res.params] or [" *   none"]),
        f" * Result {res.result_shape} as {len(res.results)} buffer(s)"
        + (" (tuple leaves, depth-first):" if res.result_shape.is_tuple else ":"),
        *[_leaf_doc("result", r) for r in res.results],
        *res.dynamic_doc,
        f" * Temp arena: {res.temp_size} bytes, aligned to {ALIGNMENT} (XLAC_ALIGNMENT)"
        + ("; pass NULL." if res.temp_size == 0 else "."),
        *_feeds_doc(res),
        " *",
        " * What the caller must provide:",
        " *  (a) every buffer at least the byte size above, laid out as its layout says",
        " *      (row-major is C order; padded dimensions count in the size) and holding",
        " *      elements as xlac_runtime.h stores them (pred: bytes 0 or 1; f16/bf16: raw bits);",
        " *  (b) every buffer of nonzero size non-NULL and aligned as above (XLAC_ALIGNMENT",
        " *      bytes is faster); the temp arena aligned to XLAC_ALIGNMENT;",
        " *  (c) result buffers that overlap neither each other, the parameters nor the temp arena;",
        f" *  (d) the services {N}_REQUIRED_SERVICES names (XLAC_SERVICE_* bits), set in opts;",
        " *      opts may be NULL when it is 0.",
        f" * {n}_run checks (b), (c), (d) and that this header matches the linked object; it",
        " * cannot check (a): a buffer too small or of the wrong type is undefined behaviour.",
        f" * It allocates the temp arena with malloc; call {n} directly with your own arena",
        f" * of {N}_TEMP_SIZE bytes to avoid that. The code is reentrant: concurrent calls",
        " * need distinct temp arenas and result buffers.",
        " */",
        f"#ifndef {guard}",
        f"#define {guard}",
        "",
        "#include <stddef.h>",
        "#include <stdint.h>",
        "#include <stdlib.h>",
        "#include <string.h>",
        "",
        '#include "xlac_runtime.h"',
        "",
        "#ifdef __cplusplus",
        'extern "C" {',
        "#endif",
        "",
        f"#if XLAC_ABI_VERSION != {ABI_VERSION}",
        f'#error "{n}.h was generated for xlac ABI version {ABI_VERSION}"',
        "#endif",
        "",
        f"#define {N}_NUM_PARAMS {len(res.params)}",
        f"#define {N}_NUM_RESULTS {len(res.results)}",
        f"#define {N}_TEMP_SIZE {res.temp_size}",
        f"#define {N}_REQUIRED_SERVICES {res.required_services}u",
        f'#define {N}_FINGERPRINT "{res.fingerprint}"',
        f'#define {N}_TARGET_CPU "{res.cpu}"',
        f'#define {N}_CPU_FEATURES "{",".join(res.cpu_features)}"',
    ]
    for kind, leaves in (("PARAM", res.params), ("RESULT", res.results)):
        for leaf in leaves:
            lines.append(f"#define {N}_{kind}{leaf.index}_BYTES {leaf.byte_size}"
                         f"  /* {leaf.shape} */")
            if leaf.shape.is_array:
                lines.append(f"#define {N}_{kind}{leaf.index}_ELEMENTS {leaf.shape.buffer_element_count()}")
    lines += [
        "",
        "/* The entry function (see xlac_runtime.h for the ABI). */",
        f"extern void {n}(void **results, const void *const *params, void *temp,",
        f"{' ' * (12 + len(n))}const xlac_run_options *opts);",
        "/* Sizes, shapes and layouts of the parameters and results, as data. */",
        f"extern const xlac_program_info {n}_info;",
        "",
    ]
    lines += _wrapper(res)
    lines += ["", "#ifdef __cplusplus", "}", "#endif", "", f"#endif /* {guard} */", ""]
    return "\n".join(lines)


def _c_array(ctype: str, name: str, values) -> str:
    values = list(values) or [0]
    return f"  static const {ctype} {name}[{len(values)}] = {{{', '.join(map(str, values))}}};"


def _wrapper(res: AotResult) -> list[str]:
    n, N = res.name, res.name.upper()
    args = []
    for p in res.params:
        args.append(f"const {p.c_type} *{p.c_name} /* param {p.index}: {p.shape} */")
    for r in res.results:
        args.append(f"{r.c_type} *{r.c_name} /* result {r.index}: {r.shape} */")
    args.append("const xlac_run_options *opts")
    np_, nr = len(res.params), len(res.results)
    out = [
        "/* XLAC_OK if the buffers are non-NULL (unless empty), aligned, and results overlap",
        "   nothing else; XLAC_ERROR_INVALID_ARGUMENT otherwise. */",
        f"static inline int {n}_check_buffers_(const void *const *params, void *const *results) {{",
        _c_array("size_t", "param_bytes", [p.byte_size for p in res.params]),
        _c_array("size_t", "param_align", [p.alignment for p in res.params]),
        _c_array("size_t", "result_bytes", [r.byte_size for r in res.results]),
        _c_array("size_t", "result_align", [r.alignment for r in res.results]),
        "  int k, j;",
        f"  for (k = 0; k < {np_}; ++k)",
        "    if (param_bytes[k] != 0 &&",
        "        (params[k] == NULL || (uintptr_t)params[k] % param_align[k] != 0))",
        "      return XLAC_ERROR_INVALID_ARGUMENT;",
        f"  for (k = 0; k < {nr}; ++k) {{",
        "    uintptr_t r = (uintptr_t)results[k];",
        "    size_t rn = result_bytes[k];",
        "    if (rn == 0) continue;",
        "    if (results[k] == NULL || r % result_align[k] != 0) return XLAC_ERROR_INVALID_ARGUMENT;",
        f"    for (j = 0; j < {np_}; ++j)",
        "      if (param_bytes[j] != 0 && r < (uintptr_t)params[j] + param_bytes[j] &&",
        "          (uintptr_t)params[j] < r + rn)",
        "        return XLAC_ERROR_INVALID_ARGUMENT;",
        "    for (j = 0; j < k; ++j)",
        "      if (result_bytes[j] != 0 && r < (uintptr_t)results[j] + result_bytes[j] &&",
        "          (uintptr_t)results[j] < r + rn)",
        "        return XLAC_ERROR_INVALID_ARGUMENT;",
        "  }",
        "  (void)params;",
        "  (void)results;",
        "  (void)j;",
        "  return XLAC_OK;",
        "}",
        "",
        f"/* Runs {n} on the buffers given: returns XLAC_OK, or an XLAC_ERROR_* status (then",
        f"   without running {n}). opts may be NULL when {N}_REQUIRED_SERVICES is 0. */",
        f"static inline int {n}_run(" + ",\n    ".join(args) + ") {",
        f"  const void *params[{max(1, np_)}];",
        f"  void *results[{max(1, nr)}];",
        "  static int cpu_checked = 0; /* xlac_check_cpu's answer, once known */",
        "  void *raw = NULL, *temp = NULL;",
        "  int status;",
        f"  if ({n}_info.abi_version != XLAC_ABI_VERSION || {n}_info.num_params != {N}_NUM_PARAMS ||",
        f"      {n}_info.num_results != {N}_NUM_RESULTS || {n}_info.temp_size != {N}_TEMP_SIZE ||",
        f"      strcmp({n}_info.fingerprint, {N}_FINGERPRINT) != 0)",
        "    return XLAC_ERROR_ABI_MISMATCH; /* this header does not belong to the linked object */",
        "  if (opts != NULL && opts->abi_version != XLAC_ABI_VERSION) return XLAC_ERROR_ABI_MISMATCH;",
        f"  status = xlac_check_cpu_once_(&{n}_info, &cpu_checked);",
        "  if (status != XLAC_OK) return status; /* the CPU lacks an extension: xlac_cpu_missing_feature */",
    ]
    for service in ("collective", "infeed", "outfeed", "custom_call"):
        if res.required_services & SERVICE_BITS[service]:
            out.append(f"  if (opts == NULL || opts->{service} == NULL) return XLAC_ERROR_MISSING_SERVICE;")
    if not np_:
        out.append("  params[0] = NULL;")
    if not nr:
        out.append("  results[0] = NULL;")
    out += [f"  params[{p.index}] = (const void *){p.c_name};" for p in res.params]
    out += [f"  results[{r.index}] = (void *){r.c_name};" for r in res.results]
    out += [
        f"  status = {n}_check_buffers_(params, results);",
        "  if (status != XLAC_OK) return status;",
    ]
    if res.temp_size > 0:
        out += [
            f"  raw = malloc((size_t){N}_TEMP_SIZE + XLAC_ALIGNMENT - 1);",
            "  if (raw == NULL) return XLAC_ERROR_NO_MEMORY;",
            "  temp = (void *)(((uintptr_t)raw + XLAC_ALIGNMENT - 1) & ~(uintptr_t)(XLAC_ALIGNMENT - 1));",
        ]
    out += [
        f"  {n}(results, params, temp, opts);",
        "  free(raw);",
        "  return XLAC_OK;",
        "}",
    ]
    return out


# ---------------------------------------------------------------------------------------
# Driver
# ---------------------------------------------------------------------------------------

def compile_aot(x, path_o: str | os.PathLike, header: str | os.PathLike | None = None, name: str = "fn",
                target: str | None = None, cpu: str | None = None, features: str | None = None,
                opt: int = 3) -> AotResult:
    """Compile ``x`` (XlaComputation, HloModule or HLO text) to an object file.

    ``path_o``: the ELF object to write (a new file replaces a regular file
    there only once it is whole; a device or a pipe, ``/dev/null``, is written
    to); ``header``: where to write the C header (none when ``None``);
    ``name``: the entry function's C name (a C identifier);
    ``target``: an LLVM target triple (default: the host's); ``cpu``/``features``:
    LLVM CPU name and feature string.  The default is this machine's CPU with
    every extension it has, exactly what the JIT uses (:func:`aot_target`);
    ``cpu="x86-64-v3"`` (``x86-64-v2``, ``generic``, ``haswell``, ...) makes an
    object for that CPU and every later one, with only its own features plus
    ``features``.  The object records the extensions its code may use, and the
    header's wrapper refuses to run it on a CPU without them.

    Raises ``xlac.HloParseError``, ``xlac.ShapeError``, ``xlac.UnsupportedError``
    as ``xlac.jit`` does, ``ValueError`` for a bad name or target, ``OSError`` when
    a file cannot be written.
    """
    _check_name(name)
    module = as_module(x)
    where = aot_target(target, cpu, features)
    tm = targets.target_machine(where, opt=opt, reloc="pic", codemodel="default")
    triple = tm.triple
    # Lowered for that CPU: its vector width picks GEMM tiles, loop and transpose widths.
    with targets.using(where):
        lowered = lower(module, entry_name=name, triple=triple, data_layout=str(tm.target_data), abi=True)
        res = _describe(lowered, module, name, path_o, header, where, triple)
        _emit_metadata(lowered.llvm_module, res)
        text = prepare_nontemporal(str(lowered.llvm_module))
        ref = llvm.parse_assembly(text)
        ref.triple = triple
        ref.data_layout = str(tm.target_data)
        ref.verify()
        # Optimised as the JIT optimises them (the same bits for fast-math
        # code): the program's code at its level with the SLP vectoriser as
        # the JIT decides it, then the GEMM library code it calls, each
        # variant at the library's level, linked in (the object stays
        # self-contained).
        ref = optimize(ref, tm, PROGRAM_SPEED_LEVEL, mark_nontemporal=f"!{NONTEMPORAL}" in text,
                       slp=slp_vectorizes(text))
        link_into(ref, lambda lib: optimize(lib, tm, LIBRARY_SPEED_LEVEL, slp=slp_vectorizes(str(lib))))
    exported = set(res.symbols)
    for value in list(ref.functions) + list(ref.global_variables):
        if not value.is_declaration and value.name not in exported:
            value.linkage = "private"    # no symbol at all in the object's table
    data = emit_object(tm, ref, module_options=False)    # LLVM's defaults (see jit.emit_object)

    res.header_text = _header(res)
    _write(res.object_path, data)
    if res.header_path is not None:
        _write(res.header_path, res.header_text.encode())
    return res


def aot_target(triple: str | None = None, cpu: str | None = None, features: str | None = None):
    """The :class:`xlac.codegen.target.Target` an object is compiled for.

    No triple: the current target (this machine's CPU and features, or
    ``XLAC_TARGET_CPU``'s), ``cpu`` replacing its CPU (then with only that
    CPU's features) and ``features`` added to its features.  A named triple:
    that triple with ``cpu`` (default: its generic CPU) and ``features``."""
    if triple is not None:
        return targets.Target(triple, cpu or "", features or "")
    base = targets.current()
    if cpu is not None:
        return targets.Target(base.triple, cpu, features or "")
    if features:
        return targets.Target(base.triple, base.cpu, f"{base.features},{features}" if base.features else features)
    return base


def _describe(lowered, module: HloModule, name: str, path_o, header, where, triple: str) -> AotResult:
    """The AotResult of ``lowered``: its parameters and results as C sees them."""
    entry = lowered.hlo.entry
    taken = {name}
    prefix = name.upper() + "_"
    # params[i] of the entry ABI: the parameters' array leaves in parameter-number
    # order, a tuple-shaped parameter flattened depth-first over consecutive slots.
    slots = []
    first_slot = {}
    for p in sorted(entry.parameters, key=lambda p: p.parameter_number):
        first_slot[p.parameter_number] = len(slots)
        leaves = p.shape.leaves()
        for k, shape in enumerate(leaves):
            label = p.name or f"param{p.parameter_number}"
            slots.append((label if not p.shape.is_tuple else f"{label}{{{k}}}", shape))
    param_names = _c_names([nm for nm, _ in slots], "param", taken, prefix)
    params = [LeafInfo(k, nm, c, shape) for k, ((nm, shape), c) in enumerate(zip(slots, param_names))]
    assert len(params) == getattr(lowered.assignment, "parameter_slots", len(params))
    result_shapes = lowered.assignment.result_shapes
    result_names = _c_names([f"result{k}" for k in range(len(result_shapes))], "result", taken, prefix)
    results = [LeafInfo(k, "", c, s) for k, (c, s) in enumerate(zip(result_names, result_shapes))]
    return AotResult(name=name, object_path=os.fspath(path_o),
                     header_path=os.fspath(header) if header is not None else None,
                     params=params, results=results, result_shape=entry.root.shape,
                     temp_size=lowered.assignment.temp_size,
                     required_services=required_services(lowered.hlo), triple=triple,
                     cpu=where.cpu, fingerprint=module.fingerprint(), module_name=module.name,
                     symbols=(name, f"{name}_info"), feeds=feed_instructions(lowered.hlo),
                     dynamic_doc=_dynamic_doc(lowered.dynamic, first_slot, len(slots)),
                     lapack_symbols=_lapack_symbols(lowered.hlo), target_features=where.features,
                     cpu_features=targets.features_of(where))


def _write(path: str, data: bytes) -> None:
    if os.path.exists(path) and not os.path.isfile(path):
        # A device or a pipe (``-o /dev/null``) is written to, never replaced.
        try:
            with open(path, "wb") as fh:
                fh.write(data)
        except OSError as ex:
            raise OSError(ex.errno, ex.strerror, path) from None
        return
    tmp = f"{path}.tmp{os.getpid()}"
    try:
        with open(tmp, "wb") as fh:
            fh.write(data)
        os.replace(tmp, path)        # never leave a half-written file under the final name
    except OSError as ex:
        if os.path.exists(tmp):
            os.unlink(tmp)
        raise OSError(ex.errno, ex.strerror, path) from None
