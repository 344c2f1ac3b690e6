"""Manifest hosts → where the services really are.

The shipped manifests name services as compose does (``http://shop:9000/...``).
Outside compose those names do not resolve, so ``shop:9000``,
``retriever:8082`` and ``agent:8081`` are rewritten to SHOP_URL, RETRIEVER_URL
and AGENT_URL (and any pair in UPSTREAM_HOSTS). In compose the settings name the
same hosts, so the rewrite changes nothing.
"""

from __future__ import annotations

from collections.abc import Mapping
from urllib.parse import urlsplit


class UpstreamUrls:
    def __init__(self, hosts: Mapping[str, str]) -> None:
        self._hosts = {k.lower(): v.rstrip("/") for k, v in hosts.items()}
        self._cache: dict[str, str] = {}

    @classmethod
    def from_settings(
        cls, *, shop_url: str, retriever_url: str, agent_url: str, extra: Mapping[str, str]
    ) -> UpstreamUrls:
        hosts = {"shop:9000": shop_url, "retriever:8082": retriever_url, "agent:8081": agent_url}
        hosts.update(extra)
        return cls(hosts)

    def __call__(self, url: str) -> str:
        """The URL (or URL template) with a known ``host:port`` replaced by its base URL."""
        cached = self._cache.get(url)
        if cached is not None:
            return cached
        parts = urlsplit(url)
        base = self._hosts.get(parts.netloc.lower())
        resolved = url
        if base is not None:
            resolved = base + url[len(f"{parts.scheme}://{parts.netloc}") :]
        if len(self._cache) < 10_000:
            self._cache[url] = resolved
        return resolved
