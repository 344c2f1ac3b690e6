"""Offline argument filling: read a tool's arguments out of the query, guided by its schema.

With no LLM, the schema is the only guide, so each parameter is filled by the
strongest evidence its schema allows, in this order:

1. ``pattern``: the pattern itself (unanchored) searched in the query
   (``^SKU\\d{7}$`` finds ``SKU2024001``), by RE2 like every manifest-supplied
   regex (linear time: a crafted pattern cannot stall the router);
2. ``enum``: a value of the enum named in the query;
3. ``format``: dates, emails, URLs;
4. numbers for ``integer`` / ``number``: the number next to a mention of the
   parameter ("base of 10", "height 5"), else the next unused number in order;
5. strings: a capitalised name for name-like parameters (city, company,
   location ...), else a quoted span, else an example value the description
   gives that appears in the query;
6. booleans: yes/true/enable vs no/false/disable near the parameter.

A required parameter still missing may come from the session's previous call
when the query refers back to it ("this SKU", "那这个 SKU", "it"). What stays
missing is reported with the parameter's description and format, so the 422
tells the caller exactly what to add.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from gateway.registry.patterns import PatternError, compile_pattern, search

_NUMBER = re.compile(r"(?<![\w.])-?\d+(?:\.\d+)?")  # "6cm" counts, "SKU2024001" does not
_QUOTED = re.compile(r"\"([^\"]+)\"|'([^']+)'|“([^”]+)”|「([^」]+)」|‘([^’]+)’")
_FORMATS = {
    "date": re.compile(r"\b\d{4}-\d{2}-\d{2}\b"),
    "date-time": re.compile(
        r"\b\d{4}-\d{2}-\d{2}[T ]\d{2}:\d{2}(?::\d{2})?(?:Z|[+-]\d{2}:?\d{2})?"
    ),
    "email": re.compile(r"[\w.+-]+@[\w-]+(?:\.[\w-]+)+"),
    "uri": re.compile(r"https?://\S+"),
    "url": re.compile(r"https?://\S+"),
}
_NAME_LIKE = ("name", "city", "location", "company", "country", "place", "person", "team", "brand")
_CAPITALISED = re.compile(r"\b(?:[A-Z][\w'&.-]*)(?:\s+(?:[A-Z][\w'&.-]*|of|de|la|du))*")
_REFERS_BACK = re.compile(
    r"\b(this|that|it|its|same|previous|above|these|those)\b|这个|那个|该|它|这|那|上面|刚才",
    re.IGNORECASE,
)
_TRUE = re.compile(r"\b(yes|true|enable|enabled|include|with)\b", re.IGNORECASE)
_FALSE = re.compile(r"\b(no|false|disable|disabled|exclude|without)\b", re.IGNORECASE)
_SENTENCE_START = re.compile(r"(?:^|[.!?]\s+)")


@dataclass
class Extraction:
    arguments: dict[str, Any] = field(default_factory=dict)
    from_context: list[str] = field(default_factory=list)
    missing: list[str] = field(default_factory=list)

    def missing_message(self, schema: dict[str, Any]) -> str:
        props = schema.get("properties") or {}
        parts = [describe_parameter(name, props.get(name) or {}) for name in self.missing]
        return "Missing required argument(s): " + "; ".join(parts) + "."


def describe_parameter(name: str, schema: dict[str, Any]) -> str:
    """``sku`` (string, format ^SKU\\d{7}$: SKU code, e.g. SKU2024001)."""
    kind = schema.get("type", "value")
    hints = []
    if "pattern" in schema:
        hints.append(f"matching {schema['pattern']}")
    if "enum" in schema:
        hints.append("one of " + ", ".join(map(str, schema["enum"])))
    if "format" in schema:
        hints.append(f"format {schema['format']}")
    detail = f"{kind}" + (f", {'; '.join(hints)}" if hints else "")
    description = schema.get("description")
    return f"'{name}' ({detail})" + (f": {description}" if description else "")


def _unanchored(pattern: str) -> str:
    return pattern.removeprefix("^").removesuffix("$")


def _mentions(name: str, schema: dict[str, Any]) -> list[str]:
    words = [w for w in re.split(r"[_\W]+", name.lower()) if len(w) > 1]
    return words or [name.lower()]


def _number_near(query: str, words: Sequence[str], used: set[int]) -> re.Match[str] | None:
    lowered = query.lower()
    best: tuple[int, re.Match[str]] | None = None
    for word in words:
        for mention in re.finditer(rf"\b{re.escape(word)}\b", lowered):
            for number in _NUMBER.finditer(query):
                if number.start() in used:
                    continue
                gap = number.start() - mention.end()
                if 0 <= gap <= 25 and (best is None or gap < best[0]):
                    best = (gap, number)
    return best[1] if best else None


def _convert(text: str, kind: str) -> int | float | None:
    try:
        value = float(text)
    except ValueError:
        return None
    if kind == "integer":
        return int(value) if value.is_integer() else None
    return int(value) if value.is_integer() else value


def _capitalised_names(query: str) -> list[str]:
    starts = {m.end() for m in _SENTENCE_START.finditer(query)}
    names = []
    for match in _CAPITALISED.finditer(query):
        if match.start() in starts and " " not in match.group(0):
            continue  # a sentence's first word is capitalised anyway
        names.append(match.group(0).strip(" .,"))
    return names


class ArgumentExtractor:
    """Fills a tool's arguments from a query; see the module docstring for the rules."""

    def extract(
        self,
        query: str,
        schema: dict[str, Any],
        *,
        previous: dict[str, Any] | None = None,
    ) -> Extraction:
        props: dict[str, dict[str, Any]] = schema.get("properties") or {}
        required = list(schema.get("required") or [])
        order = required + [p for p in props if p not in required]
        result = Extraction()
        used_numbers: set[int] = set()
        quoted = [next(g for g in m.groups() if g) for m in _QUOTED.finditer(query)]
        names = _capitalised_names(query)

        for name in order:
            spec = props.get(name) or {}
            value = self._fill(query, name, spec, used_numbers, quoted, names)
            if value is not None:
                result.arguments[name] = value

        refers_back = bool(_REFERS_BACK.search(query))
        for name in required:
            if name in result.arguments:
                continue
            if previous and refers_back and name in previous:
                result.arguments[name] = previous[name]
                result.from_context.append(name)
            else:
                result.missing.append(name)
        return result

    def _fill(
        self,
        query: str,
        name: str,
        spec: dict[str, Any],
        used_numbers: set[int],
        quoted: list[str],
        names: list[str],
    ) -> Any:
        kind = spec.get("type", "string")
        if "pattern" in spec:
            try:
                program = compile_pattern(_unanchored(str(spec["pattern"])))
            except PatternError:
                return None
            match = search(program, query)
            return match.group(0) if match else None
        if "enum" in spec:
            for option in sorted(spec["enum"], key=lambda o: -len(str(o))):
                if re.search(rf"(?<!\w){re.escape(str(option))}(?!\w)", query, re.IGNORECASE):
                    return option
            return None
        if spec.get("format") in _FORMATS:
            match = _FORMATS[spec["format"]].search(query)
            return match.group(0) if match else None
        if kind in ("integer", "number"):
            number = _number_near(query, _mentions(name, spec), used_numbers)
            if number is None:
                number = next(
                    (n for n in _NUMBER.finditer(query) if n.start() not in used_numbers), None
                )
            if number is None:
                return None
            value = _convert(number.group(0), kind)
            if value is not None:
                used_numbers.add(number.start())
            return value
        if kind == "boolean":
            if _TRUE.search(query):
                return True
            if _FALSE.search(query):
                return False
            return None
        if kind == "string":
            if any(hint in name.lower() for hint in _NAME_LIKE) and names:
                return names.pop(0)
            if quoted:
                return quoted.pop(0)
            for example in re.findall(r"e\.g\.\s*([^,.;)]+)", spec.get("description", "")):
                if example.strip() and example.strip().lower() in query.lower():
                    return example.strip()
        return None
