"""The cycle collector's first threshold, raised on import for graphs of many short-lived nodes
(ops/collector.py): to 5,000 by default, to N or not at all as TINYATTN_GC_THRESHOLD says, never lowered."""
import os
import subprocess
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def _threshold_after_import(setting=None, before=""):
    env = dict(os.environ, PYTHONPATH=ROOT)
    env.pop("TINYATTN_GC_THRESHOLD", None)
    if setting is not None:
        env["TINYATTN_GC_THRESHOLD"] = setting
    code = f"import gc; {before}import tinyattn; print(gc.get_threshold()[0])"
    out = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True)
    return out.stdout.strip() or out.stderr.strip().splitlines()[-1]


def test_import_raises_the_first_threshold_as_the_setting_says():
    assert _threshold_after_import() == "5000"
    assert _threshold_after_import("20000") == "20000"
    assert _threshold_after_import("python", before="gc.set_threshold(700); ") == "700"
    assert _threshold_after_import(before="gc.set_threshold(50000); ") == "50000"  # never lowered


def test_a_bad_setting_names_the_variable_and_what_it_takes():
    assert "TINYATTN_GC_THRESHOLD='lots'" in _threshold_after_import("lots")


def test_the_collector_still_frees_cycles():
    import gc
    import weakref

    import tinyattn as ta

    class Cycle:
        pass

    a, b = Cycle(), Cycle()
    a.other, b.other, a.tensor = b, a, ta.zeros(3)
    alive = weakref.ref(a)
    del a, b
    gc.collect()
    assert alive() is None
