"""`spillway report`: selection, sorting, filters, JSON against its schema."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import jsonschema
import pytest

from spillway.cli import main
from spillway.report.record import Report, json_schema
from spillway.schemas import SCHEMAS, published_name, schema_for
from support.formats_fixtures import FORMATS, SECOND

REPO = Path(__file__).resolve().parents[3]


@pytest.fixture(scope="module")
def library(builder):
    objects = [builder.hip(22, FORMATS, ["gfx90a", "gfx1151"]), builder.hip(22, SECOND, ["gfx90a", "gfx1151"])]
    return builder.link(22, objects, "libengine.so", "-shared")


def cli(capsys, *args) -> tuple[int, str, str]:
    status = main(list(args))
    out, err = capsys.readouterr()
    return status, out, err


def test_default_lists_only_kernels_using_scratch(capsys, library):
    status, out, _ = cli(capsys, "report", str(library))
    assert status == 0
    assert "private_table" in out and "scale" not in out and "axpy" not in out
    assert "2 kernels using scratch of 8 kernels read" in out


def test_all_filter_target_and_sort(capsys, library):
    status, out, _ = cli(capsys, "report", "--all", "--target", "gfx1151", "--sort", "name", str(library))
    assert status == 0
    rows = [line for line in out.splitlines() if "gfx" in line]
    assert len(rows) == 4 and all("gfx1151" in row for row in rows)
    names = [row.split()[0] for row in rows]
    assert names == sorted(names) and len(names) == 4
    status, out, _ = cli(capsys, "report", "--all", str(library), "reduce_kernel")
    assert "reduce_kernel" in out and "axpy" not in out
    assert "matching 'reduce_kernel'" in out
    status, out, _ = cli(capsys, "report", "--all", str(library), "*scale<*")
    assert "scale<64>" in out and "reduce_kernel" not in out


def test_json_document_is_versioned_and_valid(capsys, library, tmp_path):
    output = tmp_path / "report.json"
    status, _, _ = cli(capsys, "report", "--json", "-o", str(output), str(library))
    assert status == 0
    document = json.loads(output.read_text())
    assert document["schema"] == "spillway.report/6"
    jsonschema.validate(document, json_schema())
    Report.model_validate(document)
    assert len(document["kernels"]) == 8  # JSON keeps every kernel
    record = document["kernels"][0]
    # (isa: only with --isa)
    assert [*record, "isa"] == list(Report.model_fields["kernels"].annotation.__args__[0].model_fields)


@pytest.mark.parametrize("name", sorted(SCHEMAS))
def test_published_schemas_match_the_models(name):
    file = published_name(name)
    committed = json.loads((REPO / "docs" / "schemas" / file).read_text())
    assert committed == schema_for(name), f"regenerate with: spillway schema {name} --force -o docs/schemas/{file}"


def test_schema_rejects_a_wrong_document(library):
    document = {"schema": "spillway.report/6", "spillway_version": "0", "files": [],
                "kernels": [{"file": "x", "vgpr_count": "many"}]}
    with pytest.raises(jsonschema.ValidationError):
        jsonschema.validate(document, json_schema())


def test_piped_output_has_no_progress_or_colour(library):
    result = subprocess.run([sys.executable, "-m", "spillway", "report", "--all", str(library)],
                            capture_output=True, text=True)
    assert result.returncode == 0
    assert result.stderr == ""
    assert "\x1b[" not in result.stdout


def test_console_script_entry_point(library):
    result = subprocess.run(["spillway", "report", str(library)], capture_output=True, text=True)
    assert result.returncode == 0 and "private_table" in result.stdout


def test_report_does_not_load_the_validation_or_matrix_modules(library, tmp_path):
    """`spillway report` pays no import of pydantic or the matrix (half a
    second on these machines, on every CI run); only its JSON is written."""
    probe = ("import sys; from spillway.cli import main; "
             f"status = main(['report', '--all', '--json', '-o', {str(tmp_path / 'r.json')!r}, {str(library)!r}]); "
             "heavy = sorted(m for m in sys.modules if m.split('.')[0] == 'pydantic' or m == 'spillway.matrix'); "
             "print(heavy); sys.exit(status)")
    result = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True)
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip() == "[]"
    assert json.loads((tmp_path / "r.json").read_text())["kernels"]
