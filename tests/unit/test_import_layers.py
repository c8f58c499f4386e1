"""The package's modules import each other one way (issue 24): no import
cycle, and no module imports a later stage.

Stages, in order: the helpers every stage uses, then resources, formats, isa,
report, gate, matrix, render (every output format of every command's model,
issue 33), cli; a module may import its own stage and earlier ones.

- helpers (before every stage): ``spillway/__init__`` (the version),
  ``errors``, ``constants``, ``atomic`` (atomic writes), ``paths`` (opening
  inputs), ``json_codec`` (JSON in and out), ``untrusted`` (text from binaries
  made safe per sink): they name no stage's concepts and import none;
- ``schemas`` (the published JSON schemas of the documents of report, gate and
  matrix, by module name) sits with the matrix, the last stage it names;
- ``launch`` and ``__main__`` (the console script's entry) are the command line.

Every import counts, at module level or inside a function (an import put off
for start-up time is still a dependency), and under ``if TYPE_CHECKING``.  A
stage folder not listed (``isa``, the instruction decoder, before it lands) is
simply absent; a new top-level module or folder must be given its place here.
"""

from __future__ import annotations

import ast
from pathlib import Path

PACKAGE = Path(__file__).resolve().parents[2] / "checker" / "spillway"
STAGES = ("helpers", "resources", "formats", "isa", "report", "gate", "matrix", "render", "cli")
TOP_LEVEL = {
    "spillway": "helpers", "spillway.errors": "helpers", "spillway.constants": "helpers",
    "spillway.atomic": "helpers", "spillway.paths": "helpers", "spillway.untrusted": "helpers",
    "spillway.json_codec": "helpers",
    "spillway.schemas": "matrix",
    "spillway.launch": "cli", "spillway.__main__": "cli",
}


def module_names() -> dict[str, Path]:
    modules = {}
    for path in sorted(PACKAGE.rglob("*.py")):
        parts = ("spillway", *path.relative_to(PACKAGE).with_suffix("").parts)
        if parts[-1] == "__init__":
            parts = parts[:-1]
        modules[".".join(parts)] = path
    return modules


def stage_of(module: str) -> str:
    parts = module.split(".")
    if len(parts) > 2 or (len(parts) == 2 and parts[1] in STAGES):
        assert parts[1] in STAGES, f"{module}: spillway/{parts[1]}/ is not a stage: give it its place in STAGES"
        return parts[1]
    assert module in TOP_LEVEL, f"{module}: a top-level module without a stage: give it its place in TOP_LEVEL"
    return TOP_LEVEL[module]


def imports_of(module: str, path: Path, modules: dict[str, Path]) -> set[str]:
    """The package's modules this one imports (a name imported from a package
    that is itself a module counts as that module)."""
    package = module if path.name == "__init__.py" else module.rsplit(".", 1)[0]
    found = set()
    for node in ast.walk(ast.parse(path.read_text(), str(path))):
        if isinstance(node, ast.Import):
            found.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = package.split(".")
                base = base[:len(base) - node.level + 1]
                source = ".".join(base + ([node.module] if node.module else []))
            else:
                source = node.module or ""
            found.add(source)
            found.update(f"{source}.{alias.name}" for alias in node.names)
    return {name for name in found if name in modules and name != module}


def graph() -> dict[str, set[str]]:
    modules = module_names()
    return {module: imports_of(module, path, modules) for module, path in modules.items()}


def test_every_module_has_a_stage_and_imports_no_later_one():
    edges = graph()
    assert len(edges) > 50 and "spillway.gate.check" in edges
    later = []
    for module, imported in edges.items():
        rank = STAGES.index(stage_of(module))
        for other in imported:
            if STAGES.index(stage_of(other)) > rank:
                later.append(f"{module} ({stage_of(module)}) imports {other} ({stage_of(other)})")
    assert not later, "imports of a later stage:\n" + "\n".join(sorted(later))


def cycles(edges: dict[str, set[str]]) -> list[list[str]]:
    """The strongly connected components of more than one module, and modules
    that import themselves (Tarjan's algorithm, iterative)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found = []
    for root in sorted(edges):
        if root in index:
            continue
        work = [(root, iter(sorted(edges[root])))]
        index[root] = low[root] = len(index)
        stack.append(root)
        on_stack.add(root)
        while work:
            node, children = work[-1]
            child = next(children, None)
            if child is not None:
                if child not in index:
                    index[child] = low[child] = len(index)
                    stack.append(child)
                    on_stack.add(child)
                    work.append((child, iter(sorted(edges[child]))))
                elif child in on_stack:
                    low[node] = min(low[node], index[child])
                continue
            work.pop()
            if work:
                low[work[-1][0]] = min(low[work[-1][0]], low[node])
            if low[node] == index[node]:
                component = []
                while True:
                    member = stack.pop()
                    on_stack.discard(member)
                    component.append(member)
                    if member == node:
                        break
                if len(component) > 1:
                    found.append(sorted(component))
    return found


def test_no_import_cycle():
    found = cycles(graph())
    assert not found, "import cycles:\n" + "\n".join(" <-> ".join(c) for c in found)


def test_the_checks_see_a_cycle_and_a_later_stage():
    """The two rules on made-up graphs: they can fail."""
    assert cycles({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}) == [["a", "b", "c"]]
    assert cycles({"a": {"b"}, "b": set()}) == []
    assert stage_of("spillway.cli.check") == "cli" and stage_of("spillway.paths") == "helpers"
    assert STAGES.index(stage_of("spillway.gate.check")) > STAGES.index(stage_of("spillway.report.reader"))
    assert STAGES.index("isa") < STAGES.index("report")


# -- the render contract (issue 38): renderers read no input and write only through emit; the command
# line builds models and never picks what to compute by format ------------------------------------------

RENDER = PACKAGE / "render"
CLI = PACKAGE / "cli"
# What reads an input binary, a report or a baseline (formats.containers, report.reader, report.kernel_code,
# isa.source_lines, gate.reading, gate.baseline, gate.failure_code, gate.source_location, report.library_lines).
READERS = {"scan_path", "read_report", "report_json", "write_report_json", "each_kernel_code", "object_lines",
           "evidence_of_kernels", "decoded_evidence", "printed_rows_evidence", "read_sources", "read_path",
           "read_baseline", "load_baseline", "library_lines", "failure_locations", "failing_code", "expand",
           "read_inputs", "sniff_json"}
# What writes a file or a stream's bytes: only render/emit.py does (atomically, or standard output's buffer).
WRITERS = {"atomic", "write_bytes", "write_text", "write_chunks", "write_with", "buffer", "GITHUB_STEP_SUMMARY"}


def names_used(tree: ast.AST) -> list[tuple[int, str]]:
    """Every name, attribute, imported name and string constant in ``tree``, with its line."""
    found = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Name):
            found.append((node.lineno, node.id))
        elif isinstance(node, ast.Attribute):
            found.append((node.lineno, node.attr))
        elif isinstance(node, (ast.Import, ast.ImportFrom)):
            found += [(node.lineno, alias.name.rsplit(".", 1)[-1]) for alias in node.names]
            if isinstance(node, ast.ImportFrom) and node.module:
                found.append((node.lineno, node.module.rsplit(".", 1)[-1]))
        elif isinstance(node, ast.Constant) and isinstance(node.value, str):
            found.append((node.lineno, node.value))
    return found


def opens(tree: ast.AST, lines_written: list[int] | None = None) -> list[int]:
    """Lines calling open() to read, or a path's read_bytes/read_text not on the package's own
    assets (importlib.resources.files(...)); ``lines_written`` gets those calling open() to write."""
    lines: list[int] = []
    lines_written = [] if lines_written is None else lines_written
    for node in ast.walk(tree):
        if not isinstance(node, ast.Call):
            continue
        func = node.func
        if isinstance(func, ast.Name) and func.id == "open":
            mode = node.args[1] if len(node.args) > 1 else next((k.value for k in node.keywords if k.arg == "mode"),
                                                                None)
            writes = isinstance(mode, ast.Constant) and any(c in str(mode.value) for c in "wax")
            if not writes:        # (opened to write: the writers' rule below)
                lines.append(node.lineno)
            else:
                lines_written.append(node.lineno)
        elif isinstance(func, ast.Attribute) and func.attr in ("read_bytes", "read_text", "open"):
            if "resources.files" not in ast.unparse(func.value):
                lines.append(node.lineno)
    return lines


def render_contract_breaches(modules: dict[str, str]) -> list[str]:
    """``modules``: name -> source of render/ modules."""
    out = []
    for name, source in sorted(modules.items()):
        tree = ast.parse(source)
        used = names_used(tree)
        out += [f"render/{name}:{line} calls a reader: {word}" for line, word in used if word in READERS]
        written: list[int] = []
        out += [f"render/{name}:{line} reads a file" for line in opens(tree, written)]
        if name != "emit.py":
            out += [f"render/{name}:{line} writes ({word}): only render/emit.py writes" for line, word in used
                    if word in WRITERS]
            out += [f"render/{name}:{line} opens a file to write: only render/emit.py writes" for line in written]
    return out


def test_render_reads_no_input_and_writes_only_through_emit():
    modules = {path.name: path.read_text() for path in sorted(RENDER.glob("*.py"))}
    assert "emit.py" in modules and "table.py" in modules
    breaches = render_contract_breaches(modules)
    assert not breaches, "\n".join(breaches)


def test_the_render_contract_can_fail():
    assert render_contract_breaches({"table.py": "def f(paths, o):\n    return each_kernel_code(paths, o)\n"})
    assert render_contract_breaches({"sarif.py": "def f(m):\n    return m.resolve(x).read_bytes()\n"})
    assert render_contract_breaches({"github.py": "import os\nos.environ['GITHUB_STEP_SUMMARY']\n"})
    assert render_contract_breaches({"junit.py": "from spillway import atomic\n"})
    assert render_contract_breaches({"github.py": "with open(path, 'ab') as f:\n    pass\n"})
    assert not render_contract_breaches({"html.py": "resources.files('spillway.render').joinpath('a').read_text()\n",
                                         "emit.py": "from spillway import atomic\nopen(p, 'ab')\n"})


# The options that name an output's format in the command line (cli/output.py reads them once: chosen_format).
FORMAT_NAMES = {"fmt", "format", "chosen"}
# What the command line computes and hands to emit: never changed once made (dataclasses.replace).
RESULTS = {"result", "model", "options", "comparison", "summary", "inputs", "document", "checks", "check", "usage"}


def cli_contract_breaches(modules: dict[str, str]) -> list[str]:
    """A format branch (a comparison of the chosen format with anything) or an attribute set on
    a result (RESULTS: what a command computes and hands to emit)."""
    out = []
    for name, source in sorted(modules.items()):
        if name == "output.py":          # (where the format is chosen: chosen_format)
            continue
        for node in ast.walk(ast.parse(source)):
            if isinstance(node, ast.Compare):
                sides = [node.left, *node.comparators]
                if any(isinstance(s, ast.Name) and s.id in FORMAT_NAMES
                       or isinstance(s, ast.Attribute) and s.attr == "format" for s in sides):
                    out.append(f"cli/{name}:{node.lineno} branches on the format: {ast.unparse(node)}")
            targets = node.targets if isinstance(node, ast.Assign) else \
                [node.target] if isinstance(node, (ast.AugAssign, ast.AnnAssign)) else []
            for target in targets:
                if isinstance(target, ast.Attribute) and isinstance(target.value, ast.Name) and \
                        target.value.id in RESULTS:
                    out.append(f"cli/{name}:{node.lineno} sets an attribute: {ast.unparse(target)}")
    return out


def test_the_command_line_has_no_format_branch_and_sets_no_attribute_on_a_result():
    modules = {path.name: path.read_text() for path in sorted(CLI.glob("*.py"))}
    assert "check.py" in modules and "matrix.py" in modules
    breaches = cli_contract_breaches(modules)
    assert not breaches, "\n".join(breaches)


def test_the_command_line_contract_can_fail():
    assert cli_contract_breaches({"check.py": "if fmt in ('json', 'sarif'):\n    pass\n"})
    assert cli_contract_breaches({"check.py": "result.sources = {}\n"})
    assert cli_contract_breaches({"report.py": "x = [] if args.format == 'json' else y\n"})
    assert cli_contract_breaches({"matrix.py": "result.required = True\n"})
    assert not cli_contract_breaches({"output.py": "if asked is None:\n    pass\n",
                                      "check.py": "args.paths.extend(x)\nself.total = 1\nparser.required = True\n"})


def test_read_options_are_frozen():
    import dataclasses

    import pytest

    from spillway.report.reader import ReadOptions

    options = ReadOptions()
    with pytest.raises(dataclasses.FrozenInstanceError):
        options.isa = True          # type: ignore[misc]
    assert dataclasses.replace(options, isa=True).isa and not options.isa
