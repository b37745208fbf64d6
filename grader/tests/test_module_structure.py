"""How the grader's modules depend on each other: no import circle, commands that import no other
command and that no library module imports, and modules short enough to read (docs/architecture.md)."""

import ast
from pathlib import Path

import pytest

PACKAGE = Path(__file__).resolve().parents[1] / "kernellab"
MAX_LINES = 400


def module_name(path: Path) -> str:
    parts = path.relative_to(PACKAGE.parent).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


MODULES = {module_name(path): path for path in sorted(PACKAGE.rglob("*.py")) if "templates" not in path.parts}


def imports_of(module: str) -> set[str]:
    """The kernellab modules `module` imports, wherever in it (a function's import counts too):
    `from kernellab.grading import reference` imports the module kernellab.grading.reference."""
    tree = ast.parse(MODULES[module].read_text(encoding="utf-8"))
    found = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            found |= {alias.name for alias in node.names}
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            found |= {f"{node.module}.{alias.name}" if f"{node.module}.{alias.name}" in MODULES else node.module
                      for alias in node.names}
    return {name for name in found if name in MODULES and name != module}


GRAPH = {module: imports_of(module) for module in MODULES}


def find_circle(graph: dict[str, set[str]]) -> list[str] | None:
    """One import circle as the list of its modules, the first repeated at the end; None without."""
    state: dict[str, str] = {}  # "open" while its imports are being walked, then "done"
    path: list[str] = []

    def walk(module: str) -> list[str] | None:
        state[module] = "open"
        path.append(module)
        for imported in sorted(graph[module]):
            if state.get(imported) == "open":
                return path[path.index(imported):] + [imported]
            if imported not in state and (circle := walk(imported)):
                return circle
        path.pop()
        state[module] = "done"
        return None

    for module in sorted(graph):
        if module not in state and (circle := walk(module)):
            return circle
    return None


def test_the_walk_finds_a_circle_and_only_a_circle():
    assert find_circle({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}) == ["a", "b", "c", "a"]
    assert find_circle({"a": {"b", "c"}, "b": {"c"}, "c": set()}) is None
    assert "kernellab.grading.reference" in GRAPH["kernellab.grading.groups"]


def test_no_module_imports_itself_through_others():
    circle = find_circle(GRAPH)
    assert circle is None, "import circle: " + " -> ".join(circle or [])


@pytest.mark.parametrize("command", sorted(name for name in MODULES if name.startswith("kernellab.commands.")))
def test_a_command_imports_no_other_command(command):
    assert not {name for name in GRAPH[command] if name.startswith("kernellab.commands")}, command


def test_no_library_module_imports_a_command():
    libraries = [name for name in MODULES if not name.startswith("kernellab.commands") and name != "kernellab.cli"
                 and name != "kernellab.student"]
    offenders = {name: sorted(GRAPH[name]) for name in libraries if any(i.startswith("kernellab.commands") for i in GRAPH[name])}
    assert not offenders


@pytest.mark.parametrize("module", sorted(MODULES))
def test_no_module_is_longer_than_the_limit(module):
    lines = len(MODULES[module].read_text(encoding="utf-8").splitlines())
    assert lines <= MAX_LINES, f"{MODULES[module]}: {lines} lines"
