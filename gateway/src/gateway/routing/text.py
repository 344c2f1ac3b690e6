"""Text analysis for tool routing: one tokenizer for tool documents and queries.

Tool ids and parameter names arrive as ``snake_case``, ``camelCase`` or
``dotted.names`` (``math.factorial``, ``Tax_Calculator``); they are split into
words. Latin text is lower-cased, stop words dropped and words reduced to
their Snowball (Porter 2) stems, so "orders"/"order" and
"calculating"/"calculate" meet. Chinese, Japanese and Korean runs have no
spaces, so they become character unigrams and bigrams.
"""

from __future__ import annotations

import functools
import re
from typing import Any

import snowballstemmer

_CAMEL = re.compile(r"(?<=[a-z0-9])(?=[A-Z])|(?<=[A-Z])(?=[A-Z][a-z])")
_CJK_RANGE = "\u3040-\u30ff\u3400-\u4dbf\u4e00-\u9fff\uac00-\ud7af"  # kana, Han, Hangul
_TOKEN = re.compile(rf"[A-Za-z]+|\d+(?:\.\d+)?|[{_CJK_RANGE}]+")
_CJK = re.compile(f"[{_CJK_RANGE}]")

_STOPWORD_TEXT = """
a an and are as at be but by can could do does for from get give had has have how i if
in into is it its me my no not of on or our please so some than that the their them
then there these they this to us was we what when where which who why will with would
you your want need know tell show find also any about just let like
"""
STOPWORDS = frozenset(_STOPWORD_TEXT.split())

_STEMMER = snowballstemmer.stemmer("english")


@functools.lru_cache(maxsize=65536)
def stem(word: str) -> str:
    """The word's Snowball stem, spelled as American English spells it: "harbour" and
    "harbor", "catalogue" and "catalog", "centre" and "center" meet (a tool's words and
    the dictionary's English glosses are often the one, a request the other)."""
    return str(_STEMMER.stemWord(american(word)))


# British spellings that differ in their ending: -our (not "four", "flour", "detour"),
# -re of a measure or a place, -ogue, -ence of a noun whose verb ends in -ense, -ise of a
# verb whose American form ends in -ize.
_BRITISH = re.compile(
    r"^(?:(?P<our>[a-z]{2,}?o)u(?P<our_end>r(?:s|ed|ing|ite|ites|hood|hoods|able|er|ers)?)"
    r"|(?P<re>cent|theat|met|kilomet|centimet|millimet|lit|millilit|fib|calib|spect|somb"
    r"|lust|meag|sab)re(?P<re_end>s|d)?"
    r"|(?P<ogue>catal|dial|anal|monol|epil|prol)ogue(?P<ogue_end>s|d)?"
    r"|(?P<ence>lic|def|off|pret)ence(?P<ence_end>s|d)?"
    r"|(?P<ise>organ|author|recogn|real|priorit|custom|personal|final|minim|maxim|optim"
    r"|categor|summar|apolog|standard|normal|util|initial|visual|memor|synchron|serial"
    r"|stabil|sanit|steril|special|local|emphas|digit|familiar|harmon|modern|central"
    r"|decentral|capital)is(?P<ise_end>e|es|ed|ing|ation|ations|er|ers)"
    r")$"
)
_NOT_BRITISH = frozenset(
    (
        *("flour", "flours", "detour", "detours", "devour", "devours", "devoured"),
        *("contour", "contours", "amour", "scour", "scoured", "velour", "paramour"),
        "troubadour",
    )
)
_BRITISH_WORDS = {
    "tyre": "tire", "tyres": "tires", "grey": "gray", "jewellery": "jewelry",
    "programme": "program", "programmes": "programs", "cheque": "check",
    "cheques": "checks", "aluminium": "aluminum", "mould": "mold", "plough": "plow",
    "pyjamas": "pajamas", "kerb": "curb", "storey": "story", "draught": "draft",
    "enrol": "enroll", "enrolment": "enrollment", "fulfil": "fulfill",
    "fulfilment": "fulfillment", "instalment": "installment", "instalments": "installments",
}  # fmt: skip


def american(word: str) -> str:
    """``word`` (lower case) as American English spells it, where British English
    spells it otherwise by its ending (``_BRITISH``) or whole (``_BRITISH_WORDS``)."""
    whole = _BRITISH_WORDS.get(word)
    if whole is not None:
        return whole
    if word in _NOT_BRITISH:
        return word
    match = _BRITISH.match(word)
    if match is None:
        return word
    parts = match.groupdict()
    if parts["our"]:
        return parts["our"] + parts["our_end"]
    if parts["re"]:
        return parts["re"] + "er" + (parts["re_end"] or "").replace("d", "ed")
    if parts["ogue"]:
        return parts["ogue"] + "og" + (parts["ogue_end"] or "").replace("d", "ed")
    if parts["ence"]:
        return parts["ence"] + "ense" + (parts["ence_end"] or "")
    return parts["ise"] + "iz" + parts["ise_end"]


_WORD_SEPARATORS = re.compile(r"[_\-\s]+")


def words_of(name: str) -> list[str]:
    """The lower-cased words of a name or an option: ``armed_away``, "living room" and
    ``heat-on`` split at underscores, hyphens and spaces."""
    return [word for word in _WORD_SEPARATORS.split(name.lower()) if word]


def split_identifier(name: str) -> str:
    """``Tax_Calculator`` → ``Tax Calculator``; ``getWeatherNow`` → ``get Weather Now``."""
    return _CAMEL.sub(" ", re.sub(r"[._\-/]+", " ", name))


def tokenize(text: str) -> list[str]:
    tokens: list[str] = []
    for match in _TOKEN.finditer(split_identifier(text)):
        piece = match.group(0)
        if _CJK.match(piece):
            tokens.extend(piece)
            tokens.extend(piece[i : i + 2] for i in range(len(piece) - 1))
            continue
        word = piece.lower()
        if word in STOPWORDS or (len(word) == 1 and not word.isdigit()):
            continue
        tokens.append(stem(word))
    return tokens


# A day named in Chinese (今天, 明晚, 下周三, 上个月): a value, as a date's digits are. (A
# time of day, 上午 or 下午, is kept: a roster's shifts are what it is about.)
# "今天股市怎么样" shares 今天 with a roster's "今天谁坐诊" and nothing it is about.
_ZH_DAY_WORDS = re.compile(
    r"(?:大?前|昨|今|明|大?后)[天晚早]|(?:今|明|去|前)年|(?:这|本|上|下)个?(?:周|星期|礼拜|月)"
    r"[一二三四五六日天末]?|(?:周|星期|礼拜)[一二三四五六日天末]"
)


# A clock time and a count of people in Chinese are values too: 晚上8点, 十点半, 两点一刻,
# 五个人, 三位 ("一点" alone is "a little", and 上午 alone is kept, as above).
_ZH_N = "[0-9零一二两三四五六七八九十]"
_ZH_CLOCK_OR_PEOPLE = re.compile(
    rf"(?:早上|上午|中午|下午|晚上|傍晚|凌晨)\s?{_ZH_N}{{1,3}}\s?[点點](?:半|一刻|{_ZH_N}{{1,3}}分?)?"
    rf"|(?<!{_ZH_N})(?:\d{{1,2}}|[二两三四五六七八九十]{{1,3}})\s?[点點](?:半|一刻|{_ZH_N}{{1,3}}分?)?"
    rf"|(?<!{_ZH_N}){_ZH_N}{{1,3}}\s?(?:个人|[位名](?=[\s,，。、!?！？]|$|[客大小成老学孩朋]))"
)


def without_day_words(text: str) -> str:
    """``text`` with its Chinese day words (see ``_ZH_DAY_WORDS``), clock times and
    counts of people blanked."""
    return _ZH_CLOCK_OR_PEOPLE.sub(" ", _ZH_DAY_WORDS.sub(" ", text))


def cjk_share(text: str) -> float:
    """The share of a text written in CJK: CJK characters vs CJK characters plus Latin words."""
    cjk = len(_CJK.findall(text))
    latin = len(re.findall(r"[A-Za-z]+", text))
    return cjk / (cjk + latin) if cjk else 0.0


# A sentence that says what a tool is NOT for ("Not for removing documents (use
# rag_delete_source)") names exactly the requests that should go elsewhere: left in the
# text a tool is found by, it pulls those requests toward the wrong tool.
_NEGATIVE_SENTENCE = re.compile(
    r"^\s*(?:not\s+(?:for|to\s+be\s+used|suitable|intended|meant)|do\s+not\s+use|"
    r"don'?t\s+use|never\s+use|cannot\s+be\s+used|"
    r"(?:(?:it|this(?:\s+tool)?)\s+)?(?:cannot|can'?t|can\s+not|does\s+not|doesn'?t|will\s+not|won'?t)\s|"
    r"请勿|勿用|并非用于|不要(?!求)|"
    # (after an adverb too: "也不用于查询余额" is as much not for balances as "不用于…")
    r"(?:也|并|但|均|都)?(?:不适用|不支持|不用于|不能用于|不可用于"
    r"|不会|不能|不可以|不负责|不做|不提供)"
    # and what a sentence's subject says is not done here: "Cancellations are not handled
    # here", "Refunds are not processed by this tool" (not "Fields that are not changed…")
    r"|(?:(?!(?:that|which|who|whose|if|when|unless|where|any|all)\b)[a-z][\w'/-]*\s+){1,3}"
    r"(?:is|are|can|cannot|can't)\s+(?:not\s+|be\s+|not\s+be\s+)*(?:handled|processed|"
    r"supported|accepted|covered|managed|possible|available|allowed|permitted|done|taken|"
    r"offered|included|performed|dealt\s+with)\b)",
    re.IGNORECASE,
)
# A clause that sends a request elsewhere, at its end: "to go back to an older release use
# rollback_deployment", "要上新版本请走发布". Its words are the other tool's requests.
_REDIRECT = re.compile(
    r"(?:\b(?:use|try|call)\s+(?:the\s+)?`?[a-z][a-z0-9]*(?:[_.][a-z0-9]+)+`?"
    # (or several: "use update_pledge / cancel_pledge")
    r"(?:\s*(?:/|,|\bor\b|\band\b)\s*`?[a-z][a-z0-9]*(?:[_.][a-z0-9]+)+`?){0,3}"
    r"(?:\s+(?:instead|tool))?|(?:请|可)(?:走|改用|使用|调用|用)\s?(?:`?[A-Za-z][\w.]{0,63}`?|\S{1,12}))"
    r"\s?[.;。；)）]?$",
    re.IGNORECASE,
)
# A clause anywhere in a sentence that names another tool by its id as the one to use or
# the one that does something: "Changes nothing: use appointment_cancel to cancel",
# "changes go through booking_change", "renewing is library_renew", "(that is
# appointment_reschedule)". Its words are the other tool's requests. An id with an
# underscore only, and ending the clause or followed by what it is for: "unless
# notify_patient is false" and "use order_id from order_create" name parameters.
_SENT_ELSEWHERE = re.compile(
    r"\b(?:use|try|call|see|is|are|go(?:es)?\s+(?:to|through|via)|handled\s+by|belongs\s+to)\s+"
    r"(?:the\s+)?`?[a-z][a-z0-9]*(?:_[a-z0-9]+)+`?"
    r"(?:\s+(?:tool\s+)?(?:to|for|instead|and|or)\b|\s*(?:[.;:,)]|$))",
    re.IGNORECASE,
)
# A sentence that sends a request elsewhere by the other tool's plain name: "To move or
# cancel a meeting you already have, use reschedule / cancel instead."; and in Chinese a
# condition whose clause after it does ("如果只是想换个时间，请用改期功能，不要取消。",
# "已经申报过的单子如需更正，请走改单，不要重复申报。"). The condition's words are the
# other tool's requests: the whole sentence goes.
_USE_INSTEAD = re.compile(
    r"\b(?:use|try|call)\s+(?:the\s+)?[\w/ `'-]{1,50}?\s+instead\s*[.;!]?$", re.IGNORECASE
)
# "If the customer just wants another date, reschedule instead of cancelling": what to do
# instead, in a case the tool is not for.
_IF_INSTEAD = re.compile(
    r"^\s*(?:if|when|where)\b[^.;!?]{1,80}?,\s*[^.;!?]{1,60}?\binstead\b[^.;!?]*[.;!?]?$",
    re.IGNORECASE,
)
_CONDITION_REDIRECT = re.compile(
    r"^\s*[^。！？；;，,]{0,20}?(?:如果|若|如需|如要|要是|想要?)[^。！？；;]{1,40}?[，,]\s*(?:请|可以?)?(?:走|改用|使用|调用|用)"
    r"\s*(?:`?[A-Za-z][\w.]{0,63}`?\s*|[^。！？；;，,]{1,20})(?:[，,][^。！？；;]{0,20})?[。！？；;]?$"
)
# A sentence that leaves an action to another place or other people: "Rolling a file back
# to an older version is done in the web app", "changing or withdrawing a request is done
# by the events team, not here".
_DONE_ELSEWHERE = re.compile(
    r"^\s*[a-z]+ing\b[^.;!?]{0,100}?\b(?:is|are)\s+(?:only\s+)?(?:done|handled|managed|made"
    r"|processed)\s+(?:in|by|through|via|from|at)\s+(?!this\b|here\b)",
    re.IGNORECASE,
)
# A Chinese clause that leaves its request to other people: "修改或撤销申请需联系活动组".
_CONTACT_ELSEWHERE = re.compile(
    r"(?:需要?|须|请|要)(?:联系|找|咨询)[^。！？；;，,]{1,15}[。！？；;]?$"
)
# Sentences, and Chinese clauses ("…，也不能用来升级或降级套餐": a clause may say what the
# tool does not do).
_WHOLE_SENTENCES = re.compile(r"[^.!?。！？；;]+[.!?。！？；;]?")
_SENTENCES = re.compile(r"[^.!?。！？；;，]+[.!?。！？；;，]?")


def _units(description: str) -> list[str]:
    """The description's sentences, each Chinese one cut at its commas, except a sentence
    that sends a request elsewhere on a condition (``_CONDITION_REDIRECT``), kept whole."""
    units = []
    for sentence in _WHOLE_SENTENCES.findall(description):
        if _CONDITION_REDIRECT.match(sentence):
            units.append(sentence)
        else:
            units.extend(_SENTENCES.findall(sentence))
    return units


def negative_sentences(description: str) -> list[str]:
    """The description's sentences about what the tool is not for (or that send a
    request to another tool)."""
    return [s.strip() for s in _units(description) if _not_for(s)]


def _not_for(sentence: str) -> bool:
    # Trailing space stripped first: "\s*$" after a search start would rescan it each time.
    stripped = sentence.rstrip()
    return bool(
        _NEGATIVE_SENTENCE.match(sentence)
        or _REDIRECT.search(stripped)
        or _SENT_ELSEWHERE.search(sentence)
        or _USE_INSTEAD.search(stripped)
        or _CONDITION_REDIRECT.match(sentence)
        or _IF_INSTEAD.match(stripped)
        or _CONTACT_ELSEWHERE.search(stripped)
        or _DONE_ELSEWHERE.match(sentence)
    )


# Where a kept sentence turns to what the tool does not do: "… and it cannot change,
# appeal or comment on a grade", "This is not an official transcript". The rest of the
# sentence is left out as a negative sentence is.
_TURNS_NEGATIVE = re.compile(
    r"\b(?:cannot|can'?t|can\s+not|does\s+not|doesn'?t|do\s+not|don'?t|will\s+not|won'?t"
    r"|is\s+not|isn'?t|never|not\s+for|nor)\b"
    # and in Chinese, after the clause's subject ("已开具的通行证也不能在此撤销或修改"), not
    # in a condition ("如果不能登录…")
    r"|(?<![如若果])(?:也|并|但|均|都)?"
    r"(?:不能|不可以|不支持|不负责|不提供|不处理|不包括|不会|不用于|不适用|不可用于)",
    re.IGNORECASE,
)


def positive_description(description: str) -> str:
    """The description without its sentences about what the tool is not for, or that
    send a request to another tool, and each kept sentence only up to where it turns to
    what the tool does not do."""
    kept = []
    for sentence in _units(description):
        if _not_for(sentence):
            continue
        turn = _TURNS_NEGATIVE.search(sentence)
        kept.append(sentence if turn is None else sentence[: turn.start()])
    return "".join(kept).strip() or description


# What others do with what the tool makes: "sends it to the line manager for approval",
# "pending approval", "提交后由直属上级审批". A leave tool that says so does not approve.
_HANDED_OFF = re.compile(
    r"\b(?:for|pending|awaiting|await)\s+(?:[\w-]+\s+){0,3}?(?:approval|review|sign-off)\b"
    r"|由[^，。；,;]{1,12}?(?:审批|审核|批准|复核)|[待已未](?:审批|审核|批准|复核)",
    re.IGNORECASE,
)


# An aside on how to do something else: "The service stays the same (to change the
# service, cancel and book again)". Its verbs are another tool's.
_ASIDE_TO_DO_ELSE = re.compile(r"\(\s*to\s+[a-z]+\b[^()]{0,120}\)", re.IGNORECASE)


# What is left for someone to do: "Outstanding balance left to pay on a booking", "the
# amount still to be paid", 待支付, 未付清. A balance that says so reports; it does not pay.
_LEFT_TO_DO = re.compile(
    r"\b(?:left|remaining|still|yet)\s+to\s+(?:be\s+)?[a-z]+|[待未](?:支付|付款|付清|缴纳|缴费)",
    re.IGNORECASE,
)


def without_left_to_do(text: str) -> str:
    """``text`` without what it says is left for someone to do (``_LEFT_TO_DO``)."""
    return _LEFT_TO_DO.sub(" ", text)


def own_actions_text(description: str) -> str:
    """What the description says the tool does itself: :func:`positive_description`
    less what it says others do next (``_HANDED_OFF``) or is left to do (``_LEFT_TO_DO``),
    and its asides on how to do something else (``_ASIDE_TO_DO_ELSE``)."""
    own = _HANDED_OFF.sub(" ", positive_description(description))
    return _ASIDE_TO_DO_ELSE.sub(" ", without_left_to_do(own))


def disclaimed_text(description: str) -> str:
    """What :func:`positive_description` leaves out: the sentences about what the tool is
    not for, and each kept sentence from where it turns to what the tool does not do."""
    cut = []
    for sentence in _units(description):
        if _not_for(sentence):
            cut.append(sentence)
            continue
        turn = _TURNS_NEGATIVE.search(sentence)
        if turn is not None:
            cut.append(sentence[turn.start() :])
    return "".join(cut).strip()


def tool_document(manifest: dict[str, Any]) -> str:
    """The text a tool is found by: name, id, what the description says it is for,
    aliases, example requests, parameters."""
    parts = [
        split_identifier(str(manifest.get("tool_id", ""))),
        str(manifest.get("name") or ""),
        positive_description(str(manifest.get("description") or "")),
        " ".join(str(a) for a in manifest.get("aliases") or []),
        " ".join(str(e) for e in manifest.get("examples") or []),
    ]
    properties = (manifest.get("input_schema") or {}).get("properties") or {}
    for pname, pschema in properties.items():
        description = pschema.get("description", "") if isinstance(pschema, dict) else ""
        parts.append(f"{split_identifier(pname)} {description}")
    return "\n".join(p for p in parts if p)


_INSTRUCTION = re.compile(r"^(?P<head>[^:：\n]{4,200}?)\s*[:：]\s*(?P<body>.+)$", re.DOTALL)
# Words of a greeting or a heads-up before a colon: they ask for nothing.
_FILLER = frozenset(
    (
        *("hey", "hi", "hello", "dear", "team", "all", "folks", "guys", "quick", "one"),
        *("question", "q", "so", "ok", "okay", "please", "pls", "thanks", "btw", "fyi"),
        *("note", "heads", "up", "urgent", "asap", "important", "reminder", "also", "sorry"),
        *("good", "morning", "afternoon", "evening", "again", "another", "small", "ask"),
        *("for", "the", "to", "you", "a", "an", "my", "our"),
    )
)


# A quoted passage is text to work on ("translate 'the parcel is delayed' into Spanish",
# "把“订单已发货”翻译成英文"), not what the request asks for: one of three words or more (not
# in title case: that is a name), or four CJK characters or more, is left out when finding
# the tool. Shorter quotes (a name, a file, an id) stay.
_QUOTED = re.compile(
    r"“([^”]+)”|‘([^’]+)’|「([^」]+)」|\"([^\"]+)\""
    r"|(?<![\w'])'([^']+)'(?![\w'])"
)


def _unquoted(query: str) -> str:
    def keep(match: re.Match[str]) -> str:
        quoted = next(g for g in match.groups() if g)
        words = [w for w in quoted.split() if re.search("[A-Za-z]", w)]
        # A passage in title case is a name ('Ticket to Ride', "Doctors Without Borders").
        named = sum(w[0].isupper() for w in words) * 2 >= len(words)
        long = (len(words) >= 3 and not named) or len(_CJK.findall(quoted)) >= 4
        # Most of the request in quotes is the request itself, quoted.
        return " " if long and 2 * len(quoted) < len(query) else match.group(0)

    head = _QUOTED.sub(keep, query)
    if head == query:
        return query
    head = _SPACES.sub(" ", head).strip()
    return head if len(tokenize(head)) >= 2 else query


_SPACES = re.compile(r"[ \t]{2,}")


def instruction(query: str) -> str:
    """The part of a request that says what to do, for finding the tool.

    "add this to the knowledge base as faq.md: Returns are free within 30 days" asks
    to store a text, but its payload reads like a question for a search tool. When a
    colon is followed by a payload (six words or more, or a dozen CJK characters) the
    request is routed by what precedes it; the arguments still come from all of it.
    A long quoted passage is a payload too (``_QUOTED``).
    """
    query = _unquoted(query)
    match = _INSTRUCTION.match(query.strip())
    if match is None:
        return query
    head, body = match.group("head"), match.group("body")
    said = [w for w in re.findall(r"[A-Za-z]+", head.lower()) if w not in _FILLER]
    if sum(not t.isdigit() for t in tokenize(head)) < 2 or (not said and not _CJK.search(head)):
        return query  # a label ("Turn 3:", "Q2:", "Hey, quick one:") says nothing of what to do
    words = len(re.findall(r"[A-Za-z]+", body))
    if words >= 6 or len(_CJK.findall(body)) >= 12:
        return head
    return query
