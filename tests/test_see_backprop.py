"""demos/see_backprop.py's short mode: what it measures and draws must show what it says."""
import runpy
from pathlib import Path

DEMO = Path(__file__).resolve().parents[1] / "demos" / "see_backprop.py"


def test_the_demo_shows_the_walk_the_scale_and_learning(tmp_path, capsys):
    result = runpy.run_path(str(DEMO))["main"](["--quick", "--out-dir", str(tmp_path)])
    out = capsys.readouterr().out
    walk = out.split("the backward walk")[1].split("nodes,")[0]
    assert walk.index("Mean") < walk.index("Softmax") < walk.index("Permute")  # consumers before producers
    assert "each row of dL/dscores sums to 0 (softmax): " in out
    inside = out.split("1b. ")[1].split("\n2. ")[0]  # a real MultiheadAttention under ta.fused(False)
    assert inside.index("Softmax") < inside.index("Mul ") < inside.index("MatMul")  # weights, scores, Q K^T
    assert "ScaledDotProductAttention" not in inside and result["multihead_gap"] < 1e-12
    random_rows = {row[0]: row for row in result["random"]}  # d: (d, grad scaled, sat., grad unscaled, sat.)
    assert random_rows[512][4] > 0.5 and random_rows[512][2] == 0           # unscaled rows saturate, scaled do not
    assert random_rows[512][3] < 0.2 * random_rows[512][1]                   # ... and their gradient vanishes
    assert 0.5 < random_rows[512][1] / random_rows[4][1] < 2                 # scaled: about the same at every d_k
    trained = result["trained"][-1]
    assert trained[3] < 0.1 * trained[1]                                     # a trained model too
    for picture in result["pictures"]:
        assert Path(picture).stat().st_size > 5000, picture
    assert Path(result["pictures"][-1]).read_bytes()[:6] == b"GIF89a"
