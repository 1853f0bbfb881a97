"""A one-line notice when Numba compiles tinyattn's kernels, so a slow first step is explained.

Compiled kernels are cached on disk (`cache=True`), so this shows on a machine's first run only:
Numba fires its "numba:compile" event when it compiles, never when it loads from the cache.
Numba itself is imported when the block starts (a training loop is about to run kernels anyway),
not when tinyattn is imported.
"""
import contextlib
import sys


def _notice(stream):
    from numba.core import event

    class Notice(event.Listener):
        shown = False

        def on_start(self, ev):
            dispatcher = (ev.data or {}).get("dispatcher")
            module = getattr(getattr(dispatcher, "py_func", None), "__module__", "") or ""
            if not self.shown and module.startswith("tinyattn"):
                self.shown = True
                print("\n(Numba is compiling tinyattn's kernels for this machine: slow the first time each kernel "
                      "is used; later runs load them from its cache)", file=stream, flush=True)

        def on_end(self, ev):
            pass

    return event.install_listener("numba:compile", Notice())


@contextlib.contextmanager
def compile_notice(stream=None):
    """Inside this block, the first compile of a tinyattn kernel prints one line to `stream`."""
    with _notice(stream or sys.stdout):
        yield
