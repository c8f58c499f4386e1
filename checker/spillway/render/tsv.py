"""``--format tsv``: tab-separated values for scripts, one line per record
(report: a kernel; check: a kernel and metric; compare: a kernel in both
builds or in one), under a header line of field names.  TSV_HEADERS holds
every header line spillway writes (cli.output replaces a file starting with
one without --force)."""

from __future__ import annotations

from functools import singledispatch
from typing import TYPE_CHECKING, Iterable, Iterator, Sequence

from spillway.render.models import CheckModel, CompareModel, ReportModel, View
from spillway.resources.occupancy import next_step_text

if TYPE_CHECKING:
    from spillway.gate.check import CheckResult
    from spillway.gate.compare import Comparison


# The header lines of the TSV files spillway writes.
TSV_HEADERS: set[bytes] = set()

# --format tsv: every field of the kernel records, in this order.
REPORT_TSV_FIELDS = ("file", "bundle_index", "target", "name", "key", "vgpr_count", "agpr_count", "sgpr_count",
                     "vgpr_spill_count", "sgpr_spill_count", "private_segment_fixed_size", "uses_dynamic_stack",
                     "scratch_cause", "group_segment_fixed_size", "occupancy", "occupancy_limit", "wavefront_size",
                     "max_flat_workgroup_size", "code_object_version", "compiler", "symbol")
TSV_HEADERS.add("\t".join(REPORT_TSV_FIELDS).encode())
# --isa: the isa object's members after them (lists as text: "mnemonic:count,...", "0xTARGET-0xBRANCH,...").
ISA_TSV_FIELDS = ("instructions", "code_bytes", "code_sha256", "scratch_loads", "scratch_stores",
                  "scratch_load_bytes", "scratch_store_bytes", "scratch_without_width", "flat_ops", "agpr_writes",
                  "agpr_reads", "matrix_ops", "lds_ops", "loops", "loop_spans", "scratch_in_loops", "calls", "status",
                  "scratch_slot_load_bytes", "scratch_slot_store_bytes", "scratch_addressed_load_bytes",
                  "scratch_addressed_store_bytes", "agpr_spill_copies", "agpr_accumulator_moves", "innermost_loops",
                  "scratch_in_innermost_loops", "loop_depth_max")
TSV_HEADERS.add("\t".join(REPORT_TSV_FIELDS + ISA_TSV_FIELDS).encode())
# (before the derived figures: still ours)
TSV_HEADERS.add("\t".join(REPORT_TSV_FIELDS + ISA_TSV_FIELDS[:18]).encode())
# --pressure: the live registers after them (isa.pressure; empty cells for a kernel whose code was not read),
# the VGPR peak's source line as FILE:LINE.
PRESSURE_TSV_FIELDS = ("pressure_status", "live_vgprs", "live_agprs", "live_sgprs", "vgpr_peak_offset",
                       "vgpr_peak_line", "undefined_reads")
TSV_HEADERS.add("\t".join(REPORT_TSV_FIELDS + ISA_TSV_FIELDS + PRESSURE_TSV_FIELDS).encode())

# --format tsv: one line per kernel and metric.
CHECK_TSV_FIELDS = ("target", "name", "key", "metric", "allowed", "actual", "passed", "new_kernel",
                    "dynamic_stack")
TSV_HEADERS.add("\t".join(CHECK_TSV_FIELDS).encode())

# --format tsv of compare.
COMPARE_TSV_FIELDS = ("status", "target", "name", "key", "worse", "better", "old_vgprs", "new_vgprs",
                      "old_vgpr_spills", "new_vgpr_spills", "old_sgpr_spills", "new_sgpr_spills", "old_scratch",
                      "new_scratch", "old_dynamic_stack", "new_dynamic_stack", "old_occupancy", "new_occupancy",
                      "next_step")
TSV_HEADERS.add("\t".join(COMPARE_TSV_FIELDS).encode())
TSV_HEADERS.add("\t".join(COMPARE_TSV_FIELDS[:-1]).encode())     # (before next_step: still spillway's to replace)
# compare --isa: after next_step, what each kernel's code did (_code_cells).
COMPARE_CODE_TSV_FIELDS = ("code", "code_notes", "old_code_sha256", "new_code_sha256", "old_code_scratch_bytes",
                           "new_code_scratch_bytes", "old_scratch_in_loops", "new_scratch_in_loops", "old_agpr_copies",
                           "new_agpr_copies")
TSV_HEADERS.add("\t".join(COMPARE_TSV_FIELDS + COMPARE_CODE_TSV_FIELDS).encode())


# A finding's fields (gate.check.CheckResult.finding_rows: target, key, name, ...) in
# CHECK_TSV_FIELDS' order: the name before the key.
CHECK_TSV_ORDER = (0, 2, 1, 3, 4, 5, 6, 7, 8)


def check_tsv_removals(result: CheckResult) -> Iterator[tuple]:
    """After the findings (CheckResult.finding_columns: a column per field, no tuple nor
    Finding object per kernel and metric; CHECK_TSV_ORDER gives them in CHECK_TSV_FIELDS'
    order), a failing row, metric ``built``, per target no longer built (name and key empty)
    and per baseline kernel no longer built, in a finding's fields."""
    for t in result.removed_targets:
        yield (t.target, "", "", "built", None, None, False, False, False)
    for target, key, name in result.vanished:
        yield (target, key, name, "built", None, None, False, False, False)


def compare_tsv_rows(comparison: Comparison, everything: bool):
    """One row per kernel; ``next_step`` in report's words ("96 or fewer VGPRs for 7"); with
    ``comparison.code`` (--isa) CODE_TSV_FIELDS after it (empty for kernels on one side)."""
    for k in comparison.kernels:
        if not everything and k.status == "same":
            continue
        o, n = k.old, k.new
        row = (k.status, k.target, k.name, k.key, ",".join(k.worse), ",".join(k.better), o.vgprs, n.vgprs,
               o.vgpr_spills, n.vgpr_spills, o.sgpr_spills, n.sgpr_spills, o.scratch, n.scratch, o.dynamic_stack,
               n.dynamic_stack, o.occupancy, n.occupancy, next_step_text(k.occupancy_next))
        yield (*row, *_code_cells(k)) if comparison.code else row
    for status, group in (("added", comparison.only_new), ("removed", comparison.only_old)):
        for u in group:
            r = u.resources
            figures = (r.vgprs, r.vgpr_spills, r.sgpr_spills, r.scratch, r.dynamic_stack, r.occupancy)
            old, new = ((None,) * 6, figures) if status == "added" else (figures, (None,) * 6)
            # The next step is the new side's: a removed kernel has none.
            step = next_step_text(u.occupancy_next) if status == "added" else ""
            one_side: tuple = (status, u.target, u.name, u.key, "", "", *(v for pair in zip(old, new) for v in pair),
                               step)
            yield (*one_side, *("",) * _CODE_CELLS) if comparison.code else one_side
    # Kernels a default baseline on the OLD side does not record: held to zero (worse: over it).
    for held in comparison.not_in_baseline:
        if not everything and not held.worse:
            continue
        u = held.usage
        r = u.resources
        figures = (r.vgprs, r.vgpr_spills, r.sgpr_spills, r.scratch, r.dynamic_stack, r.occupancy)
        unrecorded: tuple = ("not in baseline", u.target, u.name, u.key, ",".join(held.worse), "",
                             *(v for f in figures for v in (None, f)), next_step_text(u.occupancy_next))
        yield (*unrecorded, *("",) * _CODE_CELLS) if comparison.code else unrecorded


# compare --isa: what each kernel's code did (KernelDiff.code_verdict, code_notes), each side's code hashes
# and figures (the CLI's CODE_TSV_FIELDS).
_CODE_CELLS = 10


def _code_cells(k) -> tuple:
    old, new = k.old_code, k.new_code
    figures = []
    for code in (old, new):
        figures.append(None if code is None else (",".join(code.code_sha256), code.scratch_bytes,
                                                   code.scratch_in_loops, code.agpr_copies))
    pairs = [(None if figures[0] is None else figures[0][i], None if figures[1] is None else figures[1][i])
             for i in range(4)]
    return (k.code_verdict, ",".join(k.code_notes()), *(v for pair in pairs for v in pair))


def pressure_tsv_cells(pressure: dict | None) -> list:
    """An isa object's pressure in PRESSURE_TSV_FIELDS order (None: empty cells)."""
    if pressure is None:
        return [None] * len(PRESSURE_TSV_FIELDS)
    at_peak = pressure["at_vgpr_peak"]
    source = at_peak["source"] if at_peak is not None else None
    return [pressure["status"], pressure["vgprs"]["peak"], pressure["agprs"]["peak"], pressure["sgprs"]["peak"],
            pressure["vgprs"]["offset"], f"{source['file']}:{source['line']}" if source is not None else None,
            pressure["undefined_reads"]]


def isa_tsv_cells(isa: dict) -> list:
    """An isa object's values in ISA_TSV_FIELDS order, its lists as text."""
    cells = [isa[f] for f in ISA_TSV_FIELDS]
    cells[ISA_TSV_FIELDS.index("scratch_without_width")] = ",".join(
        f"{mnemonic}:{count}" for mnemonic, count in isa["scratch_without_width"].items())
    cells[ISA_TSV_FIELDS.index("loop_spans")] = ",".join(f"{lo:#x}-{hi:#x}" for lo, hi in isa["loop_spans"])
    return cells

def tsv(header: Sequence[str], rows: Iterable[Sequence], order: Sequence[int] | None = None,
        columns: Sequence[Sequence] = ()) -> Iterator[bytes]:
    """Tab-separated values: the header line, then one line per row (render.grid.tsv_cell), as
    UTF-8 in pieces; ``columns``: rows given a column each, before ``rows``; ``order``: the
    rows' items to show, in this order (default: all)."""
    from spillway.render.grid import tsv as table_tsv

    return table_tsv(header, rows, order, columns)


@singledispatch
def document(model, view: View) -> Iterator[bytes]:
    raise TypeError(f"no TSV for {type(model).__name__}")


@document.register
def _(model: ReportModel, view: View) -> Iterator[bytes]:
    if model.pressure:
        rows = ([*(k.get(f) for f in REPORT_TSV_FIELDS), *isa_tsv_cells(k["isa"]),
                 *pressure_tsv_cells(k["isa"].get("pressure"))] for k in model.kernels)
        return tsv(REPORT_TSV_FIELDS + ISA_TSV_FIELDS + PRESSURE_TSV_FIELDS, rows)
    if model.isa:
        rows = ([*(k.get(f) for f in REPORT_TSV_FIELDS), *isa_tsv_cells(k["isa"])] for k in model.kernels)
        return tsv(REPORT_TSV_FIELDS + ISA_TSV_FIELDS, rows)
    return tsv(REPORT_TSV_FIELDS, ([k.get(f) for f in REPORT_TSV_FIELDS] for k in model.kernels))


@document.register
def _(model: CheckModel, view: View) -> Iterator[bytes]:
    return tsv(CHECK_TSV_FIELDS, check_tsv_removals(model.result), CHECK_TSV_ORDER,      # (metric "built")
               model.result.finding_columns())


@document.register
def _(model: CompareModel, view: View) -> Iterator[bytes]:
    fields = COMPARE_TSV_FIELDS + COMPARE_CODE_TSV_FIELDS if model.comparison.code else COMPARE_TSV_FIELDS
    return tsv(fields, compare_tsv_rows(model.comparison, view.everything))
