from __future__ import annotations

import json
from pathlib import Path

from sanctum.ritualfile import ritual_json_schema
from sanctum.ritualfile.schema import schema_text

ROOT = Path(__file__).resolve().parents[2]


def test_checked_in_schema_matches_model() -> None:
    checked_in = (ROOT / "schema" / "ritual.schema.json").read_text(encoding="utf-8")
    assert checked_in == schema_text(), (
        "schema/ritual.schema.json drifted from the model; regenerate it with "
        "`python -m sanctum.ritualfile.schema > schema/ritual.schema.json`"
    )


def test_every_property_has_a_description() -> None:
    schema = ritual_json_schema()
    missing = []

    def walk(node: object, where: str) -> None:
        if isinstance(node, dict):
            for name, prop in (node.get("properties") or {}).items():
                if "description" not in prop:
                    missing.append(f"{where}.{name}")
            for key, value in node.items():
                walk(value, f"{where}/{key}")
        elif isinstance(node, list):
            for i, value in enumerate(node):
                walk(value, f"{where}[{i}]")

    walk(schema, "#")
    assert missing == []
    assert schema["additionalProperties"] is False
    assert "sanctum" in schema["required"]
    json.dumps(schema)
