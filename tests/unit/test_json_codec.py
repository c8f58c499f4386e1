"""spillway.json_codec: the one place JSON is encoded (and, but for report
JSON's own readers, decoded).  Its two encoders write the same bytes for the
same values; paths that are not UTF-8 come back byte for byte; and no other
module of the package encodes JSON itself, so a change to escaping is made
in one module."""

from __future__ import annotations

import ast
import json
import os
from pathlib import Path

import orjson
from hypothesis import given, settings
from hypothesis import strategies as st

from spillway import json_codec
from spillway.untrusted import json_log_safe

PACKAGE = Path(__file__).resolve().parents[2] / "checker" / "spillway"
# Text with what the escapes care about: controls, quotes, backslashes, non-ASCII, and the
# lone surrogates of undecodable path bytes.
TEXT = st.text(st.characters(codec=None, exclude_categories=("Cs",)) | st.sampled_from(
    ['"', "\\", "\n", "\x00", "\x1f", "\x7f", "\x85", "\u2028", "\u202e", "#", "[", "\udc80", "\udcff"]),
    max_size=12)
VALUES = st.none() | st.booleans() | st.integers(-2**63, 2**63 - 1) | TEXT
Layout = json_codec.record_layout("Layout", ["file", "size", "name", "flag"])


@given(values=st.tuples(TEXT, VALUES, TEXT, VALUES))
def test_a_record_is_written_as_dumps_writes_the_same_object(values):
    expected = json_codec.dumps(dict(zip(Layout.__struct_fields__, values)))
    assert json_codec.encode_record(Layout(*values)) == expected
    assert json_codec.loads(expected) == dict(zip(Layout.__struct_fields__, values))


@settings(max_examples=60)
@given(value=st.recursive(VALUES, lambda inner: st.lists(inner, max_size=3)
                          | st.dictionaries(TEXT, inner, max_size=3), max_leaves=8))
def test_indented_output_is_orjsons_or_the_standard_librarys_layout(value):
    text = json_codec.dumps(value, indent=True)
    assert json_codec.loads(text) == value
    # (json_log_safe: ##[ and C1/bidi characters as \uXXXX escapes, the same document once parsed)
    try:
        assert text == json_log_safe(orjson.dumps(value, option=orjson.OPT_INDENT_2))
    except TypeError:       # lone surrogates: the standard library's layout, the same for the rest
        assert text == json_log_safe(json.dumps(value, indent=2, ensure_ascii=False).encode("utf-8",
                                                                                            "backslashreplace"))


def test_a_path_that_is_not_utf8_comes_back_byte_for_byte():
    raw = b"/opt/lib\xff\xfe/k\x80.so"
    path = os.fsdecode(raw)
    for text in (json_codec.dumps({"file": path}), json_codec.encode_record(Layout(path, 1, "k", None)),
                 json_codec.dumps([path], indent=True)):
        assert b"\\udcff" in text
        found = json_codec.loads(text)
        assert os.fsencode(found["file"] if isinstance(found, dict) else found[0]) == raw
        assert os.fsencode(json.loads(text)["file"] if isinstance(found, dict) else json.loads(text)[0]) == raw


def test_sorted_keys_as_the_standard_library_sorts_them():
    document = {"b": {"z": 1, "a": [2, {"y": 0, "x": 1}]}, "a": "é", "A": None}
    assert json_codec.dumps(document, indent=True, sort_keys=True) == \
        json.dumps(document, indent=2, sort_keys=True, ensure_ascii=False).encode()


def _imported_modules(path: Path) -> set[str]:
    found: set[str] = set()
    text = path.read_text()
    if "json" not in text:
        return found
    for node in ast.walk(ast.parse(text, str(path))):
        if isinstance(node, ast.Import):
            found.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module and not node.level:
            found.add(node.module)
            found.update(f"{node.module}.{alias.name}" for alias in node.names)
    return found


# report_input reads report JSON of any layout with ijson, and a head's members in pairs
# with the standard library's json (object_pairs_hook): reading only, nothing is written.
READS_ON_ITS_OWN = {"report/report_input.py": {"json"}}


def test_no_other_module_encodes_or_decodes_json_itself():
    codecs = {"orjson", "json", "msgspec.json", "ujson", "simplejson", "rapidjson"}
    found = {}
    for path in sorted(PACKAGE.rglob("*.py")):
        name = str(path.relative_to(PACKAGE))
        if name == "json_codec.py":
            continue
        modules = _imported_modules(path)
        imported = modules & codecs
        if "msgspec" in modules and "msgspec.json" in path.read_text():
            imported.add("msgspec.json")
        imported -= READS_ON_ITS_OWN.get(name, set())
        if imported:
            found[name] = sorted(imported)
    assert found == {}, f"JSON encoded or decoded outside spillway.json_codec: {found}"
