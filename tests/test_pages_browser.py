"""ta.viz.walk_page and ta.viz.attention_page, opened in a real headless Chromium (Playwright drives it).

Without Chromium or playwright the browser tests skip, saying how to install them; the tests of
the pages' data run everywhere.
"""
import io
import json
import os
import re
import runpy
import shutil
import time
from pathlib import Path

import numpy as np
import pytest

import tinyattn as ta
import tinyattn.nn as nn
from tinyattn.models import GPT, LuongSeq2Seq, Seq2Seq, TransformerSeq2Seq
from tinyattn.viz.graph import graph_lists

CHROMIUM = next(filter(None, (shutil.which(name) for name in ("chromium", "chromium-browser"))), None)
FLAGS = ["--headless", "--no-sandbox", "--disable-gpu", "--no-first-run", "--disable-background-networking",
         "--disable-component-update", "--disable-sync"]
INSTALL = ("install Chromium and Playwright to run the browser tests: `sudo apt-get install -y chromium` "
           "(Debian/Ubuntu) and `pip install playwright` (its own browser download is not needed)")
IDS = dict(pad_id=0, bos_id=1, eos_id=2)
DEMOS = Path(__file__).resolve().parents[1] / "demos"


@pytest.fixture(scope="module")
def browser():
    sync_api = pytest.importorskip("playwright.sync_api", reason=f"playwright is not installed: {INSTALL}")
    if CHROMIUM is None:
        pytest.skip(f"no chromium on PATH: {INSTALL}")
    with sync_api.sync_playwright() as playwright:
        chromium = playwright.chromium.launch(executable_path=CHROMIUM, args=FLAGS)
        yield chromium
        chromium.close()


def _open(browser, path):
    """The page at file://path, and the list its console errors and uncaught exceptions go into."""
    page = browser.new_page(viewport={"width": 1280, "height": 800})
    errors = []
    page.on("console", lambda message: message.type == "error" and errors.append(message.text))
    page.on("pageerror", lambda error: errors.append(str(error)))
    page.goto("file://" + os.path.abspath(path))
    return page, errors


def _not_blank(page):
    """A screenshot with more than a few colours spread over it (matplotlib reads the PNG)."""
    import matplotlib.image

    pixels = matplotlib.image.imread(io.BytesIO(page.screenshot()), format="png")[..., :3]
    return pixels.std() > 0.05 and len(np.unique(pixels.reshape(-1, 3), axis=0)) > 20


def _data(path):
    text = open(path, encoding="utf-8").read()
    return json.loads(re.search(r'<script id="data" type="application/json">(.*?)</script>', text, re.S).group(1))


def _bahdanau_step(rng):
    """One additive (Bahdanau) attention step and a loss, under ta.fused(False): its primitive ops."""
    ta.manual_seed(0)
    model = Seq2Seq(9, 9, **IDS, embed_dim=4, hidden_size=5).double()
    with ta.fused(False):
        loss = model.loss(np.array([[5, 6, 7]]), [3], np.array([[1, 8, 2]]))
    return model, loss


def _walked(loss):
    """Backward, keeping the graph, and the walk's own record of the nodes it visited, in order."""
    with ta.autograd.trace() as tape:
        loss.backward(retain_graph=True)
    return [record.name for record in tape]


def test_the_walk_page_steps_through_a_bahdanau_step_in_the_walks_order(browser, rng, tmp_path):
    model, loss = _bahdanau_step(rng)
    visited = _walked(loss)
    params = dict(model.named_parameters())
    path = ta.viz.walk_page(loss, tmp_path / "walk.html", params=params)
    page, errors = _open(browser, path)
    nodes, _ = graph_lists(loss, params)
    assert page.locator("svg#graph [data-node]").count() == len(nodes)
    assert page.locator("svg#graph .current").get_attribute("data-node") == "0"  # the loss
    page.click("#walk-next")
    page.click("#walk-next")
    page.click("#walk-prev")
    assert page.locator("svg#graph .current").get_attribute("data-node") == "1"
    page.click("#walk-prev")
    names = page.evaluate("""count => {  // Next from the loss, one node at a time, as backward went
        const names = [];
        for (let k = 0; k < count; k++) {
            const current = document.querySelectorAll("svg#graph .current");
            names.push(current.length === 1 ? current[0].querySelector("title").textContent : current.length);
            document.getElementById("walk-next").click();
        }
        return names;
    }""", len(visited))
    assert names == visited
    assert _not_blank(page)
    assert errors == []


def test_clicking_a_node_shows_its_shape_its_gradient_and_its_backward_rule(browser, rng, tmp_path):
    model, loss = _bahdanau_step(rng)
    _walked(loss)
    path = ta.viz.walk_page(loss, tmp_path / "walk.html", params=dict(model.named_parameters()))
    page, errors = _open(browser, path)
    data = _data(path)
    i = next(i for i, node in enumerate(data["nodes"]) if node["name"] == "Tanh")  # the additive score's tanh
    page.locator(f'svg#graph [data-node="{i}"]').dispatch_event("click")
    shape = "(" + ", ".join(str(n) for n in data["nodes"][i]["shapes"][0]) + ")"
    assert shape in page.locator("#node-panel").text_content()
    rule = page.locator("#node-rule").text_content()
    assert "def backward" in rule and "1 - " in rule  # Tanh's: dL/dx = g * (1 - y^2)
    assert page.locator("canvas.heat").count() == 2  # its value and its gradient
    leaf = next(i for i, node in enumerate(data["nodes"]) if node["kind"] == "parameter")
    page.locator(f'svg#graph [data-node="{leaf}"]').dispatch_event("click")
    assert "leaf" in page.locator("#node-rule").text_content()
    assert errors == []


def test_a_gpt_block_walks_with_every_gradient_and_the_head_view_switches_heads_and_modes(browser, tmp_path):
    ta.manual_seed(0)
    model = GPT(30, 16, n_layer=1, n_head=2, n_embd=16)
    ids = np.arange(12) % 30
    with ta.fused(False):
        _, loss = model(ids[None], np.roll(ids, -1)[None])
    visited = _walked(loss)
    path = ta.viz.walk_page(loss, tmp_path / "gpt_walk.html", params=dict(model.named_parameters()))
    assert [node["name"] for node in _data(path)["nodes"][:len(visited)]] == visited
    page, errors = _open(browser, path)
    assert page.locator("svg#graph [data-node]").count() == len(graph_lists(loss)[0])
    assert errors == []

    before = {name: p.grad.copy() for name, p in model.named_parameters()}
    path = ta.viz.attention_page(model, ids, tmp_path / "heads.html", targets=np.roll(ids, -1), labels=list("abcdefghijkl"))
    assert all(np.array_equal(before[name], p.grad) for name, p in model.named_parameters())  # looking changed nothing
    page, errors = _open(browser, path)

    def drawn():
        return [float(w) for w in page.locator("svg#heads line").evaluate_all("ls => ls.map(l => l.dataset.weight)")]

    head0 = drawn()
    assert head0 and all(0 <= w <= 1 for w in head0)
    page.select_option("#head-select", "1")
    assert drawn() != head0
    page.click("#mode-switch")
    push = drawn()
    assert any(w < 0 for w in push) and any(w > 0 for w in push)  # -dL/dscores pushes both ways
    assert _not_blank(page)
    assert errors == []


@pytest.mark.parametrize("make", [
    lambda: Seq2Seq(12, 12, **IDS, embed_dim=4, hidden_size=5),
    lambda: LuongSeq2Seq(12, 12, **IDS, embed_dim=4, hidden_size=5),
    lambda: TransformerSeq2Seq(12, 12, **IDS, d_model=8, nhead=2, dim_feedforward=16),
], ids=["bahdanau", "luong", "transformer"])
def test_the_head_view_of_each_translator(browser, make, tmp_path):
    ta.manual_seed(0)
    model = make()
    source, target = np.array([5, 6, 7, 8]), np.array([1, 9, 10, 11, 2])
    path = ta.viz.attention_page(model, (source, target), tmp_path / "heads.html",
                                 labels=(list("abcd"), "<s> w x y </s>".split()))
    layers = _data(path)["checkpoints"][0]["layers"]
    cross = [layer for layer in layers if layer["keys"] == list("abcd") and layer["queries"] == ["<s>", "w", "x", "y"]]
    assert cross, [layer["name"] for layer in layers]  # target words reading source words
    for layer in cross:
        for head in layer["heads"]:
            np.testing.assert_allclose(np.sum(head["weights"], axis=-1), 1, atol=5e-3)
    page, errors = _open(browser, path)
    page.select_option("#layer-select", str(layers.index(cross[0])))
    first = page.locator("svg#heads line").evaluate_all("ls => ls.map(l => l.dataset.query + ',' + l.dataset.weight)")
    page.select_option("#head-select", "1")
    assert page.locator("svg#heads line").evaluate_all("ls => ls.map(l => l.dataset.query + ',' + l.dataset.weight)") != first
    assert errors == []


def test_checkpoints_are_a_picker_and_the_model_gets_its_state_back(browser, tmp_path):
    ta.manual_seed(0)
    model = nn.Sequential(nn.Embedding(10, 8))  # an embedding, then attention: a MultiheadAttention model
    attention = nn.MultiheadAttention(8, 2, batch_first=True)

    class Tiny(nn.Module):
        def __init__(self):
            super().__init__()
            self.embed, self.attn, self.out = model, attention, nn.Linear(8, 10)

        def forward(self, ids):
            x = self.embed(ids)
            return self.out(x + self.attn(x, x, x, is_causal=True, need_weights=False)[0])

    tiny = Tiny()
    early = tiny.state_dict()
    for p in tiny.parameters():
        p.data += 0.5 * np.random.default_rng(0).standard_normal(p.shape).astype(p.data.dtype)
    late = tiny.state_dict()
    path = ta.viz.attention_page(tiny, np.arange(6), tmp_path / "steps.html", targets=np.arange(1, 7) % 10,
                                 checkpoints=[("step 0", early), ("step 100", late)])
    assert all(np.array_equal(a, b) for a, b in zip(late.values(), tiny.state_dict().values()))
    data = _data(path)
    assert [c["layers"][0]["name"] for c in data["checkpoints"]] == ["attn", "attn"]
    page, errors = _open(browser, path)
    weights = page.locator("svg#heads line").evaluate_all("ls => ls.map(l => l.dataset.weight)")
    page.select_option("#checkpoint-select", "1")
    assert page.locator("svg#heads line").evaluate_all("ls => ls.map(l => l.dataset.weight)") != weights
    assert errors == []


def test_a_graph_of_thousands_of_nodes_stays_a_small_quick_page(browser, tmp_path):
    x = ta.tensor(np.random.default_rng(0).standard_normal((64, 64)), requires_grad=True)
    y = x
    for _ in range(1500):  # an unrolled recurrence: 3,000 nodes
        y = (y * 0.9).tanh()
    loss = y.sum()
    loss.backward(retain_graph=True)
    started = time.perf_counter()
    path = ta.viz.walk_page(loss, tmp_path / "long.html")
    written = time.perf_counter() - started
    assert os.path.getsize(path) < 4e6 and written < 10
    page, errors = _open(browser, path)
    assert page.locator("svg#graph [data-node]").count() == 3002
    assert page.locator("svg#graph .group.collapsed").count() == 1  # the 1,500 steps: one box, closed
    started = time.perf_counter()
    for _ in range(5):
        page.click("#walk-next")
    assert page.locator("svg#graph .current").get_attribute("data-node") == "5"
    assert time.perf_counter() - started < 5  # a click answers at once, not after a redraw of the whole graph
    assert errors == []


def _decoder_loop():
    """A translator's teacher-forced loss over 11 decoder steps (Bahdanau attention, primitive ops)."""
    ta.manual_seed(0)
    model = Seq2Seq(20, 20, **IDS, embed_dim=8, hidden_size=16)
    with ta.fused(False):
        loss = model.loss(np.array([[5, 6, 7, 8, 9, 10]]), [6], np.array([[1, *range(3, 13), 2]]))
    loss.backward(retain_graph=True)
    return model, loss


def test_the_walk_groups_a_decoder_loop_into_its_repeated_steps(tmp_path):
    model, loss = _decoder_loop()
    data = _data(ta.viz.walk_page(loss, tmp_path / "walk.html", params=dict(model.named_parameters())))
    names = [node["name"] for node in data["nodes"]]
    decoder = max(data["groups"], key=lambda group: group["steps"])
    assert decoder["steps"] == 11 and decoder["count"] == 11 * decoder["period"] and decoder["collapsed"]
    first, period = decoder["first"], decoder["period"]
    steps = [names[first + k * period:first + (k + 1) * period] for k in range(decoder["steps"])]
    assert all(step == steps[0] for step in steps) and "Softmax" in steps[0]  # each step attends once
    # the bidirectional encoder over 6 tokens: each direction's 6 steps, not the two directions as 2 steps
    assert sorted(group["steps"] for group in data["groups"]) == [6, 6, 11]
    spans = sorted((group["first"], group["first"] + group["count"]) for group in data["groups"])
    assert all(end <= start for (_, end), (start, _) in zip(spans, spans[1:]))  # no node in two groups


def test_a_collapsed_group_opens_on_a_click_and_when_next_walks_into_it(browser, tmp_path):
    model, loss = _decoder_loop()
    path = ta.viz.walk_page(loss, tmp_path / "walk.html", params=dict(model.named_parameters()))
    assert os.path.getsize(path) < 4e6
    groups = _data(path)["groups"]
    page, errors = _open(browser, path)
    assert page.locator("svg#graph [data-node]").count() == len(graph_lists(loss)[0])  # hidden nodes stay in the DOM
    assert page.locator("svg#graph [data-group].collapsed").count() == len(groups) >= 2
    first = min(groups, key=lambda group: group["first"])
    inside = f'svg#graph [data-node="{first["first"] + 1}"]'
    assert not page.locator(inside).is_visible()
    v = next(i for i, node in enumerate(_data(path)["nodes"]) if node["name"] == "decoder.attention.v.weight")
    assert not page.locator(f'svg#graph [data-node="{v}"]').is_visible()  # a weight only the loop uses: in its box
    assert page.locator("svg#graph [data-node]:visible").count() < 60  # a few dozen drawn of 600
    for _ in range(first["first"] - 1):  # Next from the loss up to the node before the group, then into it
        page.click("#walk-next")
    assert page.locator("svg#graph [data-group='0']").get_attribute("class").split() == ["group", "collapsed"]
    closed = float(page.locator("svg#graph [data-group='0'] .body").get_attribute("height"))
    page.click("#walk-next")
    assert float(page.locator("svg#graph [data-group='0'] .body").get_attribute("height")) > 5 * closed  # one row, then all
    assert page.locator("svg#graph .current").get_attribute("data-node") == str(first["first"])
    assert page.locator("svg#graph .current").is_visible() and page.locator(inside).is_visible()
    assert "open" in page.locator("svg#graph [data-group='0']").get_attribute("class").split()
    assert page.locator(f'svg#graph [data-node="{v}"]').is_visible()
    other = page.locator("svg#graph [data-group='1']")
    other.locator(".body").dispatch_event("click")
    assert "open" in other.get_attribute("class").split()
    assert page.locator(f'svg#graph [data-node="{groups[1]["first"]}"]').is_visible()
    other.locator(".header").dispatch_event("click")  # the header closes it again
    assert "collapsed" in other.get_attribute("class").split()
    assert _not_blank(page)
    assert errors == []


def test_walk_page_refuses_a_leaf_and_a_freed_graph(tmp_path):
    with pytest.raises(ValueError, match="walk_page.*leaf"):
        ta.viz.walk_page(ta.ones(3, requires_grad=True), tmp_path / "x.html")
    x = ta.ones(3, requires_grad=True)
    loss = (x * x).sum()
    loss.backward()
    with pytest.raises(ValueError, match="retain_graph=True"):
        ta.viz.walk_page(loss, tmp_path / "x.html")


def test_attention_page_says_when_a_model_has_no_attention(tmp_path):
    with pytest.raises(ValueError, match="attention_page: Sequential computed no softmax"):
        ta.viz.attention_page(nn.Sequential(nn.Embedding(5, 4), nn.Linear(4, 5)), np.arange(3), tmp_path / "x.html")


def test_see_backprops_walk_page_opens_with_every_node_of_its_graph(browser, tmp_path):
    demo = runpy.run_path(str(DEMOS / "see_backprop.py"))
    paths = demo["one_step"](str(tmp_path))
    page, errors = _open(browser, next(p for p in paths if p.endswith("walk.html")))
    assert page.locator("svg#graph [data-node]").count() == 14  # 11 Function calls, W_q, W_k, W_v
    assert page.locator("aside h2").text_content() == "Mean"  # the loss, visited first
    assert errors == []
