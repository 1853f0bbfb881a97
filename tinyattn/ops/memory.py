"""Keep freed memory for the next training step instead of handing it back to the system.

A training step makes the same arrays, of the same sizes, every time, and frees them before
the next step. By default glibc's malloc gives an array of more than 128 KB its own fresh
pages from the system (mmap) and returns them when it is freed, and it trims the free top of
its heap soon after; the next step then touches new pages, and each first touch is a page
fault: the translation model's step takes a page fault per fresh page, against a handful with
the memory kept (benchmarks/RESULTS.md, "page faults, TINYATTN_MALLOC=system").

So `keep_freed_memory()`, on Linux with glibc, asks malloc to serve arrays of up to 32 MB from its
heap and to keep up to 64 MB of freed heap for reuse (`mallopt`, the same settings as the
environment variables MALLOC_MMAP_THRESHOLD_=33554432 MALLOC_TRIM_THRESHOLD_=67108864). This
holds for the whole process, for memory that numpy, PyTorch or anything else allocates, so it
is never done on import: ta.train.fit calls it when training starts (the step's time with and
without: benchmarks/RESULTS.md, "page faults, malloc keeping freed memory (the default in fit)"),
and a loop of your own can call
ta.ops.keep_freed_memory(). TINYATTN_MALLOC=system makes it do nothing.
"""
import ctypes
import os
import platform

_M_TRIM_THRESHOLD, _M_MMAP_THRESHOLD = -1, -3  # glibc's malloc.h
MMAP_THRESHOLD = 32 * 2 ** 20   # glibc's own ceiling when it adjusts the threshold itself
TRIM_THRESHOLD = 64 * 2 ** 20   # free memory kept at the top of the heap before any goes back


def keep_freed_memory():
    """Set malloc to reuse freed memory (see above); True if it was set, False where it cannot be
    (not glibc) or TINYATTN_MALLOC=system asks not to."""
    if os.environ.get("TINYATTN_MALLOC", "").strip().lower() == "system":
        return False
    if platform.system() != "Linux" or platform.libc_ver()[0] != "glibc":
        return False
    try:
        libc = ctypes.CDLL(None)
        return bool(libc.mallopt(_M_MMAP_THRESHOLD, MMAP_THRESHOLD) and libc.mallopt(_M_TRIM_THRESHOLD, TRIM_THRESHOLD))
    except (OSError, AttributeError):  # no mallopt in this C library
        return False
