"""LLVM emission through llvmlite: IrArray, elemental and loop emitters, kernel ABI, JIT."""
