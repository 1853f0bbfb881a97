"""Learning-rate schedules: call .step() once per epoch (StepLR) or per update (warmup, LambdaLR).

As PyTorch's LRScheduler, a schedule scales each parameter group's own starting rate: it stores
it as group["initial_lr"] (kept if already there) and sets group["lr"] = initial_lr * factor(count).
"""
import math
import numbers


class _Schedule:
    def __init__(self, optimizer):
        self.optimizer = optimizer
        for group in optimizer.param_groups:
            group.setdefault("initial_lr", group["lr"])
        self.base_lrs = [group["initial_lr"] for group in optimizer.param_groups]
        self.count = 0
        self._apply()

    def _apply(self):
        for group, base_lr in zip(self.optimizer.param_groups, self.base_lrs):
            group["lr"] = base_lr * self.factor(self.count)

    def step(self):
        self.count += 1
        self._apply()

    def state_dict(self):
        return {"count": self.count, "base_lrs": list(self.base_lrs)}

    def load_state_dict(self, state):
        """Restore from state_dict(); one saved before parameter groups ({"count", "base_lr"}) loads too."""
        if not isinstance(state, dict) or "count" not in state:
            raise TypeError(f"{type(self).__name__}.load_state_dict: expected the dict a schedule's state_dict() "
                            f"returns, got {type(state).__name__}")
        groups = len(self.optimizer.param_groups)
        base_lrs = state["base_lrs"] if "base_lrs" in state else [state["base_lr"]] * groups
        if len(base_lrs) != groups:
            raise ValueError(f"{type(self).__name__}.load_state_dict: the state has {len(base_lrs)} learning rates, "
                             f"the optimiser {groups} parameter groups")
        self.count, self.base_lrs = int(state["count"]), [float(lr) for lr in base_lrs]
        self._apply()


class StepLR(_Schedule):
    """lr = initial_lr * gamma ** (count // step_size): decay by gamma every step_size steps."""

    def __init__(self, optimizer, step_size, gamma=0.1):
        if isinstance(step_size, bool) or not isinstance(step_size, numbers.Integral) or step_size < 1:
            # gamma ** (count // -1) would grow the rate, and 0 divides by zero
            raise ValueError(f"StepLR: step_size must be a positive integer (the steps between decays), "
                             f"got {step_size!r}")
        self.step_size, self.gamma = step_size, gamma
        super().__init__(optimizer)

    def factor(self, count):
        """The learning rate after `count` steps, over the initial one: gamma ** (count // step_size)."""
        return self.gamma ** (count // self.step_size)


class LinearWarmup(_Schedule):
    """lr rises linearly from initial_lr / warmup_steps to initial_lr over warmup_steps, then stays."""

    def __init__(self, optimizer, warmup_steps):
        if warmup_steps < 1:
            raise ValueError(f"LinearWarmup: warmup_steps must be >= 1, got {warmup_steps}")
        self.warmup_steps = warmup_steps
        super().__init__(optimizer)

    def factor(self, count):
        """The learning rate after `count` steps, over the initial one: min(1, (count + 1) / warmup_steps)."""
        return min(1.0, (count + 1) / self.warmup_steps)


class WarmupCosine(_Schedule):
    """Linear warmup, then cosine decay to zero (tinyattn's own; PyTorch composes it from LinearLR,
    CosineAnnealingLR and SequentialLR):

        factor(n) = (n + 1) / warmup_steps                                  n < warmup_steps
                    (1 + cos(pi * (n - warmup_steps) / (total_steps - warmup_steps))) / 2   after

    The rise keeps Adam's first steps, taken on a few noisy moment estimates, small; the slow end
    lets the last steps settle instead of hopping around the minimum."""

    def __init__(self, optimizer, warmup_steps, total_steps):
        if not 0 <= warmup_steps < total_steps:
            raise ValueError(f"WarmupCosine: need 0 <= warmup_steps < total_steps, got {warmup_steps} and {total_steps}")
        self.warmup_steps, self.total_steps = warmup_steps, total_steps
        super().__init__(optimizer)

    def factor(self, count):
        """The learning rate after `count` steps, over the initial one."""
        if count < self.warmup_steps:
            return (count + 1) / self.warmup_steps
        done = min(1.0, (count - self.warmup_steps) / (self.total_steps - self.warmup_steps))
        return 0.5 * (1 + math.cos(math.pi * done))


class LambdaLR(_Schedule):
    """lr = initial_lr * lr_lambda(count), as PyTorch's: any schedule written as a function of the
    step count (nanoGPT's warmup then cosine decay, say). lr_lambda may be one function for every
    group or a list of one per group. state_dict holds the count, not the functions: build the
    schedule with the same functions before load_state_dict."""

    def __init__(self, optimizer, lr_lambda):
        groups = len(optimizer.param_groups)
        lambdas = list(lr_lambda) if isinstance(lr_lambda, (list, tuple)) else [lr_lambda] * groups
        if len(lambdas) != groups:
            raise ValueError(f"LambdaLR: {len(lambdas)} functions in lr_lambda for {groups} parameter groups; "
                             "pass one function, or a list of one per group")
        if not all(callable(f) for f in lambdas):
            raise TypeError(f"LambdaLR: lr_lambda must be a function of the step count (or a list of them), "
                            f"got {[type(f).__name__ for f in lambdas]}")
        self.lr_lambdas = lambdas
        super().__init__(optimizer)

    def _apply(self):
        for group, base_lr, lr_lambda in zip(self.optimizer.param_groups, self.base_lrs, self.lr_lambdas):
            group["lr"] = base_lr * lr_lambda(self.count)
