"""The HTML pages' front-coded name list (report.html.front_code), decoded as
the page's script decodes it."""

from __future__ import annotations

from hypothesis import given, strategies as st

from spillway.render.html import Names, front_code, front_decode


def test_shared_prefixes_are_coded_once():
    names = ["rocsparse::csrmv<float, 256>", "rocsparse::csrmv<double, 256>", "rocsparse::bsrmv<float>"]
    coded = front_code(sorted(names))
    assert coded == [[0, "rocsparse::bsrmv<float>"], [11, "csrmv<double, 256>"], [17, "float, 256>"]]
    assert front_decode(coded) == sorted(names)


def test_rows_are_renumbered_to_the_sorted_list():
    names = Names()
    rows = [["x", names("zeta")], ["y", names("alpha")], ["z", names("zeta")]]
    coded = names.coded(rows, 1)
    decoded = front_decode(coded)
    assert [decoded[r[1]] for r in rows] == ["zeta", "alpha", "zeta"]


def test_a_surrogate_pair_is_never_split():
    # U+1F600 and U+1F601 share their high surrogate: JavaScript's slice would cut the pair.
    coded = front_code(["k\U0001F600", "k\U0001F601"])
    assert coded[1][0] == 1
    assert front_decode(coded) == ["k\U0001F600", "k\U0001F601"]


@given(st.lists(st.text(), unique=True))
def test_any_names_round_trip(names):
    ordered = sorted(names)
    coded = front_code(ordered)
    assert front_decode(coded) == ordered
    # what JavaScript does: slice in UTF-16 code units
    previous: list[int] = []
    for (shared, suffix), name in zip(coded, ordered):
        units = list(memoryview(suffix.encode("utf-16-le")).cast("H"))
        previous = previous[:shared] + units
        assert b"".join(u.to_bytes(2, "little") for u in previous).decode("utf-16-le") == name
