"""``spillway schema [NAME]``: list the documents spillway writes, or print
one's published JSON schema (docs/schemas/NAME-VERSION.json)."""

from __future__ import annotations

from spillway import json_codec
from spillway.cli.output import Outputs, add_output_options, chosen_format, write
from spillway.schemas import DESCRIPTIONS, SCHEMAS, schema_for


def register(subparsers) -> None:
    parser = subparsers.add_parser("schema", help="list the documents spillway writes, or print one's JSON schema",
                                   description="Without NAME: the documents spillway writes and their schema "
                                               "names. With NAME: that document's JSON schema.")
    parser.add_argument("name", nargs="?", choices=sorted(SCHEMAS), metavar="NAME",
                        help=f"which document: {', '.join(sorted(SCHEMAS))}")
    add_output_options(parser, ("json",), default="json")
    parser.set_defaults(run=run)


def run(args) -> int:
    chosen_format(args)
    Outputs([], force=args.force).claim(args.output, "-o")
    if args.name is None:
        width = max(map(len, SCHEMAS))
        for name in sorted(SCHEMAS):
            schema = schema_for(name)
            named = schema.get("properties", {}).get("schema", {})
            # (a schema covering two versions, as baseline 3 and 4, is listed by its newest)
            ident = named.get("const") or max(named.get("enum") or [""]) or schema["$id"]
            print(f"{name:<{width}}  {ident:<28}  {DESCRIPTIONS.get(name, '')}")
        return 0
    schema = schema_for(args.name)
    # $id first: it names the file as spillway's (a later -o may replace it).
    ordered = {"$id": schema["$id"], "$schema": schema["$schema"]}
    ordered.update(json_codec.loads(json_codec.dumps({k: v for k, v in schema.items() if k not in ordered},
                                                     sort_keys=True)))
    write(args.output, json_codec.dumps(ordered, indent=True) + b"\n")
    return 0
