"""The offline choice among the coarse stage's candidates: evidence the scores cannot see.

The coarse scores compare the request with each tool's text. Two more facts
are known to the router and are weighed here, each as a bounded nudge, so
neither can carry a tool that does not match at all:

- **The request carries the identifier the tool needs.** A tool with required
  identifiers (a parameter with a ``pattern``, or examples of an identifier:
  "e.g. SO20240715001") all found in the request itself (``SO20261126004``)
  gains ``FIT_BONUS`` on the fused score; so does a reader that requires nothing, asked
  a question holding a value of one of its shaped parameters ("where is VH-40012
  based?" of a register searched by fleet number or plate: ``carries_a_lookup_key``).
  Other tools gain nothing: numbers,
  names and free text can be read out of almost any request, so they prove
  nothing (on BFCL such a bonus cost 2 points of top-1).
- **Across languages.** A request written in one language for a tool described in
  the other ("帮我查一下工单 INC0012345 处理到哪了" for a tool described only in English)
  scores low on the tool's words whatever it means: the model compares scripts, the
  lexical index finds no shared word. Two things do not depend on the language: the
  identifiers a question asks about, and the action class of an order's verb (报销 and
  "reimbursement"). The router vouches for a candidate by one of them (``across``:
  see ``Router._across``); when exactly one candidate the request may be meant for is
  vouched for, it gains ``ACROSS_BONUS`` and ``ACROSS_CONFIDENCE`` (in place of the
  fit bonus), wherever the words ranked it. Two such tools leave the choice to the
  words, as before.
- **The conversation so far.** "now the same for 2026-08", "那它的快递单号是多少"
  name no tool: right after a call, the tool just used gains ``FOLLOW_BONUS``
  on the score and ``FOLLOW_CONFIDENCE`` on the confidence, so an elliptical
  follow-up stays with it unless another tool clearly fits better. When no
  tool reaches the threshold and the request gives the last tool a new value
  of a typed parameter (a month, a number of days, an id: ``continues``), it
  is that call again with the new value ("那 2026-09 的呢" after a monthly
  report); "thanks, that's all" gives none and is still rejected.

- **A question and a tool that writes, an order and a tool that only reads**
  (``misread``, from the router: see ``intent``): "show me invoice INV-…" is not a
  payment, "cancel contract CT-…" not a signature. Such a tool loses
  ``READ_REQUEST_PENALTY`` (all) of its score and its confidence: it is not chosen.
- **What the request asks that a tool does not offer** (``drop``, from the router):
  an action none of the tool's own words name ("cancel order SO…" of an order
  lookup: ``vocabulary.action_gap``), or identifiers of a type another candidate
  takes that this tool takes in no parameter ("给 SO… 退款" of a document search:
  ``FOREIGN_ID_PENALTY``), or a thing the tool's words never name while another
  candidate is named for it ("withdraw my damage claim" of a pickup's cancel, with
  ``file_claim`` in the catalogue: ``vocabulary.object_gap``). It lowers the confidence
  only, and is worked out only for the candidates about to be accepted.

The threshold applies to the confidence after the nudges; the identifier fit adds
``FIT_CONFIDENCE`` to it. When the best-scored candidate falls short, the most
confident other candidate that reaches it is taken (the fused score is relative
within the query, the confidence is absolute: "what's the response time in our
runbooks?" ranks an order lookup first on its cosine, the document search is the
one that clears the bar).
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace
from typing import Any

from gateway.routing.extract import (
    ArgumentExtractor,
    examples_of,
    is_id_name,
    item_spec,
    names_a_party,
    shape_of,
    takes_a_domain,
)
from gateway.routing.index import Candidate
from gateway.routing.intent import READ_REQUEST_PENALTY

FIT_BONUS = 0.1
FIT_CONFIDENCE = 0.1
# A tool that takes none of the identifiers the request carries ("给 SO20261125001 退款" for
# a document search): the request is about an object the tool does not handle.
FOREIGN_ID_PENALTY = 0.35
FOLLOW_BONUS = 0.15
FOLLOW_CONFIDENCE = 0.1
# Only candidates this close to the best fused score are checked for arguments.
FIT_MARGIN = 0.25
ACROSS_BONUS = 0.6
ACROSS_CONFIDENCE = 0.35


@dataclass(frozen=True)
class Choice:
    candidate: Candidate | None  # None: nothing reaches the threshold
    best: Candidate | None  # the best candidate after the nudges, chosen or not
    why: str


def choose(
    candidates: Sequence[Candidate],
    *,
    threshold: float,
    fits: Callable[[str], bool],
    last_tool: str | None = None,
    continues: Callable[[str], bool] = lambda _: False,
    drop: Callable[[str], float] = lambda _: 0.0,
    misread: Callable[[str], bool] = lambda _: False,
    across: Callable[[str], bool] = lambda _: False,
    asks_again: bool = False,
) -> Choice:
    """The candidate to route to, given the nudges described in the module docstring.
    ``asks_again``: the request asks what was asked last with a new value ("那上个月的
    呢？"): the session's last tool takes it when it takes the new value."""
    if not candidates:
        return Choice(None, None, "no candidates")
    ranked = _ranked(candidates, fits, last_tool, misread, across)
    last = next((r[2] for r in ranked if r[2].tool_id == last_tool), None)
    if asks_again and last is not None and not misread(last.tool_id) and continues(last.tool_id):
        again = replace(last, confidence=max(last.confidence, threshold))
        return Choice(again, again, "asked again with a new value for the session's last tool")
    # A tie (a Chinese request's two readings each put a different tool first, both at
    # 1.0) goes to the surer one, then to the first.
    _, _, best, notes = max(ranked, key=lambda r: (r[0], r[2].confidence, r[1]))
    why = f"top-1 confidence {best.confidence:.3f}"
    if best.tool_id != candidates[0].tool_id:
        # why the best rose, or else why the first candidate fell
        fell = next(r[3] for r in ranked if r[2].tool_id == candidates[0].tool_id)
        reasons = ", ".join(notes) or f"it is {', '.join(fell) or 'ranked lower after the nudges'}"
        why += f" (ranked over {candidates[0].tool_id}: {reasons})"
    elif notes:
        why += f" ({', '.join(notes)})"
    best, lost = _less(best, drop)
    if lost:
        why += f", less {lost:.2f}: the request asks what the tool's words do not offer"
    if best.confidence >= threshold:
        return Choice(best, best, why + f" >= {threshold}")
    # (not when the request asks what the last tool's words do not offer: "那帮我约一个下午的"
    # after a look at who is on duty books, it does not ask the schedule again)
    if last is not None and not drop(last.tool_id) and continues(last.tool_id):
        again = replace(last, confidence=max(last.confidence, threshold))
        why = f"no tool reaches {threshold}; a new value for the session's last tool"
        return Choice(again, again, why)
    surer = _surer(ranked, best.tool_id, threshold, drop)
    if surer is not None:
        why += f" < {threshold}; {surer.tool_id} is surer ({surer.confidence:.3f})"
        return Choice(surer, surer, why)
    return Choice(None, best, why + f" < {threshold}")


def _ranked(
    candidates: Sequence[Candidate],
    fits: Callable[[str], bool],
    last_tool: str | None,
    misread: Callable[[str], bool],
    across: Callable[[str], bool],
) -> list[tuple[float, int, Candidate, list[str]]]:
    """Each candidate's nudged score, its position (ties), its nudged confidence, and why."""
    # The margin is measured from the best candidate the request may be meant for.
    top_score = max(
        (c.score for c in candidates if not misread(c.tool_id)), default=candidates[0].score
    )
    # A tool vouched for by identifiers or a verb, if it is the only one (``across``).
    vouched = [c.tool_id for c in candidates if not misread(c.tool_id) and across(c.tool_id)]
    alone = vouched[0] if len(vouched) == 1 else None
    ranked: list[tuple[float, int, Candidate, list[str]]] = []
    for position, candidate in enumerate(candidates):
        score, notes = candidate.score, []
        confidence = candidate.confidence
        if candidate.tool_id == last_tool:
            score += FOLLOW_BONUS
            confidence = min(1.0, confidence + FOLLOW_CONFIDENCE)
            notes.append("the session's last tool")
        if candidate.tool_id == alone:
            score += ACROSS_BONUS
            confidence = min(1.0, confidence + ACROSS_CONFIDENCE)
            notes.append("the one tool the request's identifiers or verb point to")
        elif candidate.score >= top_score - FIT_MARGIN and fits(candidate.tool_id):
            score += FIT_BONUS
            confidence = min(1.0, confidence + FIT_CONFIDENCE)
            notes.append("its required arguments are in the request")
        if misread(candidate.tool_id):
            score -= READ_REQUEST_PENALTY
            confidence = max(0.0, confidence - READ_REQUEST_PENALTY)
            notes.append("not the kind of tool the request asks for (routing.intent)")
        ranked.append((score, -position, replace(candidate, confidence=confidence), notes))
    return ranked


def _less(candidate: Candidate, drop: Callable[[str], float]) -> tuple[Candidate, float]:
    lost = drop(candidate.tool_id)
    if not lost:
        return candidate, 0.0
    return replace(candidate, confidence=max(0.0, candidate.confidence - lost)), lost


def _surer(
    ranked: list[tuple[float, int, Candidate, list[str]]],
    best: str,
    threshold: float,
    drop: Callable[[str], float],
) -> Candidate | None:
    """When the best-scored candidate is not confident enough, the most confident other
    one that is (the fused score ranks; only the confidence is absolute)."""
    others = sorted((r[2] for r in ranked if r[2].tool_id != best), key=lambda c: -c.confidence)
    for candidate in others:
        if candidate.confidence < threshold:
            return None
        candidate, _ = _less(candidate, drop)
        if candidate.confidence >= threshold:
            return candidate
    return None


def identifier_parameters(schema: dict[str, Any]) -> list[str]:
    """The required parameters whose values have a known shape: a ``pattern``, or
    identifier examples (``examples``, "e.g. SKU2024001" in the description)."""
    properties = schema.get("properties") or {}
    keyed = []
    for name in schema.get("required") or []:
        spec = item_spec(properties.get(name))
        if not isinstance(spec, dict) or spec.get("type", "string") != "string":
            continue
        if spec.get("pattern") or examples_of(spec):
            keyed.append(name)
    return keyed


def _each(value: Any) -> list[str]:
    """An argument's values as text: a list's items each (``["SC-5019"]``), else the one."""
    return [str(v) for v in value] if isinstance(value, list) else [str(value)]


def carries_identifiers(extractor: ArgumentExtractor, query: str, schema: dict[str, Any]) -> bool:
    """Whether the tool needs identifiers and the request alone holds every one of them."""
    keyed = identifier_parameters(schema)
    if not keyed:
        return False
    arguments = extractor.extract(query, schema).arguments
    return all(name in arguments for name in keyed)


# An identifier the request writes with a letter prefix: "HW-118402", "SPO-54990", "RD5123".
_PREFIXED_TOKEN = re.compile(r"(?<![A-Za-z0-9])([A-Za-z]{2,4})[-_]?\d{3,}(?![A-Za-z0-9])")


def carries_its_abbreviation(
    extractor: ArgumentExtractor, query: str, schema: dict[str, Any], name: str
) -> bool:
    """Whether a tool whose one required parameter is an identifier of no known shape (no
    ``pattern``, no example) is named by the identifier the request gives it: its letters
    abbreviate the tool's ``name`` (its id's and its title's words): HW-118402 of
    ``homework_feedback_status``, SPO-… of "special order status", RD… of
    ``redemption_get``. Each letter is the next of the word it is in or the first of the
    next word, the first letter a word's first."""
    required = schema.get("required") or []
    properties = schema.get("properties") or {}
    spec = properties.get(required[0]) if len(required) == 1 else None
    if not isinstance(spec, dict) or spec.get("type", "string") != "string":
        return False
    if spec.get("pattern") or spec.get("enum") or examples_of(spec):
        return False
    prefixes = {m[1].lower() for m in _PREFIXED_TOKEN.finditer(query)}
    if not prefixes:
        return False
    words = _LATIN.findall(name.lower())
    named = [p for p in prefixes if abbreviates(p, words)]
    if not named:
        return False
    value = extractor.extract(query, schema).arguments.get(required[0])
    return isinstance(value, str) and any(value.lower().startswith(p) for p in named)


_LATIN = re.compile(r"[a-z]+")


def abbreviates(letters: str, words: Sequence[str]) -> bool:
    """Whether ``letters`` abbreviate consecutive ``words`` (lower-cased), beginning with
    the first letter of one that is no generic verb (``_GENERIC_WORDS``): "hw" of
    homework, "spo" of special order, "rd" of redemption; not "lf" of lost item status,
    nor "lp" of lookup."""
    return any(
        words[i][:1] == letters[:1]
        and words[i] not in _GENERIC_WORDS
        and _abbreviates_from(letters[1:], words[i:], 1)
        for i in range(len(words))
    )


# Words of what a tool does, not of what it keeps: no abbreviation begins with one (LP is
# no "lookup", ST no "status"); a later letter may come from one (SR: service request).
_GENERIC_WORDS = frozenset((
    "get", "lookup", "look", "list", "status", "search", "check", "create", "update", "delete",
    "cancel", "query", "find", "view", "show", "details", "detail", "info", "set", "add",
    "submit", "book", "make", "new", "edit", "change", "remove", "fetch", "read", "my",
))  # fmt: skip


def _abbreviates_from(letters: str, words: Sequence[str], at: int) -> bool:
    if not letters:
        return True
    word = words[0]
    found = word.find(letters[0], at)
    if found >= 0 and _abbreviates_from(letters[1:], words, found + 1):
        return True
    return (
        len(words) > 1
        and words[1][:1] == letters[0]
        and _abbreviates_from(letters[1:], words[1:], 1)
    )


def carries_a_lookup_key(extractor: ArgumentExtractor, query: str, schema: dict[str, Any]) -> bool:
    """Whether a tool that requires nothing is looked up by an identifier the request holds:
    one of its shaped parameters (a ``pattern`` or identifier examples) takes a value of
    that shape from the request ("who is E20931?" of a directory searched by employee id
    or name). A tool with required parameters is judged by ``carries_identifiers``."""
    if schema.get("required"):
        return False
    properties = schema.get("properties") or {}
    shaped = {
        name: spec
        for name, spec in properties.items()
        if isinstance(spec, dict)
        and spec.get("type", "string") == "string"
        and (spec.get("pattern") or examples_of(spec))
    }
    if not shaped:
        return False
    arguments = extractor.extract(query, schema).arguments
    return any(
        name in arguments and _shaped(str(arguments[name]), spec) for name, spec in shaped.items()
    )


def typed_parameters(schema: dict[str, Any]) -> list[str]:
    """Parameters whose values can be told from free text: numbers, enums, formats,
    patterns, identifier examples (a month "e.g. 2024-07"), and names ("company",
    "owner"), which only a capitalised or Chinese person's name fills."""
    typed = []
    for name, spec in (schema.get("properties") or {}).items():
        if not isinstance(spec, dict):
            continue
        numeric = spec.get("type") in ("integer", "number")
        shaped = any(spec.get(key) for key in ("enum", "format", "pattern"))
        text = spec.get("type", "string") == "string"
        domain = text and takes_a_domain(name, spec)  # "renew X.com", "same for X.net"
        if numeric or shaped or domain or (text and (examples_of(spec) or names_a_party(name))):
            typed.append(name)
    return typed


def gives_new_values(
    extractor: ArgumentExtractor,
    query: str,
    schema: dict[str, Any],
    previous: dict[str, Any],
) -> bool:
    """Whether the request alone gives a typed parameter a value the last call did not have."""
    typed = typed_parameters(schema)
    if not typed:
        return False
    arguments = extractor.extract(query, schema).arguments
    return any(name in arguments and arguments[name] != previous.get(name) for name in typed)


def identifier_values(extractor: ArgumentExtractor, query: str, schema: dict[str, Any]) -> set[str]:
    """The values of the tool's identifier parameters (``identifier_parameters``) that
    the request alone holds."""
    return _values_of_their_shape(extractor, query, schema, identifier_parameters(schema))


def shaped_values(extractor: ArgumentExtractor, query: str, schema: dict[str, Any]) -> set[str]:
    """The values the request alone gives the tool's parameters of a declared ``pattern``
    (or a list of them), required or not, each of its shape."""
    properties = schema.get("properties") or {}
    patterned = [
        name
        for name, spec in properties.items()
        if isinstance(item_spec(spec), dict) and item_spec(spec).get("pattern")
    ]
    return _values_of_their_shape(extractor, query, schema, patterned)


def _values_of_their_shape(
    extractor: ArgumentExtractor, query: str, schema: dict[str, Any], names: list[str]
) -> set[str]:
    """The values the request alone gives ``names`` (each item of a list), each of its
    parameter's shape (``_shaped``); nothing is extracted when ``names`` is empty."""
    if not names:
        return set()
    arguments = extractor.extract(query, schema).arguments
    properties = schema.get("properties") or {}
    return {
        value
        for name in names
        for value in _each(arguments.get(name, []))
        if _shaped(value, item_spec(properties[name]))
    }


def named_identifier_values(
    extractor: ArgumentExtractor, query: str, schema: dict[str, Any]
) -> set[str]:
    """The identifiers the request names by kind for the tool's identifier parameters of
    no known shape: "claim CLM-611940" for a required ``claim_id`` (with letters: a bare
    number may be another tool's identifier typed without its prefix)."""
    named = _named_identifiers(schema)
    if not named:
        return set()
    arguments = extractor.extract(query, schema).arguments
    return {
        value
        for name, words in named.items()
        if isinstance(value := arguments.get(name), str)
        and any(c.isalpha() for c in value)
        and _introduced(query, words, value)
    }


def _named_identifiers(schema: dict[str, Any]) -> dict[str, list[str]]:
    """Required identifier parameters of no known shape (``claim_id``: no pattern, no
    example), with the words their names introduce a value by ("claim")."""
    properties = schema.get("properties") or {}
    named = {}
    for name in schema.get("required") or []:
        spec = properties.get(name)
        if not isinstance(spec, dict) or spec.get("type", "string") != "string":
            continue
        if spec.get("pattern") or spec.get("enum") or examples_of(spec) or not is_id_name(name):
            continue
        words = [w for w in re.split(r"[_\W]+", name.lower()) if len(w) > 2 and w not in _ID_WORDS]
        if words:
            named[name] = words
    return named


_ID_WORDS = frozenset({"id", "ids", "no", "num", "number", "ref", "code", "key"})


_INTRODUCING = 40  # characters before a value that may hold the word introducing it


def _introduced(query: str, words: list[str], value: str) -> bool:
    """Whether the request writes ``value`` right after a word of the parameter's name
    ("claim CLM-611940", "claim number: CLM-290375"): an identifier of that kind. Only
    the few characters before each occurrence are read: any request costs its length."""
    endings = [
        re.compile(
            rf"(?<![a-z]){re.escape(word)}s?(?:\s{{1,3}}(?:number|no\.?|id|ref|#))?\s{{0,3}}[:#]?\s{{0,3}}$",
            re.IGNORECASE,
        )
        for word in words
    ]
    start = query.find(value)
    while start >= 0:
        before = query[max(0, start - _INTRODUCING) : start]
        if any(ending.search(before) for ending in endings):
            return True
        start = query.find(value, start + 1)
    return False


def _shaped(value: str, spec: dict[str, Any]) -> bool:
    """Whether ``value`` has the parameter's declared shape: its ``pattern`` (the extractor
    matched it), or exactly the shape of one of its examples (``SKU2024001`` for
    ``SKU\\d{7}``); a file name read for "e.g. auth-v2.md" is no identifier of a type, and
    neither is a plain lowercase word, whatever pattern took it (``^[a-z][a-z0-9-]+$``
    takes any): "sre" in "sre 这周的值班是谁" is a team name as much as a service's."""
    if spec.get("pattern"):
        return not (value.isascii() and value.isalpha() and value.islower())
    return any(re.fullmatch(shape_of(example), value) for example in examples_of(spec))


def takes_none_of(
    extractor: ArgumentExtractor, query: str, schema: dict[str, Any], identifiers: set[str]
) -> bool:
    """Whether the request carries identifiers (of shapes the catalogue knows) and the tool
    takes none of them in any parameter."""
    if not identifiers:
        return False
    arguments = extractor.extract(query, schema).arguments
    return identifiers.isdisjoint(v for value in arguments.values() for v in _each(value))
