"""Python side of execution: Executable (argument checking, calling native code),
the C ABI's ctypes mirror (``abi``), the ``parallel_for`` thread pool (``threads``),
the result/temp memory pool (``allocator``) and the on-disk code cache (``disk_cache``)."""
