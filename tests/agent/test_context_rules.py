"""The pure parts of the context budget and of memory: fitting, counting, summarising,
and which facts are kept."""

from __future__ import annotations

import uuid
from types import SimpleNamespace

import pytest

from agent.memory.extract import facts_of_turn, worth_asking
from agent.memory.service import rank
from agent.react import context
from agent.react.context import OMITTED, extractive_summary, fit, message_tokens
from agent.sessions.models import ChatMessage
from agent.sessions.tokens import TokenCounter, estimate_tokens
from reach_common.llm.history import repair
from reach_common.llm.types import Message, ToolCall
from reach_common.references import refers_back


def turn(n: int, output: str) -> list[Message]:
    call = ToolCall(id=f"c{n}", name="inventory_query", arguments={"sku": f"SKU202400{n}"})
    return [
        Message(role="user", content=f"question {n}"),
        Message(role="assistant", content="", tool_calls=(call,)),
        Message(role="tool", content=output, tool_call_id=f"c{n}"),
        Message(role="assistant", content=f"answer {n}"),
    ]


def test_fit_elides_old_tool_output_first_then_drops_old_turns() -> None:
    history = turn(1, "x" * 4000) + turn(2, "y" * 4000) + turn(3, "z" * 400)[:3]
    counter = TokenCounter()
    total = sum(message_tokens(m) for m in history)
    assert fit(history, total, counter) == history  # fits: untouched

    elided = fit(history, 600, counter)
    assert len(elided) == len(history)  # nothing dropped yet, outputs shortened
    assert "left out" in elided[2].content
    assert "left out" in elided[6].content
    assert elided[-1].content == "z" * 400  # the latest round is kept whole
    assert sum(message_tokens(m) for m in elided) <= 600

    dropped = fit(history, 150, counter)
    assert dropped[0].content == "question 3"  # whole turns dropped, the current kept
    assert repair(dropped) == dropped  # every call still has its result


def test_the_counter_learns_the_providers_tokenizer_but_never_undercounts() -> None:
    counter = TokenCounter()
    for _ in range(20):
        counter.observe(1000, 1400)
    assert 1.35 < counter.ratio <= 1.4
    assert counter.scale(1000) >= 1350
    assert counter.unscale(counter.scale(1000)) <= 1000
    for _ in range(20):
        counter.observe(1000, 500)  # the estimate overcounts: keep at least 1.0
    assert counter.ratio == 1.0


def _rows(n: int) -> list[ChatMessage]:
    turn_id = uuid.uuid4()
    call = {"id": f"c{n}", "tool_id": "sales_query", "arguments": {"sku": "SKU2024001"}}
    return [
        ChatMessage(seq=1, turn_id=turn_id, role="user", content=f"request number {n}"),
        ChatMessage(seq=2, turn_id=turn_id, role="assistant", content="", tool_calls=[call]),
        ChatMessage(
            seq=3,
            turn_id=turn_id,
            role="tool",
            content='{"sku": "SKU2024001", "units": 42}',
            tool_call_id=f"c{n}",
            tool_name="sales_query",
            is_error=False,
        ),
    ]


def test_the_extractive_summary_keeps_requests_and_results_within_its_budget() -> None:
    summary = None
    for n in range(40):
        summary = extractive_summary(summary, [_rows(n)], max_tokens=120)
    assert summary is not None
    assert summary.startswith(OMITTED)
    assert "request number 39" in summary
    assert "units: 42" in summary
    assert "request number 0" not in summary
    assert summary.count(OMITTED) == 1


def test_folding_many_turns_at_once_counts_the_summary_a_few_times(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """After each line it left out, the fallback counted the whole summary again: the
    square of the lines (1,000 turns folded at once took 15 s)."""
    counted = 0

    def counting(text: str) -> int:
        nonlocal counted
        counted += 1
        return estimate_tokens(text)

    monkeypatch.setattr(context, "estimate_tokens", counting)
    summary = extractive_summary(None, [_rows(n) for n in range(1_000)], max_tokens=120)
    assert counted <= 2 * 12
    assert summary.startswith(OMITTED)
    assert "request number 999" in summary
    assert estimate_tokens(summary) <= 120
    # The fewest lines are left out: one more line would not fit.
    kept = summary.splitlines()[1:]
    everything = extractive_summary(None, [_rows(n) for n in range(1_000)], max_tokens=10**9)
    one_more = everything.splitlines()[-len(kept) - 1 :]
    assert estimate_tokens("\n".join([OMITTED, *one_more])) > 120


def test_only_the_users_own_words_become_memories_and_never_secrets() -> None:
    message = "My usual SKU is SKU2024003 and remember that I report to Grace. Token is abc"
    facts = facts_of_turn(
        message,
        [("inventory_query", {"sku": "SKU2024003"}), ("order_query", {"order_id": "SO1"})],
    )
    texts = [f.text for f in facts]
    assert "My usual SKU is SKU2024003" in texts
    assert "I report to Grace" in texts
    assert any("sku SKU2024003" in t for t in texts)
    assert not any("SO1" in t for t in texts)  # an id the user never typed
    assert not any("Token" in t for t in texts)
    assert facts_of_turn("remember my password is hunter2", []) == []
    assert facts_of_turn("记住：我常用的SKU是SKU2024003", [])[0].text == "我常用的SKU是SKU2024003"


def test_recall_ranks_by_relevance_and_recency_each_text_once() -> None:
    def memory(text: str) -> SimpleNamespace:
        return SimpleNamespace(id=uuid.uuid4(), text=text)

    nearest = [
        (memory("My usual SKU is SKU2024003"), 0.19, 0.0),
        (memory("my usual sku is SKU2024003"), 0.19, 1.0),
        (memory("I want answers in German"), 0.10, 0.0),
        (memory("My usual warehouse is Shanghai"), 0.30, 90.0),
    ]
    chosen = rank("how is my usual product selling?", nearest, 0.2, 3)
    assert [c.text for c in chosen] == [
        "My usual warehouse is Shanghai",
        "My usual SKU is SKU2024003",
    ]
    assert chosen[0].score < chosen[0].similarity  # 90 days unused: weighted down


def test_the_model_is_asked_for_facts_only_when_the_user_speaks_of_themselves() -> None:
    assert worth_asking("Please answer in German from now on.")
    assert worth_asking("我常用的SKU是SKU2024003")
    assert worth_asking("remember the warehouse code W-12")
    assert not worth_asking("How is SKU2024001 doing?")
    assert not worth_asking("SKU2024001 还有多少库存")


def test_offline_a_request_without_a_reference_needs_no_recall() -> None:
    assert refers_back("how is my usual product selling?")
    assert refers_back("那这个 SKU 最近卖得怎么样")
    assert not refers_back("SKU2024001 还有多少库存")
    assert not refers_back("total sales for September 2026")
