"""Every example in README.md and docs/**/*.md runs here and prints exactly the output the page shows.

Conventions of the pages (each fenced block is one of these; an unmarked block fails `test_every_block_is_classified`):

* A Python example is a ```python block preceded by a line `<!-- python-example NAME -->`; the ``` block right after
  it is its output. It runs as `__main__` (the Dask example guards its cluster as a script must), in the
  repository root.
* A ```console block is a shell transcript: each line starting with `$ ` is a command (a line ending in `\\`
  continues on the next), and the lines up to the next command are its output: its stdout, then its stderr. The
  commands of one page run in order in one scratch directory (so a file written in one block is read in a later
  one) that holds links to the repository's `configs/` and `data/`; `ropekit` is the tested binary and `python3`
  the interpreter running the tests;
  `$ echo $?` prints the previous command's exit code. In the expected output a line `...` stands for any number
  of lines (rows left out of the page). Numbers are compared at the precision they have, never to the last digit
  of the machine that wrote the page: by default a float64 result to 1e-12 relative or 1e-15 absolute (the last
  bits of a sum move with the CPU's vector path and the build flags, amplified by the fits' condition numbers). A
  line `<!-- example-precision REGEX rel=R abs=A: REASON -->` before the block compares the numbers inside
  matches of REGEX in the page's line (inside its groups, if it has any: a table's columns) to
  |page - real| <= R max(|page|, |real|) + A instead (a rounding-level residual to its threshold's order, a
  float32 quantity to float32's); the reason is required. A line
  `<!-- example-mask REGEX -->` replaces every match of REGEX by `<masked>` in both the page and the real output
  (timings).
* Any other block is preceded by `<!-- not-run: REASON -->` (a synopsis, a Slurm script, a generated page's help
  text that `test_docs_generated.py` checks instead, ...).

README.md stays at most 200 lines.
"""

import contextlib
import glob
import io
import os
import re
import shlex
import subprocess
import sys

import pytest

from conftest import CLI, ROOT

README_MAX_LINES = 200
PAGES = ["README.md"] + sorted(os.path.relpath(p, ROOT) for p in glob.glob(os.path.join(ROOT, "docs", "**", "*.md"),
                                                                           recursive=True))
FENCE = re.compile(r"^```(\S*)\s*$")
MARKER = re.compile(r"^<!-- (python-example \S+|not-run: .+|example-mask .+|example-precision .+) -->$")
PRECISION = re.compile(r"^example-precision (.+?) rel=(\S+) abs=(\S+): \S.*$")


def read(page):
    with open(os.path.join(ROOT, page)) as f:
        return f.read()


def blocks(page):
    """The page's fenced blocks: (line number, info string, text, markers on the lines just before it)."""
    lines = read(page).split("\n")
    out, i = [], 0
    while i < len(lines):
        m = FENCE.match(lines[i])
        if not m:
            i += 1
            continue
        start, info, body = i, m.group(1), []
        i += 1
        while i < len(lines) and lines[i] != "```":
            body.append(lines[i])
            i += 1
        assert i < len(lines), f"{page}:{start + 1}: unclosed ``` block"
        markers, j = [], start - 1
        while j >= 0 and MARKER.match(lines[j]):
            markers.insert(0, lines[j][5:-4])
            j -= 1
        out.append((start + 1, info, "\n".join(body) + "\n" if body else "", markers))
        i += 1
    return out


def python_examples():
    for page in PAGES:
        bs = blocks(page)
        for k, (line, info, text, markers) in enumerate(bs):
            names = [m.split()[1] for m in markers if m.startswith("python-example ")]
            if names:
                assert info == "python" and k + 1 < len(bs), f"{page}:{line}: a python example needs its output block"
                yield pytest.param(page, names[0], text, bs[k + 1][2], id=f"{page}:{names[0]}")


def test_readme_at_most_200_lines():
    n = read("README.md").count("\n")
    assert n <= README_MAX_LINES, f"README.md has {n} lines (at most {README_MAX_LINES}: move detail into docs/)"


def test_pages_have_examples():
    assert sum(1 for _ in python_examples()) >= 2
    assert sum(1 for p in PAGES for b in blocks(p) if b[1] == "console") >= 20


@pytest.mark.parametrize("page", PAGES)
def test_every_block_is_classified(page):
    bs = blocks(page)
    outputs = {bs[k + 1][0] for k, b in enumerate(bs) if any(m.startswith("python-example") for m in b[3])}
    for line, info, text, markers in bs:
        run = info == "console" or any(m.startswith("python-example") for m in markers) or line in outputs
        skipped = any(m.startswith("not-run:") for m in markers)
        assert run != skipped, (f"{page}:{line}: a ```{info} block must be a ```console transcript, a python example "
                                f"or its output, or be marked <!-- not-run: REASON --> (not both)")
    text = read(page)
    assert not re.search(r"^    \$ ", text, re.M), f"{page}: an indented transcript; use a ```console block"
    assert "../shared" not in text and "shared/spec" not in text, f"{page}: points at ../shared, which a clone lacks"


@pytest.mark.parametrize("page, name, code, output", list(python_examples()))
def test_python_example(page, name, code, output):
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        exec(compile(code, f"{page}:{name}", "exec"), {"__name__": "__main__"})
    assert out.getvalue() == output


def transcript(text):
    """A console block as [(command, expected output lines)]."""
    steps, lines = [], text.rstrip("\n").split("\n")
    i = 0
    while i < len(lines):
        assert lines[i].startswith("$ "), f"output before the first command: {lines[i]!r}"
        command = lines[i][2:]
        while command.endswith("\\"):  # bash reads the backslash-newline as a continuation
            i += 1
            command += "\n" + lines[i]
        i += 1
        expected = []
        while i < len(lines) and not lines[i].startswith("$ "):
            expected.append(lines[i])
            i += 1
        steps.append((command, expected))
    return steps


NUMBER = re.compile(r"[-+]?(?:\d+\.?\d*|\.\d+)(?:[eE][-+]?\d+)?")
# A float64 result's default precision (see the module's docstring): 8e-13 relative measured between the vector
# paths on these pages' fits (condition numbers up to 1.7e7), and 1e-15 absolute for values near zero.
DEFAULT_REL, DEFAULT_ABS = 1e-12, 1e-15


def precision_rules(markers):
    """The block's example-precision markers as [(compiled REGEX, rel, abs)]."""
    rules = []
    for m in markers:
        if m.startswith("example-precision "):
            r = PRECISION.match(m)
            assert r, f"malformed marker (want 'example-precision REGEX rel=R abs=A: REASON'): {m}"
            rules.append((re.compile(r.group(1)), float(r.group(2)), float(r.group(3))))
    return rules


def tolerances(line, rules):
    """Per number of the line, (rel, abs): the first rule whose REGEX match holds the number, else the default."""
    groups = lambda regex: range(1, regex.groups + 1) if regex.groups else [0]  # its groups' spans where it has any
    spans = [m.span(g) + (rel, ab) for regex, rel, ab in rules for m in regex.finditer(line) for g in groups(regex)]
    out = []
    for n in NUMBER.finditer(line):
        hit = next(((rel, ab) for a, b, rel, ab in spans if a <= n.start() and n.end() <= b), None)
        out.append(hit or (DEFAULT_REL, DEFAULT_ABS))
    return out


def same_line(expected, actual, rules=()):
    """The same text, each number equal to its precision (`tolerances`, from the page's expected line)."""
    if expected == actual:
        return True
    if NUMBER.split(expected) != NUMBER.split(actual):
        return False
    for x, y, (rel, ab) in zip(NUMBER.findall(expected), NUMBER.findall(actual), tolerances(expected, rules)):
        a, b = float(x), float(y)
        if not abs(a - b) <= rel * max(abs(a), abs(b)) + ab:
            return False
    return True


def matches(expected, actual, rules=()):
    """Whether the lines match (same_line), a line `...` in expected standing for any number of lines."""
    if not expected:
        return not actual
    if expected[0] == "...":
        return any(matches(expected[1:], actual[k:], rules) for k in range(len(actual) + 1))
    return bool(actual) and same_line(expected[0], actual[0], rules) and matches(expected[1:], actual[1:], rules)


def test_precision_rules_compare_each_number_at_its_own_precision():
    """A rule widens only the numbers inside its matches; the others keep the float64 default."""
    rules = precision_rules(["example-precision max[^|]*= \\S+ rel=0 abs=1e-12: rounding residuals"])
    page = "| skew | max_i B = 2.35e-16 | <= 3.89e-13 |"
    assert same_line(page, "| skew | max_i B = 9.10e-14 | <= 3.89e-13 |", rules)       # residual within 1e-12
    assert not same_line(page, "| skew | max_i B = 2.35e-11 | <= 3.89e-13 |", rules)    # residual past it
    assert not same_line(page, "| skew | max_i B = 2.35e-16 | <= 4.89e-13 |", rules)    # the threshold: default
    assert not same_line(page, "| skew | max_i B = 9.10e-14 | <= 3.89e-13 |")          # no rule: default
    assert same_line("cond 3.777865284430431", "cond 3.7778652844304235")                # 2e-15 relative
    second_column = precision_rules(["example-precision ^\\|[^|]*\\|([^|]*)\\| rel=0.01 abs=0: a column"])
    assert same_line("| 1 | 2 | 3 |", "| 1 | 2.001 | 3 |", second_column)
    assert not same_line("| 1 | 2 | 3 |", "| 1.001 | 2 | 3 |", second_column)            # outside the group
    with pytest.raises(AssertionError):
        precision_rules(["example-precision x rel=1 abs=0"])                              # no reason given


def console_pages():
    return [p for p in PAGES if any(b[1] == "console" for b in blocks(p))]


@pytest.mark.parametrize("page", console_pages())
def test_console_transcripts(page, tmp_path, cli):
    for name in ("configs", "data"):
        os.symlink(os.path.join(ROOT, name), tmp_path / name)
    # `ropekit` is the tested binary called by its absolute path (a shell function, so pipes and loops see it too;
    # the Ceres module is found beside the binary's path as called).
    prelude = (f"ropekit() {{ {shlex.quote(os.path.abspath(CLI))} \"$@\"; }}; "
               f"python3() {{ {shlex.quote(sys.executable)} \"$@\"; }}; ")  # the interpreter running these tests
    rc = 0
    for line, info, text, markers in blocks(page):
        if info != "console":
            continue
        masks = [re.compile(m.split(" ", 1)[1]) for m in markers if m.startswith("example-mask ")]
        rules = precision_rules(markers)
        for command, expected in transcript(text):
            p = subprocess.run(["bash", "-c", f"{prelude}(exit {rc}); {command}"], cwd=tmp_path, capture_output=True,
                               text=True, timeout=120)
            rc = p.returncode
            actual = (p.stdout + p.stderr).rstrip("\n").split("\n") if p.stdout + p.stderr else []
            for mask in masks:
                actual = [mask.sub("<masked>", a) for a in actual]
                expected = [mask.sub("<masked>", e) for e in expected]
            assert matches(expected, actual, rules), (f"{page}:{line}: `$ {command}` printed (exit code {rc}):\n"
                                               + "\n".join(actual))


def anchors(page):
    """GitHub's anchors of a page's headings (lower case, punctuation dropped, spaces as hyphens)."""
    text = re.sub(r"^```.*?^```", "", read(page), flags=re.M | re.S)
    return {re.sub(r"[^\w\- ]", "", h.strip().lower()).replace(" ", "-") for h in re.findall(r"^#+ (.*)$", text, re.M)}


@pytest.mark.parametrize("page", PAGES)
def test_links_resolve(page):
    text = re.sub(r"^```.*?^```", "", read(page), flags=re.M | re.S)
    for target in re.findall(r"\]\(([^)\s]+)\)", text):
        if re.match(r"[a-z]+:", target):
            continue
        path, _, anchor = target.partition("#")
        linked = os.path.normpath(os.path.join(os.path.dirname(page), path)) if path else page
        assert os.path.exists(os.path.join(ROOT, linked)), f"{page}: link to a missing file: {target}"
        if anchor and linked.endswith(".md"):
            assert anchor in anchors(linked), f"{page}: link to a missing heading: {target}"
