"""spillway.isa.vector (numpy boundaries) equals the reference decoder: on
every kernel of the ISA fixtures and on noise cut into ranges with ragged
ends, for every family."""

from __future__ import annotations

import json
import random
from pathlib import Path

import pytest

# numpy: a dependency of spillway (report --isa); the plain-Python reference needs none.
np = pytest.importorskip("numpy", reason="pip install numpy (a dependency of spillway)")

from spillway.isa import kernel_ranges, vector  # noqa: E402
from spillway.isa.decoder import DecodeError, decode, family_of, load_family  # noqa: E402
from spillway.isa.encodings import FAMILIES  # noqa: E402

DATA = Path(__file__).resolve().parents[2] / "data" / "isa"
# kernels.cpp's fixtures, then rare.cpp's (tests/data/isa/rare: GDS, exports, scaled matrix pairs ...)
SETS = (DATA, DATA / "rare")


def fixtures():
    """(path, recorded oracle figures) of every committed fixture."""
    for folder in SETS:
        for name, recorded in json.loads((folder / "expected.json").read_text())["fixtures"].items():
            yield folder / "co" / name, recorded


def reference(code: bytes, start: int, size: int, name: str) -> tuple[list[int], int | None]:
    offsets: list[int] = []
    try:
        for instruction in decode(code, start, start + size, load_family(name)):
            offsets.append(instruction.offset - start)
    except DecodeError as stop:
        return offsets, stop.offset - start
    return offsets, None


def test_fixtures_equal_the_reference():
    checked = 0
    for path, recorded in fixtures():
        name = path.name
        code, kernels = kernel_ranges(path.read_bytes())
        family = family_of(recorded["target"])
        found = vector.boundaries(code, [(k.start, k.size) for k in kernels], family)
        for kernel, (offsets, stop) in zip(kernels, found):
            assert (offsets.tolist(), stop) == reference(bytes(code), kernel.start, kernel.size, family), \
                f"{name} {kernel.name}"
            checked += len(offsets)
    assert checked > 10000


@pytest.mark.parametrize("name", sorted(FAMILIES))
def test_noise_equals_the_reference(name):
    rng = random.Random(name)
    for _trial in range(20):
        # Random words mixed with s_nop, v_mov_b32 and VOP1 with a literal source.
        literal_vop1 = rng.getrandbits(32) & 0xFE0001FF | 0x7E0000FF
        words = [rng.choice([rng.getrandbits(32), 0xBF800000, 0x7E020280, literal_vop1]) for _ in range(64)]
        code = b"".join(w.to_bytes(4, "little") for w in words)
        cuts = sorted(rng.sample(range(65), 9))
        ranges = [(4 * a, max(0, 4 * (b - a) - rng.choice([0, 0, 0, 2]))) for a, b in zip(cuts, cuts[1:])]
        for (start, size), (offsets, stop) in zip(ranges, vector.boundaries(code, ranges, name)):
            assert (offsets.tolist(), stop) == reference(code, start, size, name)


def test_overlapping_or_unaligned_ranges_are_refused():
    code = bytes(64)
    with pytest.raises(ValueError):
        vector.boundaries(code, [(0, 32), (16, 16)], "gfx9")
    with pytest.raises(ValueError):
        vector.boundaries(code, [(2, 8)], "gfx9")


def test_evidence_many_equals_evidence_on_the_fixtures():
    from spillway.isa import evidence

    mubuf_scratch = 0
    for path, recorded in fixtures():
        name = path.name
        code, kernels = kernel_ranges(path.read_bytes())
        target = recorded["target"]
        batch = [(k.start, k.size, bool(k.private_segment_buffer)) for k in kernels]
        found = vector.evidence_many(code, batch, target)
        assert found == [evidence(code, start, size, target, psb) for start, size, psb in batch], name
        if target == "gfx906":
            mubuf_scratch += sum(f.scratch_loads + f.scratch_stores for f in found)
    assert mubuf_scratch > 0           # the MUBUF path (entry block, srsrc) was exercised


def test_evidence_many_with_bad_ranges():
    from spillway.isa import evidence

    code = bytes.fromhex("000080bf" "000081bf")     # s_nop 0; s_endpgm
    batch = [(0, 8, False), (0, 0, False), (4, 8, False), (2, 4, False), (4, 4, True)]
    assert vector.evidence_many(code, batch, "gfx900") == [evidence(code, s, n, "gfx900", p) for s, n, p in batch]
    assert vector.evidence_many(code, batch[:1], "gfx600")[0].status == "no decoder for target gfx600"


def test_evidence_many_equals_evidence_on_the_derived_figures():
    """The numpy path's slot/addressed split, AGPR split (matrix ops, copies,
    v_accvgpr_mov) and loop nesting equal the reference, on the fixtures'
    kernels that have each (counted here so the comparison is not empty) and
    on the synthetic kernels of test_derived.py."""
    from spillway.isa import evidence

    import test_derived as synthetic   # beside this file (pytest puts its folder on sys.path)

    seen = {"addressed": 0, "moves": 0, "spill_copies": 0, "innermost": 0}
    for path, recorded in fixtures():
        name = path.name
        code, kernels = kernel_ranges(path.read_bytes())
        batch = [(k.start, k.size, bool(k.private_segment_buffer)) for k in kernels]
        for found, (start, size, psb) in zip(vector.evidence_many(code, batch, recorded["target"]), batch):
            assert found == evidence(code, start, size, recorded["target"], psb), name
            seen["addressed"] += found.scratch_addressed_load_bytes > 0
            seen["moves"] += found.agpr_accumulator_moves > 0
            seen["spill_copies"] += found.agpr_spill_copies > 0 and found.matrix_ops > 0
            seen["innermost"] += found.scratch_in_innermost_loops > 0
    assert all(seen.values()), seen
    codes = [(synthetic.ACC_WRITE_A0_0 + synthetic.MFMA_ACC + synthetic.ACC_READ_V1_A7 + synthetic.ACC_WRITE_A20_V1
              + synthetic.ACC_MOV_A16_A0 + synthetic.ACC_READ_V2_A16 + synthetic.ENDPGM_GFX9, "gfx90a")]
    codes += [(bytes(raw) + (synthetic.ENDPGM_GFX9 if t.startswith("gfx9") else synthetic.ENDPGM_GFX11), t)
              for t, raw, _a, _l in synthetic.ACCESSES]
    for code, target in codes:
        assert vector.evidence_many(code, [(0, len(code), True)], target) == \
            [evidence(code, 0, len(code), target, True)], target


def test_pairs_equal_the_reference():
    """Two instructions llvm-objdump reads as one (gfx950's v_mfma_ld_scale_b32
    + MFMA, gfx1250's scaled WMMA): the numpy path joins them as decode()
    does, and their matrix op counts once; a prefix alone stays alone."""
    from spillway.isa import evidence

    import test_decoder as cases      # beside this file

    nop = bytes([0x00, 0x00, 0x80, 0xbf])
    for target, _assembly, encoding, _mnemonic in cases.RARE[-3:]:
        pair = bytes(encoding)
        end = bytes([0x00, 0x00, 0x81, 0xbf]) if target == "gfx950" else bytes([0x00, 0x00, 0xb0, 0xbf])
        code = pair + nop + pair[:8] + nop + pair + end
        name = family_of(target)
        (offsets, stop), = vector.boundaries(code, [(0, len(code))], name)
        assert (offsets.tolist(), stop) == reference(code, 0, len(code), name)
        assert offsets.tolist() == [0, 16, 20, 28, 32, 48]
        found = vector.evidence_many(code, [(0, len(code), False)], target)
        assert found == [evidence(code, 0, len(code), target, False)]
        # two pairs and the lone prefix (v_mfma_ld_scale_b32, v_wmma_ld_scale_paired_b32: matrix ops by name)
        assert found[0].instructions == 6 and found[0].matrix_ops == 3
        # a range that ends inside the pair's second half (or right after the first): no pair there
        for cut in (8, 12):
            (offsets, stop), = vector.boundaries(code, [(0, cut)], name)
            assert (offsets.tolist(), stop) == reference(code, 0, cut, name)
            assert vector.evidence_many(code, [(0, cut, False)], target) == [evidence(code, 0, cut, target, False)]


@pytest.mark.parametrize("name", sorted(FAMILIES))
def test_evidence_many_equals_evidence_on_noise_with_branches(name):
    """Words with many short branches (back and forth, onto themselves, out of
    the kernel, into an instruction's middle), cut into kernels with ragged
    ends, some given twice (overlapping slices): evidence_many's figures
    from the arrays (loop spans, innermost loops, nesting, reported
    branches) equal evidence()'s, kernel by kernel."""
    from spillway.isa import evidence
    from spillway.isa.encodings import PROCESSOR_FAMILY

    processor = next(p for p, family in PROCESSOR_FAMILY.items() if family == name)
    sopp = {opcode.mnemonic: key for entries in load_family(name).by_top_byte for encoding, table in entries
            if encoding.name == "SOPP" for key, opcode in table.items()}
    branches = [sopp[m] for m in ("s_branch", "s_cbranch_scc0", "s_cbranch_vccnz") if m in sopp]
    assert branches, name
    rng = random.Random(f"branches {name}")
    seen = {"loops": 0, "nested": 0, "complete": 0, "reported": 0}
    for trial in range(30):
        literal_vop1 = rng.getrandbits(32) & 0xFE0001FF | 0x7E0000FF
        # Odd trials: one-dword instructions and branches only (kernels that decode whole).
        others = [0xBF800000, 0x7E020280] if trial % 2 else [rng.getrandbits(32), 0xBF800000, 0x7E020280,
                                                            literal_vop1]
        words = [rng.choice([0xBF800000 | rng.choice(branches) << 16 | (rng.randint(-10, 6) & 0xFFFF)] * 2
                            + others * 2) for _ in range(96)]
        code = b"".join(w.to_bytes(4, "little") for w in words)
        cuts = sorted(rng.sample(range(97), 7))
        batch = [(4 * a, max(0, 4 * (b - a) - rng.choice([0, 0, 0, 0, 2])), rng.random() < 0.5)
                 for a, b in zip(cuts, cuts[1:])]
        if trial % 3 == 0:
            batch.append(batch[0])
        found = vector.evidence_many(code, batch, processor)
        assert found == [evidence(code, start, size, processor, psb) for start, size, psb in batch], trial
        seen["loops"] += sum(f.loops > 0 for f in found)
        seen["nested"] += sum(f.loop_depth_max > 1 for f in found)
        seen["complete"] += sum(f.status == "complete" and f.loops > 0 for f in found)
        seen["reported"] += sum(f.status.startswith("branch") for f in found)
    assert all(seen.values()), seen


def test_peeling_reaches_what_pointer_doubling_reaches():
    """_reached (peeling off the dwords nothing reaches) equals pointer
    doubling on random forward chains, on a long chain no start reaches (past
    the peeling's rounds, where doubling takes over) and with no start."""
    rng = np.random.default_rng(37)
    for trial in range(200):
        count = int(rng.integers(1, 400))
        step = rng.integers(1, 4, count)
        chain = np.arange(count) + step
        chain[(chain > count) | (rng.random(count) < 0.05)] = count        # ends: invalid, past the range
        first = np.zeros(count + 1, bool)
        first[rng.integers(0, count, int(rng.integers(0, 4)))] = True
        if trial % 10 == 0:            # a start only at the end: the chain before it is peeled round by round
            chain = np.minimum(np.arange(count) + 1, count)
            first[:] = False
            first[count - 1] = True
        assert (vector._reached(chain, first) == vector._reached_by_doubling(chain, first)).all(), trial
