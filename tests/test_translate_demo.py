"""demos/translate.py: a short training run, results.json, --translate and its refusals, --compare."""
import io
import json
import runpy
from pathlib import Path

import pytest

DEMO = Path(__file__).resolve().parents[1] / "demos" / "translate.py"


@pytest.fixture(scope="module")
def demo():
    return runpy.run_path(str(DEMO))


@pytest.fixture(scope="module")
def trained(demo, tmp_path_factory):
    """The quick pair, Bahdanau's decoder, 150 steps: a model that translates."""
    out = tmp_path_factory.mktemp("translate_out")
    results = demo["main"](["--pair", "quick", "--decoder", "bahdanau", "--steps", "150", "--test-per-length", "5",
                            "--out-dir", str(out)])
    return out, results


def test_a_short_run_translates_most_sentences_and_writes_its_results(trained):
    out, results = trained
    assert results["bahdanau"]["overall"]["exact"] >= 0.9
    written = json.loads((out / "results.json").read_text())["models"]["bahdanau"]
    assert written["train_seconds"] > 0 and set(written["by_length"]) <= {"1-4", "5-8", "9-12", "13-16"}
    for row in list(written["by_length"].values()) + [written["overall"]]:
        assert 0 <= row["exact"] <= 1 and 0 <= row["bleu"] <= 100 and row["align"] is None  # no gold on this pair
    for picture in ("attention.png", "accuracy_by_length.png", "loss.png", "attention.html", "walk.html"):
        assert (out / picture).stat().st_size > 5000


def _translate(demo, out, *args, stdin=None, monkeypatch=None):
    if stdin is not None:
        monkeypatch.setattr("sys.stdin", io.StringIO(stdin))
    return demo["main"](["--pair", "quick", "--out-dir", str(out), "--translate", *args])


def test_translate_prints_the_translation_and_its_attention(demo, trained, capsys, monkeypatch):
    out, _ = trained
    assert _translate(demo, out, "big red cat sees small dog") == 0
    lines = capsys.readouterr().out.splitlines()
    assert lines[0].split()[:2] == ["chat", "rouge"] and "<-" in lines[2]
    assert _translate(demo, out, "-", stdin="cat\nbig dog\n", monkeypatch=monkeypatch) == 0
    assert capsys.readouterr().out.count("(the grammar's translation") == 2
    with pytest.raises(SystemExit) as stop:  # a bad line is refused, the others still translated
        _translate(demo, out, "-", stdin="the cat\nbig dog\n", monkeypatch=monkeypatch)
    captured = capsys.readouterr()
    assert stop.value.code == 1 and "unknown word 'the'" in captured.err and "chien grand" in captured.out


@pytest.mark.parametrize("text, message", [
    ("big red cta", "unknown word 'cta' (nearest known: cat"),
    ("big rde cta sees cta", "unknown words 'rde' (nearest known: red, "),  # the old tree named 'rde' only
    ("   ", "empty sentence"),
    (" ".join(["cat sees dog"] * 6), "18 words: the model was trained on sentences of at most 15"),
])
def test_translate_refuses_bad_sentences_in_one_line(demo, trained, capsys, text, message):
    out, _ = trained
    with pytest.raises(SystemExit) as stop:
        _translate(demo, out, text)
    err = capsys.readouterr().err
    assert stop.value.code != 0 and message in err and len(err.strip().splitlines()) == 1 and "Traceback" not in err


def test_translate_refuses_a_missing_or_mismatched_checkpoint(demo, trained, tmp_path, capsys):
    out, _ = trained
    with pytest.raises(SystemExit) as stop:
        demo["main"](["--pair", "quick", "--out-dir", str(tmp_path), "--translate", "cat"])
    assert stop.value.code != 0 and "no trained model at" in capsys.readouterr().err
    (tmp_path / "luong_general.ckpt.npz").write_bytes((out / "bahdanau.ckpt.npz").read_bytes())
    with pytest.raises(SystemExit) as stop:
        demo["main"](["--pair", "quick", "--out-dir", str(tmp_path), "--decoder", "luong", "--translate", "cat"])
    err = capsys.readouterr().err
    assert stop.value.code != 0 and "does not fit a --decoder luong model" in err and len(err.strip().splitlines()) == 1


def test_compare_trains_every_decoder_and_writes_the_report(demo, tmp_path):
    results = demo["main"](["--compare", "--pair", "quick", "--steps", "3", "--batch", "4", "--test-per-length", "1",
                            "--out-dir", str(tmp_path)])
    assert list(results) == ["none", "bahdanau", "luong_dot", "luong_general", "luong_concat", "transformer"]
    report = (tmp_path / "compare" / "report.md").read_text()
    assert all(f"| {name} |" in report for name in results)
    assert (tmp_path / "compare" / "compare.png").stat().st_size > 5000
    written = json.loads((tmp_path / "compare" / "results.json").read_text())["models"]
    assert set(written["none"]["by_length"]) == {"1-4", "5-8", "9-12", "13-16"}
    assert all(r["train_seconds"] > 0 and r["parameters"] > 0 for r in written.values())


def test_the_default_run_on_the_hard_pair_writes_every_figure(demo, tmp_path):
    """Two steps only: the shape of results.json, not the accuracy (that is the demo's own run)."""
    results = demo["main"](["--steps", "2", "--batch", "4", "--test-per-length", "1", "--out-dir", str(tmp_path)])
    written = json.loads((tmp_path / "results.json").read_text())["models"]
    assert list(written) == list(results) == ["bahdanau", "none"]
    for name, model in written.items():
        assert list(model["by_length"]) == ["5-10", "11-20", "21-30", "31-40", "41-50"]
        for row in list(model["by_length"].values()) + [model["overall"]]:
            assert 0 <= row["exact"] <= 1 and 0 <= row["bleu"] <= 100
            assert (row["align"] is None) == (name == "none") and (row["align"] is None or 0 <= row["align"] <= 1)
    assert (tmp_path / "attention.png").stat().st_size > 5000


def test_every_unknown_word_is_named_and_vocab_lists_the_known_ones(demo, trained, capsys):
    out, _ = trained
    with pytest.raises(SystemExit):
        _translate(demo, out, "big rde cta sees cta")
    err = capsys.readouterr().err
    assert "'rde' (nearest known: red" in err and "'cta' (nearest known: cat" in err and err.count("'cta'") == 1
    assert "--vocab lists the 23 words it knows" in err
    assert demo["main"](["--pair", "quick", "--vocab"]) == 0
    head, *rest = capsys.readouterr().out.splitlines()
    assert head == "--pair quick: the 23 words --translate knows" and " ".join(rest).split()[:3] == ["big", "bird", "book"]


def test_help_names_vocab_and_the_real_compare_report_and_a_beam_of_zero_is_a_usage_error(demo, capsys):
    with pytest.raises(SystemExit) as stop:
        demo["main"](["--help"])
    text = " ".join(capsys.readouterr().out.split())
    assert stop.value.code == 0 and "--vocab" in text and "translate_out/compare/" in text  # where compare_command writes
    for flag in ("--beam", "--batch", "--hidden"):
        with pytest.raises(SystemExit) as stop:
            demo["main"]([flag, "0", "--translate", "cat"])
        assert stop.value.code == 2 and f"argument {flag}: 0 is too small" in capsys.readouterr().err


def test_ablation_trains_the_recipe_and_each_ingredient_off(demo, tmp_path):
    results = demo["main"](["--ablation", "--pair", "quick", "--steps", "3", "--batch", "4", "--test-per-length", "1",
                            "--out-dir", str(tmp_path)])
    names = ["recipe", "no_cross_rope", "sinusoidal", "no_warmup_cosine", "no_label_smoothing", "post_norm"]
    assert list(results) == names
    report = (tmp_path / "ablation" / "ablation.md").read_text()
    assert all(f"| {name} |" in report for name in names) and "training (s)" in report
    written = json.loads((tmp_path / "ablation" / "results.json").read_text())["models"]
    assert all(r["steps"] == 3 for r in written.values())
    config = json.loads((tmp_path / "ablation" / "sinusoidal.json").read_text())
    assert config["positions"] == "sinusoidal"


def test_translate_refuses_a_transformer_trained_with_other_positions(demo, tmp_path, capsys):
    demo["main"](["--pair", "quick", "--decoder", "transformer", "--steps", "2", "--batch", "4",
                  "--test-per-length", "1", "--out-dir", str(tmp_path)])
    config = tmp_path / "transformer.json"
    saved = json.loads(config.read_text())
    assert saved["positions"] == "rope"
    del saved["positions"]  # as a checkpoint saved before rotary positions: its weights would load silently
    config.write_text(json.dumps(saved))
    with pytest.raises(SystemExit) as stop:
        demo["main"](["--pair", "quick", "--decoder", "transformer", "--out-dir", str(tmp_path), "--translate", "cat"])
    err = capsys.readouterr().err
    assert stop.value.code == 2 and "trained with sinusoidal positions, this Transformer uses rope" in err


def test_the_transformer_trains_on_bucketed_batches_when_its_recipe_says_so(demo, tmp_path, monkeypatch):
    monkeypatch.setitem(demo["TRANSFORMER"], "pool_batches", 2)
    widths, real = [], demo["BucketedStream"].__call__

    def serve(self, step):  # the stream's batches, their widths noted
        batch = real(self, step)
        widths.append(batch[0].shape[1])
        return batch

    monkeypatch.setattr(demo["BucketedStream"], "__call__", serve)
    results = demo["main"](["--pair", "quick", "--decoder", "transformer", "--steps", "3", "--batch", "4",
                            "--test-per-length", "1", "--out-dir", str(tmp_path)])
    assert results["transformer"]["steps"] == 3 and len(widths) == 3 and all(w % 8 == 0 for w in widths)
