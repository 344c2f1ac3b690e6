"""What the catalogue's own words say about a request none of its tools serves.

The confidence (``ToolIndex.confidence``) is a similarity: "cancel order
SO20261130004" is as close to "where is order SO20261118002?" as a real order
lookup is, because all-MiniLM-L6-v2 weighs the shared object ("order <id>")
more than the differing verb. Two facts the manifests state outright catch some
of these near-domain requests, and are checked per query on the few candidates
the coarse stage keeps (ranking is untouched):

- **Words no tool's text has.** A request whose information is largely in
  words found in no tool's text (its ``unseen`` share, idf-weighted, values
  aside) is suspect, but how suspect depends on the tool: a search tool's
  requests carry a topic ("how to restart the payment service"), a stock
  lookup's do not. Each tool's tolerance is learned from its own examples:
  the largest unseen share among them, each measured against the catalogue
  without it (leave-one-out). Only the share above that tolerance (and
  ``UNSEEN_SLACK``) lowers the confidence. A tool with fewer than
  ``MIN_EXAMPLES`` Latin-script examples has no known tolerance and no
  penalty: a one-sentence description does not try to cover its requests'
  words (MetaTool and BFCL are scored exactly as before).
- **Words the catalogue disclaims.** A sentence on what a tool *cannot* do
  that sends the request nowhere else ("it cannot change or cancel orders",
  with no "(use other_tool)") names an action the catalogue lacks; its words
  that no tool's text has are ``disclaimed``, and a request using one loses
  ``DISCLAIMED_PENALTY`` on every tool. "Not for live data such as stock"
  sentences are left out: they name uses, often other tools' ("data" would
  then count against every request for data).

Both apply to the Latin-script part of a request (CJK confidence is already
lexical coverage, ``BM25Index.coverage``).
"""

from __future__ import annotations

import functools
import re
from collections import Counter
from collections.abc import Callable, Iterable, Mapping
from typing import Any

from gateway.routing import bounds, enums
from gateway.routing.gloss import every_sense, gloss
from gateway.routing.lexical import BM25Index
from gateway.routing.text import (
    STOPWORDS,
    cjk_share,
    disclaimed_text,
    negative_sentences,
    own_actions_text,
    positive_description,
    split_identifier,
    stem,
    tokenize,
    without_left_to_do,
)

UNSEEN_WEIGHT = 0.5
UNSEEN_SLACK = 0.1
MIN_EXAMPLES = 3
DISCLAIMED_PENALTY = 0.35
# A negative sentence that sends the request elsewhere ("(use sales_query)", "use
# rag_ingest") disclaims nothing the catalogue lacks.
_REDIRECT = re.compile(r"\b(?:use|see|try)\s+[A-Za-z][\w.\-]*", re.IGNORECASE)
_CLAUSE_BREAK = re.compile(r"[,;:]|\band\b|\bor\b|\bbut\b", re.IGNORECASE)
_TOOL_ID = re.compile(r"[a-z][a-z0-9]*(?:[_.\-][a-z0-9]+)+")
_INCAPABLE = re.compile(r"\b(?:cannot|can'?t|can\s+not)\b", re.IGNORECASE)
_LATIN_WORD = re.compile(r"^[a-z]{3,}$")
_NEGATION = frozenset({"cannot", "never", "instead", "onli", "use"})
# Words of a disclaiming sentence that say nothing of what is disclaimed: "those
# appointments cannot be changed through this gateway" disclaims no "through".
_NOT_DISCLAIMED = frozenset(
    {"through", "those", "these", "this", "that", "they", "them", "their", "there", "here"}
    | {"via", "within", "across", "over", "under", "after", "before", "while", "where"}
    | {"which", "when", "such", "same", "other", "anoth", "each", "everi", "than", "then"}
    | {"been", "were", "will", "would", "should", "must", "might", "shall", "yet", "still"}
    | {"gateway", "tool", "system", "api", "endpoint", "servic", "anymor"}
)
# What is left of a contraction ("hasn't" -> "hasn"): says nothing of the request.
_FRAGMENTS = frozenset({"aren", "couldn", "didn", "doesn", "don", "hadn", "hasn", "haven"})
_FRAGMENTS |= {"isn", "shouldn", "wasn", "weren", "won", "wouldn"}


def unseen_share(
    bm25: BM25Index, terms: Iterable[str], known: Callable[[str], bool] | None = None
) -> float:
    """The idf-weighted share of ``terms`` (digits aside) the catalogue has not seen; a
    term is seen when it has postings and ``known(term)`` (if given) says so. As in
    ``BM25Index.coverage``, a query of one or two words counts as at least two unseen
    words' worth, so a single common word is not "fully explained"."""
    total = unseen = 0.0
    for term in set(terms):
        if term.isdigit() or term in _FRAGMENTS:
            continue
        seen = bm25.has(term) and (known is None or known(term))
        weight = bm25.idf(term) if seen else bm25.unseen_idf
        total += weight
        if not seen:
            unseen += weight
    return unseen / max(total, 2 * bm25.unseen_idf) if total else 0.0


def tolerance(bm25: BM25Index, position: int, manifest: Mapping[str, Any]) -> float | None:
    """The largest unseen share among the tool's own Latin-script examples, each against
    the catalogue without it; None with fewer than ``MIN_EXAMPLES`` of them."""
    own = bm25.terms(position)
    shares = []
    for example in manifest.get("examples") or []:
        text = str(example)
        if not text.strip() or cjk_share(text) >= 0.5:
            continue
        counts = Counter(tokenize(text))

        def known(term: str, counts: Counter[str] = counts) -> bool:
            # Seen without this example: another tool has it, or this one elsewhere.
            return bm25.df(term) > 1 or own[term] > counts[term]

        shares.append(unseen_share(bm25, counts, known))
    return max(shares) if len(shares) >= MIN_EXAMPLES else None


def disclaimed(bm25: BM25Index, manifests: Iterable[Mapping[str, Any]]) -> frozenset[str]:
    """Latin words of redirect-free "it cannot …" sentences that no tool's text has."""
    words: set[str] = set()
    manifests = list(manifests)
    ids = {str(m.get("tool_id") or "").lower() for m in manifests} - {""}
    for manifest in manifests:
        description = str(manifest.get("description") or "")
        offered: frozenset[str] | None = None
        for sentence in negative_sentences(description):
            if _REDIRECT.search(sentence) or not _INCAPABLE.search(sentence):
                continue
            if offered is None:
                offered = _actions_in(positive_description(description), chinese=False)
            # a clause naming the tool that does it is a redirect too: "It cannot file a
            # new claim (lost_item_report) and it does not arrange postage" disclaims
            # postage, not filing
            kept = " ".join(
                clause
                for clause in _CLAUSE_BREAK.split(sentence)
                if ids.isdisjoint(_TOOL_ID.findall(clause.lower()))
            )
            words.update(
                t
                for t in tokenize(kept)
                if _LATIN_WORD.match(t)
                and t not in _NEGATION
                and t not in _NOT_DISCLAIMED
                and not bm25.has(t)
                # a verb of what the tool itself does disclaims an object, not the act:
                # "cannot switch to a different ship" of a tool that changes bookings
                and not (offered and _actions_in(t, chinese=False) & offered)
            )
    return frozenset(words)


def penalty(
    terms: list[str], unseen: float, tool_tolerance: float | None, disclaims: frozenset[str]
) -> float:
    """How much a candidate's confidence drops for the query (before the CJK share)."""
    drop = 0.0
    if tool_tolerance is not None:
        drop += UNSEEN_WEIGHT * max(0.0, unseen - tool_tolerance - UNSEEN_SLACK)
    if disclaims and not disclaims.isdisjoint(terms):
        drop += DISCLAIMED_PENALTY
    return drop


# -- actions a request asks for, and the actions a tool's own text offers ---------------
#
# all-MiniLM-L6-v2 weighs the object of a request ("order SO…", "SKU…") far more than
# its verb, so "cancel order SO…" looks like an order lookup. A tool that describes its
# requests (aliases and examples) names the actions it performs; a request whose action
# none of those words offers (a refund asked of a read-only lookup) is not for it. Only
# imperative base forms count on the request's side ("cancel", not "was it cancelled?"),
# and only verbs of writing and sending: reading verbs ("show", "check") are what every
# lookup does. Classes are matched across languages (an English request, a Chinese
# manifest), so each holds both.
ACTION_PENALTY = 0.35
_ACTIONS: dict[str, tuple[frozenset[str], tuple[str, ...]]] = {
    # (a ticket or a claim is raised, filed or lodged: it is created)
    "create": (
        frozenset({"create", "add", "insert", "register", "enroll", "enrol"})
        | {"raise", "file", "lodge"},
        (
            *("创建", "新建", "新增", "添加", "下单", "选课", "加选", "选一下", "报名", "登记"),
            *("录入", "开具"),
            # reporting a fault, a loss or a claim files it: 报个修, 报个质量问题, 报失, 报案
            # (not 报个价: a word before 价 names a price, ``_NOUN_AFTER``)
            *("报个", "报一个", "报失", "报案"),
            # a ticket, an order or an account opened: 开个维修单 (not 开一张, which reissues a
            # receipt as often: 能重新开一张吗)
            "开个",
        ),
    ),
    "store": (
        frozenset({"save", "store", "upload", "import"}),
        ("保存", "存到", "存进", "存入", "上传", "导入"),
    ),
    # (moving something in time is changing it: "reschedule", "postpone", 改期; not "move",
    # which transfers stock as often)
    "update": (
        frozenset({"update", "change", "modify", "edit", "rename", "adjust", "set", "replace"})
        | {"amend", "switch"}  # ("switch it off" is toggling: ``_SWITCHED_ON_OFF``)
        | {"reschedule", "postpone", "rebook", "delay", "extend", "increase", "decrease"}
        | {"dim", "brighten"},  # a light's level
        (
            *("修改", "更改", "更新", "改成", "改为", "调整", "设置", "替换", "调成", "调为"),
            *("调到", "改期", "改约", "改到", "推迟", "延后", "延期", "挪到", "换个时间"),
            *("延到", "提前到"),  # a date moved later or earlier: 交稿时间延到1月10号
            *("改签", "换到"),  # a ticket rebooked, a seat or a plan moved: 能换到后面的位子吗
            *("降价", "涨价", "调价", "降到", "涨到"),  # a price or a plan moved to another
        ),
    ),
    "delete": (
        frozenset({"delete", "remove", "erase", "purge", "forget", "offboard"}),
        ("删除", "删掉", "删了", "移除", "去掉", "踢出", "移出"),
    ),
    # (withdrawing or killing a request cancels it: "withdraw work order WO-…", 撤回申请)
    "cancel": (
        # (disabling a key or an account revokes it; a setting's switch is "toggle" too)
        frozenset({"cancel", "revoke", "abort", "void", "withdraw", "kill"})
        | {"disable", "deactivate"},
        # (what is no longer wanted is cancelled: "RSV-62781 那个仓位不要了")
        ("取消", "撤销", "作废", "撤回", "吊销", "注销", "不要了", "撤掉"),
    ),
    "refund": (frozenset({"refund", "reimburse"}), ("退款", "退钱", "报销")),
    # (a message sent, or a reply: "reply to the buyer of OR…", 给买家发个消息, 回复买家)
    "notify": (
        frozenset({"send", "notify", "remind", "forward", "resend", "reply"}),
        (
            *("发送", "通知", "提醒", "重发", "重新发", "再发一", "发消息", "发个消息"),
            *("发条消息", "回复"),
        ),
    ),
    "book": (
        frozenset({"book", "schedule", "reserve"}),
        ("预订", "预约", "挂号", "约一下", "约个", "约一个", "订个", "订一个", "订一下"),
    ),
    # (extending a lease, a loan or a subscription renews it: "extend my lease a year")
    "renew": (
        frozenset({"renew", "extend"}),
        ("续借", "续期", "续订", "续约", "续费", "续办", "续签", "续保", "续租"),
    ),
    "withdraw": (
        frozenset({"withdraw", "drop", "unenroll", "unenrol", "quit"}),
        ("退课", "退选", "退出"),
    ),
    # (money put on a card or an account is paid in: "top up", "recharge", 充值; not
    # "reload", which reloads a service's configuration as often)
    "pay": (
        frozenset({"pay", "transfer", "settle"}) | {"topup", "recharge"},
        (
            *("支付", "付款", "转账", "缴费", "交费", "还款", "结清", "偿还", "缴纳", "充值"),
            "充钱",
        ),
    ),
    # and of running systems and staff, which operators' tools name in either language
    "close": (frozenset({"close", "shut"}), ("关闭", "关掉", "结案")),
    "restart": (frozenset({"restart", "reboot", "bounce", "kick"}), ("重启",)),
    "rollback": (frozenset({"rollback", "revert"}), ("回滚", "回退", "退回")),
    "scale": (
        frozenset({"scale", "resize", "increase", "decrease"}),
        ("扩容", "缩容", "扩到", "缩到"),
    ),
    "toggle": (
        frozenset({"enable", "disable", "toggle", "flip", "turn"}),
        ("开启", "启用", "停用"),
    ),
    "dismiss": (frozenset({"fire", "dismiss"}), ("辞退", "解雇", "开除")),
    # bringing back what was cancelled or lapsed ("reinstate my policy", "恢复积分")
    "restore": (
        frozenset({"restore", "reinstate", "reactivate", "reopen", "undelete", "unarchive"}),
        ("恢复", "复原", "重新激活"),
    ),
    # holding something for a while ("pause my insurance", "suspend the line")
    "pause": (frozenset({"pause", "suspend", "freeze"}), ("暂停", "冻结", "挂起")),
    # making one of two records ("merge ACC-10234 and ACC-10877", 两个账号合并)
    "merge": (frozenset({"merge", "combine", "consolidate"}), ("合并",)),
    # leaving a mailing list or a plan's messages ("unsubscribe jane@… from marketing")
    "unsubscribe": (frozenset({"unsubscribe"}), ("退订", "取消订阅")),
    # writing a document out ("export November's invoices to Excel", 导出)
    "export": (frozenset({"export"}), ("导出",)),
    # deciding on what someone else asked for ("approve Li Na's leave request", 审批)
    "approve": (frozenset({"approve", "reject"}), ("审批", "批准", "驳回")),
}
_VERBS = frozenset(w for english, _ in _ACTIONS.values() for w in english)
# An English verb asks for an action when it begins a clause ("cancel order …", "…, then
# update it"), or follows "please", "to" ("I want to cancel"), "you" ("can you delete"),
# "me" ("help me add"): "the store's numbers", "a change in sales" ask for none. "How to"
# asks how it is done ("search the docs for how to restart the payment service").
# The word is read ahead, not taken: "…expired, please reinstate them" has "please" after
# the comma and "reinstate" after "please".
_IMPERATIVE = re.compile(
    r"(?:^|[,.;:!?(\n]|\b(?:please|pls|(?<!how )(?<!what )(?<!where )(?<!when )to|you|me|and"
    r"|then|just|now|also|(?<!where )(?<!how )(?<!what )(?<!when )(?<!why )(?<!who )"
    r"(?:can|could|may|shall)\s+(?:i|we)))\s{0,16}"
    r"(?=([A-Za-z]+)\b(?!'))",
    re.IGNORECASE,
)


# A verb's "re-" written with a hyphen: "re-send" is "resend".
RE_HYPHEN = re.compile(r"\bre-(?=[a-z])", re.IGNORECASE)


def imperatives(text: str) -> list[str]:
    """The words of ``text`` that stand where an imperative would (``_IMPERATIVE``),
    lower-cased, in order ("re-send" read as "resend")."""
    return [m.group(1).lower() for m in _IMPERATIVE.finditer(RE_HYPHEN.sub("re", text))]


# A Chinese action word used as a noun: "我的预约是几点", "预约号 APT…", "这个预约".
# (and a word asked about, not for: "审批人" the approver, "退款进度" a refund's progress,
# "审批了吗" whether it was approved)
_NOUN_AFTER = re.compile(
    r"号|单|编号|记录|信息|是|的|人|进度|状态|流程|环节|价|[了过](?:吗|没)|到哪"  # 报销到哪一步了
)
# A booking's word before its number names the booking: "预约AP-385512能不能改到周四" (not
# 取消AP-310488, which cancels it; not 帮我预约SC-4412, asked for; not 预订 D9, a site).
_NAMES_ITS_NUMBER = ("预约", "预订")
_ITS_NUMBER = re.compile(r"\s?[A-Za-z]{1,6}[-_]?\d{4}")
_ASKED_BEFORE = re.compile(r"(?:帮我|帮忙|请|麻烦|我要|我想|想|给我|能不能|可以)\s?$")


def names_its_number(text: str, start: int, word: str) -> bool:
    """Whether the booking word ``word`` at ``start`` of ``text`` names a booking by the
    number after it rather than asking for one (``_NAMES_ITS_NUMBER``)."""
    return (
        word in _NAMES_ITS_NUMBER
        and _ITS_NUMBER.match(text, start + len(word)) is not None
        and _ASKED_BEFORE.search(text, max(0, start - 4), start) is None
    )


_NOUN_BEFORE = ("的", "个", "这", "那")
# An action undone names what is undone, no action asked: 撤销删除 restores, 取消预约 cancels.
_UNDOING_BEFORE = ("撤销", "撤回", "取消", "恢复")
_ADVERBS_BEFORE = ("整个", "一个个")


# A clause that asks who did it tells of a past action: "谁把 Q3 路线图项目删了？" (looked
# for in the few characters before the word: a long request costs no more per word).
_WHO_DID = re.compile(r"谁[^，。？！,.?!;；]*$")
_WHO_DID_WITHIN = 40


def _acts(text: str, word: str) -> bool:
    """Whether ``text`` uses the Chinese action word ``word`` as a verb somewhere (not as
    a noun, and not in a clause asking who did it)."""
    start = text.find(word)
    while start >= 0:
        if _acts_at(text, word, start):
            return True
        start = text.find(word, start + len(word))
    return False


def _acts_at(text: str, word: str, start: int) -> bool:
    """Whether the action word ``word`` at ``start`` of ``text`` is a verb there."""
    end = start + len(word)
    noun = (
        _NOUN_AFTER.match(text, end)
        or names_its_number(text, start, word)
        or (
            text[max(0, start - 1) : start] in _NOUN_BEFORE
            and text[max(0, start - 2) : start] not in _ADVERBS_BEFORE  # 整个删掉: "delete it all"
        )
        or text[max(0, start - 2) : start] in _UNDOING_BEFORE
    )
    return not noun and not _WHO_DID.search(text, max(0, start - _WHO_DID_WITHIN), start)


# Setting up a thing, or setting a new one, makes it: "set a wakeup for 2702 at 06:00",
# "set up a 30 min demo with …" create; "set the price of … to …" changes one.
_SETS_UP = re.compile(r"\bsets?(?=\s+(?:up|an?)\b)", re.IGNORECASE)
_SUM_WORD = (
    r"(?:one|two|three|four|five|six|seven|eight|nine|ten|twenty|thirty|forty|fifty|sixty"
    r"|seventy|eighty|ninety|hundred|thousand|and)"
)
# Money put on a card: "top up my card", "top it up with 50", "Resort card top-up".
_TOP_UP = re.compile(
    r"\btop(?:s|ped|ping)?(?:\s+(?:it|this|that|them))?[\s-]+up\b"
    r"|\badd(?:s|ed|ing)?\s+(?:money|funds|credit)\b"  # "Adds money to a gift card"
    # a sum put on something: "add ¥300 to gift card …", "put 500 more on my card"
    r"|\b(?:add|put|load)(?:s|ed|ing|ting)?\s+(?:another\s+)?"
    r"(?:(?:[$¥€£]\s?\d[\d,.]*|\d[\d,.]*\s*(?:yuan|dollars?|bucks|euros?|pounds?|rmb|usd|元|块))"
    r"\s+(?:more\s+)?(?:on(?:to)?|to|in(?:to)?)\b"
    # (or a sum with no currency, on what holds money: "put two hundred and fifty on my
    # account", "put 500 more on my gift card"; not "put 3 more on the order")
    rf"|(?:\d[\d,.]*|{_SUM_WORD}(?:[\s-]+{_SUM_WORD}){{0,5}})"
    r"(?:\s*more)?\s+on(?:to)?\s+(?:(?:my|the|this|that|our|your)\s+)?(?:[a-z-]+\s+)?"
    r"(?:card|account|balance|wallet)\b)",
    re.I,
)
# What is rolled back is reverted: "roll F3N8Q2W7ZP back to version 4", "Rolling a file back".
_ROLL_BACK = re.compile(r"\broll(?:s|ed|ing)?\s+(?:[\w-]+\s+){0,3}?back\b", re.IGNORECASE)
# Phrasal verbs whose first word alone names another action: "fire off a test send" sends
# (firing is dismissing), "sign me up for …" enrols (signing is signing a document).
_PHRASAL = (
    (re.compile(r"\b(?:fire|shoot)\s+off\b", re.IGNORECASE), "send"),
    (re.compile(r"\bwrite\s+back\b", re.IGNORECASE), "reply"),
    (re.compile(r"\bkick\s+off\b", re.IGNORECASE), "start"),  # not "kick the server"
    (_TOP_UP, "topup"),
    (_ROLL_BACK, "rollback"),
    # what is called off is cancelled ("we have to call off the wedding cake, CK-…")
    (re.compile(r"\bcall(?:ing)?\s+(?:(?:it|this|that|them)\s+)?off\b", re.IGNORECASE), "cancel"),
    (
        re.compile(
            r"\bsign\s+(?:(?:me|us|him|her|them|someone|somebody|people|my\s+\w+)\s+)?up\b",
            re.IGNORECASE,
        ),
        "enroll",
    ),
)


# "Drop" as an order withdraws from a course, and as often cancels or removes ("drop my
# repair ticket WO-…", "drop the account for intern@…"): any of the three will do. Not
# in those classes' words: a tool's "drop-off" offers none of them. Dropping a value to
# another ("drop its price to 19.99") lowers it, an action of no class.
_DROP_ALSO = ("cancel", "delete")
# Cancelling a membership or a subscription unsubscribes from it: a tool that says 退订
# does "cancel my membership".
_CANCEL_ALSO = ("unsubscribe",)
# A value moved to another one in the same clause: "drop the asking price on my listing
# LST-118204 to £475,000" lowers it (no deletion), "raise my offer OF2612088 to
# £360,000" increases it (no ticket raised).
_TO_A_NUMBER = r"(?=[^.?!;\n]{0,60}?\b(?:down\s+|up\s+)?to\s+[$£€¥]?\s?\d)"
_DROPS_TO = re.compile(rf"\b(?:drop|cut|knock){_TO_A_NUMBER}", re.IGNORECASE)
_RAISES_TO = re.compile(rf"\b(?:raise|bump){_TO_A_NUMBER}", re.IGNORECASE)


# Something no longer wanted is to be cancelled: "i dont want tomorrows groceries
# anymore", "won't need the viewing vw-38001 any more", "I no longer need those days off".
_NO_LONGER_WANTED = re.compile(
    r"\b(?:(?:do|does|did|will|wo)\s*n[o'’]?t|dont|doesnt|wont)\s+(?:want|need)\b"
    r"(?=[^.?!;\n]{0,60}?\bany\s?more\b)|\bno\s+longer\s+(?:want|need)\b",
    re.IGNORECASE,
)


@functools.lru_cache(maxsize=16)  # the request being read: asked again by rule after rule
def plain_verbs(text: str) -> str:
    """``text`` with its phrasal verbs in one word (``_PHRASAL``), a value dropped or
    raised to another lowered or increased (``_DROPS_TO``, ``_RAISES_TO``), and what is
    no longer wanted asked to be cancelled (``_NO_LONGER_WANTED``)."""
    for phrase, verb in _PHRASAL:
        text = phrase.sub(verb, text)
    text = _NO_LONGER_WANTED.sub("want to cancel", text)
    return _RAISES_TO.sub("increase", _DROPS_TO.sub("lower", text))


# Verbs of an action class only as orders ("end coupon WELCOME5 early", "terminate my
# policy"): in a tool's words they are as often nouns ("start and end dates", "the
# termination date" of a contract lookup), which must not make it offer the action.
# Lowering or reducing a value decreases it ("reduce seats to 12"): "lower" as often
# describes a state ("lower tiers"), and "reduced" a price a tool shows.
# Verbs of a request read as another (not of a tool's words: "records" there is a noun).
_ORDER_SYNONYMS = {
    "record": "add",  # "record weight for PET-318844: 8.75 kg" adds an entry
    "end": "cancel",
    "terminate": "cancel",
    "lower": "decrease",
    "reduce": "decrease",
}


def said_alike(verb: str) -> frozenset[str]:
    """``verb`` and the orders read as the same class ("terminate": terminate and end):
    words a writer that uses them does, though they are in no class's own words."""
    meant = _ORDER_SYNONYMS.get(verb)
    if meant is None:
        return frozenset({verb})
    return frozenset({verb, *(w for w, c in _ORDER_SYNONYMS.items() if c == meant)})


# Something added into a place is added: "把这份话术加到知识库里", "加进购物车里" (not "加到
# 30 万": a value raised to another; not without the place's 里, 中 or 内).
_ADDED_INTO = re.compile(r"(?<![增追添])加(?=[到进入][^，。；！？,.;!?\d]{1,20}?[里中内])")


# "switch the lights off", "switch on the heating": a switch thrown (toggling), where
# "switch booking BK-… to a swing mooring" changes it.
# Someone sent to do a thing: the thing is what is asked ("can you send someone to collect
# RA… on Friday", "get a technician to look at it").
_SENT_TO_DO = re.compile(
    r"\b(?:send|get|have)\s+(?:someone|somebody|a\s+(?:driver|truck|van|courier|person|guy"
    r"|technician|tech|plumber|electrician))\s+(?:over\s+|round\s+|out\s+)?to\s+([a-z]+)",
    re.IGNORECASE,
)
_SWITCHED_ON_OFF = re.compile(
    r"\bswitch(?=\s+(?:(?:it|them|the\s+[\w-]+(?:\s+[\w-]+)?)\s+)?(?:on|off)\b)",
    re.IGNORECASE,
)


# Moving something in time: "move it to friday", "push my session BK-… to Saturday the
# 19th", "switch APT… to the 9th of June", "push my appointment back a week" (not "move
# 200 units to WH03": no day or time follows). The verb is the match.
MOVED_IN_TIME = re.compile(
    r"\b(?:move|switch|shift|push|bump|change)\b(?=[^.?!]{0,60}?"
    r"(?:\b(?:back|forward|later|earlier)\b|\bto\s+(?:the\s+)?"
    # a day of the month, an hour or a date; no account number ("to 73350219")
    r"(?:\d{1,2}(?!\d)|\d{4}-|next\b|tomorrow\b|tonight\b|(?:mon|tues|wednes|thurs|fri|satur|sun)day\b"
    r"|(?:jan|feb|mar|apr|may|jun|jul|aug|sep|oct|nov|dec)[a-z]*\b)))",
    re.IGNORECASE,
)

# A verb typed with two letters swapped, one left out or one doubled ("cancle", "updte",
# "cancell") is read as the verb: ``_misspelt``.
_MISSPELT_MIN = 5


# A question of an amount asks for it, not for the action after "to": "how much is left to
# pay on my account", "how many days do I have to cancel".
_AMOUNT_TO = re.compile(r"\bhow\s+(?:much|many)\b[^,.;:!?\n]{0,60}?\bto(?=\s+[a-z])", re.I)


_AMOUNT_TO_VERB = re.compile(
    r"(\bhow\s+(?:much|many)\b[^,.;:!?\n]{0,60}?)\bto\s+[a-z]+", re.IGNORECASE
)


def without_amounts_asked(text: str) -> str:
    """A tool's phrases without the verb an amount's question or a balance names ("How
    much is left to pay on WB-…?", "balance left to pay"): a balance tool's example
    asks what is owed; it does not pay."""
    return without_left_to_do(_AMOUNT_TO_VERB.sub(r"\1", text))


@functools.lru_cache(maxsize=16)  # the request being read: asked again by rule after rule
def requested_actions(text: str) -> frozenset[str]:
    """The write actions ``text`` asks for: an action verb in its base form where an
    imperative stands (``_IMPERATIVE``), or a Chinese action word used as a verb."""
    text = _SWITCHED_ON_OFF.sub("turn", _ADDED_INTO.sub("添加", text))
    text = _SENT_TO_DO.sub(r"\1", text)  # "send someone to collect it" asks to collect it
    # what is left to pay is asked about, not paid ("what's left to pay before the day?")
    text = without_left_to_do(_AMOUNT_TO.sub(lambda m: m.group(0)[:-2] + "for", text))
    text = MOVED_IN_TIME.sub("reschedule", text)
    words = set()
    for word in imperatives(_SETS_UP.sub("create", plain_verbs(text))):
        verb = _misspelt(word) or word
        words.add(_ORDER_SYNONYMS.get(verb, verb))
    if "drop" in words:
        words.update(_DROP_ALSO)
    return frozenset(
        action
        for action, (english, chinese) in _ACTIONS.items()
        if not words.isdisjoint(english) or any(_acts(text, w) for w in chinese)
    )


def respelt(text: str) -> str:
    """``text`` with each verb typed with a slip (``_misspelt``) where an imperative stands
    written as the verb: "cancle BK-448812 please" reads "cancel BK-448812 please", so the
    tools named for cancelling are found by its words too."""
    fixes = [
        (m.start(1), m.end(1), verb)
        for m in _IMPERATIVE.finditer(text)
        if (verb := _misspelt(m.group(1).lower())) is not None
    ]
    for start, end, verb in reversed(fixes):
        text = text[:start] + verb + text[end:]
    return text


@functools.lru_cache(maxsize=4096)
def _misspelt(word: str) -> str | None:
    """The action verb ``word`` is a slip of (two neighbouring letters swapped, one left
    out inside it, or one doubled), if it is no verb itself and at least
    ``_MISSPELT_MIN`` letters long; None otherwise. Not a letter changed ("remote" is not
    "remove"), and not an ending ("refunds", "cancelled" are the verb's own forms)."""
    if len(word) < _MISSPELT_MIN or word in _VERBS:
        return None
    return next((verb for verb in _VERBS if _slip_of(word, verb)), None)


def _slip_of(word: str, verb: str) -> bool:
    if len(verb) < _MISSPELT_MIN or word[:-1] == verb:
        return False
    if len(word) == len(verb):
        slips = [i for i, (a, b) in enumerate(zip(word, verb, strict=True)) if a != b]
        return (
            len(slips) == 2
            and slips[1] == slips[0] + 1
            and word[slips[0]] == verb[slips[1]]
            and word[slips[1]] == verb[slips[0]]
        )
    if len(word) == len(verb) + 1:  # a letter doubled: "cancell" aside (an ending)
        return any(
            word[i] == word[i - 1] and word[:i] + word[i + 1 :] == verb for i in range(1, len(word))
        )
    if len(word) == len(verb) - 1:  # a letter left out, not the first or the last
        return any(verb[:i] + verb[i + 1 :] == word for i in range(1, len(verb) - 1))
    return False


def last_chinese_action(text: str) -> str | None:
    """The Chinese action word (of any action class) that comes last in ``text``: after
    把 the object comes first and may name an action itself ("把 RF… 这笔退款撤销掉")."""
    found = [
        (at, word)
        for _, chinese in _ACTIONS.values()
        for word in chinese
        if word in text and (at := _last_act(text, word)) >= 0
    ]
    return max(found)[1] if found else None


def _last_act(text: str, word: str) -> int:
    """Where ``text`` last uses ``word`` as a verb (not as a noun: 预订号), else -1."""
    start = text.rfind(word)
    while start >= 0:
        if _acts_at(text, word, start):
            return start
        start = text.rfind(word, 0, start)
    return -1


def synonyms(verb: str) -> tuple[frozenset[str], tuple[str, ...]]:
    """The English verbs and Chinese words of the action class of ``verb`` (English or
    Chinese: "purge" or 删除 gives delete, remove, 删除…); ``verb`` alone when it is in
    none; of every class it is in ("withdraw": cancel and withdraw; "drop": those and
    delete). An order's synonym ("end") gives its class ("cancel")."""
    verb = _ORDER_SYNONYMS.get(verb, verb)
    cancels = verb in _ACTIONS["cancel"][0] or verb in _ACTIONS["cancel"][1]
    also = _DROP_ALSO if verb == "drop" else _CANCEL_ALSO if cancels else ()
    classes = [
        (e, c) for name, (e, c) in _ACTIONS.items() if verb in e or verb in c or name in also
    ]
    if classes:
        english = frozenset().union(*(e for e, _ in classes))
        return english, tuple(dict.fromkeys(w for _, c in classes for w in c))
    if cjk_share(verb):
        return frozenset(), (verb,)
    return frozenset({verb}), ()


def offered_actions(manifest: Mapping[str, Any]) -> frozenset[str] | None:
    """The actions the tool's own words (what its description says it is for, aliases,
    examples, name) offer, in any form ("Deletes", "删除"); None when the manifest does
    not describe its requests (fewer than ``MIN_EXAMPLES`` aliases and examples): a
    one-sentence description does not list its verbs."""
    if len(_phrases(manifest)) < MIN_EXAMPLES:
        return None
    return _actions_in(_own_text(manifest))


# Actions that undo one another: a tool named for one is not asked for the other.
_UNDOES = {
    "restore": frozenset({"cancel", "delete", "close", "pause", "withdraw", "unsubscribe"}),
    "cancel": frozenset({"restore", "create", "book"}),
    "delete": frozenset({"restore", "create"}),
    "refund": frozenset({"pay"}),
    "pause": frozenset({"restore"}),
    # (and a change is not an end: "switch booking BK-… to a swing mooring" of a cancel)
    "update": frozenset({"cancel", "delete"}),
}


def opposed_gap(requested: frozenset[str], named: frozenset[str] | None) -> float:
    """The confidence lost by a tool named for actions (``named_actions``) that undo every
    action requested, none of which its own words offer: "reactivate the cancelled
    subscription" of ``subscription_cancel``, "reopen WO-…" of ``workorder_cancel``."""
    if named is None or not requested or not requested.isdisjoint(named):
        return 0.0
    if all(_UNDOES.get(action, frozenset()) & named for action in requested):
        return ACTION_PENALTY
    return 0.0


def named_actions(manifest: Mapping[str, Any]) -> frozenset[str] | None:
    """For a tool named for an action ("subscription_cancel", "Cancel subscription"), the
    actions its own words offer, even when it does not describe its requests (see
    ``opposed_gap``). None for a tool whose id and name name none."""
    named = f"{split_identifier(str(manifest.get('tool_id') or ''))} {manifest.get('name') or ''}"
    if not _actions_in(named):
        return None
    return _actions_in(_own_text(manifest))


def _phrases(manifest: Mapping[str, Any]) -> list[str]:
    """The tool's aliases and examples."""
    return [str(t) for t in (manifest.get("aliases") or []) + (manifest.get("examples") or [])]


def _asked_text(manifest: Mapping[str, Any], between: str = "") -> str:
    """The tool's id, name, aliases and examples: what people call it and ask of it (with
    ``between`` after the name)."""
    named = [str(manifest.get("tool_id") or ""), str(manifest.get("name") or "")]
    return "\n".join([*named, between, *_phrases(manifest)])


def _own_text(manifest: Mapping[str, Any]) -> str:
    """The tool's id, name, what its description says it is for, aliases and examples,
    less the words that only name a fee (``without_fee_names``)."""
    own = _asked_text(manifest, own_actions_text(str(manifest.get("description") or "")))
    return without_amounts_asked(without_fee_names(own))


# An action that names a fee, a charge or a policy ("late cancellation fee", "booking
# charge", "refund policy") is no action of the tool: "Pay no-show / late cancellation
# fee" pays, and does not cancel.
_FEE_NAMED = re.compile(
    r"\b[A-Za-z]+(?=[\s/-]+(?:fees?|charges?|penalt(?:y|ies)|polic(?:y|ies))\b)", re.IGNORECASE
)


def without_fee_names(text: str) -> str:
    """``text`` without the words that name a fee, a charge or a policy (``_FEE_NAMED``)."""
    return _FEE_NAMED.sub(" ", text)


# A description that limits the tool to one action: "Only adds: removing a driver … goes
# through an agent", "New reservations only", "只负责新建案件", "仅支持新建".
_ONLY = re.compile(
    r"\bonly\s+([a-z]{3,20})\b|\bnew\s+[a-z]{3,20}(?:\s+[a-z]{3,20})?\s+only\b"
    r"|(?:只负责|只能|仅负责|仅支持|仅限|仅|只)\s{0,2}(新建|新增|创建|登记|预约|提交|报案|添加)",
    re.IGNORECASE,
)

# ... or to the action of the verb that opens a sentence whose object the limit follows:
# "Creates bookings only; changes and cancellations go through the front desk" (not "a
# test send goes only to …", nor "Schedule information only").
_VERB_ONLY = re.compile(r"(?:^|[.;:!?]\s+)([A-Za-z]{2,20}s)\s+[a-z]{3,20}\s+only\b", re.IGNORECASE)


def _limited_to(description: str) -> frozenset[str] | None:
    """The actions a description limits the tool to (``_ONLY``, ``_VERB_ONLY``), or None
    if it sets no such limit; creating, for "new … only" and 新建."""
    allowed: set[str] = set()
    for match in _ONLY.finditer(description):
        verb = match.group(1)
        if verb is not None:  # "only adds": an action's verb, else no limit ("only the")
            allowed |= _actions_in(verb, chinese=False)
        else:
            allowed |= {"create", "book"} | _actions_in(match.group(0))
    for match in _VERB_ONLY.finditer(description):  # "Creates bookings only"
        allowed |= _actions_in(match.group(1), chinese=False)
    return frozenset(allowed) or None


def disclaimed_actions(manifest: Mapping[str, Any]) -> frozenset[str]:
    """The actions the tool's description says it does not take ("不负责查询、修改或取消已有
    预约", "it cannot change or cancel a booking") and its own words nowhere offer; for a
    description that limits the tool to some actions ("Only adds", "New reservations
    only"), every other one."""
    description = str(manifest.get("description") or "")
    limited = _limited_to(description)
    if limited is not None:  # and what its name says it does ("create_booking" books)
        named = f"{manifest.get('tool_id') or ''} {manifest.get('name') or ''}"
        return frozenset(_ACTIONS) - limited - _actions_in(split_identifier(named))
    refused = disclaimed_text(description)
    if not refused:
        return frozenset()
    # What the tool's words offer is not refused ("Approving refunds the buyer … it cannot
    # refund an order that has no return open"); but in its description only English
    # verbs count: a Chinese description's nouns name actions it only reports on
    # ("付款状态" of an invoice lookup that "不处理付款", "删除了内容" of an audit log that
    # "不能删除日志").
    # (a Chinese name's action word names the tool's act only as a verb: 付款记录 "payment
    # records" lists what "不能付款" says it cannot do)
    offered = _actions_in(_asked_text(manifest), as_verbs=True) | _actions_in(
        _SETS_UP.sub("create", own_actions_text(description)), chinese=False
    )
    # A tool whose endpoint changes what it is sent to (PATCH, PUT) changes something: "does
    # not change prices or the menu" of one that marks an item sold out names what else
    # it leaves alone.
    endpoint = manifest.get("endpoint")
    method = str(endpoint.get("method") or "").upper() if isinstance(endpoint, Mapping) else ""
    if method in ("PATCH", "PUT"):
        offered |= {"update"}
    return _actions_in(refused) - offered


# A tool that switches things on and off ("Lights: on/off", "开关") is asked to turn one
# off ("turn off the kitchen lights", 关掉儿童房的灯): toggling, and closing in Chinese.
_SWITCHES = re.compile(r"\bon\s*/\s*off\b|\bon\s+(?:or|and)\s+off\b|开关|开/关", re.IGNORECASE)


def _actions_in(text: str, *, chinese: bool = True, as_verbs: bool = False) -> frozenset[str]:
    """The action classes ``text`` names: by an English verb's stem, or a Chinese action
    word (``chinese``) anywhere in it, or only where it is a verb (``as_verbs``: not 付款
    of 付款记录 "payment records")."""
    stems = set(tokenize(_ROLL_BACK.sub("rollback", _TOP_UP.sub("topup", text))))  # "top-up"
    found = frozenset(
        action
        for action, (english, words) in _ACTIONS.items()
        if not stems.isdisjoint(stem(w) for w in english)
        or (chinese and any((_acts(text, w) if as_verbs else w in text) for w in words))
    )
    return found | {"toggle", "close"} if _SWITCHES.search(text) else found


def action_gap(requested: frozenset[str], offered: frozenset[str] | None) -> float:
    """The confidence a tool loses for a request asking for actions its words offer none
    of (one offered is enough: Chinese does not tell the noun "退款规则" from the verb)."""
    if offered is None or not requested or not requested.isdisjoint(offered):
        return 0.0
    return ACTION_PENALTY


# What a change request says it changes: "change the title of LS-…", "update my payout
# bank account to …", "raise the daily budget on AD-…", "把 LS-… 的主图换成…", "OR… 的收货地址
# 改成…". A tool that changes something else ("Updates a listing's price") is not asked
# for it, however close the object ("listing LS-…") brings it.
_CHANGE_VERBS = (
    "change|update|edit|modify|set|raise|lower|increase|decrease|extend|rename|switch|replace"
)
# The verb stands where an imperative would (as in ``_IMPERATIVE``, or after a dash):
# "climate change and …", "a comprehensive update on …", "will set the mood for …" and
# "set up X for …" change nothing.
_CHANGED = re.compile(
    r"(?:^|[,.;:!?(\n\-–—]|\b(?:please|pls|to|you|me|and|then|just|now|also))\s{0,16}"
    rf"\b(?:{_CHANGE_VERBS})\s+(?!up\b)(?:(?:the|my|our|his|her|their|its|this|that)\s+)?"
    r"((?:[a-z][a-z'-]*\s+){0,2}?[a-z][a-z'-]*)\s+(?:of|on|for|in|to|from|at)\b",
    re.IGNORECASE,
)
_CHANGED_ZH = re.compile(
    r"的([\u4e00-\u9fff]{2,6}?)(?:改成|改为|改到|换成|换到|调到|调成|调整为|更新为|更新成|延长到)"
)
# Words of such a phrase that name no attribute: "set up autoscaling", "change it to".
_NO_ATTRIBUTE = frozenset(
    {"up", "it", "them", "this", "that", "one", "all", "everything", "on", "off", "back"}
)  # "switch off autorenew": a switch thrown, no attribute "off"
ATTRIBUTE_PENALTY = 0.25


def changed_attribute(text: str) -> tuple[str, ...]:
    """The attribute a change request names (``_CHANGED``): its content words, English
    (possessives dropped) or one Chinese phrase; empty when it names none."""
    chinese = _CHANGED_ZH.search(text)
    if chinese is not None:
        return (chinese.group(1),)
    english = _CHANGED.search(text)
    if english is None:
        return ()
    # "change bob's login email": a possessor is whose, not what; "increase user-profile
    # replicas": a hyphenated word is a value (a service's name), not what changes
    content = tuple(
        w.lower()
        for w in english.group(1).split()
        if not w.lower().endswith("'s")
        and "-" not in w
        and w.lower() not in _NO_ATTRIBUTE
        and w.lower() not in STOPWORDS
    )
    return content if content and len(content) == len(set(content)) else ()


def attribute_gap(changed: tuple[str, ...], own_words: frozenset[str], own_text: str) -> float:
    """The confidence a tool loses for a request changing an attribute (``changed``) its
    own text never names: every English word's stem among ``own_words`` (the tool's
    words, Chinese ones read in English too), a Chinese phrase in ``own_text`` or all its
    English reading's words among ``own_words``."""
    if not changed:
        return 0.0
    if cjk_share(changed[0]):
        phrase = changed[0]
        if phrase in own_text:
            return 0.0
        # any sense will do: 库存 reads "property or cash held in reserve" first, "stock" too
        read = set(tokenize(gloss(phrase, latin=False))) | set(tokenize(every_sense(phrase)))
        return 0.0 if not read or not read.isdisjoint(own_words) else ATTRIBUTE_PENALTY
    return 0.0 if all(_named_by(w, own_words) for w in changed) else ATTRIBUTE_PENALTY


def _named_by(word: str, own_words: frozenset[str]) -> bool:
    """Whether ``own_words`` name ``word``: its stem, or both halves of a compound
    ("autorenew" of a tool that renews automatically; "passcode", "autopay")."""
    if stem(word) in own_words:
        return True
    for cut in range(3, len(word) - 2):
        head, tail = word[:cut], word[cut:]
        if stem(tail) not in own_words:
            continue
        prefix = len(head) >= 4 and any(w.startswith(head) for w in own_words)  # auto-matic
        if prefix or stem(head) in own_words:
            return True
    return False


def attribute_text(manifest: Mapping[str, Any]) -> str:
    """What a tool names that a request may change: its own words (``_own_text``) and its
    parameters' names, descriptions and options (as a request reads them,
    ``bounds.routing_schema``; not a long enum's options: a catalogue's thousands of values name no
    attribute, and reading them costs a request that ranks the tool seconds)."""
    parts = [_own_text(manifest)]
    schema = manifest.get("input_schema")
    schema = bounds.routing_schema(schema) if isinstance(schema, dict) else {}
    properties = schema.get("properties")
    for name, spec in (properties if isinstance(properties, dict) else {}).items():
        parts.append(split_identifier(str(name)))
        if isinstance(spec, Mapping):
            parts.append(str(spec.get("description") or ""))
            options = spec.get("enum") or []
            if len(options) <= enums.LONG_ENUM:
                parts.extend(str(o) for o in options if isinstance(o, str))
    return "\n".join(parts)


# What an order acts on: the noun after its action verb ("withdraw my damage claim",
# "cancel the tow truck"). A tool that takes the action but whose own words never name
# that thing ("cancel_pickup"), in a catalogue where another candidate is named for it
# (``file_claim``), is not what the request is for, however close the verb brings it:
# its confidence loses ``OBJECT_PENALTY``.
OBJECT_PENALTY = 0.5
_OBJECT_TOKEN = re.compile(r"[A-Za-z0-9][\w'./@#-]*|[^\w\s]")
_DETERMINERS = frozenset(
    (
        *("the", "my", "our", "a", "an", "this", "that", "these", "those", "his", "her"),
        *("their", "your", "its", "all", "both", "any", "some"),
    )
)
# Words that end the object's phrase: prepositions, conjunctions, pronouns, adverbs.
_OBJECT_ENDS = frozenset(
    (
        *("for", "of", "on", "in", "into", "to", "from", "at", "with", "by", "about", "as"),
        *("and", "or", "but", "so", "because", "since", "if", "when", "then", "please", "pls"),
        *("it", "them", "i", "we", "you", "he", "she", "they", "me", "us", "him", "which"),
        *("who", "now", "asap", "today", "tomorrow", "tonight", "instead", "too", "again"),
    )
)
_MAX_OBJECT_WORDS = 3
_VERBS = frozenset().union(*(english for english, _ in _ACTIONS.values()))
ACTION_VERBS = _VERBS
_VERB_STEMS = frozenset(map(stem, _VERBS))


def acted_on(text: str) -> tuple[frozenset[str], str] | None:
    """The action classes of the first action verb standing as an imperative in ``text``
    and the head noun (stemmed) of what it acts on: the last of up to
    ``_MAX_OBJECT_WORDS`` plain words after the verb and its determiners, ended by
    ``_OBJECT_ENDS``, a value or punctuation. None when there is no such verb or word, or
    the word also names an action ("a booking", "that transfer": the verb may be a
    tool's)."""
    tokens = _OBJECT_TOKEN.findall(text)
    standing = set(imperatives(text))
    for i, token in enumerate(tokens):
        verb = token.lower()
        if verb not in _VERBS or verb not in standing:
            continue
        words: list[str] = []
        for word in tokens[i + 1 : i + 1 + _MAX_OBJECT_WORDS + 3]:
            lower = word.lower()
            if not words and lower in _DETERMINERS:
                continue
            if lower in _OBJECT_ENDS or not lower.isalpha() or not lower.isascii():
                break
            words.append(lower)
            if len(words) == _MAX_OBJECT_WORDS:
                break
        head = stem(words[-1]) if words else None
        if head is None or head in _VERB_STEMS:
            return None
        return frozenset(a for a, (english, _) in _ACTIONS.items() if verb in english), head
    return None


def object_gap(
    acted: tuple[frozenset[str], str] | None, manifest: Mapping[str, Any], own_words: frozenset[str]
) -> float:
    """The confidence a tool loses for an order (``acted_on``) whose action its own words
    name (``_own_text``) on a thing they never name (``own_words``: its words, parameters
    and options): called only while another candidate is named for that thing."""
    if acted is None:
        return 0.0
    actions, thing = acted
    if thing in own_words or not actions & _actions_in(_own_text(manifest)):
        return 0.0
    if any(_compound_of(word, thing) for word in own_words):
        return 0.0  # "turn off automatic payments" of AutoPay
    return OBJECT_PENALTY


def _compound_of(word: str, thing: str) -> bool:
    """Whether ``word`` is a compound whose second half begins ``thing``: "autopay" of
    "payment", "prepay" of "payments" (each half three letters or more)."""
    return any(
        word.endswith(thing[:cut]) and len(word) - cut >= 3 for cut in range(3, len(thing) + 1)
    )
