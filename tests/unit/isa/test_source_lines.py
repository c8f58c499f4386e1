"""isa.source_lines: the lookup and the line-0 inference on synthetic
tables, basic blocks, and the per-kernel model on the committed line-table
fixtures (tests/data/isa/lines): its placed accesses are the instruction
lines, its per-line summary adds up to the kernel's figures, debug twins
are used only where the code is the same, skimmed tables give the same
model.  LLVM's tools decide the lines themselves in
tests/oracle/test_source_lines_oracle.py."""

from __future__ import annotations

from array import array
from pathlib import Path

import pytest

from spillway.formats.dwarf_lines import END_SEQUENCE, IS_STMT, LineRows, LineTable, Sequence, SourceFile
from spillway.isa.evidence import kernel_ranges, nesting
from spillway.isa.listing import ACCUMULATOR_ROLE, SCRATCH_STORE_KIND, SPILL_COPY_ROLE, kernel_listing
from spillway.isa.source_lines import (CODE_DIFFERS, CODE_OBJECT, DEBUG_TWIN, NO_LINE_TABLE, NO_ROWS, NOT_IN_TWIN,
                                       PLACED, ObjectLines, SourceLine, block_starts, branches_of, decoded_kernel,
                                       instruction_lines, kernel_lines, object_lines, read_twin, twin_lines)

DATA = Path(__file__).resolve().parents[2] / "data" / "isa"
LINES = DATA / "lines" / "co"


def table(rows: list[tuple[int, int, int]], base: int = 0x100, comp_dir: str = "/src") -> ObjectLines:
    """One sequence of (address, line, column) rows, the last one its end."""
    addresses = array("Q", [a for a, _l, _c in rows])
    flags = array("B", [IS_STMT] * (len(rows) - 1) + [END_SEQUENCE])
    found = LineTable(0, 5, comp_dir, "k.cpp", (comp_dir,), (SourceFile("k.cpp", comp_dir, 0),),
                      LineRows(addresses, array("I", [l for _a, l, _c in rows]), array("I", [c for _a, _l, c in rows]),
                               array("I", [0] * len(rows)), flags),
                      (Sequence(".text", base, 0, len(rows)),))
    return ObjectLines((found,))


# rows: 0x100 line 10; 0x108 line 0; 0x110 line 12 (zero-length, then) line 0 at the same address; 0x118 line 14;
# end at 0x120.
ROWS = [(0x100, 10, 1), (0x108, 0, 0), (0x110, 12, 5), (0x110, 0, 0), (0x118, 14, 2), (0x120, 14, 2)]


def place(offset: int, block: int = 0, block_end: int | None = None, rows=ROWS) -> tuple[int, int, bool] | None:
    found = table(rows).place(".text", offset, block, block_end)
    return None if found is None else (found.line, found.column, found.inferred)


def test_the_last_row_at_or_before_the_address():
    assert place(0x0) == (10, 1, False) and place(0x4) == (10, 1, False)
    assert place(0x18) == (14, 2, False) and place(0x1c) == (14, 2, False)


def test_line_0_takes_the_nearest_earlier_line_of_its_block():
    assert place(0x8) == (10, 1, True) and place(0xc) == (10, 1, True)
    # 0x110: the line-12 row has no length (the line-0 row has the same address): it places nothing.
    assert place(0x10) == (10, 1, True)
    assert place(0x10, block=0x4) == (10, 1, True)       # 0x4 (line 10) is in the block
    assert place(0x10, block=0x8, block_end=0x18) is None    # the block is all line 0
    assert place(0x14, block=0x10, block_end=0x18) is None


def test_line_0_at_the_start_of_a_block_takes_the_first_later_line_of_its_block():
    # The block starts in the line-0 stretch: the line-14 row after it (the line-12 row has no length).
    assert place(0x10, block=0x8) == (14, 2, True)       # to the sequence's end
    assert place(0x8, block=0x8, block_end=0x20) == (14, 2, True)
    assert place(0x14, block=0x10, block_end=0x1c) == (14, 2, True)
    assert place(0x8, block=0x8, block_end=0x18) is None     # the line-14 row starts the next block
    # A later line never wins over an earlier one of the same block.
    assert place(0x8, block=0x4, block_end=0x20) == (10, 1, True)
    # A table starting with line 0: the kernel's first instructions.
    head = [(0x100, 0, 0), (0x104, 0, 0), (0x10c, 7, 3), (0x110, 8, 1), (0x118, 8, 1)]
    assert [place(o, rows=head) for o in (0x0, 0x4, 0x8, 0xc, 0x10)] == [
        (7, 3, True), (7, 3, True), (7, 3, True), (7, 3, False), (8, 1, False)]
    assert place(0x0, block_end=0xc, rows=head) is None
    assert table([(0x100, 0, 0), (0x110, 0, 0)]).place(".text", 0x4, 0, 0x10) is None


def test_block_ends_reach_place_many():
    lines = table([(0x100, 5, 1), (0x108, 0, 0), (0x110, 6, 2), (0x118, 0, 0), (0x120, 9, 9), (0x128, 9, 9)])
    # Blocks [0, 0x8), [0x8, 0x18) of a kernel of 0x20 bytes, and what follows the kernel (line 9) unused.
    found = lines.place_many(".text", 0, [0x0, 0x8, 0xc, 0x10, 0x18, 0x1c], [0x0, 0x8, 0x18], 0x20)
    assert [(f.line, f.inferred) if f else None for f in found] == [
        (5, False), (6, True), (6, True), (6, False), None, None]
    found = lines.place_many(".text", 0, [0x18], [0x0, 0x8, 0x18], 0x28)
    assert [(f.line, f.inferred) if f else None for f in found] == [(9, True)]


def test_the_row_index_places_as_place_many_does():
    """isa.vector's arrays against the reference loop, on random tables
    (lines 0 in runs, rows of no length, two sequences) and random blocks."""
    np = pytest.importorskip("numpy", reason="a dependency of spillway")
    vector = pytest.importorskip("spillway.isa.vector")
    import random

    generator = random.Random(41)
    inferred_before = inferred_after = 0
    for _round in range(300):
        rows, address = [], 0
        for _n in range(generator.randint(2, 24)):
            rows.append((0x100 + address, generator.choice([0, 0, 0, 3, 4, 5]), generator.randint(0, 3)))
            address += generator.choice([0, 4, 4, 8])
        rows.append((0x100 + address + 4, 0, 0))
        lines = table(rows)
        size = address + 4
        offsets = list(range(0, size, 4))
        blocks = sorted({0} | {generator.randrange(0, size, 4) for _n in range(generator.randint(0, 4))})
        kernel_size = generator.choice([size, size - 4, size + 4]) if size > 4 else size
        expected = lines.place_many(".text", 0, offsets, blocks, kernel_size)
        rows_found, inferred = vector._RowIndex(lines).place(".text", 0, np.array(offsets, np.int64),
                                                             np.array(blocks, np.int64), kernel_size)
        table_rows = lines.tables[0].rows
        ours = [None if r < 0 else (table_rows.line[r], table_rows.column[r], bool(i))
                for r, i in zip(rows_found.tolist(), inferred.tolist())]
        assert ours == [None if e is None else (e.line, e.column, e.inferred) for e in expected], (rows, blocks)
        for offset, found in zip(offsets, expected):
            if found is not None and found.inferred:
                earlier = [o for o in offsets if blocks[[b <= offset for b in blocks].count(True) - 1] <= o < offset
                           and (f := lines.place_many(".text", 0, [o], [0], kernel_size)[0]) and not f.inferred]
                inferred_before += bool(earlier)
                inferred_after += not earlier
    assert inferred_before > 100 and inferred_after > 100, (inferred_before, inferred_after)


def test_no_row_no_line():
    lines = table(ROWS)
    assert lines.place(".text", -4, 0) is None and lines.place(".text", 0x20, 0) is None
    assert lines.place(".data", 0x0, 0) is None
    assert table([(0x100, 0, 0), (0x110, 0, 0)]).place(".text", 0x4, 0) is None
    assert lines.covers(".text", 0x1c, 4) and not lines.covers(".text", 0x20, 4)


def test_blocks_start_at_0_at_branch_targets_and_after_branches():
    assert block_starts([(0x10, 0x4), (0x20, 0x40), (0x30, -8)], 0x40) == [0, 0x4, 0x14, 0x24, 0x34]
    assert block_starts([], 0x10) == [0]


# --- the model on the fixtures ----------------------------------------------------------------

def _kernels(path: Path, target: str):
    data = path.read_bytes()
    section, ranges = kernel_ranges(data, functions=True)
    for found in ranges:
        psb = True if found.private_segment_buffer is None else found.private_segment_buffer
        listing = kernel_listing(section, found.start, found.size, target, psb)
        instructions = decoded_kernel(section, found.start, found.size, target)
        yield found, listing, instructions, section


# gfx1250's spill_in_loop: the one fixture kernel with scratch in a loop outside its innermost loops.
@pytest.mark.parametrize("name, target", [
    ("gfx906.clang22.dwarf5.co", "gfx906"), ("gfx90a.clang22.dwarf4.o", "gfx90a"),
    ("gfx942.clang22.dwarf5.co", "gfx942"), ("gfx1151.clang22.dwarf5.co", "gfx1151"),
    ("gfx1250.clang22.dwarf5.co", "gfx1250")])
def test_the_model_places_the_listing_and_adds_up_to_the_figures(name, target):
    data = (LINES / name).read_bytes()
    lines = object_lines(data)
    placed_kernels = 0
    for found, listing, instructions, _section in _kernels(LINES / name, target):
        model = kernel_lines(listing, branches_of(instructions), lines, found.section, found.start)
        code = listing.code
        assert (model.status, model.lines_from, model.code_sha256) == (PLACED, CODE_OBJECT, code.code_sha256)
        assert model.comp_dir == "/spillway/tests/data/isa"
        every = dict(zip([i.offset for i in instructions],
                         instruction_lines(lines, found.section, found.start, found.size, instructions)))
        for placed in model.scratch + model.agpr_copies:
            assert placed.source == every[placed.instruction.offset]
        for loop in model.loops:
            assert (loop.head, loop.back_branch) == (every[loop.loop.start], every[loop.loop.end])
        rows = model.by_line
        assert sum(r.accesses for r in rows) == code.scratch_loads + code.scratch_stores
        assert sum(r.load_bytes for r in rows) == code.scratch_load_bytes
        assert sum(r.store_bytes for r in rows) == code.scratch_store_bytes
        in_loops = [p.instruction for p in model.scratch if p.instruction.loop_depth]
        assert len(in_loops) == code.scratch_in_loops
        assert sum(r.loop_load_bytes + r.loop_store_bytes for r in rows) == sum(i.bytes or 0 for i in in_loops)
        spans = nesting(sorted(code.loop_spans, key=lambda span: span[1]))[0]
        innermost = [i for i in in_loops if any(low <= i.offset <= high for low, high in spans)]
        assert len(innermost) == code.scratch_in_innermost_loops
        assert sum(r.innermost_load_bytes + r.innermost_store_bytes for r in rows) == \
            sum(i.bytes or 0 for i in innermost)
        assert sum(r.agpr_copies for r in rows) == code.agpr_writes + code.agpr_reads
        assert sum(r.agpr_spill_copies for r in rows) == code.agpr_spill_copies
        assert sum(r.inferred for r in rows) == sum(bool(p.source and p.source.inferred) for p in model.scratch)
        keys = [(r.innermost_load_bytes + r.innermost_store_bytes, r.loop_load_bytes + r.loop_store_bytes,
                 r.load_bytes + r.store_bytes) for r in rows]
        assert keys == sorted(keys, reverse=True)
        placed_kernels += bool(model.scratch)
    assert placed_kernels >= 3


def test_spill_in_loop_on_gfx906():
    """Read by hand against llvm-objdump -d -l: the inner loop's spills sit
    on kernels.cpp:90 and 88 (the statement and the loop inside the
    innermost loop), with some of them line 0 in the table (inferred)."""
    path = LINES / "gfx906.clang22.dwarf5.co"
    lines = object_lines(path.read_bytes())
    found, listing, instructions, _ = next(k for k in _kernels(path, "gfx906") if k[0].name == "spill_in_loop")
    model = kernel_lines(listing, branches_of(instructions), lines, found.section, found.start)
    top = model.by_line[0]
    assert (top.file, top.line) == ("/spillway/tests/data/isa/kernels.cpp", 90)
    assert top.innermost_load_bytes + top.innermost_store_bytes > 0 and top.inferred > 0
    assert [(loop.head.line if loop.head else None, loop.back_branch.line if loop.back_branch else None)
            for loop in model.loops] == [(85, 86), (88, 86)]
    # The outer loop's head is a line-0 stretch at the start of its block: the first line after it (the
    # outer loop's own statement), inferred.
    assert model.loops[0].head is not None and model.loops[0].head.inferred
    assert [(r.file, r.line) for r in model.by_line if not r.line] == [("", 0)]      # unplaced accesses kept


def test_no_line_table_and_no_rows():
    data = (DATA / "co" / "gfx906.clang22.co").read_bytes()
    assert object_lines(data) is None
    found, listing, instructions, _ = next(_kernels(DATA / "co" / "gfx906.clang22.co", "gfx906"))
    assert kernel_lines(listing, branches_of(instructions), None, found.section, found.start).status == NO_LINE_TABLE
    lines = table([(0x100, 1, 0), (0x104, 1, 0)], base=0x100000)
    model = kernel_lines(listing, branches_of(instructions), lines, found.section, found.start)
    assert (model.status, model.scratch, model.by_line) == (NO_ROWS, (), ())


def test_a_debug_twin_gives_its_lines_where_the_code_is_the_same():
    release = DATA / "co" / "gfx906.clang22.co"              # the plain build
    twin = (LINES / "gfx906.clang22.dwarf5.co").read_bytes()
    kernels, lines = read_twin(twin)
    own = object_lines(twin)
    seen = 0
    for found, listing, instructions, _ in _kernels(release, "gfx906"):
        model = twin_lines(listing, branches_of(instructions), found.name, kernels, lines)
        assert (model.status, model.lines_from, model.lines_code_sha256) == (PLACED, DEBUG_TWIN,
                                                                             listing.code.code_sha256)
        twin_kernel = kernels[found.name]
        direct = kernel_lines(listing, branches_of(instructions), own, twin_kernel.section, twin_kernel.start)
        assert (model.scratch, model.loops, model.by_line) == (direct.scratch, direct.loops, direct.by_line)
        seen += bool(model.scratch)
    assert seen


def test_a_debug_twin_whose_code_differs_gives_no_line():
    release = DATA / "co" / "gfx90a.clang19.co"               # clang 19's code against clang 22's twin
    kernels, lines = read_twin((LINES / "gfx90a.clang22.dwarf5.co").read_bytes())
    statuses = {}
    for found, listing, instructions, _ in _kernels(release, "gfx90a"):
        model = twin_lines(listing, branches_of(instructions), found.name, kernels, lines)
        statuses[found.name] = model.status
        if model.status == CODE_DIFFERS:
            assert model.lines_code_sha256 == kernels[found.name].code_sha256 != model.code_sha256
            assert (model.lines_from, model.scratch, model.by_line) == ("", (), ())
    assert statuses["spill_pressure"] == CODE_DIFFERS
    model = twin_lines(listing, branches_of(instructions), "no_such_kernel", kernels, lines)
    assert model.status == NOT_IN_TWIN


def test_skimmed_tables_give_the_same_model():
    path = LINES / "gfx906.clang22.dwarf5.co"
    data = path.read_bytes()
    full = object_lines(data)
    for found, listing, instructions, _ in _kernels(path, "gfx906"):
        if not listing.instructions:
            continue
        skimmed = object_lines(data, [(found.section, found.start, found.start + found.size)])
        assert kernel_lines(listing, branches_of(instructions), skimmed, found.section, found.start) == \
            kernel_lines(listing, branches_of(instructions), full, found.section, found.start)


def test_scratch_roles_and_kinds_survive_placement():
    path = LINES / "gfx90a.clang22.dwarf5.co"
    lines = object_lines(path.read_bytes())
    found, listing, instructions, _ = next(k for k in _kernels(path, "gfx90a") if k[0].name == "agpr_spill")
    model = kernel_lines(listing, branches_of(instructions), lines, found.section, found.start)
    assert model.agpr_copies and all(p.instruction.role == SPILL_COPY_ROLE for p in model.agpr_copies)
    assert all(isinstance(p.source, SourceLine) for p in model.agpr_copies)
    assert all(p.instruction.kind in ("scratch_load", SCRATCH_STORE_KIND) for p in model.scratch)


def test_listings_many_equals_kernel_listing_and_the_branches():
    vector = pytest.importorskip("spillway.isa.vector", reason="numpy (a dependency of spillway)")
    paths = (sorted((DATA / "co").glob("*.co")) + sorted(LINES.iterdir())
             + sorted((DATA / "rare" / "co").glob("*.co")))     # the rare ones: scaled matrix pairs
    for path in paths:
        target = next(part for part in path.name.split(".") if part.startswith("gfx"))
        section, ranges = kernel_ranges(path.read_bytes(), functions=True)
        kernels = [(r.start, r.size, True if r.private_segment_buffer is None else r.private_segment_buffer)
                   for r in ranges]
        decoded = vector.DecodedSection()
        figures = vector.evidence_many(section, kernels, target, keep=decoded)
        assert decoded.arrays is not None
        # every other kernel, so the compact copy puts kernels side by side that were not
        chosen = kernels[::2] + [(0, 6, True), (-8, 8, True)]
        for arrays in (None, decoded):
            found = vector.listings_many(section, chosen, target, figures[::2] + [figures[0]] * 2, arrays)
            for (start, size, psb), (listing, branches), code in zip(chosen, found, figures[::2]):
                assert listing == kernel_listing(section, start, size, target, psb), (path.name, start)
                assert branches == branches_of(decoded_kernel(section, start, size, target)), (path.name, start)
            assert len(found) == len(chosen)


def test_listings_many_reads_a_scaled_pair_by_its_second_half():
    """gfx950's v_mfma_scale_* is two 64-bit halves (v_mfma_ld_scale_b32, then
    the MFMA): its accumulator a[0:3] is in the second's fields, so the copy
    of a2 after it is an accumulator move (the first's bits say otherwise).
    Bytes from llvm-mc-22 -show-encoding -mcpu=gfx950 of
    ``v_mfma_scale_f32_16x16x128_f8f6f4 a[0:3], v[0:7], v[8:15], a[0:3], v16, v17``,
    ``v_accvgpr_read_b32 v0, a2``, ``s_endpgm``."""
    vector = pytest.importorskip("spillway.isa.vector", reason="numpy (a dependency of spillway)")
    code = bytes.fromhex("0000acd310230200" "0088add300110204" "0040d8d302010018" "000081bf")
    kernels = [(0, len(code), False)]
    figures = vector.evidence_many(code, kernels, "gfx950")
    assert (figures[0].instructions, figures[0].agpr_accumulator_moves, figures[0].agpr_spill_copies) == (3, 1, 0)
    (listing, _branches), = vector.listings_many(code, kernels, "gfx950", figures)
    assert listing == kernel_listing(code, 0, len(code), "gfx950", False)
    assert [i.role for i in listing.instructions] == ["", ACCUMULATOR_ROLE]


def test_line_traffic_many_equals_by_line():
    vector = pytest.importorskip("spillway.isa.vector", reason="numpy (a dependency of spillway)")
    compared = inferred = copies = 0
    for path in sorted(LINES.iterdir()):
        target = next(part for part in path.name.split(".") if part.startswith("gfx"))
        data = path.read_bytes()
        section, ranges = kernel_ranges(data, functions=True)
        kernels = [(r.start, r.size, True if r.private_segment_buffer is None else r.private_segment_buffer)
                   for r in ranges]
        decoded = vector.DecodedSection()
        figures = vector.evidence_many(section, kernels, target, keep=decoded)
        lines = object_lines(data)
        found = vector.line_traffic_many(section, kernels, target, figures, decoded, lines,
                                         [r.section for r in ranges])
        for (start, size, psb), traffic, found_range in zip(kernels, found, ranges):
            listing = kernel_listing(section, start, size, target, psb)
            expected = kernel_lines(listing, branches_of(decoded_kernel(section, start, size, target)), lines,
                                    found_range.section, start).by_line
            assert traffic == expected, (path.name, found_range.name)
            compared += len(expected)
            inferred += sum(r.inferred for r in expected)
            copies += sum(r.agpr_copies for r in expected)
    assert compared > 100 and inferred and copies
    assert vector.line_traffic_many(b"", [(0, 4, True)], "gfx906", figures[:1], {}, None, [".text"]) == [()]


def test_the_row_index_keeps_lines_apart_past_65535_files():
    np = pytest.importorskip("numpy", reason="a dependency of spillway")
    vector = pytest.importorskip("spillway.isa.vector")
    lines = table(ROWS)
    many = lines.tables[0]
    files = array("I", [70000, 0, 1, 0, 70000 + 1, 1])
    names = tuple(SourceFile(f"f{i}.cpp", "/src", 0) for i in range(70002))
    wide = LineTable(0, 5, "/src", "k.cpp", ("/src",), names,
                     LineRows(many.rows.address, many.rows.line, many.rows.column, files, many.rows.flags),
                     many.sequences)
    index = vector._RowIndex(ObjectLines((wide,)))
    assert index.by_row
    keys = index.line_keys(np.array([0, 4, 2, -1]))
    assert [index.line_of_key(k) for k in keys.tolist()] == [
        ("/src/f70000.cpp", 10), ("/src/f70001.cpp", 14), ("/src/f1.cpp", 12), ("", 0)]
    narrow = vector._RowIndex(lines)
    assert not narrow.by_row and narrow.line_of_key(int(narrow.line_keys(np.array([2]))[0])) == ("/src/k.cpp", 12)
