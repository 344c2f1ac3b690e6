"""Enum options that are codes, by the names a description gives them.

A tool whose options are short codes often says what each one stands for, in the
parameter's description or in the tool's: "Port codes: PSM = Portsmere, ARD = Ardmoor",
"Kilrush Isle (KLR)", "NHV: Northhaven". People write the name ("any boats from
portsmere to ardmoor tomorrow?"), so an option is also found by its name
(:func:`coded_option`). A tool's description lends its names to the enum parameters
whose options they are (:func:`with_coded_names`), as it lends its clock (``zones``).
"""

from __future__ import annotations

import functools
import itertools
import re
from typing import Any

from gateway.routing.bounds import with_properties

# An option that is a code: two to six capitals and digits, beginning with a capital.
_CODE = re.compile(r"[A-Z][A-Z0-9]{1,5}")
# A name: one to three capitalised words ("Portsmere", "Kilrush Isle", "St Mary's").
_NAME = r"[A-Z][A-Za-z'’]+(?:[ \-][A-Z][A-Za-z'’]+){0,2}"
_READ_CHARS = 2_000  # of a description: a longer one is read this far
_MAX_OPTIONS = 64  # a longer enum is no list of codes with their names
_LENT_HEADING = "Codes:"


@functools.lru_cache(maxsize=1024)
def _names(description: str, code: str) -> tuple[str, ...]:
    """The names ``description`` gives ``code``: "PSM = Portsmere", "PSM: Portsmere",
    "PSM – Portsmere", "PSM (Portsmere)", "Portsmere (PSM)", "Portsmere = PSM"."""
    text = description[:_READ_CHARS]
    edge_l, edge_r = r"(?<![A-Za-z0-9_])", r"(?![A-Za-z0-9_])"
    name = re.escape(code)
    after = re.findall(rf"{edge_l}{name}{edge_r}\s*(?:=|:|–|—|\(|is\s)\s*({_NAME})", text)
    before = re.findall(rf"(?<![A-Za-z])({_NAME})\s*(?:\(\s*|=\s*){name}{edge_r}", text)
    return tuple(sorted(n for n in set(after + before) if len(n) >= 3 and _shortens(code, n)))


def _shortens(code: str, name: str) -> bool:
    """Whether ``code`` is made of ``name``'s letters in order, its first a word's first
    (PSM of Portsmere, NHV of Northhaven, CDG of Charles de Gaulle; not NEW of "Created"):
    a name by the code's own letters, not a description that happens to follow it."""
    lowered, letters = name.lower(), code.lower()
    for word in re.finditer(r"[a-z]+", lowered):
        if word.group(0)[0] != letters[0]:
            continue
        at = word.start() + 1
        for letter in letters[1:]:
            at = lowered.find(letter, at) + 1
            if at == 0:
                break
        else:
            return True
    return False


def names_of(description: str, options: list[Any]) -> dict[str, tuple[str, ...]]:
    """Each code among ``options`` and the names ``description`` gives it; empty when the
    options are no codes, or the description names none of them."""
    if not description or len(options) > _MAX_OPTIONS:
        return {}
    codes = [o for o in options if isinstance(o, str) and _CODE.fullmatch(o)]
    if len(codes) < len(options) or not codes:
        return {}
    found = {code: _names(description, code) for code in codes}
    return {code: names for code, names in found.items() if names}


def coded_option(query: str, options: list[Any], description: str) -> Any:
    """The code among ``options`` whose name ``query`` writes first (case aside, as a
    whole word): "from portsmere to ardmoor" is PSM; None when it writes none."""
    named = names_of(description, options)
    found = [(at[0], code) for code in named if (at := _written_at(query, code, named))]
    return min(found)[1] if found else None


def written_name(query: str, code: str, description: str) -> str | None:
    """How ``query`` writes ``code``, when by a name ``description`` gives it: that name
    as written ("portsmere" of PSM), for reading the words around it."""
    at = _written_at(query, code, {code: _names(description, code)})
    return query[at[0] : at[1]] if at else None


def _written_at(query: str, code: str, named: dict[str, tuple[str, ...]]) -> tuple[int, int] | None:
    """Where ``query`` first writes one of ``code``'s names, or the first word of one
    (five letters or more) no other code's name begins with ("Kilrush" of "Kilrush
    Isle"): its start and end; None when it writes none."""
    lowered = query.lower()
    words = [name.lower() for name in named[code]]
    firsts = {w.split()[0] for w in words if " " in w}
    others = {n.lower().split()[0] for c, names in named.items() if c != code for n in names}
    words += [w for w in firsts if len(w) >= 5 and w not in others]
    found = [
        m.span()
        for w in words
        if (m := re.search(rf"(?<![a-z]){re.escape(w)}(?![a-z])", lowered)) is not None
    ]
    return min(found, default=None)


def with_coded_names(schema: dict[str, Any], description: str) -> dict[str, Any]:
    """``schema`` with the names the tool's ``description`` gives its enum parameters'
    codes added to each such parameter's description ("Codes: PSM = Portsmere; …"), when
    the parameter's own description gives none; ``schema`` itself when there are none."""
    properties = schema.get("properties")
    if not isinstance(properties, dict) or not description:
        return schema
    lent: dict[str, Any] = {}
    for name, spec in itertools.islice(properties.items(), 64):
        options = spec.get("enum") if isinstance(spec, dict) else None
        if not isinstance(options, list):
            continue
        own = str(spec.get("description") or "")
        if names_of(own, options):
            continue
        named = names_of(description, options)
        if named:
            glosses = "; ".join(f"{code} = {names[0]}" for code, names in named.items())
            lent[name] = {**spec, "description": f"{own} {_LENT_HEADING} {glosses}.".strip()}
    return with_properties(schema, lent) if lent else schema
