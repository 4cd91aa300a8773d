"""The ritual file's JSON Schema, generated from the pydantic model.

Editors validate and complete ritual files with it through a first line
``# yaml-language-server: $schema=../schema/ritual.schema.json``. The checked-in copy
``schema/ritual.schema.json`` is regenerated with::

    python -m sanctum.ritualfile.schema > schema/ritual.schema.json

and a test fails when it drifts from the model.
"""

from __future__ import annotations

import json
import sys
from typing import Any

from sanctum.ritualfile.models import RitualSpec

__all__ = ["SCHEMA_ID", "ritual_json_schema", "schema_text"]

SCHEMA_ID = "https://sanctum.dev/schema/ritual.schema.json"
"""The ``$id`` of the published schema."""


def ritual_json_schema() -> dict[str, Any]:
    """The JSON Schema (draft 2020-12) of a ritual file.

    Returns:
        The schema as a dict, with a description on every field.
    """
    schema = RitualSpec.model_json_schema(by_alias=True, mode="validation")
    return {
        "$schema": "https://json-schema.org/draft/2020-12/schema",
        "$id": SCHEMA_ID,
        "title": "sanctum ritual file",
        **schema,
    }


def schema_text() -> str:
    """The schema as the checked-in file holds it (sorted keys, 2-space indent, newline)."""
    return json.dumps(ritual_json_schema(), indent=2, sort_keys=True, ensure_ascii=False) + "\n"


if __name__ == "__main__":  # pragma: no cover - exercised through the drift test
    sys.stdout.write(schema_text())
