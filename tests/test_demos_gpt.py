"""demos/gpt.py: the results.json contract, learning past the unigram baseline, --prompt from the
checkpoint, and clear errors for a bad --text or unknown prompt characters."""
import json
import runpy
from pathlib import Path

import numpy as np
import pytest

DEMO = Path(__file__).resolve().parents[1] / "demos" / "gpt.py"
TINY = ["--steps", "30", "--batch", "8", "--block-size", "16", "--n-layer", "1", "--n-head", "2", "--n-embd", "32",
        "--lr", "1e-2", "--warmup", "5", "--eval-every", "10"]
TEXT = "def add(a, b):\n    return a + b\n\n" * 40  # repetitive: a context of a few characters predicts it


@pytest.fixture(scope="module")
def demo():
    return runpy.run_path(str(DEMO))


def test_baselines_are_the_smoothed_counts(demo):
    train = np.array([0, 1, 0, 1, 0, 2])
    rows = np.array([[0, 1, 0]])                       # scored: 1 after 0, then 0 after 1
    base = demo["baselines"](train, rows, 3)
    unigram = np.array([3 + 1, 2 + 1, 1 + 1]) / 9      # add-one over 3 characters
    assert base["unigram"] == pytest.approx(-np.log2([unigram[1], unigram[0]]).mean())
    after0, after1 = np.array([0, 2, 1]) + 1, np.array([2, 0, 0]) + 1   # 0 is followed by 1 twice and 2 once
    assert base["bigram"] == pytest.approx(-np.log2([after0[1] / after0.sum(), after1[0] / after1.sum()]).mean())
    assert demo["windows"](np.arange(10), 3).tolist() == [[0, 1, 2, 3], [3, 4, 5, 6], [6, 7, 8, 9]]


def test_a_tiny_run_writes_the_contract_learns_and_samples_from_its_checkpoint(demo, tmp_path, capsys):
    text = tmp_path / "code.py"
    text.write_text(TEXT)
    out = tmp_path / "out"
    demo["main"](TINY + ["--text", str(text), "--out-dir", str(out)])
    results = json.loads((out / "results.json").read_text())
    assert {"steps", "train_seconds", "val_bits_per_char", "baselines", "samples"} <= set(results)
    assert results["steps"] == 30 and results["train_seconds"] > 0
    assert set(results["baselines"]) == {"unigram", "bigram"}
    assert [step for step, _ in results["curve"]] == [10, 20, 30] and results["sample_steps"] == [10, 20, 30, 30]
    assert all(isinstance(s, str) and s.startswith("def ") for s in results["samples"])
    # learned: below the unigram baseline, and falling
    assert results["val_bits_per_char"] < 0.8 * results["baselines"]["unigram"]
    assert results["curve"][-1][1] < results["curve"][0][1]
    assert '"page":"attention"' in (out / "heads.html").read_text()  # the heads, for a browser
    assert (out / "learning.png").stat().st_size > 5000 and (out / "gpt.ckpt.npz").exists()
    capsys.readouterr()

    def prompt(seed):
        demo["main"](["--prompt", "def a", "--tokens", "40", "--seed", str(seed), "--out-dir", str(out)])
        return capsys.readouterr().out
    first = prompt(1)
    assert first.startswith("def a") and len(first.rstrip("\n")) >= 40
    assert prompt(1) == first                            # the same seed writes the same text
    with pytest.raises(SystemExit) as stopped:
        demo["main"](["--prompt", "déf Z", "--out-dir", str(out)])
    assert stopped.value.code == 2
    assert "never saw the characters ['Z', 'é']" in capsys.readouterr().err


@pytest.mark.parametrize("content, says", [(None, "no such file"), ("", "has 0 characters"),
                                           ("x" * 100, "has 100 characters")])
def test_a_missing_empty_or_short_text_is_a_usage_error(demo, tmp_path, capsys, content, says):
    path = tmp_path / "text.txt"
    if content is not None:
        path.write_text(content)
    with pytest.raises(SystemExit) as stopped:
        demo["main"](TINY + ["--text", str(path), "--out-dir", str(tmp_path / "out")])
    assert stopped.value.code == 2 and says in capsys.readouterr().err
    assert not (tmp_path / "out").exists()


def test_the_prompt_is_the_opening_of_the_text(demo, tmp_path):
    # the text has every character of "def " but does not start with it: the samples start as the text does
    text = tmp_path / "story.txt"
    text.write_text("Once upon a time the fox defended a den.\n" * 20)
    out = tmp_path / "out"
    results = demo["main"](TINY + ["--steps", "10", "--text", str(text), "--out-dir", str(out)])
    assert all(s.startswith("Once ") for s in results["samples"])
    assert results["prompt"] == "Once "
    assert demo["text_prompt"]("\n\n  First Citizen:\nBefore we proceed") == "First "


def test_a_small_text_that_overfits_is_named_and_the_best_checkpoint_samples(demo, tmp_path, capsys):
    # the training 90 % alternates a, b; the held-out 10 % doubles them (aabb): the better the model
    # learns its training text, the worse it predicts the held-out one, as a small text memorised does
    text = tmp_path / "small.txt"
    text.write_text("ab" * 540 + "aabb" * 30)
    out = tmp_path / "out"
    results = demo["main"](TINY + ["--steps", "60", "--eval-every", "5", "--text", str(text), "--out-dir", str(out)])
    printed = capsys.readouterr().out
    best_step, best_bits = results["best"]["step"], results["best"]["val_bits_per_char"]
    assert best_step < 60 and best_bits == min(bits for _, bits in results["curve"]) < results["val_bits_per_char"]
    assert results["rising_since"] == best_step
    assert (f"validation loss rising since step {best_step}: the model is memorising a small text; "
            "try --steps or a larger text") in printed
    # the final sample and --prompt come from the best weights, not the last ones
    model = demo["GPT"](2, 16, 1, 2, 32)
    model.load_state_dict(demo["ta"].load(out / "gpt.best.npz")["model"])
    corpus = demo["Corpus"]("", "ab", 0)
    assert results["samples"][-1] == demo["sample"](model, corpus, results["prompt"], 300, 0.8, None, 0)
    demo["main"](["--prompt", "ab", "--tokens", "40", "--out-dir", str(out)])
    assert capsys.readouterr().out.strip() == demo["sample"](model, corpus, "ab", 40, 0.8, None, 0)


def test_the_plot_shows_training_and_validation_loss_unclipped(demo, tmp_path):
    train_loss = [np.log(2) * bits for bits in np.linspace(6.0, 1.0, 30)]   # in nats, as fit records it
    curve = [(10, 3.0), (20, 4.0), (30, 9.0)]                               # far above both baselines
    path = tmp_path / "learning.png"
    fig = demo["plot_learning"](curve, train_loss, {"unigram": 4.3, "bigram": 3.3}, path, best=(10, 3.0))
    assert path.stat().st_size > 5000
    lines = {line.get_label(): line for line in fig.axes[0].get_lines()}
    assert "training (bits/char)" in lines and "validation (bits/char)" in lines
    np.testing.assert_allclose(lines["training (bits/char)"].get_ydata(), np.linspace(6.0, 1.0, 30))
    assert list(lines["validation (bits/char)"].get_ydata()) == [3.0, 4.0, 9.0]
    bottom, top = fig.axes[0].get_ylim()
    assert bottom <= 0 and top >= 9.0                                        # every point in view
