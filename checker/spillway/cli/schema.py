"""``spillway schema NAME``: print a published JSON schema."""

from __future__ import annotations

import json

from spillway.schemas import SCHEMAS, schema_for


def register(subparsers) -> None:
    parser = subparsers.add_parser("schema", help="print the JSON schema of a document spillway writes")
    parser.add_argument("name", choices=sorted(SCHEMAS), help="which document")
    parser.set_defaults(run=run)


def run(args) -> int:
    print(json.dumps(schema_for(args.name), indent=2, sort_keys=True))
    return 0
