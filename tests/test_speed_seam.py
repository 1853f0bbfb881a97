"""The speed seam and the layers' imports: every block runs through the blocks table (ops/blocks.py),
whose table in force is the references under ta.fused(False) and the fused nodes otherwise, per
thread; no layer or model asks which form runs or imports a fused node (import circles and late
imports: test_house.py)."""
import pathlib
import threading

import pytest

import tinyattn as ta
import tinyattn.nn as nn
from tinyattn.ops import blocks

from .test_house import import_graph, module_name

ROOT = pathlib.Path(__file__).parent.parent
PACKAGE = ROOT / "tinyattn"
IMPORTS = import_graph()


def test_layers_and_models_never_ask_which_form_runs_nor_import_a_fused_node():
    for folder in ("nn", "models"):
        for path in (PACKAGE / folder).rglob("*.py"):
            if "fused" in path.relative_to(PACKAGE).parts or path == PACKAGE / "nn" / "__init__.py":
                continue
            source = path.read_text()
            assert "is_fused" not in source, path.relative_to(ROOT)
            imported = IMPORTS[module_name(path)]
            assert not any(name.startswith("tinyattn.nn.fused") for name in imported), path.relative_to(ROOT)


def test_the_table_in_force_is_the_references_when_fused_is_off_and_the_fused_nodes_otherwise():
    with ta.fused(False):
        for name in blocks.BLOCKS:
            assert getattr(blocks, name) is blocks.reference(name), name
    with ta.fused(True):
        for name in blocks.BLOCKS:
            assert getattr(blocks, name) is not blocks.reference(name), name
    with pytest.raises(AttributeError, match="no block 'attend'.*attention"):
        blocks.attend


def test_a_layer_runs_the_block_in_force_in_its_own_thread(rng):
    """ta.fused(False) in one thread swaps the table for that thread only: another thread's
    attention, built at the same moment, is still the fused node."""
    x = ta.tensor(rng.standard_normal((2, 3, 4)), requires_grad=True)
    inside, release = threading.Barrier(2), threading.Event()
    made = {}

    def run(flag):
        with ta.fused(flag):
            inside.wait(5)
            made[flag] = nn.functional.scaled_dot_product_attention(x, x, x)[1].grad_fn
            release.wait(5)

    threads = [threading.Thread(target=run, args=(flag,)) for flag in (False, True)]
    for thread in threads:
        thread.start()
    while len(made) < 2:
        threading.Event().wait(0.01)
    release.set()
    for thread in threads:
        thread.join()
    assert made == {False: "Softmax", True: "ScaledDotProductAttention"}
