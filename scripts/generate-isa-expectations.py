#!/usr/bin/env python3
"""Write tests/data/isa/expected.json and tests/data/isa/rare/expected.json:
the ISA-evidence oracle's figures (tests/support/isa_oracle.py: llvm-objdump
-d -z, the newest LLVM that decodes each code object) for every function of
every fixture code object under tests/data/isa/co/ (kernels.cpp, built by
tests/data/isa/build.sh) and tests/data/isa/rare/co/ (rare.cpp: the rarely
used instructions of issue 31, built by tests/data/isa/rare/build.sh).

    python3 scripts/generate-isa-expectations.py [--check]

--check compares instead of writing (exit 1 on a difference).
tests/oracle/test_isa_oracle.py reruns the oracle and compares with the
committed files, so the oracle itself is pinned.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO / "tests"))

from support import isa_oracle  # noqa: E402

FIXTURES = REPO / "tests" / "data" / "isa"
SETS = (FIXTURES, FIXTURES / "rare")        # each: co/*.co, build.sh, expected.json
SCHEMA = "spillway-isa-oracle/1"


def document(folder: Path = FIXTURES) -> dict:
    fixtures = {}
    for path in sorted((folder / "co").glob("*.co")):
        fixtures[path.name] = isa_oracle.read_code_object(path).document()
    return {"schema": SCHEMA, "rules": "tests/support/isa_oracle.py",
            "built_by": str((folder / "build.sh").relative_to(REPO)), "fixtures": fixtures}


def render(doc: dict) -> str:
    return json.dumps(doc, indent=1, sort_keys=True) + "\n"


def main(argv: list[str]) -> int:
    if argv and argv != ["--check"]:
        print(__doc__.strip(), file=sys.stderr)
        return 2
    status = 0
    for folder in SETS:
        text = render(document(folder))
        out = folder / "expected.json"
        if argv == ["--check"]:
            if not out.is_file() or out.read_text() != text:
                print(f"{out}: differs from the oracle's output now", file=sys.stderr)
                status = 1
            continue
        tmp = out.with_suffix(".json.tmp")
        tmp.write_text(text)
        tmp.replace(out)
        print(f"wrote {out} ({len(text)} bytes)", file=sys.stderr)
    return status


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
