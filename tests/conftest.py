"""Session-wide test set-up.

``UNIMPLEMENTED`` is an opcode that exists only in the tests: defined (so it
parses and verifies) but with no shape rule, evaluator rule or kernel, it is
what the "not supported yet: <op>" tests use — not a real op, which would one
day be implemented and silently stop testing the error path.
"""
from xlac.hlo import opcodes

UNIMPLEMENTED = "xlac-test-unimplemented"

if UNIMPLEMENTED not in opcodes.OPCODES:
    opcodes.register(opcodes.OpDef(UNIMPLEMENTED, "other", 1, {}, frozenset(), ""))
