"""Argument filling for the way operators write: names like ``billing-worker``, versions
and commits, switches thrown in words, short forms of enum options, one-line summaries."""

from __future__ import annotations

from typing import Any

import pytest

from gateway.routing.extract import ArgumentExtractor, examples_of
from gateway.routing.gloss import dictionary

extractor = ArgumentExtractor()

NAME = {"type": "string", "pattern": "^[a-z][a-z0-9-]{1,40}$"}
ENVIRONMENT = {"type": "string", "enum": ["sandbox", "live"]}


def schema(required: list[str], **properties: dict[str, Any]) -> dict[str, Any]:
    return {"type": "object", "properties": properties, "required": required}


@pytest.mark.parametrize(
    ("query", "expected"),
    [
        ("resize search-worker to 7 copies", "search-worker"),
        ("please resize ledger-svc2 to 3", "ledger-svc2"),
        ("resize cache to 2", "resize"),  # nothing looks like a name: the first word still
    ],
)
def test_a_loose_pattern_prefers_what_looks_like_a_name(query: str, expected: str) -> None:
    result = extractor.extract(
        query, schema(["app", "copies"], app=NAME, copies={"type": "integer"})
    )
    assert result.arguments["app"] == expected


def test_a_piece_of_a_dotted_token_is_not_a_name() -> None:
    tool = schema(["app", "tag"], app=NAME, tag={"type": "string", "description": "e.g. v1.4.2"})
    result = extractor.extract("push v7.1.0-beta2 of mailer-api out", tool)
    assert result.arguments == {"app": "mailer-api", "tag": "v7.1.0-beta2"}


@pytest.mark.parametrize(
    ("query", "tag"),
    [
        ("push mailer-api 3.10.0 now", "3.10.0"),  # no "v", other digit counts
        ("push mailer-api v12.0.1", "v12.0.1"),
        ("push mailer-api 9be41f0", "9be41f0"),  # a commit, the description's second example
    ],
)
def test_versions_and_commits_take_any_digit_count(query: str, tag: str) -> None:
    spec = {"type": "string", "description": "image tag or commit, e.g. v1.4.2 or 77ac01e"}
    assert examples_of(spec) == ["v1.4.2", "77ac01e"]
    result = extractor.extract(query, schema(["tag"], tag=spec, copies={"type": "integer"}))
    assert result.arguments == {"tag": tag}  # and "3.10.0" is no count of copies


def test_a_machine_name_parameter_without_pattern_takes_the_only_such_token() -> None:
    tool = schema(
        ["app"],
        app={"type": "string", "description": "the app"},
        release_id={"type": "string", "pattern": "^rel-[0-9]{5}$"},
    )
    result = extractor.extract("undo mailer-api to rel-20311", tool)
    assert result.arguments == {"app": "mailer-api", "release_id": "rel-20311"}
    # a parameter that is not a machine's name does not guess
    other = schema(["colour"], colour={"type": "string"})
    assert extractor.extract("paint mailer-api", other).missing == ["colour"]


@pytest.mark.parametrize(
    ("query", "on"),
    [
        ("turn on billing.dark-mode in live", True),
        ("switch on billing.dark-mode", True),
        ("toggle billing.dark-mode off", False),
        ("flip off billing.dark-mode in sandbox", False),
        ("disable billing.dark-mode", False),
        ("set billing.dark-mode active=false on sandbox", False),
        ("set billing.dark-mode active=true", True),
        ("把 billing.dark-mode 这个开关打开", True),
        ("billing.dark-mode 先关掉", False),
    ],
)
def test_switches_thrown_in_words(query: str, on: bool) -> None:
    tool = schema(["key", "active"], key={"type": "string"}, active={"type": "boolean"})
    assert extractor.extract(query, tool).arguments["active"] is on


def test_a_setting_named_on_its_own_is_not_a_switch() -> None:
    tool = schema(["active"], active={"type": "boolean"})
    assert extractor.extract("set billing.dark-mode on sandbox", tool).missing == ["active"]


@pytest.mark.parametrize(
    ("query", "option"),
    [("restart it in live", "live"), ("restart it in sand", "sandbox"), ("the sandbox", "sandbox")],
)
def test_an_option_by_its_short_form(query: str, option: str) -> None:
    assert extractor.extract(query, schema(["env"], env=ENVIRONMENT)).arguments == {"env": option}


def test_a_long_word_is_not_a_short_form() -> None:
    options = {"type": "string", "enum": ["production", "staging"]}
    assert extractor.extract("prod", schema(["env"], env=options)).arguments == {
        "env": "production"
    }
    assert extractor.extract("the product page", schema(["env"], env=options)).missing == ["env"]


def test_a_required_title_is_the_request() -> None:
    tool = schema(["title"], title={"type": "string"}, notes={"type": "string"})
    said = "open a ticket, the mailer drops every second message"
    assert extractor.extract(said, tool).arguments == {"title": said}
    filled = extractor.extract("open a ticket: mailer drops mail", tool).arguments
    assert filled["title"] == "mailer drops mail"
    assert extractor.extract("open a ticket", tool).missing == ["title"]
    optional = schema([], title={"type": "string"})
    assert extractor.extract("find books by Tolkien", optional).arguments == {}


@pytest.mark.parametrize("name", ["summary", "subject", "problem", "issue"])
def test_a_required_summary_of_a_problem_is_the_request(name: str) -> None:
    tool = schema([name], **{name: {"type": "string"}})
    for said in (
        "the badge reader at gate 2 beeps but never opens",
        "门禁刷卡一直没反应，帮我报修一下",
    ):
        assert extractor.extract(said, tool).arguments == {name: said}
    assert extractor.extract("report a problem", tool).missing == [name]


def test_a_search_takes_the_quoted_text() -> None:
    tool = schema([], query={"type": "string"}, app={"type": "string"})
    result = extractor.extract("grep the logs for 'socket hang up'", tool)
    assert result.arguments == {"query": "socket hang up"}


def test_a_schema_of_many_patterns_costs_a_bounded_number_of_claims(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    from gateway.routing import extract

    props: dict[str, Any] = {
        f"code{i}": {"type": "string", "pattern": f"^X{i}-\\d{{4}}$"} for i in range(40)
    }
    props |= {f"app{i}": {"type": "string"} for i in range(40)}
    searched: list[str] = []
    real = extract.search
    monkeypatch.setattr(
        extract, "search", lambda program, text: searched.append(text) or real(program, text)
    )
    query = " ".join(f"X{i}-1234 svc-{i}" for i in range(200))
    extractor.extract(query, {"type": "object", "properties": props})
    claims = extract._claims(query, props)
    assert len(claims) == extract._MAX_CLAIMS
    # once per query for the 40 guesses, not once per guess
    tokens = len({t for t in query.split()})
    assert len(searched) <= 3 * extract._MAX_CLAIMS * tokens


def test_an_apostrophe_quotes_nothing() -> None:
    tool = schema(["query"], query={"type": "string"})
    said = "search the docs for what's new in Bob's account"
    assert extractor.extract(said, tool).arguments == {"query": "what's new in Bob's account"}


@pytest.mark.parametrize("query", ["resize to 42bd1f0", "resize x 12ab3", "resize v10.4.2"])
def test_a_number_inside_a_commit_or_version_is_no_count(query: str) -> None:
    tool = schema([], copies={"type": "integer", "minimum": 0, "maximum": 100})
    assert extractor.extract(query, tool).arguments == {}


@pytest.mark.parametrize(
    ("query", "name", "value"),
    [
        ("关闭工单 T-1001", "notify_customer", None),  # closing a ticket is no switch
        ("关闭工单 T-1001 并通知客户", "notify_customer", True),  # "and notify the customer"
        ("打开工单 T-1001", "notify_customer", None),
        ("don't turn on billing.dark-mode", "enabled", None),
        ("请不要打开 billing.dark-mode", "enabled", None),
        ("run it with dry-run=false", "dry_run", False),
    ],
)
def test_a_switch_is_thrown_only_for_a_switch_and_not_when_negated(
    query: str, name: str, value: bool | None
) -> None:
    dictionary()  # a gateway reads Chinese through its gloss once the dictionary is read
    tool = schema([], **{name: {"type": "boolean"}})
    assert extractor.extract(query, tool).arguments.get(name) is value


def test_the_first_short_form_written_wins() -> None:
    options = {"type": "string", "enum": ["production", "staging"]}
    said = "copy the prod config to stag"
    assert extractor.extract(said, schema(["env"], env=options)).arguments == {"env": "production"}


@pytest.mark.parametrize(
    "spec",
    [True, "abc", [1], None, {"enum": None}, {"pattern": 5}, {"format": ["date"]}, {"type": {}}],
)
def test_a_malformed_property_says_nothing_and_raises_nothing(spec: object) -> None:
    tool = {"type": "object", "properties": {"service": spec}, "required": ["service"]}
    assert extractor.extract("restart payments-api", tool).missing in ([], ["service"])


QUEUE = {"type": "string", "description": "which queue, for example billing, Mobile or eu-west"}


@pytest.mark.parametrize(
    ("query", "queue"),
    [
        ("how deep is the billing queue", "billing"),
        ("backlog of MOBILE please", "Mobile"),  # as the schema writes it
        ("eu-west 队列积压了多少", "eu-west"),
        ("how deep is the billings queue", None),  # a piece of a longer word
        ("how deep are the queues", None),
    ],
)
def test_a_listed_example_the_request_names_fills_its_parameter(
    query: str, queue: str | None
) -> None:
    # Plain words listed as examples are an open set of values, read as an enum's are.
    result = extractor.extract(query, schema([], queue=QUEUE))
    assert result.arguments.get("queue") == queue


LOGS = schema(["query"], query={"type": "string"}, app=NAME)


@pytest.mark.parametrize(
    ("request_text", "arguments"),
    [
        ("grep logs for SIGSEGV on mailer-api", {"query": "SIGSEGV", "app": "mailer-api"}),
        ("look for the disk full errors in queue-7 since noon", {"query": "disk full errors"}),
        ("在 mailer-api 的日志里搜 broken pipe", {"query": "broken pipe", "app": "mailer-api"}),
        # A question is searched as asked, and "for" naming the app searches nothing less.
        ("why did mailer-api crash last night?", {"query": "why did mailer-api crash last night?"}),
        ("search for mailer-api", {"query": "search for mailer-api"}),
    ],
)
def test_a_search_takes_the_terms_it_is_for(request_text: str, arguments: dict[str, str]) -> None:
    result = extractor.extract(request_text, LOGS)
    assert {k: result.arguments[k] for k in arguments} == arguments


def test_an_optional_name_is_not_guessed_from_a_plain_word() -> None:
    # Nothing looks like an app's name: "grep" as the app would filter every line out.
    result = extractor.extract("grep the logs for 'connection refused'", LOGS)
    assert result.arguments == {"query": "connection refused"}
    # Required, the same guess is still made (and the caller asked when it is wrong).
    required = schema(["app"], app=NAME)
    assert extractor.extract("restart cache now", required).arguments == {"app": "restart"}


TRIP = schema(
    ["mode", "currency"],
    mode={"type": "string", "enum": ["train", "taxi", "bus_pass"]},
    currency={"type": "string", "enum": ["CNY", "USD", "EUR"]},
    meal={"type": "string", "enum": ["breakfast", "lunch"]},
)


def test_chinese_words_name_enum_options_in_their_english_sense() -> None:
    dictionary()  # the router loads it off the event loop on the first Chinese request
    result = extractor.extract("坐火车去上海的票 120 元，含早饭", TRIP)
    assert result.arguments == {"mode": "train", "currency": "CNY", "meal": "breakfast"}
    assert extractor.extract("出租车 30 欧元", TRIP).arguments["mode"] == "taxi"
    # A sense that begins the option: 生产 reads "produce".
    stage = schema(["stage"], stage={"type": "string", "enum": ["development", "production"]})
    assert extractor.extract("把 mailer 发到生产", stage).arguments == {"stage": "production"}
    assert extractor.extract("发到开发环境", stage).arguments == {"stage": "development"}


@pytest.mark.parametrize(
    ("query", "currency"),
    [
        ("报销 86 元", "CNY"),
        ("花了 650 块", "CNY"),
        ("lunch was 20 美元, then 5 元 for water", "USD"),  # the first named
        ("a taxi for $12", "USD"),
        ("two coffees, 7 euros", "EUR"),
        ("the 45 yuanbao coins", None),  # a word that begins with one
        ("收了 100 英镑", None),  # named, and not a code of the enum: not 元 either
    ],
)
def test_a_currency_written_in_words_or_a_sign_is_its_code(
    query: str, currency: str | None
) -> None:
    assert extractor.extract(query, TRIP).arguments.get("currency") == currency


ROSTER = schema(
    [],
    department={"type": "string", "enum": ["儿科", "心内科", "皮肤科", "骨科", "眼科", "内科"]},
    shift={"type": "string", "enum": ["上午", "下午", "夜班"]},
)


def test_a_chinese_option_is_read_inside_a_chinese_sentence() -> None:
    # Chinese writes words without spaces: the option is found wherever it stands, the
    # longest first (心内科, not 内科).
    result = extractor.extract("眼科下午有大夫吗", ROSTER)
    assert result.arguments == {"department": "眼科", "shift": "下午"}
    assert extractor.extract("明天心内科谁值班", ROSTER).arguments == {"department": "心内科"}


def test_an_english_request_names_a_chinese_option_by_its_sense() -> None:
    dictionary()
    result = extractor.extract("which dermatologist is in this afternoon?", ROSTER)
    assert result.arguments == {"department": "皮肤科", "shift": "下午"}
    assert extractor.extract("who covers night shift", ROSTER).arguments == {"shift": "夜班"}
    # A word no option's sense holds names none.
    assert extractor.extract("who is the doctor on duty", ROSTER).arguments == {}


DAYS = ["mon", "tue", "wed", "thu", "fri", "sat", "sun"]


@pytest.mark.parametrize(
    ("query", "arguments"),
    [
        ("what's 10B's timetable on friday", {"day": "fri"}),
        ("list all my finals please", {"kind": "final"}),
        ("周五有什么课", {"day": "fri"}),
        ("the final on tuesday", {"day": "tue", "kind": "final"}),
        ("may I see the quizzes", {}),  # "may" is no month here, and no option is a month
    ],
)
def test_an_option_written_inflected_or_as_a_calendar_abbreviates_it(
    query: str, arguments: dict[str, str]
) -> None:
    dictionary()
    tool = schema(
        [],
        day={"type": "string", "enum": DAYS},
        kind={"type": "string", "enum": ["midterm", "final", "resit"]},
    )
    assert extractor.extract(query, tool).arguments == arguments


@pytest.mark.parametrize(
    ("query", "language"),
    [
        ("can you ping him by sms so he doesnt forget? APT1022564, spanish", "es"),
        ("提醒病人明天来复诊，发中文的", "zh"),
        ("order 4 sealed transcripts in English", "en-US"),
        ("remind her about tomorrow", None),
        ("in klingon please", None),
    ],
)
def test_a_language_named_in_words_is_its_code(query: str, language: str | None) -> None:
    tool = schema([], language={"type": "string", "enum": ["en-US", "zh", "es"]})
    assert extractor.extract(query, tool).arguments.get("language") == language


LAB = schema(
    ["patient"],
    patient={"type": "string"},
    test={
        "type": "string",
        "enum": ["cbc", "hba1c", "liver_function", "kidney_function"],
        "description": "检验项目：cbc 血常规，hba1c 糖化血红蛋白，liver_function 肝功能，"
        "kidney_function 肾功能",
    },
    delivery={
        "type": "string",
        "enum": ["pdf", "mail", "pickup"],
        "description": "交付方式：pdf 电子版发到邮箱；mail 邮寄纸质版；pickup 本人到教务处领取",
    },
)


@pytest.mark.parametrize(
    ("query", "arguments"),
    [
        ("P20240562 糖化，只看不正常的", {"test": "hba1c"}),  # the start of 糖化血红蛋白
        ("肝功出来了吗", {"test": "liver_function"}),  # 肝功 is 肝功能's alone, not 肾功能's
        ("我自己去教务处拿", {"delivery": "pickup"}),  # 教务处 is pickup's words
        ("交付方式随便", {}),  # the parameter's label names no option
        ("功能怎么样", {}),  # a pair both liver and kidney words have names neither
    ],
)
def test_an_option_is_named_by_part_of_the_words_paired_with_it(
    query: str, arguments: dict[str, str]
) -> None:
    found = extractor.extract(query, LAB).arguments
    assert {k: v for k, v in found.items() if k != "patient"} == arguments


def test_a_noun_made_from_an_option_names_it() -> None:
    tool = schema(["action"], action={"type": "string", "enum": ["pay", "refund"]})
    found = extractor.extract("make a bank transfer payment of 8000", tool)
    assert found.arguments["action"] == "pay"
