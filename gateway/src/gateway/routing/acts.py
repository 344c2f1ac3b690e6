"""What a request asks a device to do, for an enum of acts or states that no option's own
word names.

"let me in, front door please" asks a lock's ``action`` for ``unlock``; "撤防" asks an
alarm's ``state`` for ``disarmed``; "we're heading out" with "arm" asks for
``armed_away``; "回去充电" asks a robot's ``command`` for ``dock``; 开暖气 asks a rule's
``action`` for ``heat_on``. Each act has the ways people ask for it (:data:`_ASKS`,
English and Chinese); an option is scored by the share of its words the request asks
for (an option's word that is no act, "heat" of ``heat_on``, counts when the request
writes it, in any inflection or in its Chinese gloss). The option with the highest
share wins, when it is one option and at least one act word of it is asked for; a tie
answers nothing ("arm the alarm" between ``armed_away`` and ``armed_stay``).

Every pattern is a fixed alternation with bounded gaps: linear in the request.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from typing import Any

from gateway.routing.text import stem, words_of

_NOT_AFTER = r"(?<!un)(?<!dis)"
# "heating on", "porch light on", "lights off automatically": a switch after the thing it
# switches, at the end of a clause or before when (not "on mondays", "dark-mode on sandbox").
_AFTER_A_THING = (
    r"|(?<![\w.\-])[a-z]{{3,}}\s+{}(?=\s*(?:$|[,.;!?)]|(?:now|please|pls|automatically|again"
    r"|at|every|each|for|in|when|until|till|then|and|tonight|daily|weekly)\b))"
)
# Each act, keyed by the stem of the option word that names it.
_ASKS: dict[str, re.Pattern[str]] = {
    key: re.compile(pattern, re.IGNORECASE)
    for key, pattern in {
        "lock": _NOT_AFTER + r"\block(?:s|ed|ing)?\b(?!\s+(?:out|code|pin|id))|\bsecure\b"
        r"|锁上|锁好|上锁|锁门|锁住|关锁|锁回|再锁|锁起来|(?<!解)(?<!开)锁一下",
        "unlock": r"\bunlock|\blet\s+(?:me|us|them|him|her)\s+in\b|\bopen\s+(?:up\s+)?(?:the\s+)?"
        r"(?:\w+\s+)?door\b|解锁|开锁|开门|开一下[^，。,.]{0,12}锁|打开[^，。,.]{0,8}锁",
        "arm": r"(?<!dis)\barm(?:ed|ing)?\b|布防|设防|开启警戒|(?<!关)(?<!撤)警戒",
        "disarm": r"\bdisarm|\b(?:turn|switch|shut)(?:ed)?\s+(?:off\s+(?:the\s+)?alarm|(?:the\s+)?"
        r"alarm\s+off)|\balarm\s+off\b|撤防|解除(?:布防|警戒)|关(?:掉|闭|了)?(?:报警|警报|安防)",
        "away": r"\baway\b|\bheading\s+out|\bgoing\s+out|\bleaving\b|\bout\s+of\s+(?:the\s+)?"
        r"(?:house|home)|\bon\s+holiday|出门|离家|外出|不在家|出差",
        "stay": r"\bstay(?:ing)?\s+(?:in|home)|\bat\s+home\b|\bwe'?re\s+(?:home|in)\b"
        r"|\bgoing\s+to\s+(?:bed|sleep)|\bfor\s+the\s+night|在家|睡觉|睡了",
        "start": r"\bstart|\bbegin\b|\bclean(?:ing)?\b|\bvacuum\s+(?:the|my|our|up)\b|\bhoover"
        r"|打扫|清扫|扫一?下|开始|启动|开扫",
        "stop": r"\bstop|\bhalt\b|停掉|停止|停下|别扫|不要扫|关掉扫地机",
        "pause": r"\bpause|\bhold\s+on\b|暂停",
        "dock": r"\bdock|\brecharge|\bcharg(?:e|ing)\b|\bgo\s+(?:back\s+)?home\b|\bback\s+to\s+"
        r"(?:the\s+)?(?:base|dock|charger)|回去?充电|回充|回座|回基站|去充电",
        "resume": r"\bresume|\bcontinue|\bcarry\s+on|继续|恢复",
        "on": r"\b(?:turn|switch|put|flick)(?:ed)?\s+(?:\w+\s+){0,3}?on\b|\bcome\s+on\b|\bon\s+at\b"
        r"|\b(?:enable|activate)|启用|开通"
        + _AFTER_A_THING.format("on")
        + r"|打开|开启|(?<![打公离展召解])开(?=[^始会心发放通展除关门锁票具户单]{1,4})",
        "off": r"\b(?:turn|switch|shut)(?:ed)?\s+(?:\w+\s+){0,3}?off\b|\bgo\s+off\b|\boff\s+at\b"
        r"|\b(?:disable|deactivate)|\bstop\s+(?:auto|automatic)|停用|禁用|别再|不要再|不再"
        + _AFTER_A_THING.format("off")
        + r"|关掉|关闭|关上|关了|(?<![相有])关(?=[^于系心注门]{1,4})",
        "open": r"\bopen\b|打开|开启",
        "close": r"\bclose\b|\bshut\b(?!\s+off)|关上|关闭",
        "mute": r"\bmute|\bsilence|静音",
        # an account joined to another, or parted from it
        "link": r"(?<!un)\blink(?:s|ed|ing)?\b|(?<!dis)\bconnect(?:s|ed|ing)?\b|\bhook\s+up"
        r"|(?<!un)\bbind\b|(?<!解)(?<!解除)绑定|(?<![解])绑(?=[上到个一下])",
        "unlink": r"\bunlink|\bdisconnect|\bdetach|\bunbind|\bunhook|解绑|解除绑定|取消绑定"
        r"|(?<=[把将])[^，。,.]{1,12}解掉|断开",
        # an appointment or a booking moved in time, or called off
        "reschedule": r"\breschedul|\bre-schedul|\bmove\b|\bpush\b|\bpostpone|\bbring\s+forward"
        r"|\bchange\s+(?:the\s+)?(?:time|date|day)|改到|改期|改约|挪到|往后挪|往前挪|挪一下|推迟"
        r"|延后|提前到|换个时间|换到|改时间",
        "cancel": r"\bcancel|\bcancle|\bcall\s+off|取消|不去了|不来了|退掉",
    }.items()
}
_ASKED_WORDS = {stem(key): key for key in _ASKS}
# Option words that name a switch's two sides in other words: ``开启`` / ``关闭``,
# ``enabled`` / ``disabled`` (a toggle's enum, read as ``on`` / ``off``).
_ASKED_WORDS.update(
    dict.fromkeys(("开启", "打开", "启用", "开通", "enable", "enabled", "activate"), "on")
)
_ASKED_WORDS.update(
    dict.fromkeys(("关闭", "关掉", "停用", "禁用", "disable", "disabled", "deactivate"), "off")
)
# (compiled once: ``re``'s own cache of 512 patterns is shared with every manifest's)
_ENDING = re.compile(r"(?:ed|ing)$")


def _words(option: object) -> list[str]:
    return words_of(str(option))


def _act_of(word: str) -> str | None:
    """The act an option's word names: ``armed`` is arm, ``disarmed`` disarm."""
    for form in (word, stem(word), _ENDING.sub("", word)):
        if form in _ASKS:
            return form
        if form in _ASKED_WORDS:
            return _ASKED_WORDS[form]
    return None


_MAX_OPTIONS = 32  # a device's acts are a few; a long enum is read through its index


def takes_acts(options: Sequence[Any]) -> bool:
    """Whether at least two of a short enum's options name an act or a state of a device."""
    if len(options) > _MAX_OPTIONS:
        return False
    return sum(any(_act_of(w) for w in _words(o)) for o in options) >= 2


def option_asked(query: str, options: Sequence[Any], written: Callable[[str], bool]) -> Any:
    """The option whose words the request asks for the largest share of (see the module
    doc); ``written``: whether the request writes a word that is no act ("heat")."""
    asked: dict[str, bool] = {}
    best: list[Any] = []
    best_share = 0.0
    for option in options:
        words = _words(option)
        if not words:
            continue
        hits = 0
        acts = 0
        for word in words:
            act = _act_of(word)
            if act is None:
                hits += written(word)
                continue
            if act not in asked:
                asked[act] = _ASKS[act].search(query) is not None
            acts += asked[act]
            hits += asked[act]
        share = hits / len(words)
        if acts == 0 or share < best_share:
            continue
        if share > best_share:
            best, best_share = [option], share
        else:
            best.append(option)
    return best[0] if len(best) == 1 else None


def switched(query: str) -> bool | None:
    """True when the request asks to switch something on ("porch light on", 开灯), False
    when off, None when it asks neither or both."""
    on = _ASKS["on"].search(query) is not None
    off = _ASKS["off"].search(query) is not None
    return on if on != off else None
