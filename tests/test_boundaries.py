"""Private means private, and no module of sanctum imports itself back through others.

A module or a name that starts with one underscore (``wards._paths``, ``_jsonable``)
belongs to the package that holds it: that package's own modules and subpackages may
import it, no other package may. The import-linter contracts in pyproject.toml enforce the layers;
these two checks cover what a layers contract cannot see.
"""

from __future__ import annotations

import ast
from pathlib import Path

import grimp

SANCTUM = Path(__file__).resolve().parent.parent / "sanctum"

# Today's crossings, as (importing package, private module). This list only shrinks:
# fix one by making the name public where it lives (or by moving the code), then delete
# its line; the test fails until you do, and fails on any new crossing.
ALLOWED: set[tuple[str, str]] = {
    ("sanctum.api", "sanctum.codex._serial"),
    ("sanctum.grimoire", "sanctum.oracle._mend"),
    ("sanctum.tracing", "sanctum.wards._jsonable"),
    ("sanctum.tracing", "sanctum.wards._paths"),
}


def _package(module: str) -> str:
    return ".".join(module.split(".")[:2])  # sanctum.ritual.loop -> sanctum.ritual


def _module_name(path: Path) -> tuple[str, bool]:
    parts = list(path.relative_to(SANCTUM.parent).with_suffix("").parts)
    is_package = parts[-1] == "__init__"
    return ".".join(parts[:-1] if is_package else parts), is_package


def _imports(path: Path) -> list[tuple[str, str]]:
    """``(importer, imported dotted name)`` for each name an import statement binds."""
    importer, is_package = _module_name(path)
    here = importer if is_package else importer.rpartition(".")[0]
    found = []
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            found += [(importer, alias.name) for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            base = here.rsplit(".", node.level - 1)[0] if node.level else ""
            source = ".".join(part for part in (base, node.module or "") if part)
            found += [(importer, f"{source}.{alias.name}") for alias in node.names]
    return found


def _crossings() -> set[tuple[str, str]]:
    crossings = set()
    for path in sorted(SANCTUM.rglob("*.py")):
        for importer, imported in _imports(path):
            parts = imported.split(".")
            if parts[0] != "sanctum":
                continue
            for index, part in enumerate(parts):
                holder = parts[:index]  # a module's private name belongs to its package
                is_module = SANCTUM.parent.joinpath(*holder).with_suffix(".py").is_file()
                owner = ".".join(holder[:-1] if is_module else holder)
                private = part.startswith("_") and not part.startswith("__")
                if private and importer != owner and not importer.startswith(owner + "."):
                    crossings.add((importer, ".".join(parts[: index + 1])))
                    break
    return crossings


def test_no_package_imports_another_package_s_private_module_or_name() -> None:
    crossings = _crossings()
    known = {(_package(importer), private) for importer, private in crossings}
    new = sorted(pair for pair in crossings if (_package(pair[0]), pair[1]) not in ALLOWED)
    assert not new, "private imports across packages:\n" + "\n".join(
        f"  {importer} imports {private}" for importer, private in new
    )
    assert not ALLOWED - known, f"fixed, so delete from ALLOWED: {sorted(ALLOWED - known)}"


def test_no_import_cycle_between_modules_of_sanctum() -> None:
    # Lazy imports inside functions count (they hide a cycle, they do not remove it);
    # imports under TYPE_CHECKING do not (they never run).
    graph = grimp.build_graph("sanctum", cache_dir=None, exclude_type_checking_imports=True)
    cycles: dict[frozenset[str], str] = {}
    for module in sorted(graph.modules):
        for imported in graph.find_modules_directly_imported_by(module):
            back = graph.find_shortest_chain(importer=imported, imported=module)
            if back is not None:
                cycles.setdefault(frozenset(back), " -> ".join((module, *back)))
    assert not cycles, "import cycles:\n" + "\n".join(sorted(cycles.values()))
