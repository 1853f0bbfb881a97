"""Every tinyattn/...py file that exercises, notebooks, docs and the README point a reader to exists,
and a name said to be in it ("class Softmax in tinyattn/autograd/rules_nn.py") is defined there."""
import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
TEXTS = sorted([*ROOT.glob("tinyattn/exercises/**/*.py"), *ROOT.glob("notebooks/*.py"), *ROOT.glob("notebooks/*.ipynb"),
                *ROOT.glob("docs/*.md"), ROOT / "README.md"])
PATH = re.compile(r"tinyattn/[\w/]+\.py")
NAMED_IN = re.compile(r"`?(?:nn\.|ta\.)?([A-Za-z_]\w*)[\w.]*`? in `?(tinyattn/[\w/]+\.py)")


def _named(text):
    return {(m.group(1), m.group(2)) for m in NAMED_IN.finditer(text)}


def test_the_texts_are_found():
    assert len(TEXTS) > 30 and any(t.suffix == ".ipynb" for t in TEXTS)


@pytest.mark.parametrize("text", TEXTS, ids=lambda p: str(p.relative_to(ROOT)))
def test_every_path_named_exists_and_holds_what_it_is_said_to(text):
    content = text.read_text()
    missing = sorted({p for p in PATH.findall(content) if not (ROOT / p).is_file()})
    assert not missing, f"{text.name} names files that do not exist: {missing}"
    for name, path in _named(content):
        source = (ROOT / path).read_text()
        assert re.search(rf"^\s*(class|def) {name}\b|^{name}\s*=", source, re.M), \
            f"{text.name} says {name} is in {path}, which does not define it"


def test_the_name_check_can_fail():
    assert ("ScaledDotProductAttention", "tinyattn/nn/sdpa.py") in _named(
        "class ScaledDotProductAttention in tinyattn/nn/sdpa.py")
