"""An optimiser's state_dict and load_state_dict, in PyTorch's layout, so a checkpoint resumes
training exactly (Adam's moments and step count included). Mixed into Optimizer (optimizer.py).
"""
import numpy as np


class OptimizerState:
    """state_dict / load_state_dict for Optimizer: parameters named by position, group after group."""

    def state_dict(self):
        """PyTorch's layout: {"state": {"0": {"step": n, "exp_avg": array, ...}, ...},
        "param_groups": [{"lr": ..., ..., "params": [0, 1, ...]}, ...]}; parameters by position
        (keys are strings so that ta.save can write them)."""
        groups, first = [], 0
        for group in self.param_groups:
            n = len(group["params"])
            groups.append({**{k: v for k, v in group.items() if k != "params"}, "params": list(range(first, first + n))})
            first += n
        return {"state": {str(i): {k: (v.copy() if isinstance(v, np.ndarray) else v) for k, v in s.items()}
                          for i, s in enumerate(self.state) if s},
                "param_groups": groups}

    def load_state_dict(self, state_dict):
        """Restore from state_dict() (or from one saved before parameter groups, {"hyper", "state"});
        checks the groups and every shape before changing anything."""
        name = f"{type(self).__name__}.load_state_dict"
        if not isinstance(state_dict, dict) or "state" not in state_dict:
            raise TypeError(f"{name}: expected the dict an optimiser's state_dict() returns, got {type(state_dict).__name__}")
        if "param_groups" in state_dict:
            saved_groups = state_dict["param_groups"]
        elif "hyper" in state_dict and len(self.param_groups) == 1:  # written before parameter groups
            saved_groups = [{**state_dict["hyper"], "params": list(range(len(self.params)))}]
        else:
            raise ValueError(f"{name}: this state_dict has no 'param_groups' (it predates parameter groups) and "
                             f"the optimiser has {len(self.param_groups)} groups; it loads only into one group")
        if len(saved_groups) != len(self.param_groups):
            raise ValueError(f"{name}: the state_dict has {len(saved_groups)} parameter groups, "
                             f"the optimiser {len(self.param_groups)}")
        position = {}  # saved index -> position in self.params
        first = 0
        for g, (saved, group) in enumerate(zip(saved_groups, self.param_groups)):
            if len(saved["params"]) != len(group["params"]):
                raise ValueError(f"{name}: parameter group {g} has {len(saved['params'])} parameters in the "
                                 f"state_dict, {len(group['params'])} in the optimiser")
            position.update({int(i): first + j for j, i in enumerate(saved["params"])})
            first += len(group["params"])
        params = self.params
        new_state = [dict() for _ in params]
        for key, entry in state_dict["state"].items():
            if int(key) not in position:
                raise ValueError(f"{name}: state for parameter {key}, which no parameter group lists "
                                 f"(the optimiser has {len(params)} parameters)")
            i = position[int(key)]
            for field, value in entry.items():
                if isinstance(value, np.ndarray) and value.shape != params[i].shape:
                    raise ValueError(f"{name}: {field} of parameter {i} has shape "
                                     f"{value.shape}, the parameter {params[i].shape}")
                new_state[i][field] = value.copy() if isinstance(value, np.ndarray) else value
        for saved, group in zip(saved_groups, self.param_groups):
            group.update({k: (tuple(v) if k == "betas" else v) for k, v in saved.items() if k != "params"})
        self.state = new_state
