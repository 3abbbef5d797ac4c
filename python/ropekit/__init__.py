"""ropekit: numerical analysis of rotary positional encodings, in float64 (the C++ library, bound with pybind11).

Every function takes the command line's spellings ("rope:dim=128,base=1e4", "jordan_m3", "cauchy:b=4") and returns
the command line's columns as numpy arrays (float64, int64) and lists of str, so ``pandas.DataFrame(d)`` is the CSV
the command line prints. Bad input raises ValueError with the command line's one-line message (its command written
``ropekit.kernel``, its options as keyword arguments). Long calls release the GIL and stop on Ctrl-C.

    >>> import ropekit
    >>> ropekit.kernel("rope:dim=4,base=100", [0, 1, 2])["kernel"]
    array([1.        , 0.76765324, 0.28195987])

``sweep`` runs a grid of fits serially or on a Dask cluster and returns a pandas DataFrame.
"""

from ._ropekit import (  # noqa: F401  (the library's functions, documented in their docstrings)
    DEFAULT_SEED,
    __version__,
    check,
    design,
    envelope,
    features,
    fit,
    fit_params,
    fit_spectrum,
    frameworks,
    frequencies,
    kernel,
    lie_check,
    list_encodings,
    list_pipelines,
    list_schemes,
    list_spectra,
    list_targets,
    model,
    precision,
    report,
    spectrum_kernel,
    verify_master,
)
from .sweep import FIT_COLUMNS, sweep  # noqa: F401
from ._signatures import with_signature as _with_signature

# Each library function as a Python function with a real signature (inspect.signature, Jupyter's and IDEs' hints).
check, design, envelope, features, fit, fit_params, fit_spectrum, frameworks, frequencies, kernel, lie_check, \
    list_encodings, list_pipelines, list_schemes, list_spectra, list_targets, model, precision, report, \
    spectrum_kernel, verify_master = \
    map(_with_signature, (check, design, envelope, features, fit, fit_params, fit_spectrum, frameworks, frequencies, kernel,
                          lie_check, list_encodings, list_pipelines, list_schemes, list_spectra, list_targets, model,
                          precision, report, spectrum_kernel, verify_master))

__all__ = [
    "DEFAULT_SEED", "FIT_COLUMNS", "check", "design", "envelope", "features", "fit", "fit_params", "fit_spectrum",
    "frameworks", "frequencies", "kernel", "lie_check", "list_encodings", "list_pipelines", "list_schemes", "list_spectra",
    "list_targets", "model",
    "precision", "report", "spectrum_kernel", "sweep",
    "verify_master",
]
