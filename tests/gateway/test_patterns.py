"""Manifest-supplied regexes run on RE2: compile-time refusal of what RE2 cannot run,
linear-time matching in validation and routing, and refusals that never echo a value whole."""

from __future__ import annotations

import json
from typing import Any

import pytest

from gateway.catalog.spec import ManifestDefaults, ToolSpec
from gateway.executor.errors import InvalidArguments
from gateway.invoke.validation import (
    check_arguments,
    preview,
    preview_arguments,
)
from gateway.registry.errors import InvalidManifest
from gateway.registry.manifest import compile_manifest
from gateway.registry.patterns import (
    PatternError,
    compile_pattern,
    pattern_problems,
    schema_validator,
    to_re2,
)
from gateway.routing.extract import ArgumentExtractor
from tests.gateway.conftest import http_tool

DEFAULTS = ManifestDefaults()
EVIL = "^(a+)+$"  # exponential on Python's backtracking engine
ATTACK = "a" * 40 + "!"


def spec_with(input_schema: dict[str, Any], **defaults: Any) -> ToolSpec:
    manifest = http_tool("pattern_tool", "http://127.0.0.1:1/x", input_schema=input_schema)
    return compile_manifest(manifest, ManifestDefaults(**defaults) if defaults else DEFAULTS)


def refusal(input_schema: dict[str, Any]) -> InvalidManifest:
    with pytest.raises(InvalidManifest) as caught:
        spec_with(input_schema)
    assert caught.value.reason == "invalid_manifest"
    return caught.value


def string_schema(**field: Any) -> dict[str, Any]:
    return {"type": "object", "properties": {"code": {"type": "string", **field}}}


# --- registration ------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("pattern", "why"),
    [
        ("(a)\\1", "invalid escape sequence"),  # backreference
        ("^(?=a)b", "invalid perl operator"),  # lookahead
        ("(?<!x)y", "invalid perl operator"),  # lookbehind
        ("a{1000}{1000}", "bad repetition"),
    ],
)
def test_a_pattern_re2_cannot_run_is_refused_with_its_path(pattern: str, why: str) -> None:
    error = refusal(string_schema(pattern=pattern))
    assert "input_schema/properties/code/pattern" in error.message
    assert why in error.message
    assert error.details["problems"][0].startswith("input_schema/properties/code/pattern: ")


def test_pattern_properties_keys_and_nested_patterns_are_checked() -> None:
    schema = {
        "type": "object",
        "properties": {
            "items": {"type": "array", "items": {"type": "string", "pattern": "(x)\\1"}},
        },
        "patternProperties": {"^(?!x)": {"type": "string"}},
        "$defs": {"deep": {"anyOf": [{"pattern": "(?<=a)b"}]}},
    }
    problems = [where for where, _ in pattern_problems(schema, ("input_schema",))]
    assert problems == [
        "input_schema/properties/items/items/pattern",
        "input_schema/patternProperties/^(?!x)",
        "input_schema/$defs/deep/anyOf/0/pattern",
    ]
    error = refusal(schema)
    assert all(where in error.message for where in problems)


def test_data_and_property_names_are_not_mistaken_for_patterns() -> None:
    schema = {
        "type": "object",
        "properties": {
            "pattern": {"type": "string", "default": "(a)\\1"},
            "enum": {"const": {"pattern": "(a)\\1"}, "examples": [{"pattern": "(?=x)"}]},
        },
    }
    spec = spec_with(schema)
    assert spec.validator.is_valid({"pattern": "anything"})


def test_remote_references_and_unevaluated_pattern_properties_are_refused() -> None:
    remote = refusal({"type": "object", "properties": {"a": {"$ref": "http://169.254.169.254/"}}})
    assert "input_schema/properties/a/$ref" in remote.message
    mixed = refusal(
        {"type": "object", "patternProperties": {"^a": {}}, "unevaluatedProperties": False}
    )
    assert "unevaluatedProperties" in mixed.message
    local = spec_with(
        {
            "type": "object",
            "properties": {"a": {"$ref": "#/$defs/code"}},
            "$defs": {"code": {"type": "string", "pattern": "^C\\d+$"}},
        }
    )
    assert local.validator.is_valid({"a": "C12"})
    assert not local.validator.is_valid({"a": "X12"})


def test_ecma_unicode_escapes_and_re2_classes_are_accepted() -> None:
    assert to_re2("[\\u4e00-\\u9fff]+") == "[\\x{4e00}-\\x{9fff}]+"
    assert to_re2("\\\\u0041") == "\\\\u0041"  # an escaped backslash, then "u0041"
    cjk = spec_with(string_schema(pattern="^[\\u4e00-\\u9fff]+$"))
    assert cjk.validator.is_valid({"code": "库存"})
    assert not cjk.validator.is_valid({"code": "stock"})
    han = spec_with(string_schema(pattern="^\\p{Han}+$"))
    assert han.validator.is_valid({"code": "库存"})


def test_compile_pattern_raises_pattern_error() -> None:
    with pytest.raises(PatternError, match="invalid escape sequence"):
        compile_pattern("(a)\\1")
    assert compile_pattern("^SKU\\d{7}$") is compile_pattern("^SKU\\d{7}$")  # cached


# --- validation --------------------------------------------------------------------------------


def test_a_catastrophic_pattern_answers_at_once() -> None:
    spec = spec_with(string_schema(pattern=EVIL))
    with pytest.raises(InvalidArguments) as caught:
        check_arguments(spec, {"code": ATTACK})
    assert caught.value.reason == "invalid_arguments"
    assert caught.value.details["errors"][0]["field"] == "code"
    assert "does not match" in caught.value.details["errors"][0]["problem"]
    check_arguments(spec, {"code": "a" * 40})


def test_pattern_properties_and_additional_properties_run_on_re2() -> None:
    schema = {
        "type": "object",
        "patternProperties": {EVIL: {"type": "integer"}},
        "additionalProperties": False,
    }
    spec = spec_with(schema)
    check_arguments(spec, {"aaa": 1})
    with pytest.raises(InvalidArguments) as wrong_type:
        check_arguments(spec, {"aaa": "x"})
    assert wrong_type.value.details["errors"][0]["field"] == "aaa"
    with pytest.raises(InvalidArguments) as extra:
        check_arguments(spec, {ATTACK: 1})
    assert "does not match any of the regexes" in extra.value.message
    plain = spec_with({"type": "object", "properties": {"a": {}}, "additionalProperties": False})
    with pytest.raises(InvalidArguments, match="Additional properties are not allowed"):
        check_arguments(plain, {"a": 1, "b": 2})


def test_text_re2_cannot_read_does_not_match_instead_of_crashing() -> None:
    spec = spec_with(string_schema(pattern="^a"))
    lone_surrogate = json.loads('"\\ud800a"')
    with pytest.raises(InvalidArguments):
        check_arguments(spec, {"code": lone_surrogate})


def test_an_overlong_string_is_refused_before_any_pattern_runs() -> None:
    spec = spec_with(string_schema(pattern=EVIL), max_argument_chars=1000)
    with pytest.raises(InvalidArguments) as value:
        check_arguments(spec, {"code": "a" * 1001})
    assert value.value.details["errors"] == [
        {"field": "code", "problem": "the value is 1001 characters long; at most 1000 are accepted"}
    ]
    with pytest.raises(InvalidArguments) as nested:
        check_arguments(spec, {"code": "a", "more": [{"x": "b" * 5000}]})
    assert nested.value.details["errors"][0]["field"] == "more.0.x"
    with pytest.raises(InvalidArguments) as key:
        check_arguments(spec, {"k" * 2000: 1})
    assert "the key is 2000 characters long" in key.value.message
    assert len(key.value.message) < 500
    check_arguments(spec, {"code": "a" * 1000})


def test_a_refusal_shows_only_a_preview_of_a_bad_value() -> None:
    spec = spec_with(
        {
            "type": "object",
            "properties": {
                "code": {"type": "string", "pattern": "^C", "maxLength": 10},
                "count": {"type": "integer"},
                "tags": {"type": "array", "items": {"type": "integer"}},
            },
        }
    )
    big = "x" * 60000
    with pytest.raises(InvalidArguments) as caught:
        check_arguments(spec, {"code": big, "count": big, "tags": [big] * 500})
    error = caught.value
    assert len(error.message) < 4000
    assert all(len(p["problem"]) <= 400 for p in error.details["errors"])
    assert "x" * 81 not in json.dumps({"message": error.message, **error.details})
    assert "(60000 characters)" in error.message


def test_preview_helpers() -> None:
    assert preview("short") == "'short'"
    assert preview("y" * 100) == repr("y" * 80) + "… (100 characters)"
    assert preview(list(range(100))) == "an array of 100 item(s)"
    shown = preview_arguments({"a": "z" * 500, "b": list(range(30)), "c": {"d": {"e": {"f": {}}}}})
    assert shown["a"] == "z" * 80 + "…"
    assert len(shown["b"]) == 21
    assert len(json.dumps(shown)) < 1000


def test_a_refused_manifest_field_is_not_echoed_back() -> None:
    manifest = http_tool("x" * 100_000, "http://127.0.0.1:1/x")
    with pytest.raises(InvalidManifest) as caught:
        compile_manifest(manifest, DEFAULTS)
    assert len(caught.value.message) < 1000


def test_schema_validator_never_fetches_a_url() -> None:
    validator = schema_validator({"$ref": "http://127.0.0.1:1/schema.json"})
    with pytest.raises(Exception, match="Unresolvable"):
        validator.is_valid({})


# --- routing -----------------------------------------------------------------------------------


def test_the_router_searches_schema_patterns_with_re2() -> None:
    extractor = ArgumentExtractor()
    evil = {
        "type": "object",
        "properties": {"code": {"type": "string", "pattern": "(a+)+b"}},
        "required": ["code"],
    }
    result = extractor.extract("a" * 5000 + "!", evil)
    assert result.missing == ["code"]
    found = extractor.extract("the code is aaab, thanks", evil)
    assert found.arguments == {"code": "aaab"}
    unsupported = {
        "type": "object",
        "properties": {"code": {"type": "string", "pattern": "(?=x)x"}},
    }
    assert extractor.extract("x marks", unsupported).arguments == {}
    cjk = {
        "type": "object",
        "properties": {"city": {"type": "string", "pattern": "^[\\u4e00-\\u9fff]{2}市$"}},
    }
    assert extractor.extract("上海市的天气", cjk).arguments == {"city": "上海市"}
