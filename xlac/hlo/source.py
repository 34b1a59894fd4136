"""Where HLO text comes from: a string of HLO, or a path a user gave instead.

``xlac.jit("model.hlo")`` is an easy mistake (jax's ``jax.jit`` takes a
function, ``xlac.jit`` takes a module): :func:`module_text` reads the file
when the string is a path to one, and otherwise says that the string looks
like a path, instead of a parse error at line 1, column 1.  A NumPy ``.npz``
or another binary file given as the module is refused with what to do.
"""
from __future__ import annotations

import os
import re

__all__ = ["module_text", "read_module_file"]

_ZIP_MAGIC = b"PK\x03\x04"
_NPY_MAGIC = b"\x93NUMPY"
#: What a file name looks like: one line, no HLO/MLIR punctuation, a file suffix or a separator.
_PATH_LIKE = re.compile(r"^[^\n{}()=]*(\.(hlo|txt|mlir|pb|pbtxt)|/[^/\s]+)$")
_JAX_HINT = 'from jax: jax.jit(f).lower(*args).as_text(dialect="hlo")'


def read_module_file(path: str | os.PathLike, arrays_hint: str = "as its inputs") -> str:
    """The HLO (or StableHLO) text in the file ``path``.

    Bytes that are not UTF-8 become lone surrogates (``surrogateescape``), which
    the parser reports at their line and column.  ``arrays_hint``: where the
    message says arrays go (the command line: ``"with --inputs IN.npz"``).  Raises ``ValueError`` for an
    ``.npz``/``.npy`` or another binary file, ``OSError`` when it cannot be read.
    """
    with open(path, "rb") as fh:
        data = fh.read()
    if data.startswith(_ZIP_MAGIC) or data.startswith(_NPY_MAGIC):
        raise ValueError(f"{os.fspath(path)} is a NumPy array file, not HLO text: give the module "
                         f"(HLO text, e.g. MODULE.hlo) as the module and the arrays {arrays_hint}")
    if b"\0" in data[:4096]:
        raise ValueError(f"{os.fspath(path)} is a binary file, not HLO text (HLO text starts with "
                         f"'HloModule'; {_JAX_HINT})")
    return data.decode("utf-8", errors="surrogateescape")


def module_text(x):
    """``x`` unchanged unless it is a path: a ``pathlib.Path`` or a one-line
    string that names a file is read (:func:`read_module_file`); a one-line
    string that looks like a file name (``*.hlo``, ``dir/name``) but names no
    file raises ``ValueError`` saying so.  Anything else (HLO text, a module, a
    computation) is returned as is."""
    if isinstance(x, os.PathLike):
        return read_module_file(x)
    # Longer than PATH_MAX is never a path: module text passes without a copy.
    if not isinstance(x, str) or len(x) > 4096 or "\n" in x.strip() \
            or x.lstrip().startswith(("HloModule", "module")):
        return x
    candidate = x.strip()
    if candidate and os.path.isfile(candidate):
        return read_module_file(candidate)
    if _PATH_LIKE.match(candidate):
        raise ValueError(f"{candidate!r} looks like a path to a file, but there is no such file "
                         f"(from {os.getcwd()}); xlac takes HLO text, an HloModule, an "
                         "XlaComputation, or the path of an existing HLO text file")
    return x
