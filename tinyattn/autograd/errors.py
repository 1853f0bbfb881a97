"""The errors tinyattn raises on purpose, so a caller can catch them by name."""


class ShapeError(ValueError):
    """Operand shapes that do not fit the op; the message names the op and both shapes."""
