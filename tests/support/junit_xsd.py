"""The Jenkins xunit plugin's JUnit schema, junit-10.xsd, that spillway's
JUnit files must validate against.  It is someone else's file, so it is not
committed: scripts/install-test-deps.sh (scripts/fetch-junit-xsd.sh) takes
it from pytest's source distribution on PyPI (testing/example_scripts/) into
tests/.cache/.  Missing, the tests that need it skip locally and fail under CI."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

XSD = Path(__file__).resolve().parents[1] / ".cache" / "junit-10.xsd"


def junit_schema():
    path = Path(os.environ.get("SPILLWAY_JUNIT_XSD", XSD))
    if not path.is_file():
        message = f"{path} missing: run scripts/fetch-junit-xsd.sh (scripts/install-test-deps.sh does)"
        if os.environ.get("CI"):
            pytest.fail(message)
        pytest.skip(message)
    import xmlschema

    return xmlschema.XMLSchema(str(path))
