"""tinyattn: a small, readable, gradient-checked autograd engine for learning attention."""
