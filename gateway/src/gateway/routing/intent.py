"""Questions are not sent to tools that write, nor orders to tools that only read.

all-MiniLM-L6-v2 weighs a request's object far more than its verb: "show me
invoice INV-2026-00042" is closer to a tool that pays invoices (whose example
"settle invoice INV-2026-00107" differs from it in one word) than to the one
that shows them, "where is my parcel SF1234567890?" is closer to booking a
shipment than to tracking one, and "cancel contract CT-2026-0042" is closest to
the tool that signs contracts. Routed offline, the question would pay the
invoice and the cancellation sign the contract. What the router knows:

- **The request asks to read** (``asks_to_read``): it is a question or begins
  with a reading verb ("what's…", "is … paid", "has … been delivered", "show
  me…", "can you check…"; 多少, 什么, 哪, 是否, 有没有, 查…, 付没付), and asks for
  no write action (``vocabulary.requested_actions``: "can you cancel…" writes).
- **The request is an order** (``order_verb``): its first verb is one of writing
  ("submit…", "can you close…", "open a…"), or it begins with a Chinese action
  word (申请…, 帮我取消…).
- **The tool writes** (``writes``): it is not idempotent (or is an HTTP PUT, PATCH
  or DELETE), as HTTP says of a POST, unless its name or its description's first
  word says it reads ("search_notes", "Searches…", "get_weather"; 摄像头录像查询): a
  search behind a POST stays a reader. An idempotent POST whose words do not say it
  reads ("assign_trailer": safe to repeat, but it assigns) is held to an order's verb
  and kept from a question as any writer is.
- **The tool does the verb** (``does``): its own words (less what it says it
  cannot do) use it, or a word of its action class ("purge" and "Deletes…"; 取消 and
  "Cancels…"). A writer described in the other language is taken at its word; a
  reader never is, but its words may name the verb as their subject ("refund RF…
  status" of ``refund_status``).

A writer for a request to read, and for an order a tool that does not do its verb,
lose ``READ_REQUEST_PENALTY`` (all of it) of their score and confidence: they are
not chosen, and when nothing else is confident enough the request is refused. A
cached route is held to the same rule. Misjudged, the rule fails safe: it only ever
takes a writer away from a question, and from an order the tools that do not name it.
It applies only when the candidates hold both readers and writers: a catalogue
whose tools are all POSTs (BFCL and MetaTool in the bench) is ranked exactly as
before.
"""

from __future__ import annotations

import functools
import re
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from gateway.routing import vocabulary
from gateway.routing.gloss import dictionary, gloss_ready, segment
from gateway.routing.text import (
    STOPWORDS,
    cjk_share,
    disclaimed_text,
    own_actions_text,
    split_identifier,
    stem,
)

READ_REQUEST_PENALTY = 1.0  # not chosen

# Verbs that begin a request to read something, after any greeting or "can you".
_READ_VERBS = frozenset(
    (
        *("show", "list", "check", "find", "look", "tell", "display", "view", "pull"),
        *("fetch", "see", "search", "track", "lookup", "query", "retrieve", "confirm"),
        *("verify", "count", "compare"),
    )
)
# Question words; "have" and "do" only before a pronoun ("do I have…"; "do it" is an order).
_QUESTION_WORDS = frozenset(
    (
        *("what", "what's", "whats", "where", "where's", "when", "when's", "which", "who"),
        *("who's", "whose", "how", "how's", "why", "is", "are", "was", "were", "has"),
        *("hasn't", "did", "does", "doesn't", "isn't", "any"),
    )
)
# Checking in (for a flight, at a hotel) writes: "check me in for BA117", "check-in for
# booking E5TY7H"; "check in on my order" is still a look.
_CHECK_IN = re.compile(r"^check(?:\s+(?:me|us|him|her|them)\s+|[\s-]?)in\b(?!\s+on\b)")
_PRONOUN_QUESTION = re.compile(r"^(?:do|have)\s+(?:i|we|you|they|he|she)\b")
# Nouns that open a request to read with no verb at all: "status of DL55012983", "balance
# for 48820175?", "eta on my courier".
_READING_NOUNS = frozenset(
    ("status", "balance", "bal", "eta", "details", "info", "history", "progress", "summary")
)
_LEAD = re.compile(
    r"^(?:(?:hey|hi|hello|ok|okay|so|um|uh|sorry|also|and|actually|wait|quick question|pls"
    r"|please|kindly)"
    r"\b[\s,!.:;-]*)*",
    re.IGNORECASE,
)
_ASK = re.compile(
    r"^(?:(?:can|could|would|will)\s+(?:you|u|i|we)\s+(?:please\s+|pls\s+|just\s+)?"
    r"|(?:(?:i|we)\s+(?:want|need|would\s+like)|(?:(?:i|we)['’]d|id)\s+like|help\s+me|let\s+me)"
    r"\s+(?:to\s+)?"
    r"|(?:need|want|have|gotta)\s+to\s+)",  # "Need to move my lesson …", the "I" left out
    re.IGNORECASE,
)
_FIRST_WORD = re.compile(r"[a-z]+(?:'[a-z]+)?")
# Chinese: question words, reading verbs, and "A没A" questions ("付没付", "到没到").
_CJK_QUESTION = re.compile(
    r"多少|什么|哪|几[个号点天时]|是否|有没有|怎么样|怎么还|如何|啥|(\w)没\1|了没"
)
# "Has it happened?" ("发出去了吗", "批了吗"), unless it asks for it to be done
# ("能直接帮我批了吗").
# So does a yes-or-no question ("inventory-api 是不是挂了", "SKU2024010 卖完了吗", "能退吗").
_CJK_YES_NO = re.compile(r"了吗|是不是|吗\s*[？?]?\s*$")
_CJK_ASKS_FOR = re.compile(r"帮我|帮忙|麻烦|请你|能不能|可不可以|可以帮|可以吗|行吗|好吗")
# (at the start of any clause: "供应商说发票还没付，帮我看看 INV-… 的状态"; or after "I want
# to": 我要看一下发票 INV-…, 我想看 SMP-… 的结果; not 看病, 看牙: a visit is booked)
_CJK_READ = re.compile(
    r"(?:^|[，,；;。！!]\s*)(?:请|麻烦|帮我|帮忙|我要|我想|想)?(?:查|看(?![病牙医诊])|显示|列|告诉我)"
)
# A tool whose name, or its description's first word, is one of these reads, however it is
# called (a search behind a POST).
_READING = frozenset(
    stem(w)
    for w in (
        *("get", "search", "query", "list", "lookup", "find", "fetch", "retrieve", "show"),
        *("check", "view", "read", "status", "track", "calculate", "compute", "convert"),
        *("translate", "estimate", "quote", "count", "compare", "summarize", "summarise"),
        *("analyze", "analyse", "describe", "answer", "recommend", "look", "predict", "report"),
    )
)
_WORD = re.compile(r"[A-Za-z]+")
# The same in Chinese: a name that holds one (摄像头录像查询, 订单详情), or a description
# whose first clause opens with one (查看某一次充电的费用明细…, 按日期…查询…).
_READING_ZH = re.compile(r"查询|查看|查找|搜索|检索|获取|列出|读取|浏览|详情|明细")
_FIRST_CLAUSE_ZH = re.compile(r"[^，。；;,.！!？?\n]{0,40}")
# A description's first word that says the tool writes ("Creates…", "Files…", "Logs…").
_OPENS_WRITING = frozenset(
    stem(w)
    for w in (
        *("creates", "files", "logs", "opens", "records", "registers", "submits", "books"),
        *("cancels", "updates", "changes", "deletes", "removes", "adds", "sends", "issues"),
        *("places", "schedules", "reserves", "pays", "transfers", "raises"),
    )
)
# A description's first word that says each request makes a new record ("Log overtime
# hours.", "Files a claim"): the tool creates, though "log", "file" and "record" are
# nouns as often elsewhere ("audit log", "attendance_record").
_OPENS_A_RECORD = frozenset(stem(w) for w in ("log", "logs", "files", "records", "submits"))
_CREATES = frozenset({stem("create")})
_PARTICIPLE = re.compile(r"[^e]ed$")  # "canceled", "shipped"; not "need"
# The first verb of an order ("submit…", "can you close…"). Verbs that also open a request
# to read ("open the report", "print the invoice", "set up a call?") are left out; "open"
# counts before "a", "an" or "new" only.
_WRITE_VERBS = frozenset(
    (
        *("submit", "close", "apply", "approve", "reject", "assign", "reassign", "fire"),
        *("hire", "raise", "escalate", "bump", "grant", "revoke", "reset", "request"),
        *("order", "ship", "sign", "transfer", "rebalance", "settle", "issue", "void"),
        *("archive", "restore", "enable", "disable", "deploy", "restart", "lock", "unlock"),
        *("block", "unblock", "invite", "publish", "increase", "decrease", "create", "add"),
        *("register", "save", "store", "upload", "update", "change", "modify", "edit"),
        *("rename", "adjust", "replace", "delete", "remove", "erase", "purge", "cancel"),
        *("abort", "refund", "book", "schedule", "reserve", "pay", "mark", "restock"),
        *("replenish", "reschedule", "postpone", "rebook", "extend", "withdraw", "drop"),
        *("enroll", "enrol", "remind", "notify", "waive", "appeal", "dispute", "charge"),
        *("kick", "offboard", "deactivate", "log", "reply", "buy"),
        *("refer", "merge", "flag", "reopen", "resend", "reissue", "upgrade", "downgrade"),
        *("unenroll", "unenrol", "release", "split", "fix", "rate", "end"),
        *("record", "declare", "reduce", "lower", "write", "subscribe"),
        *("topup", "recharge"),  # money put on a card ("top up", ``_PHRASAL``)
        # and of changing a running system ("trigger a backup" is not a backup-status
        # lookup, "renew the cert" not an expiry check)
        *("trigger", "initiate", "launch", "rotate", "renew", "provision", "revert"),
        *("rollback", "scale", "swap", "migrate", "kill", "stop", "terminate", "resize"),
        *("reboot", "shutdown", "suspend", "pause", "drain", "flush", "rerun", "retry"),
        *("rebuild", "redeploy", "bounce", "promote", "rollout", "decommission"),
        # and of bringing back what was cancelled ("reinstate my membership MB-…")
        *("reinstate", "reactivate", "undelete", "unarchive"),
    )
)
# Every verb an order may begin with, for readers of what follows it ("Groom Rufus" names
# Rufus): the two lists above and the verbs of the action classes.
ORDER_VERBS = _WRITE_VERBS | _READ_VERBS | vocabulary.ACTION_VERBS
_OPEN_NEW = re.compile(r"^open\s+(?:a|an|new)\b")
_CJK_PLEASE = (
    # before a Chinese order, after a follow-up's 那 ("那帮我约一个下午的", "那就取消吧")
    r"^(?:那(?:就|再|你)?\s{0,4})?(?:请|麻烦|(?:可以|能|能不能|能否|可不可以)?帮我|帮忙|给我)?"
)
# When, before a Chinese order: "后天早上7点半预约一下…", "月底那天上午十点帮我…".
_CJK_WHEN = (
    r"(?:(?:大?后天|今天|明天|今晚|明早|明晚|(?:这|下下?)?(?:周|星期|礼拜)[一二三四五六日天]"
    r"|月[底初](?:那天)?|\d{1,2}月\d{1,2}[日号]|\d{1,2}[日号]|早上|上午|中午|下午|晚上|傍晚|凌晨"
    r"|[0-9一二三四五六七八九十两]{1,3}[点:：](?:半|一刻|[0-9]{1,2}分?)?)\s{0,2}){1,6}[，,]?\s{0,2}"
)
# (Not 退款 or 支付: "退款单…查下进度" names a refund to look up.)
_CJK_WRITE = re.compile(
    # "SO20261125001 取消…" (an id of bounded length: a long run is not re-read per digit)
    # (ASCII: a Chinese character is \w too, and "APT-67012那个预约…" names no 预约 order)
    # (and for whom: "给 CAND-41007 发起背调")
    f"^(?:{_CJK_WHEN})?"
    + _CJK_PLEASE[1:]
    + r"(?:(?:给|为|替)\s{0,2})?(?:[A-Za-z][A-Za-z0-9_-]{0,40}\d[A-Za-z0-9_-]{0,40}\s*)?"
    r"(申请|提交|报销|报修|提个?工单|开个?工单|建个?单|审批|辞退"
    # (预约 before a modal or another verb is the appointment: "预约能不能往后挪一周")
    r"|关闭|升级|预订|预约(?!号|单|编号|记录|信息|是|的|[了过](?:吗|没)|能|可以|可不可以|要|改|挪|往"
    r"|推|取消|时间)|约(?:一下|一个|个)|订(?:一下|一个|个)"
    r"|发起|下单|重置|作废|撤销|取消|删除"
    r"|选课|加选|选一下|报名|报(?:个|一个)(?!价)|报失|报案(?!号)|续借|续期|退课|退选|改期|改约"
    r"|提醒|通知|发(?:个|条|一条)?(?:提醒|通知|短信|消息)|回复|补签|请假|申诉|缴费|交费)"
)
# 把 puts the object first and the action after it ("把 INC0055555 的优先级调成 P2"): the
# construction always asks for something to be done to the object, whichever clause it
# begins ("客户不想续了，把 ACC-23790 的订阅取消掉").
_CJK_BA = re.compile(r"(?:^|[，,。；;！!？?]\s{0,8})" + _CJK_PLEASE[1:] + "(?:把|给(?![我咱你]))")


def _head(text: str) -> str:
    """``text`` lower-cased from its first real word: greetings and "can you" left out."""
    head = _ASK.sub("", _LEAD.sub("", text.strip().lower()), count=1)
    return vocabulary.RE_HYPHEN.sub("re", head)  # "re-send" is "resend"


# Seeing a doctor is a visit to book, not a record to read: "need to see a heart doctor".
_SEE_SOMEONE = re.compile(
    r"^see\s+(?:a|an|the|my|our)\s+(?:\w+\s+)?(?:doctor|dentist|specialist|gp|vet|nurse"
    r"|physio|therapist|consultant|surgeon|optician|counsel+or)\b"
)


@functools.lru_cache(maxsize=16)  # the request being read: asked again by rule after rule
def asks_to_read(text: str) -> bool:
    """Whether ``text`` asks to read (a question, or a reading verb first) and to write
    nothing."""
    if vocabulary.requested_actions(text):
        return False
    head = _head(text)
    if _CHECK_IN.match(head) or _SEE_SOMEONE.match(head):  # "check me in", "see a doctor"
        return False
    first = _FIRST_WORD.match(head)
    if first is not None and (
        first.group(0) in _READ_VERBS
        or first.group(0) in _QUESTION_WORDS
        or first.group(0) in _READING_NOUNS
        or _PRONOUN_QUESTION.match(head)
    ):
        return True
    stripped = text.strip()
    if _bare_question(stripped, head, first):
        return True
    if _CJK_YES_NO.search(stripped) and not _CJK_ASKS_FOR.search(stripped):
        return True
    if _CJK_QUESTION.search(stripped):
        return True
    if _CJK_WRITE.match(stripped):  # "发起背调，查学历和工作履历": the order comes first
        return False
    return bool(_CJK_READ.search(stripped))


# "What about …?": "它的发票 INV-2026-00055 呢", "那11月的呢". It asks again what was asked
# last, with the new value: a question after a question, an order after an order ("那 16
# 号同一时间呢？" after a booking), which only the session can tell.
_CJK_WHAT_ABOUT = re.compile(r"呢\s*[？?]?\s*$")
# The same again for a new value: "and do the same for driftwoodinn.net", "same thing for
# X", "same again on INV-223002", "X too please", "her brother too, CH50232", "X as well",
# "finance@ 也一样转过去", 同样, 照样.
_SAME_AGAIN = re.compile(
    r"\bsame(?:\s+(?:thing|again|one|here))?\s+(?:for|with|on|to)\b|\bdo\s+the\s+same\b"
    r"|\b(?:too|as\s+well)(?=\s*(?:$|[,.;!?]|please\b|pls\b|thanks\b))|也一样|一样的?|同样|照样"
    r"|照旧",
    re.IGNORECASE,
)
_SHORT_FOLLOW_UP = 80  # characters: a longer request says what it wants itself


def asks_what_about(text: str) -> bool:
    """Whether ``text`` is a Chinese "what about …?", or a short request for the same
    again ("same for X", "X too"), that asks for no action itself."""
    stripped = text.strip()
    again = bool(_CJK_WHAT_ABOUT.search(stripped)) or (
        len(stripped) <= _SHORT_FOLLOW_UP and _SAME_AGAIN.search(stripped) is not None
    )
    return again and not vocabulary.requested_actions(text)


# Moving something in time: "switch APT… to the 9th of June", "push my appointment back a
# week", "move it to friday" (``vocabulary.MOVED_IN_TIME``).
_MOVED_IN_TIME = vocabulary.MOVED_IN_TIME


# Orders in two words, named by their action class: "roll back payments-api", "go back
# to the previous build", "scale up", "add more pods to orders-svc".
_PHRASAL = (
    (re.compile(r"^(?:roll\s*back|go\s+back\s+to|revert\s+to)\b", re.IGNORECASE), "rollback"),
    (re.compile(r"^(?:kick|throw|boot)\s+(?:\S+\s+)?out\b", re.IGNORECASE), "remove"),
    # a report written up is made: "write up a head knock for CH40077"
    (re.compile(r"^write\s+(?:\S+\s+)?up\b", re.IGNORECASE), "create"),
    (
        re.compile(
            r"^(?:scale\s+(?:up|down|out|in)|add\s+more\s+(?:pods|replicas|instances|nodes))\b",
            re.IGNORECASE,
        ),
        "scale",
    ),
)


# A question that asks for something to be done: "could I get two extra pillows?", "could
# someone come on Monday?", "can you start with October?".
_POLITE = re.compile(
    r"^(?:can|could|would|will|may)\s+(?:i|we|you|u|someone|somebody|anyone)\b", re.IGNORECASE
)
_SENTENCE_END = re.compile(r"(?<=[.!?])\s+")
# Where a question's last clause begins, and a polite order's verb: "…, can you start it".
_LAST_CLAUSE = re.compile(r"(?<=[.!?])\s+|[,;]\s*|\s(?:but|so)\s", re.IGNORECASE)
_POLITE_VERB = re.compile(
    r"^(?:can|could|would|will|may)\s+(?:i|we|you|u|someone|somebody|anyone)\s+"
    r"(?:please\s+|pls\s+)?"
    r"([a-z]+)\b"
)


def _bare_question(text: str, head: str, first: re.Match[str] | None) -> bool:
    """An English question that asks for nothing to be done: "bal for 48820175?", "eta on
    my courier?"; not one whose own sentence asks politely for something, nor one whose
    last clause asks politely for something done, and not an order with a question mark
    ("cancel it?")."""
    if not text.endswith("?") or cjk_share(text) >= 0.5:
        return False
    asked = _SENTENCE_END.split(text.rstrip("? "))[-1]
    polite = _POLITE.match(_LEAD.sub("", asked.lower())) or _done_at_the_end(text)
    return not polite and not _orders(head, first)


def _done_at_the_end(text: str) -> bool:
    """Whether the question's last clause asks politely for something done, not read:
    "i'm plugged in at CP-10293 but nothing happens, can you start it remotely?", "I paid
    for the team lunch, £120, can I get that back?" (not "…, can someone check?")."""
    clause = _LEAD.sub("", _LAST_CLAUSE.split(text.rstrip("? "))[-1].lower())
    asked = _POLITE_VERB.match(clause)
    return asked is not None and asked.group(1) not in _READ_VERBS


def _orders(head: str, first: re.Match[str] | None) -> bool:
    """Whether ``head`` (``_head``) begins as an order does, question or not."""
    if first is not None and (first.group(0) in _WRITE_VERBS or _OPEN_NEW.match(head)):
        return True
    return bool(_MOVED_IN_TIME.match(head) or any(p.match(head) for p, _ in _PHRASAL))


# An order whose verb only sets up the action its noun names ("schedule a payment",
# "submit a repayment", "request a replacement"): the tool must do the noun's verb.
_LIGHT_ORDER = re.compile(
    r"^(?:schedule|submit|initiate|request|issue)\s+(?:(?:a|an|the|my|one|another|new)\s+)?"
    r"(?:[a-z]{1,20}\s+)?([a-z]{3,20}ments?)\b"
)


# "Submit" names no action of its own: what is submitted says which ("submit a ticket
# under the account category: …", "submit annual leave for E20931 from …", "please submit
# a renewal on LS-…"). Up to three words after the article, ended by a preposition or a
# stop; "request" and "form" aside.
_SUBMITTED = re.compile(
    r"^submit\s+(?:(?:a|an|the|my|our|his|her|their|this|that|new|another)\s+)*"
    r"((?:[a-z][a-z-]*\s+){0,2}?[a-z][a-z-]*)"
    r"(?=\s+(?:for|on|to|under|about|with|from|by|in|of|at)\b|\s*[,.:;!?(]|\s*$)"
)
# What any submission is called: it names no tool's business.
_FORMS = frozenset(("request", "requests", "form", "forms", "application", "one"))

# "Add", "give" and "leave" take the act as their object ("add $1 tip to FD…", "leave a
# review for…"): a writer whose id or name says that act ("Tip the rider") does the order.
_GIVEN = re.compile(
    r"^(?:add|give|leave)\s+(?:(?:a|an|the|my|our|another|extra|some|small|little"
    r"|[a-z]{0,2}[$€£¥]\s?\d[\d.,]*|\d[\d.,]*)\s+)*([a-z]{3,20})\b"
)


def submitted(text: str) -> frozenset[str]:
    """The stems of what ``text`` orders submitted (``_SUBMITTED``); empty for no such
    order. A writer whose own words name it does the order."""
    match = _SUBMITTED.match(_head(text))
    if match is None:
        return frozenset()
    words = match.group(1).split()
    return frozenset(stem(w) for w in words if w not in STOPWORDS and w not in _FORMS)


def given(text: str) -> str | None:
    """The stem of the act ``text`` orders added, given or left (``_GIVEN``), if any."""
    match = _GIVEN.match(_head(text))
    return stem(match.group(1)) if match is not None else None


# 申请, 提交 and 申报 name no act of their own either: what is applied for does ("T0871
# 申请弃权 M203341" forfeits a match; the transfer tool's 转队申请 is another application).
_APPLIED_FOR = re.compile(r"(?:申请|提交|申报)(?:一下|一个|一份|个|份)?([\u4e00-\u9fff]{2})")
_APPLIED_NOT = frozenset(("一下", "一个", "一份", "的是", "了吗", "过了"))


def applied_for(text: str, verb: str | None) -> str | None:
    """What ``text`` applies for or files (the two characters after 申请, 提交, 申报) when
    that is its ``verb``, if anything."""
    if verb not in ("申请", "提交", "申报"):
        return None
    match = _APPLIED_FOR.search(text)
    if match is None or match.group(1) in _APPLIED_NOT:
        return None
    return match.group(1)


@functools.lru_cache(maxsize=16)  # the request being read: asked again by rule after rule
def order_verb(text: str) -> str | None:
    """The verb of ``text`` when it is an order and not a request to read: its first verb
    when that is one of writing ("submit…", "can you close…", "I want to cancel…"), or
    the Chinese action word it begins with (申请…, 帮我取消…) or that ends a 把 clause
    (把…调成…); None otherwise."""
    if asks_to_read(text):
        return None
    head = _head(vocabulary.plain_verbs(text))
    if _MOVED_IN_TIME.match(head):
        return "reschedule"
    if _CHECK_IN.match(head):  # "check me in for tomorrow": an order a check-in tool does
        return "check"
    for phrase, verb in _PHRASAL:
        if phrase.match(head):
            return verb
    first = _FIRST_WORD.match(head)
    if first is not None and (first.group(0) in _WRITE_VERBS or _OPEN_NEW.match(head)):
        light = _LIGHT_ORDER.match(head)
        noun = _ACTION_NOUN.match(light.group(1)) if light is not None else None
        return noun.group(1) if noun is not None else first.group(0)
    stripped = text.strip()
    if _CJK_BA.search(stripped):
        return vocabulary.last_chinese_action(text)
    chinese = _CJK_WRITE.match(stripped)
    if chinese is None or vocabulary.names_its_number(stripped, chinese.start(1), chinese[1]):
        return None  # "预约AP-385512能不能改到周四": the appointment's number, no booking
    return chinese.group(1)


_INSTEAD = re.compile(r"\binstead\b", re.IGNORECASE)


def changes_instead(text: str) -> str | None:
    """The verb "change", for a request that asks for something else "instead" and
    orders nothing by a verb of its own ("can CX… come on 2025-04-09 instead?", "make
    anna@… a normal member instead of admin"): it changes what exists, though it may
    read as a question. None otherwise ("cancel PNR… and give me miles instead of cash
    back" cancels)."""
    if _INSTEAD.search(text) is None or order_verb(text) is not None:
        return None
    return None if later_order_verb(text) is not None else "change"


# Asked for outright: a Chinese order after a please-word, or a 把 or 给 clause; an English
# one after "please" or "can you". Its action word is a verb, never a noun the tool is
# named for ("refund RF… status" of a refund-status reader is not asked outright).
_OUTRIGHT = re.compile(
    r"^(?:请|麻烦|(?:可以|能|能不能|能否|可不可以)?帮我|帮忙)"
    r"|^(?:(?:hey|hi|hello|ok|okay|so)\b[\s,!.]*)*"
    r"(?:pls|please|kindly|plz|(?:can|could|would|will)\s+(?:you|u))\b",
    re.IGNORECASE,
)


def asked_outright(text: str) -> bool:
    """Whether ``text`` is an order (``order_verb``) asked for outright (``_OUTRIGHT``):
    then no reader takes it, whatever its words are named for ("可以帮我预约明天上午10点
    去门店看车吗" is no booking lookup's)."""
    if order_verb(text) is None:
        return False
    stripped = text.strip()
    return bool(_OUTRIGHT.search(stripped) or _CJK_BA.search(stripped))


# Asking for a thing to be made: "I need a return label for CX…", "need a new read-only
# api key": for no reader, whichever writer makes it (``later_order_verb``); not for a
# copy, a list or an account of what exists ("I need a record of my payments for 2026").
_NEEDS_NEW = re.compile(
    r"^(?:(?:i|we)\s*)?(?:need|want|would\s+like|'d\s+like)\s+(?:a|an|another|new)\s+"
    r"(?!(?:\w+\s+)?(?:copy|list|summary|breakdown|overview|update|report|status|look"
    r"|record|history|receipt)\b)",
    re.IGNORECASE,
)


# What a 把 clause may ask that only reads out: "把 ACC-… 的所有发票列出来", "把合同 RA… 的
# 发票发到 fin@…" (a reader that sends what it finds).
_CJK_READS_OUT = re.compile(r"列出|列一下|看看|看一下|查一下|查查|显示|调出|找出|发(?:给我|我|到)")


def ba_order(text: str) -> bool:
    """Whether ``text`` orders by a 把 or 给 clause, whatever its action word ("给 ACC-30407
    加 10 个席位", "帮我把 LOT-… 判定报废"), and asks to read nothing."""
    stripped = text.strip()
    return (
        bool(_CJK_BA.search(stripped))
        and not _CJK_READS_OUT.search(stripped)
        and not asks_to_read(text)
    )


@functools.lru_cache(maxsize=16)  # the request being read: asked again by rule after rule
def later_order_verb(text: str) -> str | None:
    """A verb of writing that stands as an imperative after the start of ``text``, which
    is no order by its first verb ("the customer asked us to stop their subscription",
    "it's broken, restart it"): weaker than an order's verb, it says the request is for
    no reader, not which writer does it ("Jenny wants 150 units, book it" is an order
    for a tool that never says "book")."""
    if asks_to_read(text) or order_verb(text) is not None:
        return None
    if _NEEDS_NEW.match(text.strip()):
        return "create"
    return next((w for w in vocabulary.imperatives(text) if w in _WRITE_VERBS), None)


@functools.lru_cache(maxsize=16)  # the request being read: asked again by rule after rule
def action_word(text: str) -> str | None:
    """The action ``text`` asks for: its order's verb, or else, unless it asks to read,
    the last Chinese action word in it ("团建吃饭 1200 元要报销"). Weaker than an order's
    verb: it only points to a tool (``Router._across``), it never rules one out."""
    verb = order_verb(text)
    if verb is not None or asks_to_read(text):
        return verb
    if _MOVED_IN_TIME.search(text) and "reschedule" in vocabulary.imperatives(
        _MOVED_IN_TIME.sub("reschedule", text)
    ):  # "something came up, need to push my session BK-… to Saturday the 19th"
        return "reschedule"
    # an order after what led to it: "I'm sick and can't make it tomorrow, cancel AP-…"
    # (a clause of its own, not "happy to pay for it")
    return vocabulary.last_chinese_action(text) or _clause_order(text)


_CLAUSE_ORDER = re.compile(
    r"(?:^|[,.;!?—–]\s*|\s-\s*|\b(?:so|then)\s+)"
    r"(?:please\s+|pls\s+|just\s+|so\s+|(?:(?:i|we)['’]?d\s+like|(?:i|we)\s+(?:want|need))\s+to\s+)?"
    r"([a-z]+)\b",
    re.IGNORECASE,
)  # ("…, cancel it", "found it cheaper so id like to kill PT…")


def _clause_order(text: str) -> str | None:
    """A verb of writing that begins a later clause of ``text`` (``later_order_verb``)."""
    later = later_order_verb(text)
    if later is None:
        return None
    begun = {m.group(1).lower() for m in _CLAUSE_ORDER.finditer(text)}
    return later if later in begun else None


@dataclass(frozen=True)
class OwnWords:
    """A tool's own words (name, description, aliases, examples), as ``does`` reads them."""

    text: str
    stems: frozenset[str]  # and the verbs of its name's action nouns ("payment": pay)
    in_chinese: bool  # described in Chinese
    cjk: float  # the share of all its words written in CJK (``text.cjk_share``)
    # ``stems`` less the words only written as a past participle: "status (active,
    # canceled)" names a state the tool reports, not an action it takes
    acting: frozenset[str] = frozenset()
    # the stems of what its description says it does not do (``text.disclaimed_text``)
    disclaimed: frozenset[str] = frozenset()
    # a tool described in Chinese: the stems of its Chinese name's English gloss (车辆问题上报
    # "vehicle question report"), empty until the dictionary is read
    glossed: frozenset[str] = frozenset()
    # the stems of its id's and name's words
    named: frozenset[str] = frozenset()


def disowns(words: OwnWords, verb: str) -> bool:
    """Whether the tool's description names ``verb`` only where it says what the tool does
    not do ("Does not resend or cancel invitations that were already sent"), and its own
    words never do, save as a past participle: a transfer tool that "cannot recall a
    transfer" still transfers, and a state a lookup shows ("cancelled") is not its act."""
    stemmed = stem(verb.lower())
    if stemmed in words.acting or stemmed not in words.disclaimed:
        return False
    # (a tool whose own Chinese words do the verb's class still does it: 修改 of a field
    # booking changes its time, though "正式比赛改期请用 match_reschedule_request")
    return not any(
        _acts_in_chinese(words.text, w, reader=False) for w in vocabulary.synonyms(verb)[1]
    )


def own_words(manifest: Mapping[str, Any]) -> OwnWords:
    description = own_actions_text(str(manifest.get("description") or ""))
    words = [str(manifest.get(key) or "") for key in ("tool_id", "name")] + [description]
    words += [str(t) for t in (manifest.get("aliases") or []) + (manifest.get("examples") or [])]
    # no "late cancellation fee", no "how much is left to pay"
    text = vocabulary.without_amounts_asked(vocabulary.without_fee_names("\n".join(words)))
    # and each phrasal verb in one word, as a request's is read ("Sign someone up" enrols
    # and still signs: "sign S20230972 up for STAT-2300" is read as "sign")
    plain = vocabulary.plain_verbs(text)
    found = [w.lower() for w in _WORD.findall(split_identifier(text))]
    found += [w.lower() for w in _WORD.findall(split_identifier(plain))] if plain != text else []
    named_text = vocabulary.without_fee_names("\n".join(words[:2]))
    named = [w.lower() for w in _WORD.findall(split_identifier(named_text))]
    acts = _act_options(manifest)  # a ``change`` of ["add", "remove"]: it adds and removes
    stems = frozenset(stem(w) for w in found + acts) | _verbs_of_nouns(named)
    acting = frozenset(stem(w) for w in found + acts if not _PARTICIPLE.search(w))
    first = _WORD.search(description)
    if first is not None and stem(first.group(0).lower()) in _OPENS_A_RECORD:
        stems, acting = stems | _CREATES, acting | _CREATES  # "Log overtime hours." adds
    in_chinese = cjk_share(str(manifest.get("description") or "")) > 0.5
    disclaimed = disclaimed_text(str(manifest.get("description") or ""))
    # (another tool's id set apart in brackets names what that tool is for, not an act:
    # "not for practice-field bookings (field_booking_change)" disowns no change)
    disowned = frozenset(stem(w.lower()) for w in _WORD.findall(_BRACKETED_ID.sub(" ", disclaimed)))
    name = str(manifest.get("name") or "")
    glossed = _glossed(name) if in_chinese and gloss_ready() else frozenset()
    own_name = frozenset(stem(w) for w in named)
    return OwnWords(text, stems, in_chinese, cjk_share(text), acting, disowned, glossed, own_name)


_HAN_RUN = re.compile(r"[\u4e00-\u9fff]{2,40}")
_BRACKETED_ID = re.compile(
    r"[(（]\s*(?:(?:use|see|try)\s+)?`?[a-z][a-z0-9]*(?:_[a-z0-9]+)+`?\s*[)）]"
)


def _glossed(name: str) -> frozenset[str]:
    """The stems of the English senses of a Chinese name's words of two characters or
    more (车辆问题上报: vehicle, question, report). A single character's sense is left out:
    损 of 车损报告 "decrease" would make a damage report a changer."""
    words = dictionary()
    senses = [
        words.get(piece, "")
        for run in _HAN_RUN.findall(name)
        for piece in segment(run, words)
        if len(piece) >= 2
    ]
    found = (w.lower() for sense in senses for w in _WORD.findall(sense))
    return frozenset(stem(w) for w in found if len(w) > 2 and w not in STOPWORDS)


# Parameters whose options are what the tool does ("action": ["lock", "wipe"]).
_ACT_PARAMETERS = frozenset(("action", "operation", "op", "change", "command", "verb", "act"))
_MAX_ACT_OPTIONS = 8


def _act_options(manifest: Mapping[str, Any]) -> list[str]:
    """The words of the options of the tool's act parameters (a short enum of strings)."""
    schema = manifest.get("input_schema")
    properties = schema.get("properties") if isinstance(schema, dict) else None
    words: list[str] = []
    for name, spec in (properties or {}).items() if isinstance(properties, dict) else ():
        options = spec.get("enum") if isinstance(spec, dict) else None
        if str(name).lower() not in _ACT_PARAMETERS or not isinstance(options, list):
            continue
        if len(options) <= _MAX_ACT_OPTIONS:
            text = " ".join(str(o) for o in options if isinstance(o, str))
            words += [w.lower() for w in _WORD.findall(split_identifier(text))]
    return words


# A noun of an action, which Porter's stemmer leaves whole ("payment" is not "pay"): a tool
# named "Make a Rent Payment" pays, a "shipment" ships, an "adjustment" adjusts. Read in
# its name only: a description names the payments a reader shows too.
_ACTION_NOUN = re.compile(r"^([a-z]{3,})ments?$")


def _verbs_of_nouns(words: list[str]) -> frozenset[str]:
    """The stems of the verbs ``words``' action nouns are made from."""
    return frozenset(stem(m.group(1)) for w in words if (m := _ACTION_NOUN.match(w)))


def does(words: OwnWords, verb: str, *, strict: bool = False, reader: bool = False) -> bool:
    """Whether the tool's own words use ``verb``, or a word of its action class ("purge":
    "Deletes…"; 取消: "cancel"), in any form; for a ``reader``, in a form other than a
    past participle ("canceled" is a state it shows). Where the words cannot tell (an
    English verb with no Chinese synonym, of a tool described in Chinese, or the reverse)
    the tool is taken at its word, unless ``strict``."""
    english, chinese = vocabulary.synonyms(verb)
    # "End a charging session" ends one, though "end" is read as cancel
    said = english | vocabulary.said_alike(verb) if english and not reader else english
    own = words.acting if reader else words.stems
    # A verb of no class is said by a Chinese name's gloss too (购买骑行卡 buys); a class's
    # verbs go by the class's Chinese words (换班 "shift change" is no update).
    if not chinese:
        own = own | words.glossed
    if not own.isdisjoint(stem(v) for v in said):
        return True
    if any(_acts_in_chinese(words.text, w, reader=reader) for w in chinese):
        return True
    if strict:
        return False
    return (not chinese and words.in_chinese) or (not english and not words.in_chinese)


# A Chinese verb after these is a state, as a past participle is in English: a charger's
# status "已被预约" (reserved), an order "已取消" (cancelled), "待审核" (awaiting review).
_CJK_STATE_BEFORE = re.compile(r"(?:已经?被?|被|未|待|尚未)$")


def _acts_in_chinese(text: str, verb: str, *, reader: bool) -> bool:
    """Whether ``text`` uses the Chinese ``verb``; for a ``reader``, somewhere other than as
    a state it reports (after 已, 被, 未, 待: ``_CJK_STATE_BEFORE``)."""
    start = text.find(verb)
    while start >= 0:
        if not reader or _CJK_STATE_BEFORE.search(text, max(0, start - 3), start) is None:
            return True
        start = text.find(verb, start + 1)
    return False


def writes(manifest: Mapping[str, Any], reads_only: bool) -> bool:
    """Whether the tool changes something: not ``reads_only`` (idempotent, and no PUT,
    PATCH or DELETE), and neither its name nor its description's first word says it
    reads ("search_notes", "Searches…", "get_weather"; in Chinese the name, or the
    description's first clause: 摄像头录像查询, 查看某一次充电的费用明细)."""
    if reads_only:
        return False
    names = split_identifier(f"{manifest.get('tool_id') or ''} {manifest.get('name') or ''}")
    description = str(manifest.get("description") or "")
    opening = _FIRST_CLAUSE_ZH.match(description)
    if _READING_ZH.search(names) or (opening and _READING_ZH.search(opening.group(0))):
        return False
    words = _WORD.findall(names)
    first = _WORD.search(description)
    if first is not None:
        # A description that opens with a verb of writing says what the tool does, whatever
        # its name reads like ("street_issue_report": "Creates a new job…").
        if stem(first.group(0).lower()) in _OPENS_WRITING:
            return True
        words.append(first.group(0))
    return _READING.isdisjoint(stem(w.lower()) for w in words)
