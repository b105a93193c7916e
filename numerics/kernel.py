"""The fused softmax-interaction kernel of the particle field, compiled with numba (one pass per row).

For rows b_i (= B^T x_i), points x_j and values v_j (= V x_j) it computes

    m_i = sum_j w_ij v_j,   w_ij = exp(beta (s_ij - s_i*)) / sum_k exp(beta (s_ik - s_i*)),   s_ij = <b_i, x_j>,

with s_i* = max_j s_ij (log-space: every exponent is <= 0 and the largest is exactly 0, so Z_i >= 1 and nothing
overflows for any finite beta > 0, 1e12 included). j runs over all points (``dense_moments``), over a window
of consecutive points per row (``window_moments``, the truncated kernel on the circle) or over a per-row candidate
list given as CSR arrays (``csr_moments``, the truncated kernel for d >= 3). All call the same row routine: scores, row maximum, exponentials and the weighted sums of one row are computed in a buffer of that
row's length, never an N x N array; rows are spread over all cores (``numba.prange``).

exp. NumPy's exp is not fused with the reductions, so this module has its own vectorisable float64 exp for
arguments x <= 0: x = n ln 2 + r with n = floor(x log2 e + 1/2), |r| <= ln 2 / 2 (Cody-Waite split of ln 2),
exp(r) by its Taylor polynomial of degree 13 (truncation r^14/14! < 5e-18), times 2^n built from the exponent
bits. Arguments below -708 give 0 (the true value is < 3.3e-308, and Z_i >= 1, so the field changes by less
than that). Measured relative error against np.exp: <= 1e-13 on [-708, 0] (tests).

Reductions. The sums Z_i = sum_j e_ij and sum_j e_ij v_j are taken in one fixed order, written out in LLVM IR
(:func:`_lane_sum`, :func:`_lane_dot`): eight running sums, lane l over j = l mod 8 (SIMD vectors of 8 doubles,
products added with one rounding by fused multiply-add), combined pairwise ((0+1)+(2+3))+((4+5)+(6+7)), then the
n mod 8 last terms in order. Letting LLVM reassociate the sums to vectorise them (fast-math ``reassoc``) made the
summation order a choice of the compiler, and it chose differently for a freshly compiled kernel and for the same
kernel loaded from numba's cache: results differed in the last bits, and so did everything downstream (a Paper B
rate in its 10th digit). With the order fixed by the code, the kernel gives the same bits however it was compiled.

Concurrency: the threading layer is numba's ``workqueue`` (unless NUMBA_THREADING_LAYER says otherwise): GNU
OpenMP, numba's first choice where installed, aborts a process that forks after using it, and the local executor
forks its workers. ``workqueue`` does not allow two threads of one process in a parallel region at once, so calls
are serialised by a lock (processes, e.g. a process pool or Dask workers, are independent).
"""
from __future__ import annotations

import os
import threading

import numba
import numpy as np
from llvmlite import ir
from numba import njit, prange, types
from numba.core import cgutils
from numba.core.errors import TypingError
from numba.extending import intrinsic

if "NUMBA_THREADING_LAYER" not in os.environ:   # GNU OpenMP aborts a process that forks after using it (a process
    numba.config.THREADING_LAYER = "workqueue"  # pool forks workers), numba's own workqueue layer does not

_LOG2E = 1.4426950408889634
_LN2_HI = 6.93147180369123816490e-01      # high part of ln 2 (trailing zero bits: n * _LN2_HI is exact)
_LN2_LO = 1.90821492927058770002e-10
_SHIFT = 6755399441055744.0               # 1.5 * 2^52: n + _SHIFT holds the integer n in its low mantissa bits
_BIAS = 1023 << 52
_UNDERFLOW = -708.0
_LOCK = threading.Lock()
# LLVM may contract a*b+c to FMA and assume finite values (inputs are validated finite, exponents are finite for
# finite beta); never ``reassoc``: the sums' order is fixed by _lane_sum / _lane_dot (module docstring, "Reductions").
_FLAGS = {"nsz", "nnan", "ninf", "arcp", "contract"}
_LANES = 8


@intrinsic
def _bits(typingctx, x):
    """The IEEE-754 bit pattern of a float64 as an int64 (a register bitcast, vectorisable)."""
    def codegen(context, builder, signature, args):
        return builder.bitcast(args[0], context.get_value_type(types.int64))
    return types.int64(types.float64), codegen


@intrinsic
def _float(typingctx, i):
    """The float64 with the bit pattern of an int64."""
    def codegen(context, builder, signature, args):
        return builder.bitcast(args[0], context.get_value_type(types.float64))
    return types.float64(types.int64), codegen


@njit(inline="always")
def _exp_nonpositive(x: float) -> float:
    """exp(x) for x <= 0 (module docstring); branch-free, so loops over it vectorise."""
    xc = x if x > _UNDERFLOW else _UNDERFLOW
    n = np.floor(xc * _LOG2E + 0.5)
    r = (xc - n * _LN2_HI) - n * _LN2_LO
    p = 1.0 / 6227020800.0
    p = p * r + 1.0 / 479001600.0
    p = p * r + 1.0 / 39916800.0
    p = p * r + 1.0 / 3628800.0
    p = p * r + 1.0 / 362880.0
    p = p * r + 1.0 / 40320.0
    p = p * r + 1.0 / 5040.0
    p = p * r + 1.0 / 720.0
    p = p * r + 1.0 / 120.0
    p = p * r + 1.0 / 24.0
    p = p * r + 1.0 / 6.0
    p = p * r + 0.5
    p = p * r + 1.0
    p = p * r + 1.0
    scale = _float((_bits(n + _SHIFT) << 52) + _BIAS)      # 2^n for -1022 <= n <= 0
    return p * scale if x > _UNDERFLOW else 0.0


def _lane_reduction(fused: bool):
    """Code generator of sum_j a[j] (``fused`` False) or sum_j a[j] b[j] (True) over j < n for C-contiguous float64
    arrays, in the fixed order of the module docstring ("Reductions"); plain IR instructions without fast-math flags,
    so no optimiser may reorder them."""
    def codegen(context, builder, signature, args):
        dbl = ir.DoubleType()
        vec = ir.VectorType(dbl, _LANES)
        arrays = [context.make_array(t)(context, builder, v) for t, v in zip(signature.args[:-1], args[:-1])]
        n = args[-1]
        intp = n.type
        m = builder.and_(n, ir.Constant(intp, -_LANES))            # n - n mod 8
        vfma = cgutils.get_or_insert_function(builder.module, ir.FunctionType(vec, [vec] * 3), "llvm.fma.v8f64")
        sfma = cgutils.get_or_insert_function(builder.module, ir.FunctionType(dbl, [dbl] * 3), "llvm.fma.f64")
        acc = cgutils.alloca_once_value(builder, ir.Constant(vec, [0.0] * _LANES))
        with cgutils.for_range_slice(builder, ir.Constant(intp, 0), m, ir.Constant(intp, _LANES), intp) as (j, _):
            v = [builder.load(builder.bitcast(builder.gep(a.data, [j]), vec.as_pointer()), align=8) for a in arrays]
            builder.store(builder.call(vfma, [v[0], v[1], builder.load(acc)]) if fused
                          else builder.fadd(builder.load(acc), v[0]), acc)
        lanes = [builder.extract_element(builder.load(acc), ir.Constant(ir.IntType(32), i)) for i in range(_LANES)]
        while len(lanes) > 1:
            lanes = [builder.fadd(lanes[i], lanes[i + 1]) for i in range(0, len(lanes), 2)]
        total = cgutils.alloca_once_value(builder, lanes[0])
        with cgutils.for_range_slice(builder, m, n, ir.Constant(intp, 1), intp) as (j, _):
            x = [builder.load(builder.gep(a.data, [j])) for a in arrays]
            builder.store(builder.call(sfma, [x[0], x[1], builder.load(total)]) if fused
                          else builder.fadd(builder.load(total), x[0]), total)
        return builder.load(total)
    return codegen


def _contiguous_doubles(*arrays) -> None:
    for a in arrays:
        if not (isinstance(a, types.Array) and a.ndim == 1 and a.layout == "C" and a.dtype == types.float64):
            raise TypingError(f"lane reductions take 1-D C-contiguous float64 arrays, got {a}")


@intrinsic
def _lane_sum(typingctx, a, n):
    """a[0] + ... + a[n-1] in the fixed order of the module docstring ("Reductions")."""
    _contiguous_doubles(a)
    return types.float64(a, types.intp), _lane_reduction(False)


@intrinsic
def _lane_dot(typingctx, a, b, n):
    """a[0] b[0] + ... + a[n-1] b[n-1] in the fixed order of the module docstring ("Reductions")."""
    _contiguous_doubles(a, b)
    return types.float64(a, b, types.intp), _lane_reduction(True)


@njit(fastmath=_FLAGS)
def _row(b, XT, VXT, beta, cols, lo, n, window, s, g, out):
    """out <- sum_j w_j v_j over the row's points j: j = lo .. lo + n - 1 when ``window`` (contiguous, vectorised
    loads), else j in cols[lo:lo + n] (their values gathered into the scratch ``g``); s: scratch of length n, g: of
    length n unless ``window``."""
    d = XT.shape[0]
    if window:                                       # 1-D slices (layout C): LLVM vectorises these loops
        x = XT[0, lo:lo + n]
        b0 = b[0]
        for j in range(n):
            s[j] = b0 * x[j]
        for k in range(1, d):
            x = XT[k, lo:lo + n]
            bk = b[k]
            for j in range(n):
                s[j] += bk * x[j]
    else:
        for j in range(n):
            s[j] = b[0] * XT[0, cols[lo + j]]
        for k in range(1, d):
            bk = b[k]
            for j in range(n):
                s[j] += bk * XT[k, cols[lo + j]]
    top = s[0]
    for j in range(n):
        top = max(top, s[j])
    for j in range(n):
        s[j] = _exp_nonpositive((s[j] - top) * beta)
    z = _lane_sum(s, n)
    for k in range(d):
        if window:
            acc = _lane_dot(s, VXT[k, lo:lo + n], n)
        else:
            for j in range(n):
                g[j] = VXT[k, cols[lo + j]]
            acc = _lane_dot(s, g, n)
        out[k] = acc / z


@njit(parallel=True, cache=True)
def _windows(XB, XT, VXT, beta, starts, counts):
    N, d = XB.shape
    M = np.empty((N, d))
    none = np.empty(0, np.int64)
    no_scratch = np.empty(0)
    for i in prange(N):
        s = np.empty(counts[i])
        _row(XB[i], XT, VXT, beta, none, starts[i], counts[i], True, s, no_scratch, M[i])
    return M


@njit(parallel=True, cache=True)
def _csr(XB, XT, VXT, beta, indptr, cols):
    N, d = XB.shape
    M = np.empty((N, d))
    for i in prange(N):
        lo, n = indptr[i], indptr[i + 1] - indptr[i]
        s = np.empty(n)
        g = np.empty(n)
        _row(XB[i], XT, VXT, beta, cols, lo, n, False, s, g, M[i])
    return M


@njit(cache=True, fastmath=_FLAGS)      # the flags of the kernel, so tests see its exp
def _exp_array(x):
    out = np.empty_like(x)
    for k in range(x.size):
        out[k] = _exp_nonpositive(x[k])
    return out


def _operands(XB, X, VX):
    return (np.ascontiguousarray(XB, dtype=np.float64), np.ascontiguousarray(np.asarray(X, float).T),
            np.ascontiguousarray(np.asarray(VX, float).T))


def dense_moments(XB: np.ndarray, X: np.ndarray, VX: np.ndarray, beta: float) -> np.ndarray:
    """m_i = sum_j softmax_j(beta <XB_i, X_j>) VX_j over all j, shape (rows of XB, d). Inputs validated by the caller:
    finite, beta finite > 0, X and VX of shape (N, d), XB of shape (R, d)."""
    XB, XT, VXT = _operands(XB, X, VX)
    rows, n = XB.shape[0], XT.shape[1]
    with _LOCK:
        return _windows(XB, XT, VXT, float(beta), np.zeros(rows, np.int64), np.full(rows, n, np.int64))


def window_moments(XB: np.ndarray, X: np.ndarray, VX: np.ndarray, beta: float, starts: np.ndarray,
                   counts: np.ndarray) -> np.ndarray:
    """m_i = softmax average of VX_j over the consecutive points j = starts[i] .. starts[i] + counts[i] - 1 of X
    (the truncated kernel on the circle passes its angle-sorted points twice over, so that every arc is a window).
    counts >= 1 and every window inside X."""
    XB, XT, VXT = _operands(XB, X, VX)
    starts = np.ascontiguousarray(starts, dtype=np.int64)
    counts = np.ascontiguousarray(counts, dtype=np.int64)
    if starts.shape != (XB.shape[0],) or counts.shape != starts.shape:
        raise ValueError("window_moments: starts and counts need one entry per row of XB")
    if np.any(counts < 1) or np.any(starts < 0) or np.any(starts + counts > XT.shape[1]):
        raise ValueError("window_moments: every window must hold >= 1 point and lie inside X")
    with _LOCK:
        return _windows(XB, XT, VXT, float(beta), starts, counts)


def csr_moments(XB: np.ndarray, X: np.ndarray, VX: np.ndarray, beta: float, indptr: np.ndarray,
                cols: np.ndarray) -> np.ndarray:
    """m_i = sum_{j in cols[indptr[i]:indptr[i+1]]} softmax_j(beta <XB_i, X_j>) VX_j (softmax over the listed j only).
    Every row must list at least one column; indptr has len(XB) + 1 entries starting at 0."""
    XB, XT, VXT = _operands(XB, X, VX)
    indptr = np.ascontiguousarray(indptr, dtype=np.int64)
    cols = np.ascontiguousarray(cols, dtype=np.int64)
    if indptr.shape != (XB.shape[0] + 1,) or indptr[0] != 0 or indptr[-1] != cols.size:
        raise ValueError("csr_moments: indptr must have len(XB) + 1 entries from 0 to len(cols)")
    if np.any(np.diff(indptr) <= 0):
        raise ValueError("csr_moments: every row needs at least one column")
    if cols.size and (cols.min() < 0 or cols.max() >= XT.shape[1]):
        raise ValueError("csr_moments: a column index is out of range")
    with _LOCK:
        return _csr(XB, XT, VXT, float(beta), indptr, cols)


def exp_nonpositive(x: np.ndarray) -> np.ndarray:
    """The kernel's exp on an array of arguments <= 0 (exposed for testing its accuracy against np.exp)."""
    x = np.ascontiguousarray(x, dtype=np.float64).ravel()
    if np.any(~(x <= 0)):
        raise ValueError("exp_nonpositive: arguments must be <= 0 and not NaN")
    return _exp_array(x)
