"""``spillway code``'s text for a kernel's source lines (isa.source_lines.
KernelLines): each scratch access, AGPR copy and loop with its
``file:line:column`` (``(inferred)`` where the line table said line 0), and a
sentence per source line ("kernels.cpp:142: 12 B/lane stored in the innermost
loop").  Paths are shown relative to the compile unit's directory when they
are under it (as written in the build's sources), else as the table joins
them; every path comes from the binary and is shown as one log line
(spillway.untrusted.visible).

A kernel whose code object has no line table gets no text here: the
listing stays as it was (the JSON says ``no line table``).
"""

from __future__ import annotations

from spillway.isa.source_lines import NO_LINE_TABLE, PLACED, KernelLines, LineTraffic, SourceLine
from spillway.paths import relative_path
from spillway.untrusted import visible


def where(source: SourceLine | None, comp_dir: str) -> str:
    """``file:line:column`` (no column when the row names none), ``(inferred)``
    after a line taken from another row (the table said line 0); ``no line`` for None."""
    if source is None:
        return "no line"
    text = f"{visible(relative_path(source.file, comp_dir))}:{source.line}"
    if source.column:
        text += f":{source.column}"
    return text + (" (inferred)" if source.inferred else "")


def line_sentence(row: LineTraffic, comp_dir: str) -> str:
    """What one source line does: "kernels.cpp:142: 12 B/lane stored in the
    innermost loop, 8 B/lane loaded in a loop (3 accesses, 1 placed by
    inference)"."""
    name = f"{visible(relative_path(row.file, comp_dir))}:{row.line}" if row.file else "no line"
    parts = []
    for verb, total, looping, innermost in (("stored", row.store_bytes, row.loop_store_bytes,
                                             row.innermost_store_bytes),
                                            ("loaded", row.load_bytes, row.loop_load_bytes,
                                             row.innermost_load_bytes)):
        if innermost:
            parts.append(f"{innermost} B/lane {verb} in the innermost loop")
        if looping - innermost:
            parts.append(f"{looping - innermost} B/lane {verb} in an outer loop")
        if total - looping:
            parts.append(f"{total - looping} B/lane {verb} outside loops")
    if row.agpr_copies:
        parts.append(f"{row.agpr_copies} AGPR cop{'y' if row.agpr_copies == 1 else 'ies'} "
                     f"({row.agpr_spill_copies} spill)")
    notes = [f"{row.accesses} scratch access" + ("" if row.accesses == 1 else "es")] if row.accesses else []
    if row.inferred:
        notes.append(f"{row.inferred} placed by inference")
    text = f"{name}: " + (", ".join(parts) if parts else "no scratch bytes named")
    return text + (f" ({', '.join(notes)})" if notes else "")


def source_lines_text(lines: KernelLines | None, offsets: dict[int, str]) -> list[str]:
    """The kernel's source-line section (none without a line table).
    ``offsets``: each listed instruction's offset -> its description in the
    listing ("scratch store 4 B")."""
    if lines is None or lines.status == NO_LINE_TABLE:
        return []
    origin = "the debug twin" if lines.lines_from == "debug twin" else "the code object's line table"
    if lines.status != PLACED:
        return [f"  source lines: none ({visible(lines.status)})"]
    comp = lines.comp_dir
    out = [f"  source lines (from {origin}; paths under {visible(comp) or 'no directory'}):"]
    placed = sorted((*lines.scratch, *lines.agpr_copies), key=lambda p: p.instruction.offset)
    width = max((len(f"+{p.instruction.offset:#x}") for p in placed), default=0)
    for p in placed:
        offset = f"+{p.instruction.offset:#x}"
        out.append(f"    {offset:<{width}}  {offsets.get(p.instruction.offset, p.instruction.kind):<22}  "
                   f"{where(p.source, comp)}")
    for loop in lines.loops:
        out.append(f"    loop +{loop.loop.start:#x} .. +{loop.loop.end:#x}: head {where(loop.head, comp)}, "
                   f"back branch {where(loop.back_branch, comp)}")
    if lines.by_line:
        out.append("  by source line (bytes per lane):")
        out.extend(f"    {line_sentence(row, comp)}" for row in lines.by_line)
    return out
