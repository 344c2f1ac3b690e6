"""The error tree: one function renders every error, and the documented tree is the real one."""

from __future__ import annotations

import importlib
import pkgutil
import re

import pytest

import reach_common.errors
from reach_common.errors import NotFound, ReachError, RemoteError, error_body

PACKAGES = ["reach_common", "shop", "gateway", "agent", "retriever"]


def every_error_class() -> set[type[ReachError]]:
    for name in PACKAGES:
        package = importlib.import_module(name)
        for module in pkgutil.walk_packages(package.__path__, f"{name}."):
            if not module.name.endswith("__main__"):
                importlib.import_module(module.name)
    found: set[type[ReachError]] = set()
    pending = [ReachError]
    while pending:
        cls = pending.pop()
        found.add(cls)
        pending.extend(cls.__subclasses__())
    return {cls for cls in found if cls.__module__.split(".")[0] in PACKAGES}


def test_the_module_docstring_lists_every_error_with_its_status_and_reason() -> None:
    doc = reach_common.errors.__doc__ or ""
    tree = doc[doc.index("::") : doc.index("Reasons raised without")]
    documented = set(re.findall(r"^[\s│├└─]*([A-Z]\w+)", tree, flags=re.MULTILINE))
    classes = every_error_class()
    assert documented == {cls.__name__ for cls in classes}
    for cls in classes:
        named = rf"\b{cls.__name__}\b(?: \(\w+\))?\s+"
        if cls is not ReachError and cls.reason == ReachError.reason and "reason" not in vars(cls):
            assert re.search(named + "a base", tree), cls
        else:
            assert re.search(named + rf"{cls.status_code} {cls.reason}\b", tree), cls


class WidgetMissing(NotFound):
    reason = "widget_missing"


@pytest.mark.parametrize(
    ("nested", "expected"),
    [
        (
            False,
            {"reason": "widget_missing", "message": "No widget.", "name": "w", "tool_id": "t"},
        ),
        (
            True,
            {
                "tool_id": "t",
                "error": {"reason": "widget_missing", "message": "No widget.", "name": "w"},
                "reason": "widget_missing",
                "message": "No widget.",
            },
        ),
    ],
)
def test_error_body_is_flat_or_a_tool_call_envelope(
    nested: bool, expected: dict[str, object]
) -> None:
    body = error_body(WidgetMissing("No widget.", name="w"), nested=nested, tool_id="t")
    assert body == {**expected, "trace_id": None}
    assert error_body(WidgetMissing("x"), trace_id="ab" * 16)["trace_id"] == "ab" * 16


def test_a_remote_error_body_becomes_a_reach_error_again() -> None:
    sent = error_body(WidgetMissing("No widget.", name="w"))
    remote = RemoteError.from_body(sent, 404)
    assert (remote.status_code, remote.reason, remote.message) == (
        404,
        "widget_missing",
        sent["message"],
    )
    assert error_body(remote)["reason"] == "widget_missing"
    proxy = RemoteError.from_body("<html>Bad Gateway</html>", 502)
    assert (proxy.status_code, proxy.reason, proxy.message) == (502, "remote_error", "HTTP 502")
