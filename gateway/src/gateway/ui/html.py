"""HTML out of templates, escaping everything that is not already markup.

Span names, attributes, tool ids and user ids are written by whoever called a
service, so they are untrusted text. Every value given to :func:`render` is
escaped unless it is :class:`Safe` (built here from escaped parts), the same
guarantee as a template engine's autoescape, with no engine to install.
Templates are ``string.Template`` files under ``templates/``; the CSS and the
script are files under ``static/``, served by the gateway itself (no CDN).
"""

from __future__ import annotations

import html
from collections.abc import Iterable
from functools import cache
from importlib import resources
from string import Template


class Safe(str):
    """Markup whose every variable part has been escaped."""

    __slots__ = ()


def esc(value: object) -> Safe:
    """``value`` as HTML text (quotes too, so it is safe inside attributes)."""
    if isinstance(value, Safe):
        return value
    return Safe(html.escape("" if value is None else str(value), quote=True))


def join(parts: Iterable[object], sep: str = "") -> Safe:
    return Safe(sep.join(esc(p) for p in parts))


def tag(name: str, content: object = "", /, **attributes: object) -> Safe:
    """``<name attr="…">content</name>``; ``class_`` is ``class``, ``data_x`` is ``data-x``;
    an attribute set to ``None`` or ``False`` is left out, ``True`` is written bare."""
    attrs = []
    for key, value in attributes.items():
        if value is None or value is False:
            continue
        attr = key.rstrip("_").replace("_", "-")
        attrs.append(f" {attr}" if value is True else f' {attr}="{esc(value)}"')
    return Safe(f"<{name}{''.join(attrs)}>{esc(content)}</{name}>")


@cache
def _template(name: str) -> Template:
    source = resources.files("gateway.ui").joinpath("templates", name).read_text("utf-8")
    return Template(source)


def render(name: str, **values: object) -> Safe:
    """Template ``name`` with every value escaped (unless :class:`Safe`)."""
    return Safe(_template(name).substitute({k: esc(v) for k, v in values.items()}))


@cache
def static_file(name: str) -> bytes:
    return resources.files("gateway.ui").joinpath("static", name).read_bytes()
