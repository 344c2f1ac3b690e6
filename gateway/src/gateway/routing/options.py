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
# A clause with a number left (an amount, a date) is about that value: not compared.
_DIGIT = re.compile(r"\d")
# The words a clause must have (two at least) to be compared.
_WORDS = re.compile(r"\b[A-Za-z]{2,}\b|[\u4e00-\u9fff]")


def readable(text: str) -> str | None:
    """``text`` as the English-only embedder can read it: a text with Chinese in its
    English reading (None until the dictionary is read: the index build reads it for a
    catalogue with Chinese, a Chinese request does on the event loop's side)."""
    if not has_han(text):
        return text
    return gloss(text) if gloss_ready() else None


def open_choices(schema: dict[str, Any], extraction: Extraction) -> dict[str, list[str]]:
    """The enum parameters ``extraction`` left empty, with their options' texts: string
    options only, two to ``MAX_OPTIONS`` of them, each readable."""
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
        texts = [readable(_SEPARATORS.sub(" ", option)) for option in options]
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
    clauses = [_KEYS.sub(" ", p).strip() for p in _CLAUSES.split(query)]
    parts = [
        r
        for p in clauses
        if len(_WORDS.findall(p)) >= 2 and not _DIGIT.search(p) and (r := readable(p))
    ]
    if not parts:
        return None
    return np.asarray((options @ clause_vectors(parts).T).max(axis=1))


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
    choices = open_choices(schema, extraction)
    if not choices:
        return
    request = readable(query)
    about = readable(description)
    if request is None or about is None:
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
    properties = schema["properties"]
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
        if picked is None:
            continue
        extraction.arguments[name] = properties[name]["enum"][picked]
        if name in extraction.missing:
            extraction.missing.remove(name)
        extraction.by_meaning.append(name)
