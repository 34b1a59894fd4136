"""Kernel emitters for opcodes that are not a loop over an elemental generator.

Each module here registers its opcodes with ``emitter.register_kernel``;
importing this package registers them all.
"""
