"""Shared test settings: Hypothesis profiles, and Ctrl-C given back to pytest after each test.

``ci`` (chosen when the environment has CI=true): derandomized, so a run is reproducible, and
a modest number of examples, so the whole suite stays fast. ``dev``: Hypothesis' defaults,
random examples, so repeated local runs explore more. Neither has a deadline: timings on a
shared machine are noise, not failures.
"""
import os
import signal

import pytest
from hypothesis import HealthCheck, settings

settings.register_profile("ci", deadline=None, derandomize=True, max_examples=25,
                          suppress_health_check=[HealthCheck.too_slow])
settings.register_profile("dev", deadline=None, suppress_health_check=[HealthCheck.too_slow])
settings.load_profile("ci" if os.environ.get("CI") == "true" else "dev")

# The messages in English, whatever this machine's locale: the READMEs' transcripts are English.
# (``minigrad.i18n`` reads LANGUAGE first; tests of Chinese output pass --lang zh.)
os.environ["LANGUAGE"] = "en"


@pytest.fixture(autouse=True)
def keep_sigint():
    """``models`` main() ignores Ctrl-C once it is exiting after one: restore pytest's handler."""
    previous = signal.getsignal(signal.SIGINT)
    yield
    signal.signal(signal.SIGINT, previous)
