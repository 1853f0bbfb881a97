"""python -m tinyattn.exercises [start | check | hint | solution] NAME: the command line of the exercises."""
import argparse
import inspect
import json
import os
import shutil
import sys

from .catalog import EXERCISES, PATH
from .checker import WORKING_FOLDER, check, default_path

HINT_STATE = os.path.join(WORKING_FOLDER, ".hints.json")  # how many hints of each exercise were shown


def main(argv=None):
    parser = argparse.ArgumentParser(prog="python -m tinyattn.exercises",
                                     description="Backprop by hand: derive each backward, then check it.")
    commands = parser.add_subparsers(dest="command")
    names = {"choices": list(EXERCISES), "metavar": "NAME", "help": "one of: " + ", ".join(EXERCISES)}
    start = commands.add_parser("start", help=f"copy an exercise into ./{WORKING_FOLDER}/ to work on")
    start.add_argument("name", **names)
    start.add_argument("--force", action="store_true", help="overwrite your copy (your backward is lost)")
    judge = commands.add_parser("check", help="check your backward")
    judge.add_argument("name", **names)
    judge.add_argument("file", nargs="?", help=f"your copy (default ./{WORKING_FOLDER}/NAME.py)")
    hint = commands.add_parser("hint", help="the next step of the derivation (again for the one after; "
                                            f"the count is kept in ./{HINT_STATE})")
    hint.add_argument("name", **names)
    hint.add_argument("--reset", action="store_true", help="start the hints of NAME over")
    solution = commands.add_parser("solution", help="print the worked backward")
    solution.add_argument("name", **names)
    args = parser.parse_args(argv)
    if args.command is None:
        return _list()
    return {"start": _start, "check": _check, "hint": _hint, "solution": _solution}[args.command](args)


def _list():
    print(f"Backprop by hand: {len(PATH)} exercises, easiest first. Each gives a forward; you derive and write\n"
          f"its backward in ./{WORKING_FOLDER}/NAME.py.\n"
          "    python -m tinyattn.exercises start NAME      copy the exercise there\n"
          "    python -m tinyattn.exercises check NAME      check your backward\n"
          "    python -m tinyattn.exercises hint NAME       the next step of the derivation, if stuck\n"
          "    python -m tinyattn.exercises solution NAME   the worked backward\n")
    width = max(map(len, EXERCISES))
    for number, exercise in enumerate(PATH, 1):
        print(f"  {number:2}. {exercise.name:<{width}}  {_status(exercise.name):<11}  {exercise.title}")
    return 0


def _status(name):
    if not os.path.isfile(default_path(name)):
        return "not started"
    return "passed" if check(name).passed else "started"


def _start(args):
    path = default_path(args.name)
    if os.path.exists(path) and not args.force:
        print(f"{path} exists already; check it with: python -m tinyattn.exercises check {args.name}\n"
              "(start --force copies the blank exercise over it, and your backward is lost)")
        return 1
    os.makedirs(WORKING_FOLDER, exist_ok=True)
    shutil.copyfile(EXERCISES[args.name].template.__file__, path)
    print(f"{path} is yours: read its forward, derive the backward, write it in, then\n"
          f"    python -m tinyattn.exercises check {args.name}")
    return 0


def _check(args):
    verdict = check(args.name, args.file)
    print(verdict.message)
    return 0 if verdict.passed else 1


def _hint(args):
    """Print the hints of NAME up to one more than last time; the count is kept in HINT_STATE."""
    shown = _read_hint_state()
    hints = EXERCISES[args.name].solution.HINTS
    if args.reset:
        shown.pop(args.name, None)
        _write_hint_state(shown)
        print(f"hints of {args.name} start over at 1 of {len(hints)}")
        return 0
    count = min(shown.get(args.name, 0) + 1, len(hints))
    for number, text in enumerate(hints[:count], 1):
        print(f"{args.name}, hint {number} of {len(hints)}: {text}")
    if count == len(hints):
        print(f"\nThat is every hint. The worked backward: python -m tinyattn.exercises solution {args.name}; "
              f"hint {args.name} --reset starts the hints over.")
    shown[args.name] = count
    _write_hint_state(shown)
    return 0


def _read_hint_state():
    try:
        with open(HINT_STATE) as file:
            return json.load(file)
    except (OSError, ValueError):  # no hints shown yet, or a damaged file: start over
        return {}


def _write_hint_state(shown):
    os.makedirs(WORKING_FOLDER, exist_ok=True)
    with open(HINT_STATE, "w") as file:
        json.dump(shown, file, indent=1)


def _solution(args):
    """The solution module's functions but mistakes() (the checker's), in the order they are written."""
    module = EXERCISES[args.name].solution
    functions = [f for n, f in vars(module).items()
                 if inspect.isfunction(f) and f.__module__ == module.__name__ and n != "mistakes"]
    functions.sort(key=lambda f: f.__code__.co_firstlineno)
    # an earlier exercise's backward, imported here as `from .attention import ...`, is in a learner's
    # folder `from attention import ...`
    earlier = [line.replace("from .", "from ", 1) for line in inspect.getsource(module).splitlines()
               if line.startswith("from .") and not line.startswith(("from . ", "from .."))]
    parts = [f"# {args.name}: the worked backward (tinyattn/exercises/solutions/{args.name}.py)"]
    parts += ["\n".join(earlier)] if earlier else []
    print("\n\n".join(parts + [inspect.getsource(f).rstrip() for f in functions]))
    return 0


if __name__ == "__main__":
    sys.exit(main())
