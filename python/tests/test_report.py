"""ropekit.report and `ropekit report`: the page and its plots from Python, the same page as the command line's, the
refusals, and the HTML page in a real headless browser (Debian's chromium): it loads, each inline SVG renders with a
non-zero box, and nothing reaches the console or window.onerror."""

import json
import os
import re
import shutil
import subprocess

import pytest

import ropekit
from conftest import CLI, ROOT

THREE = [os.path.join(ROOT, "data", "models", f) for f in ("llama-3.1-8b.json", "gemma-3-4b.json", "qwen2.5-7b-yarn.json")]
CHROMIUM = shutil.which("chromium") or ("/usr/bin/chromium" if os.access("/usr/bin/chromium", os.X_OK) else None)


def test_report_markdown_and_plots():
    text, svgs = ropekit.report(THREE)
    assert sorted(svgs) == ["report-1.svg", "report-2.svg", "report-3.svg"]
    for name, svg in svgs.items():
        assert f"]({name})" in text
        assert svg.startswith("<svg") and "<path" in svg  # the curve
    assert "| layer types | full_attention x 32 | sliding_attention x 29; full_attention x 5 | full_attention x 28 |" in text
    _, none = ropekit.report(THREE[0], svg_stem=None)
    assert none == {}


def test_report_is_the_command_lines_page(tmp_path):
    # The same page but for the command line recorded in its header.
    out = tmp_path / "models.md"
    subprocess.run([CLI, "report", *THREE, "--out", str(out)], check=True)
    cli = out.read_text()
    cli = "\n".join(line for line in cli.split("\n") if not line.startswith("- command: "))
    text, svgs = ropekit.report(THREE, svg_stem="models")
    assert text == cli
    for name, svg in svgs.items():
        assert (tmp_path / name).read_text() == svg


def test_report_refusals(tmp_path):
    (tmp_path / "empty").mkdir()
    bad = tmp_path / "bad.json"
    bad.write_text('{"rope_theta": ')
    for files, expect in [
        ([], "ropekit.report: files = none (must be at least one model file"),
        ([str(tmp_path / "missing.json")], f"ropekit.report: files = '{tmp_path / 'missing.json'}' (must be an existing"),
        ([str(tmp_path / "empty")], "(must be a model file or a folder holding a config.json; this folder has none)"),
        ([str(bad)], f"ropekit.report: {bad}: not JSON"),
    ]:
        with pytest.raises(ValueError) as e:
            ropekit.report(files)
        assert expect in str(e.value)
    with pytest.raises(ValueError, match=r"ropekit.report: format = 'pdf' \(must be md or html\)"):
        ropekit.report(THREE[0], format="pdf")


CHECK_SCRIPT = """<script>
var errors = [];
window.onerror = function (message) { errors.push(String(message)); };
window.addEventListener("load", function () {
  var boxes = [];
  document.querySelectorAll("svg").forEach(function (s) {
    var b = s.getBBox(), r = s.getBoundingClientRect();
    boxes.push([b.width, b.height, r.width, r.height]);
  });
  var ids = Array.prototype.map.call(document.querySelectorAll("[id]"), function (e) { return e.id; });
  var p = document.createElement("pre");
  p.id = "verdict";
  p.textContent = JSON.stringify({boxes: boxes, errors: errors, ids: ids.length, unique_ids: new Set(ids).size});
  document.body.appendChild(p);
});
</script>"""


def chromium(url, tmp_path, *flags):
    """(stdout, stderr) of headless chromium dumping the page's DOM after load."""
    p = subprocess.run([CHROMIUM, "--headless", "--no-sandbox", "--disable-gpu", f"--user-data-dir={tmp_path / 'profile'}",
                        *flags, "--dump-dom", url], capture_output=True, text=True, timeout=120)
    assert p.returncode == 0, p.stderr
    return p.stdout, p.stderr


@pytest.mark.parametrize("route", ["cli", "python"])
def test_html_page_renders_in_a_browser(tmp_path, route):
    # make test installs Debian's chromium (scripts/install-deps.sh): a missing browser fails, it does not skip.
    assert CHROMIUM, "chromium not found: install Debian's chromium package (make deps does)"
    page = tmp_path / "models.html"
    if route == "cli":
        subprocess.run([CLI, "report", *THREE, "--format", "html", "--out", str(page)], check=True)
    else:
        page.write_text(ropekit.report(THREE, format="html")[0])
    html = page.read_text()
    assert "<script" not in html and "src=" not in html and "href=" not in html
    # The page as it is: no console message at all (an error, a blocked resource, a parse warning).
    _, log = chromium(page.as_uri(), tmp_path, "--enable-logging=stderr", "--v=0")
    assert not [line for line in log.split("\n") if ":CONSOLE" in line], log
    # A copy with a checking script: each SVG's box, and window.onerror.
    checked = tmp_path / "checked.html"
    checked.write_text(html.replace("</body>", CHECK_SCRIPT + "</body>"))
    dom, log = chromium(checked.as_uri(), tmp_path, "--enable-logging=stderr", "--v=0")
    m = re.search(r'<pre id="verdict">(.*?)</pre>', dom, re.S)
    assert m, dom[-2000:]
    verdict = json.loads(m.group(1).replace("&quot;", '"').replace("&amp;", "&"))
    assert verdict["errors"] == []
    assert verdict["ids"] == verdict["unique_ids"] >= 3  # each plot's clip path its own
    assert len(verdict["boxes"]) == 3
    for box in verdict["boxes"]:
        assert all(v > 0 for v in box), box
    assert not [line for line in log.split("\n") if ":CONSOLE" in line], log


def test_report_tolerances_are_precisions_first_positions():
    # The report's precision cells are `precision --tolerance`'s exact searches in the file's dtype (Llama 3.1: bf16).
    enc = "rope:dim=128,base=500000,F=64,scaling=llama3(factor=8,orig=8192,low=1,high=4)"
    text, _ = ropekit.report(["data/models/llama-3.1-8b.json"], tolerances=[0.05, 0.2], svg_stem=None)
    for tol in (0.05, 0.2):
        p = ropekit.precision(enc, dtype="bf16", tolerance=tol)
        phase, tables = (int(p["first_position"][p["quantity"].index(q)])
                         for q in ("phase_error_max", "table_phase_error_max"))
        assert f"| first position, phase > {tol:g} / tables' phase > {tol:g} | {phase} / {tables} |" in text
    for bad, why in [([], "none (must be at least one tolerance)"), ([0.0], "0 (must be finite and > 0)"),
                     ([float("nan")], "nan (must be finite and > 0)")]:
        with pytest.raises(ValueError, match=re.escape(f"ropekit.report: tolerances = {why}")):
            ropekit.report(["data/models/llama-3.1-8b.json"], tolerances=bad)
