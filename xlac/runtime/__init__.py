"""Python side of execution: Executable, argument checking, buffers."""
