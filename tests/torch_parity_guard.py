"""What the two PyTorch parity modules share: ``torch`` (or None), the tolerance, and the guard
that makes a missing torch a failure where the test extras install it (Python 3.11 / x86_64,
the CPU wheel 2.13.0 on these machines' disk) and a skip, naming the command, elsewhere."""
import platform
import sys

import pytest

try:
    import torch
except ImportError:  # require_torch turns this into a failure or a skip
    torch = None

EXTRA_HAS_TORCH = sys.version_info[:2] == (3, 11) and platform.machine() == "x86_64"
INSTALL = "pip install -e '.[test]'"
TOL = dict(rtol=1e-10, atol=1e-10)


def require_torch() -> None:
    """No torch: a failure where the test extras install it, a skip (naming it) elsewhere."""
    if torch is None and EXTRA_HAS_TORCH:
        pytest.fail(f"torch is not installed but the test extras install it here: {INSTALL}",
                    pytrace=False)
    if torch is None:
        pytest.skip(f"needs torch (not installed; the test extras install it only on Python "
                    f"3.11 / x86_64: {INSTALL}, or pip install torch)")
