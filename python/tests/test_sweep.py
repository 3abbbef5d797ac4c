"""sweep: serial equals fit; a 2-process LocalCluster equals serial row for row, bit for bit."""

import numpy as np
import pandas as pd
import pytest

import ropekit

ENCODINGS = ["rope", "jordan_m3", "damped", "alibi", "rope:F=8", "direct-sum:[rope,alibi]", "xpos:dim=16",
             "rope:scaling=yarn(factor=4,orig=256)", "poly:k=3"]
TARGETS = ["phase", "linear", "mixed", "seasonal_trend"]


def test_serial_sweep_is_fit_as_a_dataframe():
    df = ropekit.sweep(ENCODINGS[:3], TARGETS[:2], 256, [512, 1024])
    rows = ropekit.fit(ENCODINGS[:3], TARGETS[:2], 256, [512, 1024])
    assert list(df.columns) == ropekit.FIT_COLUMNS
    pd.testing.assert_frame_equal(df, pd.DataFrame(rows))
    assert df["mse"].dtype == np.float64 and df["rank"].dtype == np.int64


def test_sweep_refuses_methods_and_bad_spellings():
    with pytest.raises(ValueError, match="methods"):
        ropekit.sweep(["rope"], ["phase"], 64, [128], methods=["rope"])
    with pytest.raises(ValueError, match=r"^ropekit.sweep: encodings: encoding 'rope:dim=63'"):
        ropekit.sweep(["rope:dim=63"], ["phase"], 64, [128])


@pytest.fixture(scope="module")
def client():
    distributed = pytest.importorskip("distributed")
    cluster = distributed.LocalCluster(n_workers=2, processes=True, threads_per_worker=1, dashboard_address=None)
    c = distributed.Client(cluster)
    yield c
    c.close()
    cluster.close()


def test_cluster_sweep_equals_serial(client):
    serial = ropekit.sweep(ENCODINGS, TARGETS, 256, [512, 2048], seeds=[0, 3])
    for block_size in (None, 1, 4):
        distributed = ropekit.sweep(ENCODINGS, TARGETS, 256, [512, 2048], client=client, block_size=block_size,
                                    seeds=[0, 3])
        pd.testing.assert_frame_equal(distributed, serial, check_exact=True)
    assert len(serial) == 2 * len(ENCODINGS) * len(TARGETS) * 3


def test_cluster_sweep_raises_the_tasks_value_error(client):
    with pytest.raises(ValueError, match=r"^ropekit.sweep: .*dim = 63 \(must be a positive even integer\)"):
        ropekit.sweep(["rope", "rope:dim=63"], ["phase"], 64, [128], client=client, block_size=1)


@pytest.mark.parametrize("block_size", [0, -3, 2.5, True])
def test_sweep_refuses_a_block_size_that_is_not_a_positive_integer(block_size):
    # Issue 20 item 14: block_size=0 was accepted (range() failed later on a cluster; a negative one dropped every
    # encoding), whether or not a client was given.
    with pytest.raises(ValueError, match=r"^ropekit.sweep: block_size = .* \(must be an integer >= 1 or None\)"):
        ropekit.sweep(["rope:dim=8"], ["phase"], 64, [128], block_size=block_size)
