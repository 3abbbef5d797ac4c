"""lie_check against `ropekit lie check` on the same generator file, and from arrays."""

import json
import os
import tempfile

import numpy as np
import pytest

import ropekit
from conftest import run_cli


@pytest.mark.parametrize("family, extra", [("axial", []), ("random", ["--scale", "0.5"])])
def test_lie_check_matches_command_line(family, extra):
    with tempfile.TemporaryDirectory() as d:
        path = os.path.join(d, "g.json")
        run_cli("lie", "build", family, "--dim", "8", "--axes", "2", *extra, "--out", path)
        got = ropekit.lie_check(path, window=8)
        want = json.loads(run_cli("lie", "check", path, "--window", "8", "--format", "json"))
        gen = json.load(open(path))
    # Every number and verdict of the command line's JSON report (numbers as printed: shortest round trip).
    assert got["dim"] == want["dimension"] and got["route"] == want["route"]
    for key, value in want.items():
        if key in ("file", "dimension", "closest_positions"):
            continue
        if value is None:  # no mixing: the orthogonality defect is not defined
            assert not got["has_mixing"], key
        elif key == "singular_values":
            np.testing.assert_array_equal(got[key], value)
        else:
            assert got[key] == value, key
    assert [got["closest_x"], got["closest_y"]] == want["closest_positions"]
    # The same generators as an array give the same verdicts and numbers.
    T = np.array(gen["generators"], dtype=float)
    again = ropekit.lie_check(T, np.array(gen["Q"]) if "Q" in gen else None, window=8)
    for key in ("skew_defect", "max_commutator", "relativity_defect", "min_position_distance", "rank"):
        assert again[key] == got[key], key


def test_lie_check_independent_route():
    # Two planes rotating at different rates: commuting, skew, rank 2; R(x) = exp(x1 B1 + x2 B2) is exactly relative.
    J = np.array([[0.0, -1.0], [1.0, 0.0]])
    T = np.zeros((2, 4, 4))
    T[0, :2, :2] = J
    T[1, 2:, 2:] = 0.5 * J
    c = ropekit.lie_check(T, window=8)
    assert c["skew"] and c["commuting"] and c["independent"] and c["relativity"] and c["reversibility"]
    np.testing.assert_allclose(c["singular_values"], [np.sqrt(2), np.sqrt(0.5)], rtol=1e-15)
    T[1, 0, 2] = 1.0  # breaks skew-symmetry and commutation
    c = ropekit.lie_check(T, window=8)
    assert not c["skew"]


def test_lie_check_errors():
    with pytest.raises(ValueError, match="ropekit.lie_check: generators = "):
        ropekit.lie_check(np.zeros((2, 3)))
    with pytest.raises(ValueError) as e:
        ropekit.lie_check(np.zeros((1, 2, 2)), route="x")
    assert str(e.value) == "ropekit.lie_check: route = 'x' (must be auto, closed-form or matrix-exp)"
