"""The exercises' command line: start, check, hint, solution and the listing, as a learner meets them."""
import inspect
import json
import subprocess
import sys
from pathlib import Path

from tinyattn.exercises import EXERCISES, check
from tinyattn.exercises.__main__ import main

# What a learner writes at the top of a file to use their own earlier backwards (neighbours in ./exercises/).
NEIGHBOURS = {
    "multi_head": "from attention import backward as attention_backward\n",
    "encoder_layer": "from layer_norm import backward as layer_norm_backward\n"
                     "from multi_head import backward as multi_head_backward\n",
}


def _solved(folder, name, replace=None):
    """The learner's copy of `name` in `folder`, its backward written as the worked solution's
    (with `replace` = (right, wrong) applied), importing its neighbours where it uses them."""
    template = Path(EXERCISES[name].template.__file__).read_text()
    module = EXERCISES[name].solution
    functions = sorted((f for n, f in vars(module).items() if inspect.isfunction(f) and n != "mistakes"
                        and f.__module__ == module.__name__), key=lambda f: f.__code__.co_firstlineno)
    body = "\n\n".join(inspect.getsource(f) for f in functions)
    if replace:
        body = body.replace(*replace)
    head = template[:template.index("def backward(")].replace("import numpy as np\n",
                                                               "import numpy as np\n" + NEIGHBOURS.get(name, ""))
    path = Path(folder) / f"{name}.py"
    path.write_text(head + body)
    return path


def test_a_learner_lists_starts_checks_and_passes(tmp_path, monkeypatch, capsys):
    monkeypatch.chdir(tmp_path)
    assert main([]) == 0
    assert "   3. softmax         not started" in capsys.readouterr().out
    assert main(["start", "softmax"]) == 0
    copy = tmp_path / "exercises" / "softmax.py"
    assert copy.read_text() == Path(EXERCISES["softmax"].template.__file__).read_text()
    main([])
    assert "softmax         started" in capsys.readouterr().out
    assert main(["check", "softmax"]) == 1 and "not written yet" in capsys.readouterr().out
    _solved(tmp_path / "exercises", "softmax")
    assert main(["start", "softmax"]) == 1 and "exists already" in capsys.readouterr().out
    assert "y * (grad - s)" in copy.read_text()  # start did not overwrite the learner's work
    assert main(["check", "softmax"]) == 0
    out = capsys.readouterr().out
    assert out.startswith("softmax: correct") and "Next on the path: cross_entropy" in out
    main([])
    assert "softmax         passed" in capsys.readouterr().out


def test_hints_come_one_more_step_at_a_time_and_start_over_on_reset(tmp_path, monkeypatch, capsys):
    monkeypatch.chdir(tmp_path)
    hints = EXERCISES["softmax"].solution.HINTS
    for shown in (1, 2, 3, 3):
        assert main(["hint", "softmax"]) == 0
        out = capsys.readouterr().out
        assert out.count("softmax, hint ") == shown and f"hint {shown} of 3: {hints[shown - 1]}" in out
        assert ("solution softmax" in out) == (shown == 3)
    assert json.loads((tmp_path / "exercises" / ".hints.json").read_text()) == {"softmax": 3}
    main(["hint", "layer_norm"])
    assert main(["hint", "softmax", "--reset"]) == 0 and "start over" in capsys.readouterr().out
    assert json.loads((tmp_path / "exercises" / ".hints.json").read_text()) == {"layer_norm": 1}
    main(["hint", "softmax"])
    assert capsys.readouterr().out.count("softmax, hint ") == 1


def test_the_solution_is_printed_on_request_without_the_checkers_mistakes(capsys):
    assert main(["solution", "lstm_step"]) == 0
    out = capsys.readouterr().out
    assert "def backward(grad, cache):" in out and "def _gate_gradients(" in out
    assert "def mistakes" not in out and "HINTS" not in out
    assert main(["solution", "encoder_layer"]) == 0  # the earlier backwards it uses, as a learner imports them
    assert "\n\nfrom layer_norm import backward as layer_norm_backward\n" in capsys.readouterr().out


def test_the_whole_block_is_built_from_the_learners_own_backwards(tmp_path):
    for name in ("layer_norm", "attention", "multi_head", "encoder_layer"):
        _solved(tmp_path, name)
    verdict = check("encoder_layer", tmp_path / "encoder_layer.py")
    assert verdict.passed, verdict.message
    # a neighbour edited since is read again: its mistake now shows in the whole block
    _solved(tmp_path, "layer_norm", replace=("h - h.mean(axis=-1, keepdims=True) - ", "h - "))
    verdict = check("encoder_layer", tmp_path / "encoder_layer.py")
    assert not verdict.passed and "dL/dx is wrong" in verdict.message
    assert "layer_norm" not in sys.modules and str(tmp_path) not in sys.path  # nothing left behind


def test_the_command_line_reports_a_learners_error_without_a_traceback(tmp_path):
    (tmp_path / "exercises").mkdir()
    broken = _solved(tmp_path / "exercises", "softmax", replace=("axis=-1, keepdims=True", "axis=7"))
    run = subprocess.run([sys.executable, "-m", "tinyattn.exercises", "check", "softmax"], cwd=tmp_path,
                         capture_output=True, text=True)
    assert run.returncode == 1 and "Traceback" not in run.stdout + run.stderr
    assert "your backward raised AxisError" in run.stdout
    assert f"at {broken}, line " in run.stdout and "s = (grad * y).sum(axis=7)" in run.stdout


def test_a_learners_sys_exit_is_a_failure_that_names_the_call(tmp_path):
    (tmp_path / "exercises").mkdir()
    quits = _solved(tmp_path / "exercises", "softmax", replace=("    s = (grad * y)", "    sys.exit(0)\n    s = (grad * y)"))
    quits.write_text("import sys\n" + quits.read_text())
    run = subprocess.run([sys.executable, "-m", "tinyattn.exercises", "check", "softmax"], cwd=tmp_path,
                         capture_output=True, text=True)
    assert run.returncode == 1 and "Traceback" not in run.stdout + run.stderr  # the old tree: exit 0, silent
    assert "your backward called sys.exit(0)" in run.stdout and f"at {quits}, line " in run.stdout
    assert "sys.exit(0)" in run.stdout.splitlines()[-1]
    quits.write_text(quits.read_text().replace("import sys\n", "import sys\nsys.exit(0)\n", 1))
    assert not check("softmax", quits).passed and "called sys.exit(0)" in check("softmax", quits).message
    odd = _solved(tmp_path, "softmax", replace=("    s = (grad * y)", "    raise GeneratorExit('odd')\n    s = (grad * y)"))
    assert "your backward raised GeneratorExit: odd" in check("softmax", odd).message


def test_a_changed_forward_a_wrong_count_and_a_nan_are_each_named(tmp_path):
    changed = _solved(tmp_path, "softmax")
    changed.write_text(changed.read_text().replace("return y, (y,)", "return 2 * y, (y,)"))
    assert "the forward's output differs from tinyattn's" in check("softmax", changed).message
    short = _solved(tmp_path, "broadcast", replace=("return grad * w,", "return"))
    assert "backward returned 2 gradient(s); forward takes 3 input(s) with a gradient (x, w, b)" \
        in check("broadcast", short).message
    nan = _solved(tmp_path, "softmax", replace=("return y * (grad - s)", "return y * (grad - s) * np.nan"))
    message = check("softmax", nan).message
    assert "dL/dx is wrong in 15 of 15 elements" in message and "15 entries that are NaN or infinite" in message


def test_a_missing_file_function_or_exercise_is_named(tmp_path):
    assert "python -m tinyattn.exercises start softmax makes it" in check("softmax", tmp_path / "none.py").message
    half = tmp_path / "half.py"
    half.write_text("def forward(x):\n    return x, ()\n")
    assert "defines no backward function" in check("softmax", half).message
    assert "no exercise called 'soft'" in check("soft", half).message
    _solved(tmp_path, "multi_head")  # imports the learner's attention, not written yet
    verdict = check("multi_head", tmp_path / "multi_head.py")
    assert f"multi_head imports your attention, which is not beside it in {tmp_path} yet: python -m " \
           "tinyattn.exercises start attention" in verdict.message
