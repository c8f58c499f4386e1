"""resources.names.mangled_prefilter on the templated names of a real
library: every pattern cut from each of librocsparse1 7.2.4's kernel names
(the full and short demangled names, substrings in any case, globs) that
names the kernel passes its mangled name, so spillway code's prefiltered
read keeps every kernel its FILTER names."""

from __future__ import annotations

import random

import pytest

from spillway.report.reader import ReadOptions, read_report
from support.rocm_packages import locate
from support.name_patterns import check_names

pytestmark = pytest.mark.oracle


def test_every_pattern_cut_from_a_rocm_kernel_name_passes_its_mangled_name():
    library = locate("librocsparse1-7.2.4").host_library()
    names = sorted({k["symbol"] for k in read_report([str(library)], ReadOptions(targets=["gfx90a"]))["kernels"]})
    assert len(names) > 10000 and all(name.startswith("_Z") for name in names[:10])
    chooser = random.Random(7)
    check_names(chooser.sample(names, 2500), chooser, least=30000)
