"""Every ValueError of the module starts with `ropekit.<function>: ` and echoes a value at most ~100 characters long
(issue 20 item 15: 18 messages lacked the function's name, and a 10 MB number gave a 10 MB message)."""

import re

import numpy as np
import pytest

import ropekit

BIG = "1" * 10485760  # a 10 MB number

# (function, call with one bad argument): spellings, numbers and names the library checks below the function.
CASES = [
    ("kernel", lambda: ropekit.kernel("rope:dim=7", "0:4")),
    ("kernel", lambda: ropekit.kernel("rope:dim=8", "0:4", rho=2)),
    ("kernel", lambda: ropekit.kernel("nosuch", "0:4")),
    ("frequencies", lambda: ropekit.frequencies("rope:dim=8,base=0")),
    ("frequencies", lambda: ropekit.frequencies("rope:dim=8", convention="x")),
    ("features", lambda: ropekit.features("rope:dim=8,foo=1", "0:4")),
    ("features", lambda: ropekit.features("rope:dim=8", "0:x")),
    ("fit", lambda: ropekit.fit(["rope"], "nosuch", 128, [256])),
    ("fit", lambda: ropekit.fit(["nosuch"], "phase", 128, [256])),
    ("fit", lambda: ropekit.fit(["rope"], "phase", 128, [256], methods=["nosuch"])),
    ("fit_params", lambda: ropekit.fit_params("rope:dim=8", ["nosuch"], ["phase"])),
    ("fit_params", lambda: ropekit.fit_params("rope:dim=8", ["theta"], ["nosuch"])),
    ("fit_spectrum", lambda: ropekit.fit_spectrum("gaussian:sigma=?0", [0, 1, 2], [1, 0.5, 0.25])),
    ("fit_spectrum", lambda: ropekit.fit_spectrum("nosuch:sigma=?", [0, 1, 2], [1, 0.5, 0.25])),
    ("spectrum_kernel", lambda: ropekit.spectrum_kernel("gaussian:sigma=0", "0:4")),
    ("spectrum_kernel", lambda: ropekit.spectrum_kernel("nosuch", "0:4")),
    ("spectrum_kernel", lambda: ropekit.spectrum_kernel("file:/nonexistent", "0:4")),
    ("verify_master", lambda: ropekit.verify_master("gaussian:sigma=0", 4, 100, "1")),
    ("verify_master", lambda: ropekit.verify_master("gaussian", 0, 100, "1")),
    ("verify_master", lambda: ropekit.verify_master("gaussian", 4, 100, "1", sampling="x")),
    ("design", lambda: ropekit.design("gaussian:sigma=0", 4)),
    ("design", lambda: ropekit.design("nosuch", 4)),
    ("design", lambda: ropekit.design("gaussian", 4, sampling="x")),
    ("lie_check", lambda: ropekit.lie_check("/nonexistent.json")),
]


@pytest.mark.parametrize("function, call", CASES, ids=[f"{f}-{i}" for i, (f, _) in enumerate(CASES)])
def test_every_value_error_names_the_function(function, call):
    with pytest.raises(ValueError) as e:
        call()
    message = str(e.value)
    assert message.startswith(f"ropekit.{function}: "), message
    assert "::" not in message and "\n" not in message, message
    assert re.search(r" = .+ \(must be .+\)$", message), message  # <name> = <value> (must be <constraint>)


@pytest.mark.parametrize("function, call", [
    ("kernel", lambda: ropekit.kernel("rope:dim=8,base=" + BIG, "0:4")),
    ("kernel", lambda: ropekit.kernel("rope:dim=8", "0:" + BIG)),
    ("kernel", lambda: ropekit.kernel("x" + BIG, "0:4")),
    ("frequencies", lambda: ropekit.frequencies("rope:dim=8", seq_len=float("inf"), convention="x" + BIG)),
    ("spectrum_kernel", lambda: ropekit.spectrum_kernel("gaussian:sigma=x" + BIG, "0:4")),
    ("design", lambda: ropekit.design("gaussian", 4, sampling=BIG)),
])
def test_a_10_mb_value_gives_a_short_message(function, call):
    with pytest.raises(ValueError) as e:
        call()
    message = str(e.value)
    assert message.startswith(f"ropekit.{function}: "), message[:300]
    assert len(message) < 1000, message[:300]
    assert re.search(r"\(10485[0-9]{3} characters\)", message), message


def test_nul_in_a_path_is_reported_once():
    # Issue 32: "(must be the path contains a NUL character (must be a path without NUL characters))": the reason
    # was given inside a second constraint. One constraint, one "must be".
    with pytest.raises(ValueError) as e:
        ropekit.model("/tmp/config.json\x00.gguf")
    msg = str(e.value)
    assert msg.count("must be") == 1, msg
    assert msg.endswith("(must be a path without NUL characters: the system reads only the part before one)"), msg
