"""Lines where the table says 0 (issue 41 item 2), on libraries built by
others: Debian's librocsparse1 7.2.4 (experimental) and 6.4.3 (sid, full
-g), a few code objects of each (the whole libraries take minutes).

Every instruction of every function of those code objects gets the line,
column and ``inferred`` flag tests/support/lines_oracle.py works out from
``llvm-dwarfdump-22 --debug-line``'s rows and ``llvm-objdump-22 -d``'s
instructions: for a line-0 instruction with no earlier line in its basic
block, the first row after it with a line (and a length) in the same block;
and the file and line objdump -l shows at that row's instruction.  Some
instructions, loop heads among them, take a line that way (without issue
41 they had none).  report --isa's per-line figures, placed with arrays
(isa.vector.line_traffic_many), are the per-kernel model's on them."""

from __future__ import annotations

from bisect import bisect_left
from pathlib import Path

import pytest

from spillway.formats.containers import PendingImages, expand, scan_path
from spillway.isa import vector
from spillway.isa.evidence import kernel_ranges
from spillway.isa.listing import kernel_listing
from spillway.isa.source_lines import branches_of, decoded_kernel, instruction_lines, kernel_lines, object_lines
from support import isa_oracle, lines_oracle
from support.rocm_packages import locate

pytestmark = pytest.mark.oracle

# (package, target, smallest size in KB): the first code object of that target from that size to twice it:
# 7.2.4's first bundle and its fifth (2 MB), 6.4.3's second.
SAMPLES = [("librocsparse1-7.2.4", "gfx90a", 200), ("librocsparse1-7.2.4", "gfx1100", 200),
           ("librocsparse1-7.2.4", "gfx942", 1500), ("librocsparse1-6.4.3", "gfx1030", 200)]


def _code_object(package: str, target: str, smallest: int) -> bytes:
    library = locate(package).host_library()
    result = scan_path(str(library))
    for image in result.images:
        for found in expand(image, result) if isinstance(image, PendingImages) else [image]:
            payload = found.payload() if callable(found.payload) else found.payload
            if str(found.entry_id).rsplit("-", 1)[-1] == target and smallest * 1000 < len(payload) < smallest * 2000:
                return bytes(payload)
    raise AssertionError(f"{package}: no {target} code object of {smallest}-{2 * smallest} KB")


@pytest.mark.parametrize("package,target,smallest", SAMPLES, ids=[f"{p}-{t}" for p, t, _s in SAMPLES])
def test_inferred_lines_are_the_first_row_after_them_in_their_block(tmp_path, package, target, smallest):
    data = _code_object(package, target, smallest)
    path = tmp_path / f"{target}.co"
    path.write_bytes(data)
    argv = isa_oracle.llvm_tool("llvm-objdump", 22)
    if argv is None:
        pytest.skip("llvm-objdump-22 is not installed")
    shown = lines_oracle.objdump_lines(argv, path)
    by_address = {found.insn.address: found for found in shown}
    insns = [s.insn for s in shown]
    addresses = [insn.address for insn in insns]
    sequences = lines_oracle.sequences(lines_oracle.dwarfdump_rows(path)[0])
    functions = {f.name: f for f in isa_oracle.read_functions(path)}
    section, ranges = kernel_ranges(data, functions=True)
    lines = object_lines(data)
    assert lines is not None
    compared = after = heads_after = 0
    for found in ranges:
        function = functions[found.name]
        low, high = function.start, function.start + function.size
        mine = insns[bisect_left(addresses, low):bisect_left(addresses, high)]
        # (the oracle's lookups walk every sequence: give it those meeting the function)
        near = [rows for rows in sequences if rows[0].address < high and rows[-1].address > low]
        expected = lines_oracle.expected_lines(near, mine, low, high)
        instructions = decoded_kernel(section, found.start, found.size, target)
        assert [low + i.offset for i in instructions] == list(expected), found.name
        placed = instruction_lines(lines, found.section, found.start, found.size, instructions)
        for instruction, ours in zip(instructions, placed):
            address = low + instruction.offset
            theirs = expected[address]
            if theirs is None:
                assert ours is None, (found.name, hex(address))
                continue
            assert ours is not None and (ours.line, ours.column, ours.inferred) == \
                (theirs.line, theirs.column, theirs.inferred), (found.name, hex(address), ours, theirs)
            origin = by_address[address if theirs.source < address else theirs.source]
            assert (ours.file, ours.line) == (origin.path, origin.line), (found.name, hex(address))
            compared += 1
            after += theirs.source > address
        if function.kind == "kernel" and instructions:
            psb = True if found.private_segment_buffer is None else found.private_segment_buffer
            listing = kernel_listing(section, found.start, found.size, target, psb)
            model = kernel_lines(listing, branches_of(instructions), lines, found.section, found.start)
            for loop in model.loops:
                theirs = expected[low + loop.loop.start]
                head = (loop.head.line, loop.head.inferred) if loop.head else None
                assert head == ((theirs.line, theirs.inferred) if theirs else None), (found.name, loop.loop.start)
                heads_after += bool(theirs and theirs.source > low + loop.loop.start)
    # report --isa's per-line figures (the arrays' placement, isa.vector) are the model's on these kernels too.
    kernels = [(r.start, r.size, True if r.private_segment_buffer is None else r.private_segment_buffer)
               for r in ranges]
    decoded = vector.DecodedSection()
    figures = vector.evidence_many(section, kernels, target, keep=decoded)
    traffic = vector.line_traffic_many(section, kernels, target, figures, decoded, lines, [r.section for r in ranges])
    for (start, size, psb), found_traffic, found in zip(kernels, traffic, ranges):
        listing = kernel_listing(section, start, size, target, psb)
        assert found_traffic == kernel_lines(listing, branches_of(decoded_kernel(section, start, size, target)),
                                             lines, found.section, start).by_line, found.name
    print(f"{package} {target}: {compared} instructions with a line, {after} of them from a row after them, "
          f"{heads_after} loop heads")
    assert compared > 5_000 and after > 100 and heads_after > 0, (compared, after, heads_after)
