"""sanctum installs under a distribution name of its own, and every install hint uses it.

``sanctum`` on PyPI is an unrelated package (an AWS Cognito client): advice such as
``pip install 'sanctum[llamacpp]'`` would install that instead. The import name and the
command stay ``sanctum``.
"""

from __future__ import annotations

import re
import subprocess
import sys
import tomllib
from pathlib import Path

from sanctum.__about__ import __distribution__

ROOT = Path(__file__).resolve().parents[1]
_HINT = re.compile(r"pip install (?:-e )?['\"]?([A-Za-z0-9_.-]+)\[")
_SHIPPED = ("README.md", "CHANGELOG.md", "docs", "rituals", "sanctum", "examples", "scripts")


def _shipped_text_files() -> list[Path]:
    files: list[Path] = []
    for name in _SHIPPED:
        path = ROOT / name
        if path.is_file():
            files.append(path)
        elif path.is_dir():
            files += [
                p for p in path.rglob("*") if p.suffix in {".py", ".md", ".yaml", ".sh", ".toml"}
            ]
    return files


def test_the_distribution_name_is_not_the_unrelated_pypi_package() -> None:
    project = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["project"]
    assert project["name"] == __distribution__ == "sanctum-rituals"
    assert project["scripts"] == {"sanctum": "sanctum.cli.entry:main"}


def test_every_install_hint_names_the_distribution() -> None:
    wrong: list[str] = []
    for path in _shipped_text_files():
        for lineno, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
            for name in _HINT.findall(line):
                if name not in (__distribution__, "."):
                    wrong.append(f"{path.relative_to(ROOT)}:{lineno}: {line.strip()}")
    assert wrong == []


def test_the_postgres_hint_a_user_sees_names_the_distribution() -> None:
    # a fresh interpreter where psycopg cannot be imported: the message is the hint
    code = (
        "import sys; sys.modules['psycopg'] = None\n"
        "from sanctum.codex._postgres_link import _import_psycopg\n"
        "try:\n    _import_psycopg()\n"
        "except Exception as exc:\n    print(exc)\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True, timeout=60
    )
    assert f"pip install '{__distribution__}[postgres]'" in done.stdout
