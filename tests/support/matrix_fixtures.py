"""Writing matrix cell files (cells.toml syntax) for tests."""

from __future__ import annotations

import json


def cell_table(name: str, **fields) -> str:
    """A [cells.NAME] table in cells.toml syntax (strings written as JSON
    strings, which TOML's basic strings read the same)."""
    lines = [f'[cells."{name}"]']
    for key, value in fields.items():
        if isinstance(value, bool):
            lines.append(f"{key} = {'true' if value else 'false'}")
        elif isinstance(value, list):
            lines.append(f"{key} = [{', '.join(json.dumps(v) for v in value)}]")
        else:
            lines.append(f"{key} = {json.dumps(value)}")
    return "\n".join(lines) + "\n"
