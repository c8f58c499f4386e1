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
