"""The command line shared by the scripts that generate a page of docs/ (docs/cli.md from the
argparse tree, docs/schemas.md from the published schemas): write the page atomically, or with
--check only say whether the committed page is stale."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import Callable

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "checker"))  # run from a checkout
from spillway import atomic  # noqa: E402


def main(page: Path, render: Callable[[], str], script: str, description: str) -> int:
    parser = argparse.ArgumentParser(description=description)
    parser.add_argument("--check", action="store_true", help=f"exit 1 when docs/{page.name} is stale")
    args = parser.parse_args()
    text = render()
    if args.check:
        if not page.is_file() or page.read_text() != text:
            print(f"docs/{page.name} is stale: run scripts/{script}", file=sys.stderr)
            return 1
        return 0
    atomic.write_text(str(page), text)
    return 0
