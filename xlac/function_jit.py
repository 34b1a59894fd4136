"""``xlac.jit`` of Python functions, as ``jax.jit``.

::

    @xlac.jit
    def f(x, w):
        return xlac.lax.tanh(x @ w).sum(axis=1)

    f(x, w)                                # traced on the first call's shapes, compiled, run
    f.lower(x, w).as_hlo_text()            # the HLO of that trace
    g = xlac.jit(step, static_argnums=2, donate_argnums=0, num_threads=1)

The function runs once per *abstract signature* on
:class:`~xlac.frontend.tracer.Tracer` values and becomes an XlaComputation,
compiled by the ``xlac.jit`` of computations (so the same in-memory and on-disk
compile caches serve it).  The signature is the pytree structure of the
arguments, each leaf's shape, dtype and weak type, and the values of the static
arguments (which must be hashable).  Arguments and results are pytrees (nested
tuples, lists and dicts; ``None`` is an empty subtree) of arrays: numpy arrays
keep their dtype (f64 stays f64, as with ``jax_enable_x64``); a Python int,
float or complex is a *weakly typed* traced value of XLA's 32-bit default type
(s32, f32, c64) that takes the type of the arrays it meets (a Python bool is a
pred, strongly typed as in jax), and a new value does not retrace.  Results come back as numpy arrays in the
structure the function returned.  Nested containers need ``optree``
(``pip install 'xlac[jit]'``).

``xlac.jit`` of an XlaComputation, HloModule or HLO text is unchanged
(:func:`xlac.devices.jit`).
"""
from __future__ import annotations

import functools
import inspect
import operator
import threading

import numpy as np

from . import devices
from .frontend import tracer as _t
from .frontend.builder import XlaComputation
from .hlo.ir import HloModule

__all__ = ["jit", "JittedFunction", "Lowered", "Compiled"]


def jit(fun=None, *, static_argnums=(), static_argnames=(), donate_argnums=(), num_threads: int | None = None,
        optimize: bool = True, num_replicas: int | None = None):
    """``xlac.jit``: compile a Python function (traced per abstract signature, see the module
    docstring) or an XlaComputation / HloModule / HLO text (an Executable, as before).

    For a function: ``static_argnums`` / ``static_argnames`` name arguments that are Python
    values baked into the trace (hashable; a new value retraces); ``donate_argnums``:
    positional arguments whose buffers results may reuse; ``num_threads`` and ``optimize``
    pass through to the compiler.  Usable as ``@xlac.jit`` and
    ``@xlac.jit(static_argnums=...)``.  TypeError for a static argument that is not hashable
    or an argument that is not an array.
    """
    if fun is None:
        return functools.partial(jit, static_argnums=static_argnums, static_argnames=static_argnames,
                                 donate_argnums=donate_argnums, num_threads=num_threads, optimize=optimize,
                                 num_replicas=num_replicas)
    if isinstance(fun, (XlaComputation, HloModule, str, bytes)) or not callable(fun):
        if static_argnums != () or static_argnames != ():
            raise TypeError("xlac.jit: static_argnums/static_argnames apply to Python functions, not to "
                            f"a {type(fun).__name__}")
        return devices.jit(fun, num_threads=num_threads, donate_argnums=donate_argnums, optimize=optimize,
                           num_replicas=num_replicas)
    if num_replicas is not None:
        raise TypeError("xlac.jit: num_replicas applies to computations; a Python function runs on one device")
    return JittedFunction(fun, static_argnums, static_argnames, donate_argnums, num_threads, optimize)


def _int_tuple(name: str, v) -> tuple:
    if isinstance(v, int):
        return (v,)
    try:
        return tuple(operator.index(i) for i in v)
    except TypeError:
        raise TypeError(f"xlac.jit: {name} must be an int or a sequence of ints, got {v!r}") from None


def _as_array(x):
    """A leaf as ``(array, weak)``: Python scalars get XLA's 32-bit default types, weakly.
    TypeError (without the argument's name, which the caller adds) for anything else."""
    if type(x) is np.ndarray:
        return x, False
    if isinstance(x, _t.Tracer):
        raise TypeError("a traced value was passed to a jitted function from outside any trace "
                        "(a leaked tracer)")
    if isinstance(x, (bool, int, float, complex)) and not isinstance(x, np.generic):
        try:
            return np.asarray(x, _t.python_scalar_dtype(x)), not isinstance(x, bool)  # (bools: strong)
        except OverflowError as e:
            raise TypeError(str(e)) from None
    try:
        a = np.asarray(x)
    except Exception as e:  # noqa: BLE001 - any failure to convert is the user's argument
        raise TypeError(f"expected an array, got {type(x).__name__} ({e})") from None
    if a.dtype == object or a.dtype.kind in "USM":
        raise TypeError(f"expected an array or a number, got {type(x).__name__} {str(x)[:60]!r}; "
                        "pass non-array arguments as static (static_argnums)")
    return a, False


class _Entry:
    """One compiled signature: the executable and how to rebuild results."""

    __slots__ = ("traced", "executable", "out_tree", "tuple_result", "computation")

    def __init__(self, traced, computation):
        self.traced = traced
        self.computation = computation
        self.executable = None
        self.out_tree = traced.out_tree
        self.tuple_result = traced.tuple_result


class JittedFunction:
    """A Python function under ``xlac.jit``: call it, ``.lower(*args)``, ``._cache_size()``."""

    def __init__(self, fun, static_argnums, static_argnames, donate_argnums, num_threads, optimize):
        self.fun = fun
        self.static_argnums = _int_tuple("static_argnums", static_argnums)
        self.static_argnames = (static_argnames,) if isinstance(static_argnames, str) else tuple(static_argnames)
        self.donate_argnums = _int_tuple("donate_argnums", donate_argnums)
        both = set(self.static_argnums) & set(self.donate_argnums)
        if both:
            raise ValueError(f"xlac.jit: arguments {sorted(both)} cannot be both static and donated")
        self.num_threads = num_threads
        self.optimize = optimize
        self._cache: dict = {}
        self._fast: dict = {}         # (shape, dtype) per argument -> entry, for numpy arrays only
        self._lock = threading.Lock()
        try:
            self._signature = inspect.signature(fun)
        except (TypeError, ValueError):
            self._signature = None
        functools.update_wrapper(self, fun)
        if self._signature is not None:
            self._check_argnums(self._signature)

    def _check_argnums(self, sig: inspect.Signature) -> None:
        """As jax.jit, at jit() time: argument numbers and names must exist in the signature
        (ValueError), and a static argument is static whether passed by position or by name."""
        params = list(sig.parameters.values())
        kinds = {p.kind for p in params}
        positional = [p.name for p in params if p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD)]
        n = len(positional)
        if inspect.Parameter.VAR_POSITIONAL not in kinds:
            for what, nums in (("static_argnums", self.static_argnums), ("donate_argnums", self.donate_argnums)):
                if any(not -n <= i < n for i in nums):
                    raise ValueError(f"xlac.jit: {self._name()} has {what}={nums}, but takes only {n} "
                                     "positional arguments")
        named = {p.name for p in params if p.kind in (p.POSITIONAL_OR_KEYWORD, p.KEYWORD_ONLY)}
        unknown = set(self.static_argnames) - named
        if unknown and inspect.Parameter.VAR_KEYWORD not in kinds:
            raise ValueError(f"xlac.jit: {self._name()} has static_argnames {sorted(unknown)}, which are not "
                             "among its arguments")
        by_number = {positional[i] for i in self.static_argnums if -n <= i < n}
        self.static_argnames = tuple(dict.fromkeys(self.static_argnames + tuple(sorted(by_number & named))))
        self.static_argnums = tuple(dict.fromkeys(
            self.static_argnums + tuple(i for i, name in enumerate(positional) if name in self.static_argnames)))

    def __repr__(self) -> str:
        return f"<xlac.jit of {getattr(self.fun, '__qualname__', self.fun)!r}>"

    def __get__(self, obj, objtype=None):
        # Decorating a method binds like a function does.
        return self if obj is None else functools.partial(self, obj)

    def _cache_size(self) -> int:
        """How many signatures are traced and cached (jax's ``_cache_size``)."""
        return len(self._cache)

    def clear_cache(self) -> None:
        self._cache.clear()
        self._fast.clear()

    # -- argument handling ------------------------------------------------------
    def _split(self, args: tuple, kwargs: dict):
        """``(static key, dynamic pytree, leaves as arrays, weak flags, rebuild)``."""
        n = len(args)
        # As jax: a static argument not passed (its default is used) is simply not in the key.
        static_pos = {i % n if n and i < 0 else i for i in self.static_argnums if i < n}
        statics = []
        for i in sorted(static_pos):
            statics.append(("pos", i, self._hashable(f"static argument {i}", args[i])))
        for k in sorted(kwargs):
            if k in self.static_argnames:
                statics.append(("kw", k, self._hashable(f"static argument {k!r}", kwargs[k])))
        dyn_args = tuple(a for i, a in enumerate(args) if i not in static_pos)
        dyn_kwargs = {k: v for k, v in kwargs.items() if k not in self.static_argnames}
        tree_value = (dyn_args, dyn_kwargs) if dyn_kwargs else dyn_args
        leaves, tree = _t.flatten(tree_value)
        arrays, weak = [], []
        for i, leaf in enumerate(leaves):
            try:
                a, w = _as_array(leaf)
            except TypeError as e:
                # Name the argument only now: working the labels out costs more than the call.
                label = self._leaf_labels(dyn_args, static_pos, dyn_kwargs, len(leaves))[i]
                raise TypeError(f"{self._name()}: {label}: {e}") from None
            arrays.append(a)
            weak.append(w)
        return tuple(statics), tree, arrays, weak, static_pos, bool(dyn_kwargs)

    def _name(self) -> str:
        return getattr(self.fun, "__name__", "function")

    def _leaf_labels(self, dyn_args, static_pos, dyn_kwargs, n) -> list:
        labels = []
        pos = [i for i in range(len(dyn_args) + len(static_pos)) if i not in static_pos]
        names = list(self._signature.parameters) if self._signature is not None else []
        for i, a in zip(pos, dyn_args):
            count = len(_t.flatten(a)[0])
            base = f"argument {i}" + (f" ({names[i]!r})" if i < len(names) else "")
            labels += [base if count == 1 else f"{base} leaf {j}" for j in range(count)]
        for k, v in dyn_kwargs.items():
            labels += [f"argument {k!r}"] * len(_t.flatten(v)[0])
        return labels + ["argument"] * (n - len(labels))

    def _param_names(self, args, static_pos, kwargs, n) -> list:
        """HLO parameter names: the function's argument names, ``name.k`` for pytree leaves."""
        names = list(self._signature.parameters) if self._signature is not None else []
        out = []
        for i, a in enumerate(args):
            if i in static_pos:
                continue
            base = names[i] if i < len(names) else f"arg{i}"
            count = len(_t.flatten(a)[0])
            out += [base] if count == 1 else [f"{base}.{j}" for j in range(count)]
        for k, v in kwargs.items():
            if k not in self.static_argnames:
                count = len(_t.flatten(v)[0])
                out += [k] if count == 1 else [f"{k}.{j}" for j in range(count)]
        return out if len(out) == n else [f"arg{i}" for i in range(n)]

    @staticmethod
    def _hashable(label: str, v):
        try:
            hash(v)
        except TypeError:
            raise TypeError(f"xlac.jit: {label} must be hashable (a static argument is part of the "
                            f"cache key), got {type(v).__name__}") from None
        return v

    def _key(self, statics, tree, arrays, weak):
        return (statics, tree, tuple((a.shape, a.dtype, w) for a, w in zip(arrays, weak)))

    # -- tracing ----------------------------------------------------------------
    def _trace(self, args, kwargs, tree, arrays, weak, static_pos, has_kw: bool) -> _Entry:
        from .shape import Shape, PrimitiveType
        shapes = []
        for a in arrays:
            try:
                shapes.append(Shape(PrimitiveType.from_dtype(a.dtype), a.shape))
            except TypeError as e:
                raise TypeError(f"{self._name()}: {e}") from None
        n = len(args)

        def call(values):
            # The traced dynamic arguments, with the static ones put back in their places.
            dyn_args, dyn_kwargs = values if has_kw else (values, {})
            it = iter(dyn_args)
            full = [args[i] if i in static_pos else next(it) for i in range(n)]
            kw = {k: v for k, v in kwargs.items() if k in self.static_argnames}
            kw.update(dyn_kwargs)
            return self.fun(*full, **kw)

        traced = _t.trace(call, _TreeAsArgs(tree), shapes, name=f"jit_{self._name()}", in_weak=weak,
                          param_names=self._param_names(args, static_pos, kwargs, len(shapes)))
        return _Entry(traced, traced.computation)

    def _entry(self, args, kwargs, compile_it: bool = True):
        statics, tree, arrays, weak, static_pos, has_kw = self._split(args, kwargs)
        key = self._key(statics, tree, arrays, weak)
        entry = self._cache.get(key)
        if entry is None:
            entry = self._trace(args, kwargs, tree, arrays, weak, static_pos, has_kw)
            with self._lock:
                entry = self._cache.setdefault(key, entry)
        if compile_it and entry.executable is None:
            donated = self._donated_leaves(args, static_pos)
            entry.executable = devices.jit(entry.computation, num_threads=self.num_threads,
                                           donate_argnums=donated, optimize=self.optimize)
        return entry, arrays

    def _donated_leaves(self, args, static_pos) -> tuple:
        """Parameter numbers of the leaves of the donated positional arguments."""
        out, k = [], 0
        n = len(args)
        donate = {i % n if i < 0 else i for i in self.donate_argnums}
        for i, a in enumerate(args):
            if i in static_pos:
                continue
            count = len(_t.flatten(a)[0])
            if i in donate:
                out += range(k, k + count)
            k += count
        return tuple(out)

    def __call__(self, *args, **kwargs):
        if _t.tracing():
            # Called from a function being traced (a jitted function inside another): inline it,
            # which computes what jax's nested jit computes.
            return self.fun(*args, **kwargs)
        fast = not kwargs and not self.static_argnums and all(type(a) is np.ndarray for a in args)
        if fast:
            # numpy arrays only: the signature is their shapes and dtypes (a few us, not a flatten).
            key = tuple((a.shape, a.dtype) for a in args)
            entry = self._fast.get(key)
            if entry is not None:
                return _results(entry, entry.executable(*args))
        entry, arrays = self._entry(args, kwargs)
        if fast:
            self._fast[key] = entry
        return _results(entry, entry.executable(*arrays))

    def lower(self, *args, **kwargs) -> "Lowered":
        """The trace for these arguments' signature (jax's ``.lower``): ``.as_hlo_text()``,
        ``.compile()``."""
        entry, _ = self._entry(args, kwargs, compile_it=False)
        return Lowered(self, entry, args, kwargs)

    def eval_shape(self, *args, **kwargs):
        """The result's structure with ``(shape, dtype)`` pairs as leaves, without compiling."""
        entry, _ = self._entry(args, kwargs, compile_it=False)
        return entry.out_tree.unflatten([(tuple(s.dimensions), s.dtype) for s in entry.traced.out_shapes])


class _TreeAsArgs:
    """The dynamic-argument tree, unflattened into one positional argument for ``trace``."""

    def __init__(self, tree):
        self.tree = tree

    def unflatten(self, leaves):
        return (self.tree.unflatten(leaves),)


def _results(entry: _Entry, out):
    if entry.tuple_result:
        return entry.out_tree.unflatten(list(out))
    return entry.out_tree.unflatten([out])


class Lowered:
    """A traced signature (jax's ``Lowered``): ``.as_hlo_text()``, ``.as_text()``,
    ``.computation`` (the XlaComputation) and ``.compile()``."""

    def __init__(self, fn: JittedFunction, entry: _Entry, args, kwargs):
        self._fn, self._entry, self._args, self._kwargs = fn, entry, args, kwargs

    @property
    def computation(self) -> XlaComputation:
        return self._entry.computation

    def as_hlo_text(self) -> str:
        return self._entry.computation.as_hlo_text()

    as_text = as_hlo_text

    def compile(self) -> "Compiled":
        entry, _ = self._fn._entry(self._args, self._kwargs)
        return Compiled(self._fn, entry)


class Compiled:
    """A compiled signature (jax's ``Compiled``): call it with arguments of that signature;
    ``.executable`` is the :class:`~xlac.executable.Executable` (``cost_analysis()``, ...)."""

    def __init__(self, fn: JittedFunction, entry: _Entry):
        self._fn, self._entry = fn, entry
        self.executable = entry.executable

    def as_hlo_text(self) -> str:
        return self._entry.computation.as_hlo_text()

    def __call__(self, *args, **kwargs):
        entry, arrays = self._fn._entry(args, kwargs, compile_it=False)
        if entry is not self._entry:
            raise TypeError(f"{self._fn._name()}: the arguments' shapes, dtypes or structure differ from "
                            "the ones this was compiled for")
        return _results(entry, self.executable(*arrays))
