"""JSON documents written in pieces (json_codec.document_chunks): the same JSON
as the whole document, one record per line, for compare's large documents."""

from __future__ import annotations

import json

from hypothesis import given
from hypothesis import strategies as st

from spillway.json_codec import document_chunks, dumps

INT64 = st.integers(-2**63, 2**63 - 1)          # what orjson writes
records = st.lists(st.dictionaries(st.text(max_size=5), INT64 | st.text(max_size=8) | st.none(), max_size=3),
                   max_size=7)


@given(head=st.dictionaries(st.text(max_size=6), INT64 | st.text(max_size=6), max_size=4),
       lists=st.dictionaries(st.text(min_size=1, max_size=6), records, max_size=3),
       per_chunk=st.integers(1, 4))
def test_the_pieces_make_the_whole_document(head, lists, per_chunk):
    lists = {k: v for k, v in lists.items() if k not in head}
    text = b"".join(document_chunks(head, {k: iter(v) for k, v in lists.items()}, per_chunk))
    assert json.loads(text) == dict(head, **lists)


def test_one_record_per_line_after_a_pretty_head():
    rows = [{"a": i} for i in range(3)]
    text = b"".join(document_chunks({"schema": "x/1", "n": 3}, {"kernels": iter(rows), "added": iter([])}, 2))
    assert text.decode().splitlines() == ['{', '  "schema": "x/1",', '  "n": 3,', '  "kernels": [',
                                          '    {"a":0},', '    {"a":1},', '    {"a":2}', '  ],',
                                          '  "added": []', '}']


def test_paths_that_are_not_utf8_are_escaped_as_in_whole_documents():
    path = b"/tmp/\xff.so".decode("utf-8", "surrogateescape")
    text = b"".join(document_chunks({"new": [path]}, {"kernels": iter([{"file": path}])}))
    assert b"\\udcff" in text and json.loads(text) == json.loads(dumps({"new": [path], "kernels": [{"file": path}]}))


def test_records_are_made_while_writing():
    made = []

    def lazily():
        for i in range(5000):
            made.append(i)
            yield {"i": i}

    pieces = document_chunks({}, {"kernels": lazily()}, per_chunk=1000)
    next(pieces)
    assert len(made) == 1000          # the first thousand, not all five thousand
    assert json.loads(b"".join([b'{\n  "kernels": [\n' + b",\n".join(b'    {"i":%d}' % i for i in range(1000))]
                               + list(pieces)))["kernels"][-1] == {"i": 4999}
