"""python -m tinyattn.exercises [check NAME FILE]: list the exercises, or judge a solution."""
import argparse
import os
import sys

from .catalog import EXERCISES
from .checker import check


def main(argv=None):
    parser = argparse.ArgumentParser(prog="python -m tinyattn.exercises",
                                     description="Backprop by hand: write the backward, then check it.")
    commands = parser.add_subparsers(dest="command")
    judge = commands.add_parser("check", help="judge the one ta.autograd.Function subclass in FILE")
    judge.add_argument("name", choices=list(EXERCISES), metavar="NAME", help="the exercise: " + ", ".join(EXERCISES))
    judge.add_argument("file", metavar="FILE", help="your copy of the exercise, backward written")
    args = parser.parse_args(argv)
    if args.command is None:
        print("Backprop-by-hand exercises. Copy one, write its backward, check it, e.g.\n"
              f"    cp {EXERCISES['softmax'].path} my_softmax.py\n"
              f"    {_python()} -m tinyattn.exercises check softmax my_softmax.py\n")
        width = max(map(len, EXERCISES))
        for exercise in EXERCISES.values():
            print(f"  {exercise.name:<{width}}  {exercise.summary}\n  {'':<{width}}  {exercise.path}")
        return 0
    verdict = check(args.name, args.file)
    print(verdict.message)
    return 0 if verdict.passed else 1


def _python():
    """The command that runs this Python: relative inside the current folder (.venv/bin/python), else in full."""
    path = os.path.relpath(sys.executable)
    return sys.executable if path.startswith("..") else path


if __name__ == "__main__":
    sys.exit(main())
