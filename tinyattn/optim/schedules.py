"""Learning-rate schedules: call .step() once per epoch (StepLR) or per update (warmup)."""


class _Schedule:
    def __init__(self, optimizer):
        self.optimizer = optimizer
        self.base_lr = optimizer.lr
        self.count = 0
        optimizer.lr = self.lr_at(0)

    def step(self):
        self.count += 1
        self.optimizer.lr = self.lr_at(self.count)

    def state_dict(self):
        return {"count": self.count, "base_lr": self.base_lr}

    def load_state_dict(self, state):
        self.count, self.base_lr = int(state["count"]), float(state["base_lr"])
        self.optimizer.lr = self.lr_at(self.count)


class StepLR(_Schedule):
    """lr = base_lr * gamma ** (count // step_size): decay by gamma every step_size steps."""

    def __init__(self, optimizer, step_size, gamma=0.1):
        self.step_size, self.gamma = step_size, gamma
        super().__init__(optimizer)

    def lr_at(self, count):
        """The learning rate after `count` steps: base_lr * gamma ** (count // step_size)."""
        return self.base_lr * self.gamma ** (count // self.step_size)


class LinearWarmup(_Schedule):
    """lr rises linearly from base_lr / warmup_steps to base_lr over warmup_steps, then stays."""

    def __init__(self, optimizer, warmup_steps):
        if warmup_steps < 1:
            raise ValueError(f"LinearWarmup: warmup_steps must be >= 1, got {warmup_steps}")
        self.warmup_steps = warmup_steps
        super().__init__(optimizer)

    def lr_at(self, count):
        """The learning rate after `count` steps: base_lr * min(1, (count + 1) / warmup_steps)."""
        return self.base_lr * min(1.0, (count + 1) / self.warmup_steps)
