"""An enum option chosen by what the request means, when no word of it names one.

``extract.py`` fills an enum parameter when the request names an option: as it is
written, by a word the description pairs with it, by a Chinese word's English sense.
People often say what an option means in other words: "someone opened my luggage and
my camera is gone" for ``pilfered``, 被偷了 for 被盗, "the AC stopped blowing cold"
for ``hvac``, "the car is sold" for ``sold_vehicle``. For an enum parameter still
empty after those rules, the router compares the request's vector with each option's
and takes the closest option when it is clearly the closest.

An option's text is its words (underscores and hyphens read as spaces); a Chinese
option, and a Chinese request, are compared in their English reading (``gloss``: the
embedder is English-only). Each option's score is its cosine to the request, less half
its cosine to the tool's own description: an option that restates what the tool does
(买家要求取消 "the buyer asked to cancel", on a tool that cancels orders) is close to
every request for that tool, so closeness to the request alone would pick it for a
plain "cancel OR2611150392" that gives no reason. The best option is taken when it
scores at least ``MIN_SCORE`` and ``MIN_MARGIN`` more than the next (``MIN_MARGIN_TO_ACT``
for a tool that changes something); otherwise the parameter stays empty (a required one
is then asked for, as before). When the whole request leads no option clearly, each
clause that says something in words (identifiers left out; none with an amount, a date
or another number) is compared too, and an option's best cosine to one of them counts,
under the same score and margins: "I'm sick and can't make spin tonight, please cancel
BK-1120457" means ``illness``, "hi, can you move 0412558301 onto PLN-5G-60 please,
starting right away" ``immediately``. A clause with a number is left out: "提前还2万本金"
read alone paid the loan off (提前结清) rather than in part.

The settings were chosen on the enum parameters of the gold tools of the request sets
in ``tests/data`` that no rule filled. For tools that only read, every option chosen
where a set names the value was right at margin 0.12 (39), and 17 were chosen where a
set names none. For tools that change something, margin 0.12 chose 113 right and 8
wrong; 0.22 none wrong (0.2 still chose three wrong ones: a loan paid off for
提前还2万本金). What it does to those sets' scores is in docs/architecture.md ("Enum
options by meaning").
"""

from __future__ import annotations

import functools
import itertools
import re
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from gateway.routing.extract import Extraction
from gateway.routing.gloss import gloss, gloss_ready, has_han
from reach_common.embeddings import Vectors

MIN_SCORE = 0.1
MIN_MARGIN = 0.12
# A tool that changes something acts on the option: a wrong one (a loan paid off instead
# of partly, "once daily" read as "as needed") is worse than asking for it.
MIN_MARGIN_TO_ACT = 0.22
DESCRIPTION_WEIGHT = 0.5
MAX_OPTIONS = 30  # a longer list is a catalogue, not a choice a sentence makes
_SEPARATORS = re.compile(r"[_\-]+")
# Clauses: split at Chinese punctuation, and at Latin punctuation before a space or the end
# (not inside "li.hua@ourco.com" or "1,280.50").
_CLAUSES = re.compile(r"[;!?，。；！？]+\s*|[,.:]+(?:\s+|$)")
# An identifier (letters and digits, or a long number): it names what is acted on, not how.
_KEYS = re.compile(r"[A-Za-z][\w-]*\d[\w-]*|\d[\w-]*[A-Za-z][\w-]*|\d{6,}", re.ASCII)
# The runs of characters an identifier is made of: _KEYS never matches across two.
_KEY_RUN = re.compile(r"[\w-]+", re.ASCII)
_LETTER = re.compile(r"[A-Za-z]")
_LONG_NUMBER = re.compile(r"\d{6,}", re.ASCII)
# A clause with a number left (an amount, a date) is about that value: not compared.
_DIGIT = re.compile(r"\d")
# The words a clause must have (two at least) to be compared.
_WORDS = re.compile(r"\b[A-Za-z]{2,}\b|[\u4e00-\u9fff]")


# What a description says an option means, right after its name: "Harbour Grill
# (steakhouse)", "pilfered = bag arrived but items were taken", "'invited' = invitation
# sent but not accepted", "organics: food and garden waste".
_GLOSS_AFTER = (
    r"""['"\u2019\u201d]?\s*(?:\(([^()\n]{1,80})\)|\uff08([^\uff08\uff09\n]{1,80})\uff09"""
    r"""|[=:]\s*([^;\uff1b\u3002\n()]{1,160}))"""
)
_CLAUSE_END = re.compile(r"\.(?:\s|$)|,\s")
# A gloss short enough to be written whole in a request ("rooftop bar", "steakhouse").
_WRITTEN_GLOSS = re.compile(r"[A-Za-z]{3,}(?:[ -][A-Za-z]{2,}){0,2}")
_MAX_DESCRIBED = 4000  # characters of descriptions searched for glosses


@functools.lru_cache(maxsize=4096)
def gloss_of(option: str, descriptions: str) -> str | None:
    """The English words ``descriptions`` (the parameter's, then the tool's) give
    ``option``'s meaning in, right after naming it (as written, or with spaces for its
    underscores and any case: "Sky Lounge (rooftop bar)" for ``sky_lounge``); None
    when they give none. Chinese glosses are read by the extractor (``_paired_words``)."""
    words = [w for w in re.split(r"[_\-\s]+", option.strip()) if w]
    if not words or len(descriptions) > _MAX_DESCRIBED:
        return None
    name = r"[\s_\-]+".join(re.escape(w) for w in words)
    pattern = rf"(?<![A-Za-z0-9_]){name}(?![A-Za-z0-9_]){_GLOSS_AFTER}"
    for found in itertools.islice(re.finditer(pattern, descriptions, re.IGNORECASE), 8):
        text = next(g for g in found.groups() if g)
        if found[3]:  # after "=" or ":", up to the end of its clause
            text = _CLAUSE_END.split(text, maxsplit=1)[0]
        text = text.strip(" '\"\u2019\u201d")
        if has_han(text) or not re.search(r"[A-Za-z]{3,}", text):
            continue
        if text.lower() != " ".join(words).lower():
            return text
    return None


def glosses_of(spec: dict[str, Any], description: str) -> list[str | None]:
    """Each enum option's gloss (``gloss_of``) in the parameter's description, then the
    tool's."""
    described = f"{spec.get('description') or ''}\n{description}"
    return [gloss_of(str(option), described) for option in spec["enum"]]


def written_gloss(query: str, glosses: Sequence[str | None]) -> int | None:
    """The index of the one option whose short gloss the request writes whole
    ("steakhouse dinner for two, Friday 7pm" for ``harbour_grill (steakhouse)``)."""
    lowered = query.lower()
    said = [
        i
        for i, text in enumerate(glosses)
        if text
        and _WRITTEN_GLOSS.fullmatch(text)
        and re.search(rf"(?<![a-z]){re.escape(text.lower())}(?![a-z])", lowered)
    ]
    return said[0] if len(said) == 1 else None


def readable(text: str) -> str | None:
    """``text`` as the English-only embedder can read it: a text with Chinese in its
    English reading (None until the dictionary is read: the index build reads it for a
    catalogue with Chinese, a Chinese request does on the event loop's side)."""
    if not has_han(text):
        return text
    return gloss(text) if gloss_ready() else None


def open_choices(
    schema: dict[str, Any], extraction: Extraction, description: str = ""
) -> dict[str, list[str]]:
    """The enum parameters ``extraction`` left empty, with their options' texts: string
    options only, two to ``MAX_OPTIONS`` of them, each readable. An option's text is its
    words and what the parameter's or the tool's ``description`` says it means
    (``gloss_of``): "harbour grill steakhouse"."""
    properties = schema.get("properties")
    if not isinstance(properties, dict):
        return {}
    choices: dict[str, list[str]] = {}
    for name, spec in properties.items():
        if name in extraction.arguments or not isinstance(spec, dict):
            continue
        options = spec.get("enum")
        if not isinstance(options, list) or not 2 <= len(options) <= MAX_OPTIONS:
            continue
        if not all(isinstance(option, str) and option.strip() for option in options):
            continue
        glosses = glosses_of(spec, description)
        texts = [
            readable(" ".join(filter(None, (_SEPARATORS.sub(" ", o), g))))
            for o, g in zip(options, glosses, strict=True)
        ]
        if all(texts):
            choices[name] = [t for t in texts if t]
    return choices


def best_option(scores: Sequence[float], margin: float = MIN_MARGIN) -> int | None:
    """The index of the clearly best score: at least ``MIN_SCORE``, ``margin`` ahead."""
    ranked = sorted(range(len(scores)), key=lambda i: scores[i], reverse=True)
    first, second = ranked[0], ranked[1]
    if scores[first] >= MIN_SCORE and scores[first] - scores[second] >= margin:
        return first
    return None


def _by_clause(
    query: str, options: Vectors, clause_vectors: Callable[[Sequence[str]], Vectors]
) -> Vectors | None:
    """Each option's best cosine to one clause of ``query`` that says something in words
    (identifiers left out; no amount, date or other number in it); None when no clause
    does. "I'm sick and can't make spin tonight" means ``illness`` more clearly than the
    whole request, whose booking number and "please cancel" dilute it."""
    clauses = [_without_keys(p).strip() for p in _CLAUSES.split(query)]
    parts = [
        r
        for p in clauses
        if len(_WORDS.findall(p)) >= 2 and not _DIGIT.search(p) and (r := readable(p))
    ]
    if not parts:
        return None
    return np.asarray((options @ clause_vectors(parts).T).max(axis=1))


def _without_keys(text: str) -> str:
    """``text`` with its identifiers (``_KEYS``) blanked, run by run, as ``_KEYS.sub``
    blanks them but in time linear in the run: ``_KEYS`` tried each letter of a run of
    letters to the run's end, and each digit of "1-1-1-…" too (4,000 letters: 130 ms,
    holding the interpreter lock). In a run with a letter and a digit, the match runs
    from its first letter or digit to its end; with digits alone, only six or more in a
    row match; with no digit, nothing does."""

    def blanked(run: re.Match[str]) -> str:
        text = run.group(0)
        digit = _DIGIT.search(text)
        if digit is None:
            return text
        letter = _LETTER.search(text)
        if letter is None:
            return _LONG_NUMBER.sub(" ", text)
        return text[: min(letter.start(), digit.start())] + " "

    return _KEY_RUN.sub(blanked, text)


def choose_options(
    extraction: Extraction,
    query: str,
    schema: dict[str, Any],
    description: str,
    *,
    acts: bool,
    request_vector: Callable[[str], Vectors],
    embed: Callable[[Sequence[str]], Vectors],
    clause_vectors: Callable[[Sequence[str]], Vectors] | None = None,
) -> None:
    """Fill ``extraction``'s empty enum parameters whose option the request clearly means
    (named in its ``by_meaning``). ``acts``: the tool changes something (a clearer lead
    is asked of its options). ``request_vector`` embeds the request (maybe seen
    already), ``embed`` the tool's texts (options, description: cached), ``clause_vectors``
    the request's clauses in one batch (``_by_clause``; without it, none are read)."""
    choices = open_choices(schema, extraction, description)
    if not choices:
        return
    request = readable(query)
    if request is None:
        return
    properties = schema["properties"]
    for name in list(choices):  # an option whose gloss the request writes whole
        said = written_gloss(request, glosses_of(properties[name], description))
        if said is not None:  # (a Chinese request in its English reading: 牛排馆 steakhouse)
            _fill(extraction, name, properties[name]["enum"][said])
            del choices[name]
    about = readable(description)
    if not choices or about is None:
        return
    asked = request_vector(request)
    texts = [about] + [text for texts in choices.values() for text in texts]
    vectors = embed(texts)
    to_request = vectors[1:] @ asked
    to_tool = vectors[1:] @ vectors[0]
    scores = to_request - DESCRIPTION_WEIGHT * to_tool
    margin = MIN_MARGIN_TO_ACT if acts else MIN_MARGIN
    by_clause: Vectors | None = None
    clauses_read = False
    start = 0
    for name, texts in choices.items():
        span = slice(start, start + len(texts))
        start += len(texts)
        picked = best_option(np.asarray(scores[span]).tolist(), margin)
        if picked is None and not clauses_read and clause_vectors is not None:
            clauses_read = True  # the clauses embedded once (one model run), if needed
            to_clause = _by_clause(query, vectors[1:], clause_vectors)
            if to_clause is not None:
                by_clause = to_clause - DESCRIPTION_WEIGHT * to_tool
        if picked is None and by_clause is not None:
            picked = best_option(np.asarray(by_clause[span]).tolist(), margin)
        if picked is not None:
            _fill(extraction, name, properties[name]["enum"][picked])


def _fill(extraction: Extraction, name: str, option: str) -> None:
    extraction.arguments[name] = option
    if name in extraction.missing:
        extraction.missing.remove(name)
    extraction.by_meaning.append(name)
