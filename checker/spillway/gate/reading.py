"""Reading what to gate or compare: binaries (through the reader, their rows
folded as the workers hand them over), spillway report JSON documents
(streamed, report.report_input) and, where the caller allows it, baseline
files' recorded figures, into one Inputs."""

from __future__ import annotations

import operator
from typing import Iterable, Optional

from spillway.errors import InputError
from spillway.paths import regular_file_head, spooled_stdin
from spillway.gate.kernels import Inputs, Kernel, KernelUsage, aggregate, aggregate_rows
from spillway.report.fields import GATE_ROW_FIELDS, PLACE_FIELDS, ROW_FIELDS
from spillway.report.reader import ReadOptions, no_kernels_found
from spillway.resources.occupancy import UNNAMED_MODEL
from spillway.resources.targets import target_selected


def sniff_json(path: str) -> bool:
    """Does this regular file (or standard input, ``-``) start (after white
    space) with a JSON object?"""
    if path == "-":
        path = spooled_stdin()
    head = regular_file_head(path, 64)
    return head is not None and head.lstrip(b" \t\r\n\xef\xbb\xbf")[:1] == b"{"


def read_sources(paths: list[str], options: ReadOptions, *, allow_baseline: bool = False, side: str = "",
                 allow_empty: bool = False, places: bool = False) -> Inputs:
    """Read binaries (report.reader; ``options.progress`` hears of the progress)
    and JSON documents named on the command line; raise InputError when nothing
    yields a kernel (unless ``allow_empty``: the matrix's view shows a cell
    without kernels as an empty column; with ``options.require_kernels`` the
    binaries must hold one of their own).  ``places``: keep where each
    kernel read from a binary is (Inputs.places), to look at some again."""
    from spillway.gate.baseline import BASELINE_PREFIX, baseline_usage, parse_baseline
    from spillway.report.reader import read_report
    from spillway.report.report_input import open_report

    # One occupancy model for every side: figures from a report follow the one asked for.
    model = options.occupancy_model

    inputs = Inputs(sources=list(paths))
    binaries = [p for p in paths if not sniff_json(p)]
    documents = [p for p in paths if sniff_json(p)]
    baseline_usage_parts: list[dict[Kernel, KernelUsage]] = []
    for path in documents:
        # Streamed: checked record by record as it is read, never loaded whole (report.report_input).
        report = open_report(path)
        schema = report.head.get("schema")
        if isinstance(schema, str) and schema.startswith(BASELINE_PREFIX):
            if not allow_baseline:
                raise InputError("is a baseline file, not a build; pass it with --baseline", file=path)
            data = _whole_file(report.path, path)
            baseline = parse_baseline(_parsed_json(data, path), path)
            inputs.baselines.append((path, data))
            part = {k: u for k, u in baseline_usage(baseline).items()
                    if target_selected(u.target, options.targets)}
            baseline_usage_parts.append(part)
            if not baseline.records_every_kernel:
                _note_unrecorded(inputs.unrecorded_held, baseline, options.targets)
            continue
        found = report.read(lambda records: _report_part(records, options.targets, model))
        inputs.files.extend(report.files)
        inputs.compilers |= found.compilers
        inputs.code_object_versions |= found.code_object_versions
        inputs.occupancy_models |= found.occupancy_models
        if not inputs.usage:
            inputs.usage = found.usage
        else:
            for ident, usage in found.usage.items():
                _merge(inputs.usage, ident, usage)
    if binaries:
        from spillway.report.reader import KernelTable

        # --isa: each row ends with its kernel's isa object.
        row_fields = (*GATE_ROW_FIELDS, "isa") if options.isa else GATE_ROW_FIELDS
        if places:
            row_fields = (*row_fields, *PLACE_FIELDS)
        keep_places = _place_keeper(inputs.places, row_fields) if places else None

        def fold(rows: list[tuple], fields: tuple[str, ...] | None = row_fields) -> None:
            # Rows are folded as the workers hand them over, never all held at once.
            inputs.note_rows(rows, fields)
            aggregate_rows(rows, inputs.usage, fields)
            if keep_places is not None and fields is row_fields:
                keep_places(rows)

        document = read_report(binaries, options, compact=True, rows_sink=fold, rows_fields=row_fields)
        kernels = document["kernels"]
        inputs.files.extend(document["files"])
        if isinstance(kernels, KernelTable):
            fold(kernels.rows, ROW_FIELDS if options.isa else None)    # (what a KernelTable holds)
            if places:
                _place_keeper(inputs.places, ROW_FIELDS)(kernels.rows)
        else:
            inputs.note_records(kernels)
            for ident, usage in aggregate(kernels).items():
                _merge(inputs.usage, ident, usage)
        del document, kernels
    for part in baseline_usage_parts:
        for ident, usage in part.items():
            _merge(inputs.usage, ident, usage)
    if not inputs.usage and not allow_empty:
        raise no_kernels_found(paths, options.targets, side)
    return inputs


def _note_unrecorded(held: dict[str, tuple[str, ...]], baseline, targets: list[str]) -> None:
    """What a baseline written without --record-all says of the kernels it does not
    record: on each target it was written from, zero in the criteria it gates."""
    from spillway.gate.compare import HELD_TO_ZERO

    criteria = tuple(c for c in HELD_TO_ZERO if c in baseline.gate)
    if not criteria:
        return
    for target in baseline.targets_built():
        if target_selected(target, targets):
            before = held.get(target, ())
            held[target] = tuple(c for c in HELD_TO_ZERO if c in before or c in criteria)


def _place_keeper(found: dict[Kernel, list[tuple]], fields: tuple[str, ...]):
    """A function that notes each row's place (PLACE_FIELDS) under its kernel in ``found``; the
    code object's part (file, bundle, offset, archive) is one tuple for all of its kernels."""
    at = fields.index
    ident_of = operator.itemgetter(at("target"), at("key"))
    head_of = operator.itemgetter(*(at(f) for f in PLACE_FIELDS[:-1]))
    symbol_at = at(PLACE_FIELDS[-1])
    heads: dict[tuple, tuple] = {}

    def keep(rows: list[tuple]) -> None:
        for row in rows:
            head = head_of(row)
            head = heads.setdefault(head, head)
            place = (head, row[symbol_at])
            seen = found.get(ident_of(row))
            if seen is None:
                found[ident_of(row)] = [place]
            else:
                seen.append(place)
    return keep


def _merge(usage: dict[Kernel, KernelUsage], ident: Kernel, more: KernelUsage) -> None:
    seen = usage.get(ident)
    if seen is None:
        usage[ident] = more
    else:
        seen.add_instance(more.resources, more.occupancy_next, more.instances, more.code)


def _report_part(records: Iterable[dict], targets: list[str], model: str) -> Inputs:
    """The kernels of one report JSON document, aggregated as its records are
    read (checked already by report.report_input).  A fresh part on each call:
    ReportJson.read starts over when a document leaves spillway's layout."""
    from spillway.resources.occupancy import apply_model

    part = Inputs()
    # One string per distinct name, key and target: a library's kernel is built for
    # many targets (librocsparse1 7.2.4: 239,806 kernels, 17,129 names; 297 MB of
    # names and keys when each record keeps its own copy).
    strings: dict[str, str] = {}
    share = strings.setdefault
    compilers: set[Optional[str]] = set()
    versions: set[Optional[int]] = set()
    models = part.occupancy_models

    def selected() -> Iterable[dict]:
        for record in records:
            if target_selected(record["target"], targets):
                if model == "producer" or record.get("occupancy_model") != model:
                    record = apply_model(record, model)     # (else apply_model returns it as it is)
                # As Inputs.note_records does (the types were checked: str, int or None).
                compilers.add(record.get("compiler"))
                versions.add(record.get("code_object_version"))
                models.add(record.get("occupancy_model") or UNNAMED_MODEL)
                for name in ("target", "key", "name"):
                    record[name] = share(record[name], record[name])
                yield record

    part.usage = aggregate(selected())
    part.compilers = {c for c in compilers if c}
    part.code_object_versions = {v for v in versions if v is not None}
    return part


def _whole_file(path: str, file: str) -> bytes:
    """A baseline named among a build's paths (compare), read whole (baselines
    are small by default; gate.baseline checks them): its bytes are kept for
    the outputs that point at its lines (SARIF), so no output opens it again."""
    try:
        with open(path, "rb") as handle:
            return handle.read()
    except OSError as exc:
        raise InputError(f"cannot read: {exc.strerror}", file=file) from None


def _parsed_json(data: bytes, file: str):
    from spillway import json_codec

    try:
        return json_codec.loads(data)
    except json_codec.JSONDecodeError as exc:
        raise InputError(f"not valid JSON: {exc}", file=file) from None
