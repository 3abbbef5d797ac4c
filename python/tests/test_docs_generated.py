"""The generated reference pages (docs/reference/cli.md, spellings.md, python-api.md) equal what scripts/gen_docs.py
makes from this build's command line and module, so they cannot go stale: regenerate with
`PYTHONPATH=build/python python3 scripts/gen_docs.py` and commit."""

import importlib.util
import os

import pytest

from conftest import CLI, ROOT


def gen_docs():
    spec = importlib.util.spec_from_file_location("gen_docs", os.path.join(ROOT, "scripts", "gen_docs.py"))
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


GENERATED = gen_docs().generate(os.path.abspath(CLI)) if os.access(CLI, os.X_OK) else {}


def test_pages_are_generated():
    assert set(GENERATED) == {"docs/reference/cli.md", "docs/reference/spellings.md", "docs/reference/python-api.md",
                              "python/ropekit/__init__.pyi"}


def test_stub_parses_and_names_every_function():
    import ast
    import ropekit
    tree = ast.parse(GENERATED["python/ropekit/__init__.pyi"])
    defined = {n.name for n in tree.body if isinstance(n, ast.FunctionDef)}
    assert defined == {n for n in ropekit.__all__ if callable(getattr(ropekit, n))}


@pytest.mark.parametrize("page", sorted(GENERATED))
def test_generated_page_is_current(page):
    with open(os.path.join(ROOT, page)) as f:
        committed = f.read()
    assert committed == GENERATED[page], (f"{page} is stale: run `PYTHONPATH=build/python python3 scripts/gen_docs.py"
                                          f" --cli build/ropekit` and commit it")


def test_cli_page_covers_every_command():
    text = GENERATED["docs/reference/cli.md"]
    for command in ("fit", "merge", "features", "list", "probe", "kernel", "frequencies", "check", "verify master",
                    "verify content", "design", "fit-params", "lie build", "lie check", "jordan positionwise"):
        assert f"\n## ropekit {command}\n" in text, command
