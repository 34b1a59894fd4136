"""Frontend: XlaBuilder, XlaOp, XlaComputation and ops (one function per operation)."""
