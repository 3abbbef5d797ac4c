"""The README's Python examples run here and print exactly the output the README shows under them.

Each example is a ```python block preceded by a line `<!-- python-example NAME -->`; the ``` block right after it is
its output. Blocks marked `<!-- python-example NAME dask -->` start a 2-worker LocalCluster (named `client`) first.
"""

import contextlib
import io
import os
import re

import pytest

from conftest import ROOT

README = open(os.path.join(ROOT, "README.md")).read()
EXAMPLES = re.findall(r"<!-- python-example (\S+)( dask)? -->\n```python\n(.*?)```\n.*?```\n(.*?)```", README, re.S)


def test_readme_has_examples():
    assert len(EXAMPLES) >= 2


@pytest.mark.parametrize("name, dask, code, output", EXAMPLES, ids=[e[0] for e in EXAMPLES])
def test_readme_example(name, dask, code, output):
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        exec(compile(code, f"README.md:{name}", "exec"), {"__name__": "readme"})
    # Wall times vary: lines with "s" timings are compared up to the number.
    norm = lambda s: re.sub(r"\d+\.\d+ s\b", "X s", s)
    assert norm(out.getvalue()) == norm(output)
