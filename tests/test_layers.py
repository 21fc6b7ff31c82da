"""The layers of docs/architecture.md hold: no import runs up a layer and no module imports
one that imports it back, counting the imports inside functions too."""

from __future__ import annotations

import ast
import collections
from collections.abc import Iterator
from pathlib import Path

PACKAGE = Path(__file__).resolve().parents[1] / "coursetutor"

# bottom to top: a package may import its own layer's packages and those below, never above
LAYERS: tuple[tuple[str, ...], ...] = (
    ("errors",),
    ("types", "config"),
    ("scoring",),  # pure maths: imports nothing of coursetutor
    ("store",),
    ("retrieval", "llm"),
    ("ingest",),
    ("memory",),
    ("workspace",),
    ("live", "lti"),
    ("tutor", "tasks"),
    ("health",),
    ("api",),
    ("cli", "eval", "dev"),
    ("__main__",),
)
RANK = {name: i for i, names in enumerate(LAYERS) for name in names}
FACADE_USERS = RANK["api"]  # the root package's facade (`coursetutor/__init__.py`) is for these
SKIP = ("sample_course",)  # scripts that build the sample course's files


def _module(path: Path) -> str:
    parts = list(path.relative_to(PACKAGE.parent).with_suffix("").parts)
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def _sources() -> Iterator[tuple[Path, str]]:
    for path in sorted(PACKAGE.rglob("*.py")):
        if not any(part in SKIP for part in path.parts):
            yield path, _module(path)


MODULES = {name for _, name in _sources()}


def _imports(path: Path, module: str) -> Iterator[tuple[int, str]]:
    """Every coursetutor module `path` imports (line, name), inside functions as well."""
    package = module if path.name == "__init__.py" else module.rsplit(".", 1)[0]
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            for alias in node.names:
                if alias.name.split(".")[0] == "coursetutor":
                    yield node.lineno, alias.name
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = package.split(".")[:len(package.split(".")) - node.level + 1]
                target = ".".join([*base, *([node.module] if node.module else [])])
            elif (node.module or "").split(".")[0] == "coursetutor":
                target = node.module or ""
            else:
                continue
            subs = [f"{target}.{a.name}" for a in node.names if f"{target}.{a.name}" in MODULES]
            for name in subs if len(subs) == len(node.names) else [target, *subs]:
                yield node.lineno, name


def _layer(module: str) -> str:
    """The layer name of a module: its top-level package or root module (`coursetutor.x`)."""
    parts = module.split(".")
    return parts[1] if len(parts) > 1 else ""  # "": the root package, coursetutor/__init__.py


def test_the_import_graph_is_read() -> None:
    """The checks below see the real tree: its modules and the imports between them."""
    edges = {(module, target) for path, module in _sources()
             for _, target in _imports(path, module)}
    assert len(MODULES) > 100
    assert ("coursetutor.tutor.turn", "coursetutor.tutor.pipeline") in edges
    assert ("coursetutor.cli", "coursetutor.cli.group") in edges


def test_every_package_has_a_layer() -> None:
    unknown = sorted({_layer(m) for m in MODULES} - set(RANK) - {""})
    assert not unknown, f"add these to LAYERS here and in docs/architecture.md: {unknown}"


def test_no_import_runs_up_a_layer() -> None:
    upward = []
    for path, module in _sources():
        source = _layer(module)
        if source in ("", "__main__"):
            continue
        for line, target in _imports(path, module):
            to = _layer(target)
            if to == source:
                continue
            if (to == "" and RANK[source] < FACADE_USERS) or (to and RANK[to] > RANK[source]):
                upward.append(f"{path.relative_to(PACKAGE.parent)}:{line} {source} imports "
                              f"{target} ({to or 'the package facade'})")
    assert not upward, "imports that run up a layer:\n" + "\n".join(upward)


def test_scoring_imports_nothing_of_the_project() -> None:
    found = [f"{path.name}:{line} {target}" for path, module in _sources()
             if _layer(module) == "scoring" for line, target in _imports(path, module)
             if _layer(target) != "scoring"]
    assert not found, found


def test_no_import_circle() -> None:
    edges: dict[str, set[str]] = collections.defaultdict(set)
    for path, module in _sources():
        edges[module] |= {t for _, t in _imports(path, module) if t in MODULES and t != module}
    circles = [sorted(c) for c in _components(edges) if len(c) > 1]
    assert not circles, "modules that import each other (directly or around a circle):\n" + (
        "\n".join(" <-> ".join(c) for c in circles))


def _components(edges: dict[str, set[str]]) -> list[list[str]]:
    """Strongly connected components (Tarjan), iteratively."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[list[str]] = []
    for start in sorted(MODULES):
        if start in index:
            continue
        work = [(start, iter(sorted(edges[start])))]
        index[start] = low[start] = len(index)
        stack.append(start)
        on_stack.add(start)
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
                found.append(component)
    return found
