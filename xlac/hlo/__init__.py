"""The HLO IR, its opcode table, text printer/parser and verifier."""
from .ir import HloComputation, HloInstruction, HloModule, Raw
from .opcodes import OPCODES, OpDef, Trait

__all__ = ["HloComputation", "HloInstruction", "HloModule", "Raw", "OPCODES", "OpDef", "Trait"]
