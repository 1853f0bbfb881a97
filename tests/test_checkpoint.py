"""ta.save / ta.load: round trips, exact resume, atomic writes, clear errors on bad files."""
import os

import numpy as np
import pytest

import tinyattn as ta
import tinyattn.nn as nn


def test_nested_state_round_trips_with_types_and_dtypes(tmp_path):
    state = {"model": {"w": np.arange(6, dtype=np.float32).reshape(2, 3), "b": np.zeros(2, np.float64)},
             "step": 7, "lr": 1e-3, "name": "run-1", "flags": [True, None, (1, 2)], "best": float("inf"),
             "ids": np.array([1, 2], np.int64)}
    path = tmp_path / "checkpoint"  # no .npz suffix: the path is used exactly as given
    ta.save(state, path)
    assert os.listdir(tmp_path) == ["checkpoint"]
    loaded = ta.load(path)
    assert loaded["step"] == 7 and loaded["lr"] == 1e-3 and loaded["name"] == "run-1"
    assert loaded["flags"] == [True, None, (1, 2)] and loaded["best"] == float("inf")
    assert loaded["model"]["w"].dtype == np.float32
    np.testing.assert_array_equal(loaded["model"]["w"], state["model"]["w"])
    np.testing.assert_array_equal(loaded["ids"], [1, 2])


def test_save_refuses_objects_it_would_have_to_pickle(tmp_path):
    with pytest.raises(TypeError, match=r"obj\['fn'\] is a function"):
        ta.save({"fn": lambda: 0}, tmp_path / "x")
    assert not os.listdir(tmp_path)


def test_a_crash_mid_save_keeps_the_old_file_and_leaves_no_temp_file(tmp_path, monkeypatch):
    path = tmp_path / "model.ckpt"
    ta.save({"w": np.ones(3)}, path)

    def crash(*args, **kwargs):
        raise KeyboardInterrupt("power cut")

    monkeypatch.setattr(np, "savez", crash)
    with pytest.raises(KeyboardInterrupt):
        ta.save({"w": np.zeros(3)}, path)
    monkeypatch.undo()
    monkeypatch.setattr(os, "replace", crash)
    with pytest.raises(KeyboardInterrupt):
        ta.save({"w": np.zeros(3)}, path)
    monkeypatch.undo()
    assert os.listdir(tmp_path) == ["model.ckpt"]
    np.testing.assert_array_equal(ta.load(path)["w"], np.ones(3))


def test_truncated_and_foreign_files_give_a_clear_error_naming_the_file(tmp_path):
    path = tmp_path / "good"
    ta.save({"w": np.arange(1000.0)}, path)
    truncated = tmp_path / "truncated"
    truncated.write_bytes(path.read_bytes()[:300])
    foreign = tmp_path / "foreign.npz"
    np.savez(foreign, w=np.ones(2))
    text = tmp_path / "notes.txt"
    text.write_text("hello")
    for bad in (truncated, foreign, text):
        with pytest.raises(ta.CheckpointError, match=str(bad.name)):
            ta.load(bad)


def test_optimizer_state_dict_mismatch_is_refused():
    a = nn.Parameter(np.zeros(3, np.float32))
    opt = ta.optim.Adam([a])
    a.grad = np.ones(3, np.float32)
    opt.step()
    other = ta.optim.Adam([nn.Parameter(np.zeros(4, np.float32))])
    with pytest.raises(ValueError, match=r"exp_avg of parameter 0 has shape \(3,\)"):
        other.load_state_dict(opt.state_dict())


def test_saving_a_module_itself_suggests_its_state_dict(tmp_path):
    with pytest.raises(TypeError, match=r"save obj\['model'\].state_dict\(\) instead"):
        ta.save({"model": nn.Linear(2, 2)}, tmp_path / "x")


def test_saving_into_a_missing_folder_names_it(tmp_path):
    with pytest.raises(FileNotFoundError, match="does not exist"):
        ta.save({"w": np.ones(2)}, tmp_path / "no" / "such" / "file.npz")
