"""The SARIF 2.1.0 JSON schema (OASIS, rtm.5) that spillway's SARIF logs must
validate against.  It is someone else's file, so it is not committed:
scripts/install-test-deps.sh (scripts/fetch-sarif-schema.sh) takes it from
Microsoft's @microsoft/jest-sarif package on npm into tests/.cache/.  Missing,
the tests that need it skip locally and fail under CI."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

SCHEMA = Path(__file__).resolve().parents[1] / ".cache" / "sarif-2.1.0-rtm.5.json"


def sarif_validator():
    path = Path(os.environ.get("SPILLWAY_SARIF_SCHEMA", SCHEMA))
    if not path.is_file():
        message = f"{path} missing: run scripts/fetch-sarif-schema.sh (scripts/install-test-deps.sh does)"
        if os.environ.get("CI"):
            pytest.fail(message)
        pytest.skip(message)
    import jsonschema

    schema = json.loads(path.read_text())
    validator_class = jsonschema.validators.validator_for(schema)
    validator_class.check_schema(schema)
    return validator_class(schema)
