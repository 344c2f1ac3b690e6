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
