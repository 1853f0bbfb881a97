"""A one-line progress display for training loops: step, rate, time left, and named figures."""
import sys
import time


class Progress:
    """Progress(total, label).update(step, loss=..., acc=...) rewrites one line, at most 10x per second.

    On a terminal the line is redrawn in place; into a file or a pipe (CI, a log), one line is
    printed every `every` steps instead, so logs stay readable.
    """

    def __init__(self, total, label="", stream=None, every=None, start=0):
        self.total, self.label, self.first = total, label, start  # start: steps done before (a resumed run)
        self.stream = stream or sys.stdout
        self.interactive = getattr(self.stream, "isatty", lambda: False)()
        self.every = every or max(1, total // 10)
        self.start = self.last_draw = time.perf_counter()

    def update(self, step, **figures):
        """Redraw the progress line at `step`, with figures such as loss=0.31 shown beside it."""
        now = time.perf_counter()
        done = step >= self.total
        if self.interactive and not done and now - self.last_draw < 0.1:
            return
        if not self.interactive and not done and step % self.every:
            return
        self.last_draw = now
        rate = (step - self.first) / max(now - self.start, 1e-9)
        left = max(0.0, (self.total - step) / rate) if rate else 0.0
        width = 24
        filled = min(width, int(width * step / max(self.total, 1)))
        bar = "#" * filled + "." * (width - filled)
        shown = "  ".join(f"{name} {value:.4g}" for name, value in figures.items())
        line = f"{self.label} [{bar}] {step}/{self.total}  {rate:.1f} it/s  {left:.0f}s left  {shown}"
        if self.interactive:
            self.stream.write("\r" + line.ljust(100) + ("\n" if done else ""))
        else:
            self.stream.write(line + "\n")
        self.stream.flush()
