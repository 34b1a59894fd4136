"""Frontend: XlaBuilder, XlaOp, XlaComputation and ops (one function per operation)."""
from . import builder, ops

# XlaOp's operators call the ops functions; ops builds on the builder module,
# so the two are tied together here, once, rather than by a late import.
builder.bind_operators(ops)
