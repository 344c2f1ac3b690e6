"""Tokenizer and the in-memory BM25 used by the coarse routing stage."""

from __future__ import annotations

import math

import pytest

from gateway.routing.lexical import BM25Index
from gateway.routing.text import split_identifier, tokenize


def test_identifiers_are_split_into_words() -> None:
    assert split_identifier("math.factorial") == "math factorial"
    assert split_identifier("Tax_Calculator") == "Tax Calculator"
    assert split_identifier("getWeatherNow") == "get Weather Now"
    assert tokenize("Tax_Calculator") == ["tax", "calcul"]


def test_stopwords_dropped_and_words_stemmed() -> None:
    assert tokenize("What are the orders I placed?") == ["order", "place"]
    assert tokenize("calculating") == tokenize("calculate")


def test_cjk_becomes_unigrams_and_bigrams() -> None:
    assert tokenize("库存") == ["库", "存", "库存"]
    tokens = tokenize("SKU2024001 还有多少库存")
    assert "sku" in tokens
    assert "2024001" in tokens
    assert "库存" in tokens


def test_bm25_matches_a_hand_computed_score() -> None:
    docs = ["apple banana", "apple apple cherry", "banana"]
    k1, b = 1.2, 0.75
    index = BM25Index(docs, k1=k1, b=b)
    lengths = [2, 3, 1]
    avg = sum(lengths) / 3

    def expected(tf: int, df: int, length: int) -> float:
        idf = math.log(1 + (3 - df + 0.5) / (df + 0.5))
        return idf * tf * (k1 + 1) / (tf + k1 * (1 - b + b * length / avg))

    scores = index.score("apple")
    assert scores[0] == pytest.approx(expected(1, 2, 2), rel=1e-5)
    assert scores[1] == pytest.approx(expected(2, 2, 3), rel=1e-5)
    assert scores[2] == 0.0
    both = index.score("apple cherry")
    assert both[1] == pytest.approx(expected(2, 2, 3) + expected(1, 1, 3), rel=1e-5)


def test_a_chinese_sentence_turning_negative_after_its_subject_is_cut_there() -> None:
    """ "已开具的通行证也不能在此撤销或修改" says what the visitor-pass tool does not do: left
    in its words, "revoke the visitor pass" was the tool's own verb, and its text pulled
    the requests it refuses."""
    from gateway.routing.text import positive_description

    kept = positive_description(
        "为来访的亲友开具临时访客通行证，最长有效 7 天。已开具的通行证也不能在此撤销或修改。"
    )
    assert "开具临时访客通行证" in kept
    assert "撤销" not in kept
    assert "修改" not in kept
    # A condition is not a refusal: the tool still resets passwords.
    assert "重置其密码" in positive_description("员工如果不能登录时，本工具重置其密码并发送短信。")


@pytest.mark.parametrize(
    ("description", "refused"),
    [
        # the points-award tool of the hotel set: left in, "查询余额" pulled balance requests
        ("向会员账户增加积分。只能加分，不能扣分、转赠，也不用于查询余额。", "查询余额"),
        ("为门店开具发票。但不支持红冲已开具的发票。", "红冲"),
        ("登记设备报修，均不适用于跨厂区调拨。", "跨厂区调拨"),
        ("修改收货地址，本工具也不可用于修改已发货的订单。", "已发货"),
    ],
)
def test_a_chinese_not_for_clause_after_an_adverb_is_cut(description: str, refused: str) -> None:
    """也/但/均/都 before 不用于, 不支持, 不适用 or 不可用于 still says what the tool is not
    for: the clause leaves the text the tool is found by and is what it disclaims."""
    from gateway.routing.text import disclaimed_text, positive_description

    assert refused not in positive_description(description)
    assert refused in disclaimed_text(description)
