"""The forms whose registers sit in extra dwords (issue 40 item 1) on real
code: librocsparse1 7.2.4 (Debian's ROCm, unpacked by the set-up under the
fixture cache, never committed) holds SDWA compares writing an SGPR (SD
set: ``v_cmp_gt_u32_sdwa s[4:5], ...``) in 63 kernels of each GFX9 and
GFX10 target -- "partial: operands not read" until they were read.  The
first code object holding one, per target, is held to llvm-objdump: every
instruction's defs and uses to the operand oracle's, and every kernel
using the form complete, with the liveness oracle's pressure at every
instruction and peaks within the compiler's counts.  (No VOP3 DPP or MIMG NSA form occurs in its or librocblas5's
gfx10/gfx11/gfx12 code: tests/data/isa/forms/ holds those.)"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from spillway.formats import codeobject
from spillway.formats.containers import PendingImages, ScanResult, expand, scan_path
from spillway.isa import decoder, operands as isa_operands
from spillway.isa.evidence import kernel_ranges
from spillway.isa.liveness import kernel_pressure
from spillway.report.reader import ReadOptions
from support import isa_oracle, liveness_oracle, operand_oracle
from support.rocm_packages import locate
from test_isa_operands import compare

pytestmark = pytest.mark.oracle


def _sdwa_compare_writing_an_sgpr(table, family, code: memoryview, start: int, size: int) -> bool:
    for instruction in decoder.decode(code, start, start + size, family):
        if (instruction.encoding == "VOPC" and instruction.mnemonic.endswith("_sdwa")
                and (instruction.bits >> 47) & 1):
            return True
    return False


def _first_code_object_with_the_form(library: Path, target: str, work: Path) -> tuple[Path, list[str]]:
    """The first code object of ``target`` in ``library`` with a kernel using
    an SDWA compare with SD set, written to ``work``, and those kernels."""
    options = ReadOptions(targets=[target])
    name = decoder.family_of(target)
    assert name
    family, table = decoder.load_family(name), isa_operands.load_operands(name)
    for unit in scan_path(str(library), options.scan_options(options.budget())).images:
        for image in expand(unit, ScanResult()) if isinstance(unit, PendingImages) else (unit,):
            if codeobject.parse(image.payload).target_id.split(":")[0] != target:
                continue
            code, ranges = kernel_ranges(image.payload)
            using = [r.name for r in ranges if _sdwa_compare_writing_an_sgpr(table, family, code, r.start, r.size)]
            if using:
                path = work / f"{target}.co"
                path.write_bytes(bytes(image.payload))
                return path, using
    pytest.fail(f"no {target} code object of {library} uses an SDWA compare writing an SGPR")


@pytest.mark.parametrize("target", ["gfx906", "gfx1030"])
def test_sdwa_compares_writing_an_sgpr_in_rocsparse_equal_objdump(target, tmp_path):
    package = locate("librocsparse1-7.2.4")
    path, using = _first_code_object_with_the_form(package.host_library(), target, tmp_path)
    wrong, unanswered, agreed = compare(path, {"target": target})
    assert agreed > 0 and not wrong, {m: v[:2] for m, v in wrong.items()}
    assert not [m for m in unanswered if m.endswith("_sdwa")], unanswered

    argv = operand_oracle.table_objdump(target)
    ok, text = isa_oracle.run_objdump(argv, path)
    assert ok, text[:300]
    rodata = subprocess.run([*argv, "-D", "-j", ".rodata", str(path)], capture_output=True, text=True).stdout
    dump = subprocess.run([*argv, "-s", "-j", ".rodata", str(path)], capture_output=True, text=True).stdout
    functions, entries = liveness_oracle.functions(text), liveness_oracle.entry_registers(rodata, dump)
    report = subprocess.run([sys.executable, "-m", "spillway", "report", "--all", "--json", str(path)],
                            capture_output=True, text=True, check=True)
    records = {k["symbol"].removesuffix(".kd"): k for k in json.loads(report.stdout)["kernels"]}
    code, ranges = kernel_ranges(path.read_bytes())
    problems = []
    for kernel in (r for r in ranges if r.name in using):
        found = kernel_pressure(code, kernel.start, kernel.size, target, kernel.entry, steps=True)
        assert found.complete, (kernel.name, found.status)
        problems += liveness_oracle.disagreements(functions[kernel.name], entries.get(kernel.name), found, kernel.name)
        record = records[kernel.name]
        problems += [f"{kernel.name}: {why}" for why in liveness_oracle.peaks_within_counts(found, record)]
    assert not problems, problems[:10]
