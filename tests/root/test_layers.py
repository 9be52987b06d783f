"""The package's layers, written once: no module imports from a layer above its own, and no cycles."""

from __future__ import annotations

import ast
from pathlib import Path

import novel_agent

# Lowest first. A module may import from its own layer and the layers before it.
# The root modules (errors, files, paths, storage, crashpoints) are the floor.
# models/ sits under story/: a model is given the story through its request (Request.context),
# never by importing it.
LAYERS = ["", "text", "config", "models", "story", "history", "audit", "context", "index", "tick",
          "books", "revision", "reports", "daemon", "fleet", "web", "cli"]

PACKAGE = Path(novel_agent.__file__).parent


def module_name(path: Path) -> str:
    """`novel_agent.story.scenes` for novel_agent/story/scenes.py."""
    parts = list(path.relative_to(PACKAGE.parent).with_suffix("").parts)
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def layer_of(module: str) -> str:
    """The layer a module lives in: its first subpackage, or "" for the root modules."""
    parts = module.split(".")
    return parts[1] if len(parts) > 2 or (len(parts) == 2 and (PACKAGE / parts[1]).is_dir()) else ""


def is_module(name: str) -> bool:
    """Whether `name` is a module or package of novel_agent (not a name inside one)."""
    path = PACKAGE.parent.joinpath(*name.split("."))
    return path.with_suffix(".py").is_file() or (path / "__init__.py").is_file()


def imports_of(path: Path) -> set[str]:
    """Every novel_agent module `path` imports, lazily or not."""
    found = set()
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.ImportFrom) and node.module and node.module.startswith("novel_agent"):
            assert node.level == 0, f"{path}: relative import"
            submodules = {f"{node.module}.{a.name}" for a in node.names
                          if is_module(f"{node.module}.{a.name}")}
            found |= submodules or {node.module}
        elif isinstance(node, ast.Import):
            found |= {a.name for a in node.names if a.name.startswith("novel_agent")}
    return found


def graph() -> dict[str, set[str]]:
    return {module_name(p): imports_of(p) for p in PACKAGE.rglob("*.py")}


def test_every_layer_is_known():
    dirs = {p.name for p in PACKAGE.iterdir() if p.is_dir() and (p / "__init__.py").exists()}
    assert dirs <= set(LAYERS), f"a subpackage with no layer: {sorted(dirs - set(LAYERS))}"


def test_no_module_imports_from_a_layer_above_its_own():
    rank = {name: i for i, name in enumerate(LAYERS)}
    upward = [f"{module} ({layer_of(module) or 'root'}) imports {target} ({layer_of(target)})"
              for module, targets in graph().items() for target in targets
              if target != "novel_agent" and rank[layer_of(target)] > rank[layer_of(module)]]
    assert upward == []


def test_no_import_cycles_between_modules():
    edges = graph()
    cycles = []

    def visit(node, stack, done):
        if node in stack:
            cycles.append(stack[stack.index(node):] + [node])
            return
        if node in done:
            return
        for nxt in sorted(edges.get(node, ())):
            if nxt in edges and nxt != node and edges[node] is not None:
                visit(nxt, stack + [node], done)
        done.add(node)

    done: set[str] = set()
    for start in sorted(edges):
        visit(start, [], done)
    assert cycles == []
