"""DWARF line tables of a library built by others: Debian's librocsparse1
6.4.3 (sid) ships its device code with full debug information (clang 21,
-g) in SHF_COMPRESSED (zlib) debug sections.  Every row spillway reads from
a few of its code objects is what ``llvm-dwarfdump-22 --debug-line`` prints
from the same bytes, with the compile units' DW_AT_comp_dir."""

from __future__ import annotations

import pytest

from spillway.formats.containers import scan_path
from spillway.formats.dwarf_lines import read_lines
from support import lines_oracle
from support.rocm_packages import locate

pytestmark = pytest.mark.oracle

# One code object of each of these targets, from different bundles.
TARGETS = ("gfx803", "gfx90a", "gfx1100")


@pytest.fixture(scope="module")
def code_objects(tmp_path_factory) -> dict[str, bytes]:
    library = locate("librocsparse1-6.4.3").host_library()
    found: dict[str, bytes] = {}
    for image in scan_path(str(library)).images:
        payload = image.payload() if callable(image.payload) else image.payload
        target = str(image.entry_id).rsplit("-", 1)[-1]
        # (a code object of some size: the first bundles hold small ones)
        if target in TARGETS and target not in found and len(payload) > 200_000 \
                and image.bundle_index not in {i for i, _ in found.values()}:
            found[target] = (image.bundle_index, bytes(payload))
        if len(found) == len(TARGETS):
            break
    assert sorted(found) == sorted(TARGETS)
    return {target: data for target, (_bundle, data) in found.items()}


@pytest.mark.parametrize("target", TARGETS)
def test_compressed_line_tables_of_a_debian_library(code_objects, target, tmp_path):
    data = code_objects[target]
    path = tmp_path / f"{target}.co"
    path.write_bytes(data)
    theirs, versions = lines_oracle.dwarfdump_rows(path)
    tables = read_lines(data)
    ours = [lines_oracle.Row(*row) for table in tables
            for row in zip(table.rows.address, table.rows.line, table.rows.column, table.rows.file, table.rows.flags)]
    assert len(theirs) > 1000 and ours == theirs
    assert [table.version for table in tables] == versions
    assert [table.comp_dir for table in tables] == lines_oracle.comp_dirs(path)
