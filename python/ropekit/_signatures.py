"""Real signatures for the library's functions: pybind11's builtins have none (``inspect.signature`` raised
ValueError, so Jupyter and IDEs showed no parameter hints). Each public function is a thin Python function with
the builtin's docstring and the signature pybind11 writes on the docstring's first line
(``kernel(encoding: str, lags: object = None, ...) -> dict``), parsed here."""

import ast
import functools
import inspect


class _Default:
    """A default that is not a Python literal, shown as pybind11 spells it."""

    def __init__(self, text):
        self.text = text

    def __repr__(self):
        return self.text


def _split_top(text):
    """Splits on the commas outside brackets."""
    parts, depth, cur = [], 0, ""
    for ch in text:
        if ch in "([{":
            depth += 1
        elif ch in ")]}":
            depth -= 1
        if ch == "," and depth == 0:
            parts.append(cur.strip())
            cur = ""
        else:
            cur += ch
    if cur.strip():
        parts.append(cur.strip())
    return parts


def signature_of(builtin):
    """The inspect.Signature of a pybind11 function, from its docstring's first line."""
    first = (builtin.__doc__ or "").splitlines()[0] if builtin.__doc__ else ""
    name = builtin.__name__
    if not first.startswith(name + "(") or ") -> " not in first:
        raise ValueError(f"no pybind11 signature line in {name}'s docstring")
    inner, _, ret = first[len(name) + 1:].rpartition(") -> ")
    params, kind = [], inspect.Parameter.POSITIONAL_OR_KEYWORD
    for part in _split_top(inner):
        if part == "*":
            kind = inspect.Parameter.KEYWORD_ONLY
            continue
        head, _, default_text = part.partition(" = ")
        pname, _, annotation = head.partition(": ")
        default = inspect.Parameter.empty
        if default_text:
            try:
                default = ast.literal_eval(default_text)
            except (ValueError, SyntaxError):
                default = _Default(default_text)
        params.append(inspect.Parameter(pname, kind, default=default,
                                        annotation=annotation or inspect.Parameter.empty))
    # pybind11 allows a required argument after an optional one (fit's train_context); Python's signatures do not,
    # so the order is kept as bound, unvalidated.
    return inspect.Signature(params, return_annotation=ret, __validate_parameters__=False)


def with_signature(builtin):
    """A Python function that calls `builtin`, with its name, docstring and signature."""

    @functools.wraps(builtin, assigned=("__name__", "__qualname__", "__doc__"), updated=())
    def call(*args, **kwargs):
        return builtin(*args, **kwargs)

    call.__signature__ = signature_of(builtin)
    call.__module__ = "ropekit"
    return call
