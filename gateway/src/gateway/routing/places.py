"""Places a request names, for a parameter that takes one (an address, a location, an area).

A street address, as people write them: "19 Larch Avenue", "flat 4B 30 Canal Street",
"221 Elm St", "光明路7号", "滨江花园5栋1单元", "上海市徐汇区漕溪北路88号". Else a street on its
own ("on Bridge Street", "和平街停电了"). For an area, also a district after "in",
"around", "near" or "within 5km of" ("outages in Westfield"), a postcode ("postcode
4410", "in 2150", "near 560123"), or a name in Latin letters in a Chinese request
("Hurstville 是不是没信号了").

Only a parameter without an enum and whose name or description says it takes a place
is filled this way (:func:`takes_a_place`); what such a parameter's request holds
otherwise (a room number, an id) is left to the extractor's other readers.

Every pattern reads a bounded window at each position (words of at most a few dozen
letters, runs of at most six characters): linear in the request's length.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from typing import Any

# A parameter that takes a place, by its name or its description.
# A named place where a service is given (a test centre, a branch, a store: "at Wood
# Green", "Borehamwood 考场"): a name read as an area's is (not a cost centre).
_SERVICE_PLACE = (
    r"(?<![a-z])(?<!cost\s)(?<!cost_)(?:centre|center)(?![a-z])"
    r"|(?<![a-z])(?:branch|store|depot)(?![a-z])|考场|门店|网点"
)
_SERVICE_PLACE_RE = re.compile(_SERVICE_PLACE, re.IGNORECASE)
# A place named by its code or number, no name: "branch code", 门店代码, store_id.
_CODED = re.compile(r"code|(?<![a-z])id(?![a-z])|number|代码|编号|编码|号码", re.IGNORECASE)
_BY_NAME = re.compile(r"\bby\s+(?:its\s+)?name\b|\bname\s+or\b|名称或|名字或", re.IGNORECASE)
_PLACE_WORDS = re.compile(
    r"address|location|\barea\b|street|suburb|neighbou?rhood|postcode|post_code|\bvenue\b"
    rf"|地址|地点|位置|区域|街道|片区|{_SERVICE_PLACE}",
    re.IGNORECASE,
)
_AREA_WORDS = re.compile(
    rf"area|suburb|neighbou?rhood|district|postcode|区域|片区|{_SERVICE_PLACE}", re.IGNORECASE
)

_SUFFIXES = (
    r"street|st|road|rd|avenue|ave|lane|ln|drive|dr|close|terrace|parade|grove|way|place"
    r"|court|ct|boulevard|blvd|crescent|cres|square|sq|row|hill|gardens|walk|mews|highway"
    r"|park"
)
# A postcode as countries write them: "M1 2AB", "SW1A 1AA", "10001", "NY 10001-1234",
# "H2X 1Y4", "2150".
_POSTCODE_SHAPE = (
    r"(?:[A-Z]{1,2}\d[A-Z\d]?\s?\d[A-Z]{2}|[A-Z]\d[A-Z]\s?\d[A-Z]\d"
    r"|(?:[A-Z]{2}\s)?\d{5}(?:-\d{4})?|\d{4})(?![\w-])"
)
# What may follow a street address: a town or two and a postcode ("22 Elm Street,
# Manchester M1 2AB", "14 Harbour Road, Leith, Edinburgh EH6 6LX"), or a town alone where
# the sentence goes on ("3 Beech Close, Oxford.").
_TOWN = r"[A-Z][a-z'-]{1,30}(?:\s[A-Z][a-z'-]{1,30}){0,2}"
# The words that go on past a town with the rest of the sentence ("500 Market St, Oakland
# on Thursday", "…, Leeds between 2 and 4").
_GOES_ON = (
    r"(?:on|by|at|between|before|after|from|for|around|tomorrow|today|tonight|this|next"
    r"|please|pls|and|asap)"
)
_TOWNS_AND_CODE = re.compile(
    rf"(?:,\s{{0,3}}{_TOWN}){{0,2}}(?:,?\s{{1,3}}{_POSTCODE_SHAPE})"
    rf"|,\s{{0,3}}{_TOWN}(?=\s{{0,3}}(?:$|[.;!?)]|-\s|,\s{{0,3}}[a-z0-9])|\s{{1,3}}{_GOES_ON}\b)"
)
_MORE_SUFFIX = re.compile(rf"\s(?i:{_SUFFIXES})\b\.?")
# Words a street's name is not made of ("pickup on the Road", "next to my Drive").
_NOT_STREET_NAMES = frozenset(
    {"the", "a", "an", "my", "our", "your", "on", "in", "at", "of", "to", "for", "and", "or"}
)
_WORD = r"[A-Za-z][A-Za-z'-]{0,30}"
_ORDINAL = r"\d{1,3}(?:st|nd|rd|th)"  # a numbered street: "2209 W 4th Ave"
_NUMBERED = re.compile(
    rf"(?:\b(?:flat|apt\.?|apartment|unit|suite)\s+\w{{1,6}},?\s+)?"
    rf"(?<![\w-])\d{{1,5}}[A-Za-z]?(?:[-/]\d{{1,4}})?\s+((?:(?:{_WORD}|{_ORDINAL})\s+){{0,3}}?)"
    rf"(?:{_SUFFIXES})\b\.?",
    re.IGNORECASE,
)
# A named street is capitalised ("Bridge Street", "Station Rd"): "the main road" names none.
_NAMED = re.compile(rf"\b((?:[A-Z][a-z'-]{{1,30}}\s+){{1,3}})(?i:{_SUFFIXES})\b\.?")
_AREA_AFTER = re.compile(
    r"\b(?:in|around|near|across|for|at|within\s+\d{1,3}\s?(?:km|kms|mi|miles?)\s+of)"
    r"\s+([A-Z][a-z'-]{1,30}(?:\s+[A-Z][a-z'-]{1,30}){0,2}"
    # and the kind of place after the name: "Leeds station", "Heathrow T5"
    r"(?:\s+(?:station|airport|services|terminal|T\d|mall|centre|center|hospital|campus"
    r"|car\s+park|retail\s+park|stadium|harbour|port|pier|square)(?![A-Za-z0-9]))?)"
)
# A place near which to look, in Chinese: 虹桥火车站附近, 南山科技园那边, 我在国贸.
_CJK_NEAR = re.compile(
    r"([\u4e00-\u9fff]{2,12}?)(?:附近|周边|周围|那边|一带|旁边)"
    r"|我(?:现在|人)?在([\u4e00-\u9fff]{2,8}?)(?=[，,。！!？?\s]|$|附近|这边|呢|啊)"
)
# What a request says before the place: 帮我找下…, 查一下…, 在….
_BEFORE_PLACE = re.compile(r"^.*?(?:找一?下|查一?下|搜一?下|看一?下|看看|帮我|给我|我在|在)")
# A place given as its coordinates: "51.5072,-0.1276".
_LAT_LON = re.compile(r"(?<![\d.])-?\d{1,2}\.\d{2,8}\s?,\s?-?\d{1,3}\.\d{2,8}(?![\d.])")
_POSTCODE = re.compile(
    r"(?:\b(?:post\s?code|zip(?:\s?code)?)|邮编)\s*[:：#]?\s*([A-Za-z0-9][A-Za-z0-9-]{1,8}\d)\b"
    r"|\b(?:in|near|around)\s+(\d{4,6})\b"
    # written in capitals without a label, in a shape of its own: SW1A 1AA, LS10 1AB, K1A 0B1
    r"|(?-i:\b([A-Z]{1,2}\d[A-Z\d]?\s\d[A-Z]{2}|[A-Z]\d[A-Z]\s\d[A-Z]\d)\b)",
    re.IGNORECASE,
)
_LATIN_NAME = re.compile(
    r"(?<![A-Za-z])([A-Z][a-z'-]{2,30}(?:\s+[A-Z][a-z'-]{2,30}){0,2})(?![A-Za-z])"
)

# Chinese: a city and a district before the street, the street or the estate, and the
# building, unit and room after it. A name is two to six characters that are not the
# request's own words (的, 是, 我, 请 ...).
_NAME_CHAR = (
    r"[^\W\d_A-Za-z的了吗呢吧是在到我你他她们请帮查把给从去要想那这边个么啥问有没与及跟就也都还址]"
)
# The character before 路 or 街 of a word that is no street: 线路, 电路, 思路, 铁路, 公路.
_STREET_END = rf"(?![线电网思出套回走道铁公带逛]){_NAME_CHAR}"
# A bank's or a shop's branch, named for its street or its district: 南京西路支行, 高新区支行.
_BRANCH = "(?:支行|分行|营业部|营业厅|分店)"
_CJK_ADDRESS = re.compile(
    rf"(?:{_NAME_CHAR}{{2,3}}[省市])?(?:{_NAME_CHAR}{{1,3}}[区县])?"
    rf"(?:{_NAME_CHAR}{{1,5}}?{_STREET_END}(?:大道|路|街|巷|弄|胡同)(?:\d{{1,4}}号)?{_BRANCH}?"
    rf"|{_NAME_CHAR}{{2,6}}?(?:小区|花园|新村|公寓|家园|山庄|大厦|苑|科技园|工业园|园区|{_BRANCH}))"
    rf"(?:{_NAME_CHAR}{{2,6}}?(?:广场|大厦|大楼|中心|园区|科技园|工业园))?"
    r"(?:[东南西北中]区)?"
    r"(?:[A-Za-z\d]{1,3}(?:号楼|栋|幢|座))?(?:\d{1,2}单元)?(?:\d{1,3}(?:楼|层))?"
    r"(?:\d{2,5}(?:室|房|号)?)?"
)
# What a run of characters may start with and a place does not: a day, "the address is",
# "find".
_LEADING = re.compile(
    r"^(?:(?:今天|明天|昨天|后天|今晚|明早|现在|下周.|这周.|本周.|上周.|周.|地址|住址|位于|住"
    r"|找一?下|搜一?下|看一?下|找找|找)+)"
)
# Capitalised words after a comma that begin a sentence, not a town.
_NOT_TOWNS = frozenset(
    {"I", "I'm", "I'll", "I'd", "Please", "Thanks", "Thank", "Can", "Could", "Would", "Will"}
    | {"The", "My", "Our", "It", "It's", "We", "We're", "He", "She", "They", "This", "That"}
    | {"Is", "Are", "Do", "Does", "Just", "And", "But", "Also", "Then", "Cheers", "Hi"}
    | {"Today", "Tomorrow", "Tonight", "Morning", "Afternoon", "Evening", "Next"}
)
_NOT_AREAS = frozenset(
    {"Monday", "Tuesday", "Wednesday", "Thursday", "Friday", "Saturday", "Sunday"}
    | {"January", "February", "March", "April", "May", "June", "July", "August"}
    | {"September", "October", "November", "December", "I", "The", "My", "Our"}
    # and a month or a day as a calendar shortens it ("Paddington times for Dec 19")
    | {"Jan", "Feb", "Mar", "Apr", "Jun", "Jul", "Aug", "Sep", "Sept", "Oct", "Nov", "Dec"}
    | {"Mon", "Tue", "Tues", "Wed", "Thu", "Thur", "Thurs", "Fri", "Sat", "Sun"}
)


# A postcode at the start of a text, after a word or two ("postcode SW11 2AB", "BN1 4GH").
_LEADING_CODE = re.compile(rf"(?:[A-Za-z]+\s+){{0,2}}?({_POSTCODE_SHAPE})")


# A postcode where no label says so, for a parameter that takes one: a UK outward code
# in capitals where a place is said ("near SW11", "in LS6", "E14 附近", "邮编 B15"), or
# five or six digits standing alone ("deliver to 60614", "送到200030": no id, price or
# phone number's part).
_OUTWARD_CODE = re.compile(
    r"(?:\b(?:near|around|in|at|to|for|postcode|zip)\s+|邮编\s*[:：]?\s*)"
    r"(?-i:([A-Z]{1,2}\d[A-Z\d]?))(?![\w-])"
    r"|(?-i:(?<![\w-])([A-Z]{1,2}\d[A-Z\d]?))\s*(?:附近|周边|一带|那边)",
    re.IGNORECASE,
)
_DIGITS_CODE = re.compile(
    r"(?<![A-Za-z0-9_.,$€£¥#+/:-])(\d{5,6})"
    r"(?![A-Za-z0-9_.,%:/-]|\s?(?:元|块|美元|镑|号|人|个|件|份|字|词|次|天|分))"
)


def postcode(query: str, name: str) -> str | None:
    """For a parameter named for a postcode alone (``postcode``, ``zip``; not one end of a
    journey's, ``to_postcode``, nor an address): a labelled postcode, one in a country's
    full shape, else an outward code or a number standing alone where a place is said."""
    if _POSTCODE_NAME.fullmatch(name) is None:
        return None
    code = _POSTCODE.search(query)
    if code is not None and (code.group(1) or code.group(3)):
        return code.group(1) or code.group(3)
    outward = _OUTWARD_CODE.search(query)
    if outward is not None:
        return outward.group(1) or outward.group(2)
    digits = [m.group(1) for m in _DIGITS_CODE.finditer(query)]
    return digits[0] if len(digits) == 1 else None


_POSTCODE_NAME = re.compile(r"post_?code|postal_?code|zip(?:_?code)?|postCode|zipCode", re.I)


def names_a_postcode(name: str) -> bool:
    """Whether a parameter's name says it holds a postcode (``to_postcode``, ``zip``)."""
    return _CODE_PART.search(name) is not None


def leading_postcode(text: str) -> str | None:
    """The postcode ``text`` begins with, whole ("SW11 2AB to …" is SW11 2AB, not SW11)."""
    found = _LEADING_CODE.match(text)
    return found.group(1) if found else None


def takes_a_place(name: str, spec: dict[str, Any]) -> bool:
    """Whether a string parameter takes a place, by its name or its description (and it
    has no enum: an enum's options are read as options); a branch or a store only by its
    name, not its code (新的还车门店代码: SHA-HQ), unless it is taken by either ("Donor
    centre or blood drive, by name or site code")."""
    if "enum" in spec:
        return False
    said = f"{name} {spec.get('description') or ''}"
    found = _PLACE_WORDS.search(said)
    if found is None:
        return False
    if _SERVICE_PLACE_RE.fullmatch(found.group(0)) and _CODED.search(said):
        # (unless it is also taken by its name: "Donor centre …, by name or site code")
        if _BY_NAME.search(said):
            return True
        return bool(_PLACE_WORDS.search(_SERVICE_PLACE_RE.sub(" ", said)))
    return True


def _takes_an_area(name: str, spec: dict[str, Any]) -> bool:
    return bool(_AREA_WORDS.search(f"{name} {spec.get('description') or ''}"))


def place(query: str, name: str, spec: dict[str, Any]) -> str | None:
    """The place ``query`` names for the parameter ``name``: an address, else a street,
    else (for an area) a district or a postcode."""
    found = _street_address(query) or _chinese_address(query) or _street(query)
    if found is not None or not _takes_an_area(name, spec):
        return found
    return _area(query)


def _chinese_area(query: str) -> str | None:
    """The place a Chinese request looks near (``_CJK_NEAR``), what it says before the
    place left out."""
    for match in _CJK_NEAR.finditer(query):
        text = _BEFORE_PLACE.sub("", match.group(1) or match.group(2))
        if len(text) >= 2:
            return text
    return None


def _street_address(query: str) -> str | None:
    """A numbered street, with the town and postcode written after it."""
    match = _first_street(_NUMBERED, query)
    if match is None:
        return None
    found = match.group(0).rstrip(".")
    end = match.start() + len(found)
    longer = _MORE_SUFFIX.match(query, end)  # "45 Queen's Park Avenue", not "… Park"
    if longer is not None:
        found, end = found + longer.group(0).rstrip("."), longer.end()
    town = _TOWNS_AND_CODE.match(query, end)
    words = set(re.findall(r"[A-Za-z']+", town.group(0))) if town is not None else set()
    if town is not None and not words & (_NOT_TOWNS | _NOT_AREAS):
        found += town.group(0)
    return found


# The parts of an address an API asks for one by one (``street``, ``city``, ``postcode``).
_STREET_PART = re.compile(r"street|address_?line|line_?1|addr_?1", re.IGNORECASE)
_TOWN_PART = re.compile(r"city|town|locality", re.IGNORECASE)
_CODE_PART = re.compile(r"post_?code|postal|zip", re.IGNORECASE)
_UNIT_PART = re.compile(r"line_?2|addr(?:ess)?_?2|\bunit\b|apartment|\bapt\b|suite", re.I)
_STATE_PART = re.compile(r"state|province|region", re.IGNORECASE)
_CODE_ALONE = re.compile(_POSTCODE_SHAPE)
# A flat or a suite written after the street ("88 Pine St Apt 4B", "12 High St, Unit 3").
_UNIT_AFTER = re.compile(
    r",?\s{1,3}((?i:apt\.?|apartment|unit|suite|ste\.?|flat|#)\s?[A-Za-z0-9][\w-]{0,5})\b"
)
# A state or province written in capitals before the postcode: "Round Rock TX 78664".
_STATE_BEFORE_CODE = re.compile(r"(?:^|[\s,])([A-Z]{2})\s{1,3}(?=[\dA-Z]\d?\S*$)")


def address_parts(query: str, names: Iterable[str]) -> dict[str, str]:
    """For parameters that take an address in parts (a street's and a town's or a
    postcode's, by their names), those parts of the request's numbered street address:
    "Flat 3, 22 Victoria Road, Bristol, BS1 6AA" gives the street "Flat 3, 22 Victoria
    Road", the city "Bristol" and the postcode "BS1 6AA". Empty unless the parameters
    split an address and the request writes one."""
    names = list(names)
    street = next((n for n in names if _STREET_PART.search(n)), None)
    town = next((n for n in names if _TOWN_PART.search(n)), None)
    code = next((n for n in names if _CODE_PART.search(n)), None)
    match = _first_street(_NUMBERED, query) if street and (town or code) else None
    if street is None or match is None:
        return {}
    found = match.group(0).rstrip(".")
    end = match.start() + len(found)
    longer = _MORE_SUFFIX.match(query, end)
    if longer is not None:
        found, end = found + longer.group(0).rstrip("."), longer.end()
    unit = next((n for n in names if _UNIT_PART.search(n) and n != street), None)
    flat = _UNIT_AFTER.match(query, end)
    if flat is not None and unit is not None:
        parts = {street: found, unit: flat.group(1)}
        end = flat.end()
    else:
        parts = {street: found}
    after = _TOWNS_AND_CODE.match(query, end)
    if after is None:
        return parts
    pieces = [p.strip() for p in after.group(0).split(",") if p.strip()]
    state = next((n for n in names if _STATE_PART.search(n)), None)
    if pieces and (tail := _CODE_ALONE.search(pieces[-1])) is not None:
        written = tail.group(0)
        held = _STATE_BEFORE_CODE.search(written)
        if held is not None:  # "TX 78664": the state, then the code
            written = written[held.end() :]
            if state is not None:
                parts[state] = held.group(1)
        if code is not None:
            parts[code] = written
        pieces[-1] = pieces[-1][: tail.start()].strip()
    if state is not None and state not in parts and pieces:  # "Austin, TX"
        last = pieces[-1].rsplit(maxsplit=1)
        if re.fullmatch(r"[A-Z]{2}", last[-1]) and last[-1] not in _NOT_TOWNS:
            parts[state] = last[-1]
            pieces[-1] = last[0] if len(last) > 1 else ""
    towns = [p for p in pieces if p and not set(p.split()) & (_NOT_TOWNS | _NOT_AREAS)]
    if town is not None and towns:
        parts[town] = towns[-1]  # "Leith, Edinburgh": the town is the last
    return parts


def _street(query: str) -> str | None:
    match = _first_street(_NAMED, query)
    return None if match is None else match.group(0).rstrip(".").strip()


def _first_street(pattern: re.Pattern[str], query: str) -> re.Match[str] | None:
    """The first match of ``pattern`` whose street name holds no common word ("on the")."""
    for match in pattern.finditer(query):
        if not any(w.lower() in _NOT_STREET_NAMES for w in match.group(1).split()):
            return match
    return None


def _chinese_address(query: str) -> str | None:
    for match in _CJK_ADDRESS.finditer(query):
        text = _LEADING.sub("", match.group(0))
        if len(text) >= 3:
            return text
    return None


def _area(query: str) -> str | None:
    coordinates = _LAT_LON.search(query)
    if coordinates is not None:
        return coordinates.group(0)
    code = _POSTCODE.search(query)
    if code is not None:
        return code.group(1) or code.group(2) or code.group(3)
    for match in _AREA_AFTER.finditer(query):
        if match.group(1).split()[0] not in _NOT_AREAS:
            return match.group(1)
    if re.search(r"[\u4e00-\u9fff]", query):  # 人民广场附近, or a Latin name in Chinese
        near = _chinese_area(query)
        if near is not None:
            return near
        for match in _LATIN_NAME.finditer(query):
            if match.group(1).split()[0] not in _NOT_AREAS:
                return match.group(1)
    return None
