"""resources.names.mangled_prefilter: the test spillway code's read puts on
mangled names before demangling them.  It must pass every kernel the FILTER
names (NameFilter on the demangled or short name, or an exact name): held on
every kernel name of the committed fixtures with patterns cut from each
name, and on hand-made cases of what a demangler writes itself."""

from __future__ import annotations

import random
from pathlib import Path

import pytest

from spillway.report.code_kernels import matching
from spillway.report.reader import ReadOptions, read_report
from spillway.resources.names import mangled_prefilter, short_name
from support.name_patterns import check_names

DATA = Path(__file__).resolve().parents[2] / "data"


def _kernel_names() -> list[str]:
    """Every kernel name of the committed binaries (most are plain C names: the ROCm libraries' templated
    ones are held in tests/oracle/test_mangled_prefilter_rocm.py)."""
    names: set[str] = set()
    for path in sorted(DATA.rglob("*")):
        if not path.is_file() or path.stat().st_size > 50 << 20:
            continue
        try:
            document = read_report([str(path)], ReadOptions())
        except Exception:          # (not a binary spillway reads on its own)
            continue
        names.update(k["symbol"] for k in document["kernels"])
    return sorted(names)


def test_every_pattern_that_names_a_fixture_kernel_passes_its_mangled_name():
    names = _kernel_names()
    assert len(names) > 100
    check_names(names, random.Random(41))


@pytest.mark.parametrize("pattern, mangled", [
    # words the demangler writes from abbreviations and builtin types
    ("std::allocator<char>", "_Z1fSaIcE"),
    ("basic_string<char", "_Z1fSs"),
    ("(anonymous namespace)::kern", "_ZN12_GLOBAL__N_14kernEv"),
    ("{lambda()#1}", "_ZZ4mainENKUlvE_clEv"),
    ("unsigned long", "_Z1fm"),
    ("operator()", "_ZN1AclEv"),
    ("ator", "_Z1fSaIcE"),              # part of "allocator", cut by a substring's edge
])
def test_what_a_demangler_writes_itself_is_never_relied_on(pattern, mangled):
    test = mangled_prefilter(pattern)
    assert test is None or test(mangled), (pattern, test)


def test_the_longest_identifier_is_tested_case_insensitively():
    test = mangled_prefilter("void rocsparse::coommnn_atomic_main<256u, 32u>(bool)")
    assert test is not None
    assert test("_ZN9rocsparse19coommnn_atomic_mainILj256ELj32EEvb")
    assert not test("_ZN9rocsparse14other_kernel_xILj256ELj32EEvb")
    assert mangled_prefilter("COOMMNN_ATOMIC")("_ZN9rocsparse19coommnn_atomic_mainEv")
    assert mangled_prefilter("*") is None and mangled_prefilter("int") is None and mangled_prefilter("k") is None


def test_matching_and_the_prefilter_agree_on_a_fixture(tmp_path):
    """A read with the prefilter keeps every kernel the pattern names, and counts the others in its file."""
    path = DATA / "isa" / "lines" / "co" / "gfx90a.clang22.dwarf5.co"
    whole = read_report([str(path)], ReadOptions())
    for kernel in whole["kernels"]:
        pattern = short_name(kernel["name"])
        test = mangled_prefilter(pattern)
        assert test is not None
        read = read_report([str(path)], ReadOptions(kernel_prefilter=test))
        assert matching(list(read["kernels"]), pattern) == matching(list(whole["kernels"]), pattern)
        assert len(read["kernels"]) < len(whole["kernels"])
        assert read["files"] == whole["files"]            # the kernels left out still counted


def test_spillway_code_reads_whole_when_the_prefiltered_read_names_nothing(monkeypatch, capsys):
    """A prefilter that left the kernel out (it must not, but a demangler may write a word the list lacks)
    costs a second read, not a wrong "no kernel matches"."""
    import spillway.resources.names as names
    from spillway.cli import main

    path = DATA / "isa" / "lines" / "co" / "gfx90a.clang22.dwarf5.co"
    monkeypatch.setattr(names, "mangled_prefilter", lambda pattern: (lambda mangled: False))
    assert main(["code", str(path), "spill_in_loop"]) == 0
    assert "kernel spill_in_loop" in capsys.readouterr().out
    assert main(["code", str(path), "no_such_kernel"]) == 2
    assert "(of 16 kernels read)" in capsys.readouterr().err
