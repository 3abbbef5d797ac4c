"""The README's Python examples run here and print exactly the output the README shows under them.

Each example is a ```python block preceded by a line `<!-- python-example NAME -->`; the ``` block right after it is
its output. They run as `__main__` (the Dask example guards its cluster as a script must).
"""

import contextlib
import io
import os
import re

import pytest

from conftest import ROOT

README = open(os.path.join(ROOT, "README.md")).read()
EXAMPLES = re.findall(r"<!-- python-example (\S+) -->\n```python\n(.*?)```\n.*?```\n(.*?)```", README, re.S)


def test_readme_has_examples():
    assert len(EXAMPLES) >= 2


@pytest.mark.parametrize("name, code, output", EXAMPLES, ids=[e[0] for e in EXAMPLES])
def test_readme_example(name, code, output):
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        exec(compile(code, f"README.md:{name}", "exec"), {"__name__": "__main__"})
    assert out.getvalue() == output
