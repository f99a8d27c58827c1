"""What the two PyTorch parity modules share: ``torch`` (or None), the tolerance, and the guard
that makes a missing torch a skip that names the install command -- or, under CI=true (``.ci/run``
installs the parity extra), a failure.

The parity tests are their own run: ``pip install -e '.[parity]' && python -m pytest -q -m parity``
(the ``parity`` marker comes from ``PARITY`` in tests/conftest.py)."""
import os

import pytest

try:
    import torch
except ImportError:  # require_torch turns this into a skip, or under CI=true a failure
    torch = None

INSTALL = ("pip install -e '.[parity]' (PyTorch 2.13.0; off the project's machines, PyTorch's "
           "CPU build is on its own index: pip install torch==2.13.0 --index-url "
           "https://download.pytorch.org/whl/cpu)")
TOL = dict(rtol=1e-10, atol=1e-10)


def require_torch() -> None:
    """No torch: a skip naming the install command; under CI=true, a failure."""
    if torch is not None:
        return
    if os.environ.get("CI") == "true":
        pytest.fail(f"torch is not installed, and CI=true needs the parity tests: {INSTALL}",
                    pytrace=False)
    pytest.skip(f"needs torch, not installed: {INSTALL}")
