"""ta.save / ta.load: nested dicts of arrays, numbers and strings in one .npz, never pickle.

Layout of the file: every array is a member "a0", "a1", ... of an ordinary .npz, and the member
"__tinyattn__" holds UTF-8 JSON describing the nesting, with {"__array__": "a3"} where an array
was. Loading uses allow_pickle=False, so a checkpoint can never run code.

Saving is atomic: write a temporary file in the same folder, fsync it, then os.replace it over
the target. A crash at any moment leaves either the old file or the new one, never half of one,
and no temporary file is left behind.
"""
import json
import os
import tempfile

import numpy as np

FORMAT = "tinyattn-checkpoint/1"
META_KEY = "__tinyattn__"


class CheckpointError(ValueError):
    """A file that is not a readable tinyattn checkpoint (truncated, foreign, damaged)."""


def save(obj, path):
    """Write `obj` (nested dicts/lists of arrays, numbers, strings, bools, None) to `path` exactly.

    Arrays keep their dtype; a numpy scalar (np.float32(1.5)) comes back as a Python number.
    """
    arrays = {}
    meta = {"format": FORMAT, "content": _encode(obj, arrays, "obj")}
    meta_bytes = np.frombuffer(json.dumps(meta).encode("utf-8"), dtype=np.uint8)
    path = os.fspath(path)
    folder = os.path.dirname(os.path.abspath(path))
    if not os.path.isdir(folder):
        raise FileNotFoundError(f"save: folder {folder} does not exist (create it first)")
    handle, temp_path = tempfile.mkstemp(prefix=".tmp-", suffix=".npz", dir=folder)
    try:
        with os.fdopen(handle, "wb") as file:
            # A file object, not a name: numpy would append ".npz" to a name without it.
            np.savez(file, **arrays, **{META_KEY: meta_bytes})
            file.flush()
            os.fsync(file.fileno())
        umask = os.umask(0)
        os.umask(umask)
        os.chmod(temp_path, 0o666 & ~umask)  # mkstemp made it private (0600); a saved model is not
        os.replace(temp_path, path)
    except BaseException:
        if os.path.exists(temp_path):
            os.remove(temp_path)
        raise


def load(path):
    """Read what save() wrote; a damaged, foreign or malformed file raises CheckpointError naming it."""
    path = os.fspath(path)
    try:
        with open(path, "rb") as file, np.load(file, allow_pickle=False) as archive:
            if META_KEY not in archive.files:
                raise CheckpointError(f"{path}: not a tinyattn checkpoint (an .npz without '{META_KEY}')")
            meta = json.loads(archive[META_KEY].tobytes().decode("utf-8"))
            if not isinstance(meta, dict) or meta.get("format") != FORMAT:
                found = meta.get("format") if isinstance(meta, dict) else type(meta).__name__
                raise CheckpointError(f"{path}: unknown checkpoint format {found!r}, expected {FORMAT!r}")
            arrays = {name: archive[name] for name in archive.files if name != META_KEY}
        return _decode(meta["content"], arrays, path)
    except (CheckpointError, FileNotFoundError):
        raise
    except Exception as error:  # whatever a damaged file makes zipfile, numpy, json or _decode raise
        raise CheckpointError(f"{path}: not a readable tinyattn checkpoint ({type(error).__name__}: {error})") from None


def _encode(obj, arrays, where):
    if isinstance(obj, dict):
        for key in obj:
            if not isinstance(key, str):
                raise TypeError(f"save: {where} has a key {key!r} of type {type(key).__name__}; keys must be strings")
        return {"__dict__": {key: _encode(value, arrays, f"{where}[{key!r}]") for key, value in obj.items()}}
    if isinstance(obj, (list, tuple)):
        kind = "__tuple__" if isinstance(obj, tuple) else "__list__"
        return {kind: [_encode(value, arrays, f"{where}[{i}]") for i, value in enumerate(obj)]}
    if hasattr(obj, "data") and isinstance(getattr(obj, "data"), np.ndarray):  # a Tensor or Parameter
        obj = obj.data
    if isinstance(obj, np.ndarray):
        if obj.dtype.kind not in "biufc":
            raise TypeError(f"save: {where} is an array of dtype {obj.dtype}; only numbers and bools are saved")
        name = f"a{len(arrays)}"
        arrays[name] = obj
        return {"__array__": name}
    if isinstance(obj, np.generic):
        obj = obj.item()
    if obj is None or isinstance(obj, (bool, int, float, str)):
        if isinstance(obj, float) and not np.isfinite(obj):
            return {"__float__": repr(obj)}  # JSON has no inf / nan
        return obj
    hint = f" (save {where}.state_dict() instead)" if hasattr(obj, "state_dict") else ""
    raise TypeError(f"save: {where} is a {type(obj).__name__}; save holds dicts, lists, arrays, numbers and strings{hint}")


def _decode(node, arrays, path):
    if isinstance(node, dict):
        if "__array__" in node:
            if node["__array__"] not in arrays:
                raise CheckpointError(f"{path}: array {node['__array__']} is missing from the file")
            return arrays[node["__array__"]]
        if "__dict__" in node:
            return {key: _decode(value, arrays, path) for key, value in node["__dict__"].items()}
        if "__list__" in node:
            return [_decode(value, arrays, path) for value in node["__list__"]]
        if "__tuple__" in node:
            return tuple(_decode(value, arrays, path) for value in node["__tuple__"])
        if "__float__" in node:
            return float(node["__float__"])
        raise CheckpointError(f"{path}: unknown entry {sorted(node)} in the metadata")
    return node
