"""Argument validation with messages a model can act on."""

from __future__ import annotations

from typing import Any

from jsonschema.exceptions import ValidationError

from gateway.registry.manifest import ToolSpec
from reach_common.errors import Unprocessable


class InvalidArguments(Unprocessable):
    reason = "invalid_arguments"


def _field(error: ValidationError) -> str:
    path = [str(p) for p in error.absolute_path]
    if error.validator == "required" and isinstance(error.validator_value, list):
        missing = error.message.split("'")[1] if "'" in error.message else ""
        path.append(missing)
    return ".".join(p for p in path if p) or "(arguments)"


def _hint(spec: ToolSpec, error: ValidationError) -> str:
    schema = error.schema if isinstance(error.schema, dict) else {}
    if error.validator == "required":
        name = _field(error).rsplit(".", 1)[-1]
        props = schema.get("properties", {})
        schema = props.get(name, {}) if isinstance(props, dict) else {}
    description = schema.get("description") if isinstance(schema, dict) else None
    return f" ({description})" if description else ""


def check_arguments(spec: ToolSpec, arguments: dict[str, Any]) -> None:
    """Raise 422 ``invalid_arguments`` naming each problem and what a valid value looks like."""
    if spec.validator.is_valid(arguments):
        return
    errors = sorted(spec.validator.iter_errors(arguments), key=lambda e: list(e.absolute_path))
    problems = [{"field": _field(e), "problem": e.message + _hint(spec, e)} for e in errors[:10]]
    summary = "; ".join(f"{p['field']}: {p['problem']}" for p in problems)
    allowed = ", ".join(sorted(spec.input_schema.get("properties", {})))
    raise InvalidArguments(
        f"Arguments for tool {spec.tool_id!r} are invalid: {summary}. "
        f"Accepted arguments: {allowed or 'none'}. Fix them and call again.",
        errors=problems,
    )
