"""The text of `matrix history` holds a kernel name from the binary to one visible line of at most
untrusted.LINE_STRING_LIMIT characters, as every other line output does."""

from spillway.matrix.history import FrontendInfo, HistoryDocument, KernelHistory, ReleaseColumn
from spillway.render.history import history_text
from spillway.untrusted import LINE_STRING_LIMIT

HOSTILE = "\x1b]8;;https://example.invalid\x07k" + "<" * 3000 + "\nsecond line"


def _document(kernel: str) -> HistoryDocument:
    column = ReleaseColumn(release="7.2.2", package="p", version="1", sha256="0" * 64, llvm_version="22",
                           commit="c", status="built", builds=0)
    return HistoryDocument(frontend=FrontendInfo(cxx="clang++-22", version="22.1", targets=["gfx90a"], why="w"),
                           occupancy_model="llvm22", targets=["gfx90a"], dropped_targets={}, releases=[column],
                           kernels=[KernelHistory(kernel=kernel, symbol="_Z1kv", target="gfx90a", unit="k.hip",
                                                  figures={"7.2.2": None})])


def test_a_hostile_kernel_name_is_one_visible_line_cut_to_the_limit():
    text = history_text(_document(HOSTILE))
    name_line = next(line for line in text.splitlines() if "gfx90a  (k.hip)" in line)
    assert "\x1b" not in text and "\x07" not in text
    assert "second line" not in text                      # cut before it: 3,000 characters precede it
    assert LINE_STRING_LIMIT < len(name_line) < LINE_STRING_LIMIT + 200, len(name_line)


def test_an_ordinary_name_is_shown_whole():
    assert "k(int)  gfx90a  (k.hip)" in history_text(_document("k(int)"))
