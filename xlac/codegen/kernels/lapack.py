"""jax's LAPACK custom calls (``lapack_<p><routine>_ffi``): loops over the batch calling LAPACK.

One kernel per instruction, with jax's semantics (``jaxlib/cpu/lapack_kernels.cc``;
the evaluator's reference is ``xlac/lapack_reference.py``): the matrix operand
is copied into the first result and factored there in place, matrix by matrix
over the leading batch dimensions, one ``info`` per matrix.  The op-expander
has already laid every matrix out column-major (batch dimensions major) and
every vector row-major, so matrix ``i`` of an array starts ``i`` times its
size into the buffer.  Routines are called with the Fortran convention
(``xlac/codegen/lapack.py``).

Workspace: a routine that takes one is asked for its size once per kernel
call (``lwork = -1``, and ``liwork``/``lrwork`` for ``syevd``/``heevd``), with
the first matrix's buffers; the workspace comes from ``malloc`` and is freed
after the batch (a failed ``malloc`` is reported as
``XLAC_ERROR_NO_MEMORY`` and the call stops).  Work arrays of sizes fixed by
the shapes (``gesdd``'s ``iwork``, complex ``rwork``, ``geev``'s copy of the
matrix and its packed eigenvectors) are the kernel's scratch in the temp arena.

Per routine, beyond calling it: ``trsm`` with two operands solves with
``alpha = 1`` (three: alpha is the third); ``gesdd``/``gesvd``/``gees`` that
compute no vectors leave those results zero; ``geev`` works on a copy of each
matrix, gives ``info = -4`` for a matrix with a non-finite element (without
calling LAPACK), and for real input unpacks LAPACK's packed eigenvectors into
the complex results when ``info == 0``; eigenvectors it does not compute are
zero.  Matrices with a zero dimension: the results are zero (``info = 0``).
"""
from __future__ import annotations

from llvmlite import ir

from ...errors import UnsupportedError
from ...hlo import custom_call as hcc
from ...runtime import abi
from ...shape import PrimitiveType as PT
from .. import types
from ..emitter import KernelContext
from ..ir_array import i64
from ..kernel_choice import KernelCandidate
from ..lapack import declare
from ..loops import for_range
from ._util import I1, I8, I32, I64, PTR, ScratchPlan, alloca_var, memcpy
from .run_options import report

INT32_MAX = (1 << 31) - 1
_FLOAT = {PT.F32: ir.FloatType(), PT.F64: ir.DoubleType()}


# ---------------------------------------------------------------------------------------
# Plans: dimensions and the scratch regions of one instruction
# ---------------------------------------------------------------------------------------

class _Plan:
    def __init__(self, inst):
        self.inst = inst
        self.t = hcc.lapack_target(hcc.target_of(inst))
        self.opts = hcc.lapack_attributes(inst)
        a = inst.operands[hcc.MATRIX_OPERAND.get(self.t.routine, 0)].shape
        self.batch = 1
        for d in a.dimensions[:-2]:
            self.batch *= d
        self.m, self.n = a.dimensions[-2:]
        if self.t.routine == "trsm":
            self.k = inst.operands[0].shape.dimensions[-1]
        elif self.t.routine in ("orgqr", "ungqr", "ormqr", "unmqr"):
            self.k = inst.operands[1].shape.dimensions[-1]
        if max(self.m, self.n) > INT32_MAX:
            raise UnsupportedError("custom-call", f"{self.t.name}: a {self.m}x{self.n} matrix does not fit "
                                                  "LAPACK's 32-bit integers")
        self.scratch = ScratchPlan()
        es = self.t.dtype.byte_size
        rs = self.t.real.byte_size
        mn, mx, n = min(self.m, self.n), max(self.m, self.n), self.n
        r = self.t.routine
        if r == "gesdd":
            self.scratch.add("iwork", 4 * 8 * mn)
            if self.t.is_complex:
                rwork = 7 * mn if self.opts["mode"] == "N" else max(5 * mn * mn + 5 * mn,
                                                                     2 * mx * mn + 2 * mn * mn + mn)
                self.scratch.add("rwork", rs * max(rwork, 1))
        elif r == "gesvd" and self.t.is_complex:
            self.scratch.add("rwork", rs * max(5 * mn, 1))
        elif r == "geev":
            self.scratch.add("a_work", es * n * n)
            if self.t.is_complex:
                self.scratch.add("rwork", rs * max(2 * n, 1))
            else:
                self.scratch.add("vl_work", es * n * n)
                self.scratch.add("vr_work", es * n * n)
        elif r == "gtsv" and self.n == 0:
            self.scratch.add("b_work", es * max(self.m, 1))     # LAPACK writes b(n, 1) even for nrhs = 0
        elif r == "geqp3" and self.t.is_complex:
            self.scratch.add("rwork", rs * max(2 * n, 1))
        elif r == "gees" and self.t.is_complex:
            self.scratch.add("rwork", rs * max(n, 1))

    @property
    def empty(self) -> bool:
        return self.batch == 0 or self.m == 0 or self.n == 0


def _scratch_bytes(me, inst) -> int:
    return _Plan(inst).scratch.size


# ---------------------------------------------------------------------------------------
# The emitter: arguments by pointer, batch pointers, workspace, the call
# ---------------------------------------------------------------------------------------

class _Emit:
    """What the routine emitters use: the instruction's buffers and small helpers."""

    def __init__(self, ctx: KernelContext, plan: _Plan):
        self.ctx, self.b, self.plan, self.t = ctx, ctx.b, plan, plan.t
        self.ins = [ctx.operand_array(k) for k in range(len(ctx.inst.operands))]
        self.outs = ctx.output_arrays()
        self.fn = declare(ctx.me.llvm, self.t)

    # -- arguments ----------------------------------------------------------------
    def int32(self, value, name: str = "int") -> ir.Value:
        """A pointer to an i32 holding ``value`` (a Python int or an i32 value)."""
        v = ir.Constant(I32, int(value)) if isinstance(value, int) else value
        return alloca_var(self.ctx, I32, v, name)

    def char(self, ch: str) -> ir.Value:
        return alloca_var(self.ctx, I8, ir.Constant(I8, ord(ch)), f"char.{ch}")

    def at(self, array, i: ir.Value) -> ir.Value:
        """Matrix (or vector, or info) ``i`` of a result/operand array."""
        stride = array.shape.byte_size() // self.plan.batch if self.plan.batch else 0
        if stride == 0 or (isinstance(i, ir.Constant) and i.constant == 0):
            return array.ptr
        return self.b.gep(array.ptr, [self.b.mul(i, i64(stride))], inbounds=True, source_etype=I8)

    def scratch(self, name: str) -> ir.Value:
        return self.plan.scratch.pointer(self.b, self.ctx.scratch_pointer(), name)

    def call(self, args: list) -> None:
        chars = len(self.fn.function_type.args) - len(args)
        self.b.call(self.fn, list(args) + [i64(1)] * chars)

    # -- results ----------------------------------------------------------------------
    def copy_input(self, k: int = 0, into: int = 0) -> None:
        """Result ``into`` = operand ``k`` (same shape and layout); nothing to do when
        buffer assignment put the result in the operand's buffer (in place)."""
        nbytes = self.outs[into].shape.byte_size()
        if nbytes <= 0:
            return
        b, dst, src = self.b, self.outs[into].ptr, self.ins[k].ptr
        with b.if_then(b.icmp_unsigned("!=", b.ptrtoint(dst, I64), b.ptrtoint(src, I64))):
            memcpy(b, dst, src, nbytes)

    def zero(self, *results: int) -> None:
        for k in results:
            _memset(self.b, self.outs[k].ptr, self.outs[k].shape.byte_size())

    # -- the batch loop, with a queried workspace ------------------------------------------------
    def run(self, args_for, query: tuple = ()) -> None:
        """Call the routine for every matrix: ``args_for(i, ws)`` gives the
        arguments of matrix ``i`` (an i64 value); ``ws`` maps ``work``,
        ``lwork``, and those of ``query`` among ``rwork``/``lrwork`` and
        ``iwork``/``liwork``, to pointers.  ``query`` names the workspaces whose
        size the routine is asked for (``work`` first), none for routines
        without workspace."""
        b, plan = self.b, self.plan
        if not query:
            with for_range(b, plan.batch, "matrix") as i:
                self.call(args_for(i, {}))
            return
        ws = self._query(args_for, query)
        block = self._allocate(ws, query)
        with for_range(b, plan.batch, "matrix") as i:
            self.call(args_for(i, ws))
        _free(b, block)

    def _query(self, args_for, query: tuple) -> dict:
        b, t = self.b, self.t
        kinds = {"work": t.dtype, "rwork": t.real, "iwork": PT.S32}
        ws = {}
        for name in query:
            ws[name] = self.ctx.alloca_builder.alloca(types.memory_type(kinds[name]), name=f"{name}.query")
            ws["l" + name] = self.int32(-1, f"l{name}")
        self.call(args_for(i64(0), ws))
        for name in query:
            if kinds[name] is PT.S32:
                size = b.load(ws[name], typ=I32)
            else:
                value = b.load(ws[name], typ=types.memory_type(kinds[name]))
                if kinds[name].is_complex:
                    value = b.extract_value(value, 0)
                size = b.fptosi(value, I32)
            size = b.select(b.icmp_signed("<", size, ir.Constant(I32, 1)), ir.Constant(I32, 1), size)
            b.store(size, ws["l" + name])
        return ws

    def _allocate(self, ws: dict, query: tuple) -> ir.Value:
        """One malloc for the queried workspaces; sets ``ws[name]`` to each part."""
        b, t = self.b, self.t
        sizes = {"work": t.dtype.byte_size, "rwork": t.real.byte_size, "iwork": 4}
        offsets, total = {}, i64(0)
        for name in query:
            count = b.sext(b.load(ws["l" + name], typ=I32), I64)
            offsets[name] = total
            nbytes = b.mul(count, i64(sizes[name]))
            total = b.add(total, b.and_(b.add(nbytes, i64(63)), i64(~63)))
        block = _malloc(b, total)
        with b.if_then(b.icmp_unsigned("==", block, ir.Constant(PTR, None)), likely=False):
            report(self.ctx, abi.XLAC_ERROR_NO_MEMORY, f"{self.t.name} (instruction {self.ctx.inst.name}): no memory for the "
                                "LAPACK workspace")
            b.ret_void()
        for name in query:
            ws[name] = b.gep(block, [offsets[name]], inbounds=True, source_etype=I8)
        return block


def _libc(b: ir.IRBuilder, name: str, fnty: ir.FunctionType) -> ir.Function:
    fn = b.module.globals.get(name)
    if fn is None:
        fn = ir.Function(b.module, fnty, name)
    return fn


def _malloc(b, nbytes) -> ir.Value:
    return b.call(_libc(b, "malloc", ir.FunctionType(PTR, [I64])), [nbytes])


def _free(b, ptr) -> None:
    b.call(_libc(b, "free", ir.FunctionType(ir.VoidType(), [PTR])), [ptr])


def _memset(b, ptr, nbytes: int) -> None:
    if nbytes <= 0:
        return
    fn = _libc(b, "llvm.memset.p0.i64", ir.FunctionType(ir.VoidType(), [PTR, I8, I64, I1]))
    b.call(fn, [ptr, ir.Constant(I8, 0), i64(nbytes), ir.Constant(I1, 0)])


# ---------------------------------------------------------------------------------------
# The routines
# ---------------------------------------------------------------------------------------

def _potrf(e: _Emit) -> None:
    p = e.plan
    e.copy_input()
    uplo, n, lda = e.char(p.opts["uplo"]), e.int32(p.n), e.int32(max(1, p.n))
    e.run(lambda i, ws: [uplo, n, e.at(e.outs[0], i), lda, e.at(e.outs[1], i)])


def _trsm(e: _Emit) -> None:
    p, t = e.plan, e.t
    e.copy_input(1, 0)
    o = p.opts
    if len(e.ins) > 2:
        alpha = e.ins[2].ptr
    else:
        alpha = alloca_var(e.ctx, types.memory_type(t.dtype), types.constant(t.dtype, 1), "alpha")
    args = [e.char(o["side"]), e.char(o["uplo"]), e.char(o["trans"]), e.char(o["diag"]), e.int32(p.m),
            e.int32(p.n), alpha]
    lda, ldb = e.int32(max(1, p.k)), e.int32(max(1, p.m))
    e.run(lambda i, ws: args + [e.at(e.ins[0], i), lda, e.at(e.outs[0], i), ldb])


def _getrf(e: _Emit) -> None:
    p = e.plan
    e.copy_input()
    m, n, lda = e.int32(p.m), e.int32(p.n), e.int32(max(1, p.m))
    e.run(lambda i, ws: [m, n, e.at(e.outs[0], i), lda, e.at(e.outs[1], i), e.at(e.outs[2], i)])


def _geqrf(e: _Emit) -> None:
    p = e.plan
    e.copy_input()
    m, n, lda, info = e.int32(p.m), e.int32(p.n), e.int32(max(1, p.m)), e.int32(0, "info")
    e.run(lambda i, ws: [m, n, e.at(e.outs[0], i), lda, e.at(e.outs[1], i), ws["work"], ws["lwork"], info],
          query=("work",))


def _orgqr(e: _Emit) -> None:
    p = e.plan
    e.copy_input()
    m, n, k, lda, info = e.int32(p.m), e.int32(p.n), e.int32(p.k), e.int32(max(1, p.m)), e.int32(0, "info")
    e.run(lambda i, ws: [m, n, k, e.at(e.outs[0], i), lda, e.at(e.ins[1], i), ws["work"], ws["lwork"], info],
          query=("work",))


def _ormqr(e: _Emit) -> None:
    p = e.plan
    e.copy_input(2, 0)
    if p.k == 0:
        return                                          # Q = I
    o = p.opts
    ma = e.ins[0].shape.dimensions[-2]
    side, trans = e.char(o["side"]), e.char(o["trans"])
    m, n, k, lda, ldc, info = (e.int32(p.m), e.int32(p.n), e.int32(p.k), e.int32(max(1, ma)),
                               e.int32(max(1, p.m)), e.int32(0, "info"))
    e.run(lambda i, ws: [side, trans, m, n, k, e.at(e.ins[0], i), lda, e.at(e.ins[1], i), e.at(e.outs[0], i), ldc,
                         ws["work"], ws["lwork"], info], query=("work",))


def _geqp3(e: _Emit) -> None:
    p, t = e.plan, e.t
    e.copy_input()
    e.copy_input(1, 1)
    m, n, lda, info = e.int32(p.m), e.int32(p.n), e.int32(max(1, p.m)), e.int32(0, "info")

    def args(i, ws):
        out = [m, n, e.at(e.outs[0], i), lda, e.at(e.outs[1], i), e.at(e.outs[2], i), ws["work"], ws["lwork"]]
        if t.is_complex:
            out.append(e.scratch("rwork"))
        return out + [info]
    e.run(args, query=("work",))


def _gtsv(e: _Emit) -> None:
    """jax's gtsv: LAPACK's dl is jax's dl from its second element on."""
    p, t, b = e.plan, e.t, e.b
    for k in range(4):
        e.copy_input(k, k)
    n, nrhs, ldb = e.int32(p.m), e.int32(p.n), e.int32(max(1, p.m))

    def args(i, ws):
        dl = b.gep(e.at(e.outs[0], i), [i64(t.dtype.byte_size)], inbounds=True, source_etype=I8)
        rhs = e.at(e.outs[3], i) if p.n else e.scratch("b_work")
        return [n, nrhs, dl, e.at(e.outs[1], i), e.at(e.outs[2], i), rhs, ldb, e.at(e.outs[4], i)]
    e.run(args)


def _syevd(e: _Emit) -> None:
    p, t = e.plan, e.t
    e.copy_input()
    jobz, uplo, n, lda = e.char(p.opts["mode"]), e.char(p.opts["uplo"]), e.int32(p.n), e.int32(max(1, p.n))

    def args(i, ws):
        head = [jobz, uplo, n, e.at(e.outs[0], i), lda, e.at(e.outs[1], i), ws["work"], ws["lwork"]]
        if t.is_complex:
            head += [ws["rwork"], ws["lrwork"]]
        return head + [ws["iwork"], ws["liwork"], e.at(e.outs[2], i)]
    e.run(args, query=("work", "rwork", "iwork") if t.is_complex else ("work", "iwork"))


def _svd(e: _Emit) -> None:
    p, t = e.plan, e.t
    e.copy_input()
    mode = p.opts["mode"]
    if mode == "N":
        e.zero(2, 3)
    u_rows, vt_rows = e.outs[2].shape.dimensions[-2], e.outs[3].shape.dimensions[-2]
    jobs = [e.char(mode)] if t.routine == "gesdd" else [e.char(mode), e.char(mode)]
    m, n, lda = e.int32(p.m), e.int32(p.n), e.int32(max(1, p.m))
    ldu, ldvt = e.int32(max(1, u_rows)), e.int32(max(1, vt_rows))

    def args(i, ws):
        out = jobs + [m, n, e.at(e.outs[0], i), lda, e.at(e.outs[1], i), e.at(e.outs[2], i), ldu,
                      e.at(e.outs[3], i), ldvt, ws["work"], ws["lwork"]]
        if t.is_complex:
            out.append(e.scratch("rwork"))
        if t.routine == "gesdd":
            out.append(e.scratch("iwork"))
        return out + [e.at(e.outs[4], i)]
    e.run(args, query=("work",))


def _finite(b: ir.IRBuilder, value: ir.Value) -> ir.Value:
    """i1: ``value`` (a float) is neither infinite nor NaN: ``value - value == 0``."""
    return b.fcmp_ordered("==", b.fsub(value, value), ir.Constant(value.type, 0.0))


def _all_finite(e: _Emit, ptr: ir.Value, count: int) -> ir.Value:
    """i1: every component of the ``count`` elements at ``ptr`` is finite."""
    b, t = e.b, e.t
    comp = _FLOAT[t.real]
    n = count * (2 if t.is_complex else 1)
    ok = alloca_var(e.ctx, I1, ir.Constant(I1, 1), "finite")
    with for_range(b, n, "x") as j:
        x = b.load(b.gep(ptr, [j], inbounds=True, source_etype=comp), typ=comp)
        b.store(b.and_(b.load(ok, typ=I1), _finite(b, x)), ok)
    return b.load(ok, typ=I1)


def _unpack(e: _Emit, wi: ir.Value, packed: ir.Value, out: ir.Value) -> None:
    """LAPACK's real eigenvectors (a conjugate pair in columns j, j+1: re, im)
    into complex columns, as jax does: ``v_j = re + i im``, ``v_{j+1} = re - i im``."""
    b, n = e.b, e.plan.n
    comp = _FLOAT[e.t.real]
    second = alloca_var(e.ctx, I1, ir.Constant(I1, 0), "pair.second")
    with for_range(b, n, "col") as j:
        w = b.load(b.gep(wi, [j], inbounds=True, source_etype=comp), typ=comp)
        is_second = b.load(second, typ=I1)
        starts = b.and_(b.not_(is_second),
                        b.and_(b.fcmp_ordered("!=", w, ir.Constant(comp, 0.0)),
                               b.icmp_signed("<", b.add(j, i64(1)), i64(n))))
        re_col = b.select(is_second, b.sub(j, i64(1)), j)
        im_col = b.select(is_second, j, b.add(j, i64(1)))
        has_im = b.or_(is_second, starts)
        sign = b.select(is_second, ir.Constant(comp, -1.0), ir.Constant(comp, 1.0))
        b.store(starts, second)
        with for_range(b, n, "row") as r:
            re = b.load(b.gep(packed, [b.add(b.mul(re_col, i64(n)), r)], inbounds=True, source_etype=comp),
                        typ=comp)
            im_ptr = b.gep(packed, [b.add(b.mul(b.select(has_im, im_col, re_col), i64(n)), r)], inbounds=True,
                           source_etype=comp)
            im = b.select(has_im, b.fmul(sign, b.load(im_ptr, typ=comp)), ir.Constant(comp, 0.0))
            dst = b.gep(out, [b.mul(b.add(b.mul(j, i64(n)), r), i64(2))], inbounds=True, source_etype=comp)
            b.store(re, dst)
            b.store(im, b.gep(dst, [i64(1)], inbounds=True, source_etype=comp))


def _geev(e: _Emit) -> None:
    p, t, b = e.plan, e.t, e.b
    n = p.n
    left, right = p.opts["jobvl"] == "V", p.opts["jobvr"] == "V"
    nw = 1 if t.is_complex else 2
    vl_out, vr_out, info_out = e.outs[nw], e.outs[nw + 1], e.outs[nw + 2]
    e.zero(nw, nw + 1)
    a_work = e.scratch("a_work")
    nbytes = t.dtype.byte_size * n * n
    jobvl, jobvr, order, ld = e.char(p.opts["jobvl"]), e.char(p.opts["jobvr"]), e.int32(n), e.int32(max(1, n))

    def args(i, ws):
        if t.is_complex:
            return [jobvl, jobvr, order, a_work, ld, e.at(e.outs[0], i), e.at(vl_out, i), ld, e.at(vr_out, i), ld,
                    ws["work"], ws["lwork"], e.scratch("rwork"), e.at(info_out, i)]
        return [jobvl, jobvr, order, a_work, ld, e.at(e.outs[0], i), e.at(e.outs[1], i), e.scratch("vl_work"), ld,
                e.scratch("vr_work"), ld, ws["work"], ws["lwork"], e.at(info_out, i)]

    memcpy(b, a_work, e.ins[0].ptr, nbytes)
    ws = e._query(args, ("work",))
    block = e._allocate(ws, ("work",))
    with for_range(b, p.batch, "matrix") as i:
        memcpy(b, a_work, e.at(e.ins[0], i), nbytes)
        info = e.at(info_out, i)
        with b.if_else(_all_finite(e, a_work, n * n)) as (finite, not_finite):
            with finite:
                e.call(args(i, ws))
                if not t.is_complex and (left or right):
                    ok = b.icmp_signed("==", b.load(info, typ=I32), ir.Constant(I32, 0))
                    with b.if_then(ok):
                        if left:
                            _unpack(e, e.at(e.outs[1], i), e.scratch("vl_work"), e.at(vl_out, i))
                        if right:
                            _unpack(e, e.at(e.outs[1], i), e.scratch("vr_work"), e.at(vr_out, i))
            with not_finite:
                b.store(ir.Constant(I32, -4), info)
    _free(b, block)


def _gees(e: _Emit) -> None:
    p, t = e.plan, e.t
    e.copy_input()
    if p.opts["mode"] == "N":
        e.zero(1)
    nw = 1 if t.is_complex else 2
    sdim, info = e.outs[2 + nw], e.outs[3 + nw]
    jobvs, sort, n, ld = e.char(p.opts["mode"]), e.char(p.opts["sort"]), e.int32(p.n), e.int32(max(1, p.n))
    null = ir.Constant(PTR, None)

    def args(i, ws):
        w = [e.at(e.outs[2 + k], i) for k in range(nw)]
        out = [jobvs, sort, null, n, e.at(e.outs[0], i), ld, e.at(sdim, i)] + w + \
              [e.at(e.outs[1], i), ld, ws["work"], ws["lwork"]]
        if t.is_complex:
            out.append(e.scratch("rwork"))
        return out + [null, e.at(info, i)]
    e.run(args, query=("work",))


def _gehrd(e: _Emit) -> None:
    p = e.plan
    e.copy_input()
    high = p.opts["high"] if p.opts["high"] is not None else p.n
    n, ilo, ihi, lda = e.int32(p.n), e.int32(p.opts["low"]), e.int32(high), e.int32(max(1, p.n))
    e.run(lambda i, ws: [n, ilo, ihi, e.at(e.outs[0], i), lda, e.at(e.outs[1], i), ws["work"], ws["lwork"],
                         e.at(e.outs[2], i)], query=("work",))


def _sytrd(e: _Emit) -> None:
    p = e.plan
    e.copy_input()
    uplo, n, lda = e.char(p.opts["uplo"]), e.int32(p.n), e.int32(max(1, p.n))
    e.run(lambda i, ws: [uplo, n, e.at(e.outs[0], i), lda, e.at(e.outs[1], i), e.at(e.outs[2], i),
                         e.at(e.outs[3], i), ws["work"], ws["lwork"], e.at(e.outs[4], i)], query=("work",))


#: routine -> emitter.
ROUTINES = {"potrf": _potrf, "trsm": _trsm, "getrf": _getrf, "geqrf": _geqrf, "orgqr": _orgqr,
            "ungqr": _orgqr, "syevd": _syevd, "heevd": _syevd, "gesdd": _svd, "gesvd": _svd, "geev": _geev,
            "gees": _gees, "gehrd": _gehrd, "sytrd": _sytrd, "hetrd": _sytrd,
            "ormqr": _ormqr, "unmqr": _ormqr, "geqp3": _geqp3, "gtsv": _gtsv}


def _emit(ctx: KernelContext) -> None:
    plan = _Plan(ctx.inst)
    ctx.long_running = True
    e = _Emit(ctx, plan)
    if plan.batch == 0:
        return
    if plan.empty and plan.t.routine == "gtsv" and plan.m > 0:    # no right-hand side: still factored
        ROUTINES["gtsv"](e)
        return
    if plan.empty and not (plan.t.routine == "geqp3" and plan.n > 0):   # geqp3 of 0 rows: jpvt
        if plan.t.routine in hcc.SINGLE_RESULT:
            e.copy_input(hcc.MATRIX_OPERAND.get(plan.t.routine, 0), 0)
        else:
            e.zero(*range(len(e.outs)))
        return
    ROUTINES[plan.t.routine](e)


def _applies(inst) -> str | None:
    if not hcc.is_builtin(hcc.target_of(inst)):
        return "not one of jax's LAPACK targets"
    return None


#: jax's LAPACK targets.  Glue: the kernel's own loops (copies, the finite
#: check, unpacking eigenvectors) touch each element once around a routine
#: of cubic cost, so it is compiled cold (``jit.COLD``).
LAPACK = KernelCandidate("custom-call.lapack", _emit, _applies, _scratch_bytes, glue=True)
