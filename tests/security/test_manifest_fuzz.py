"""200 hostile manifests against a real gateway process: each is refused with a clear
``reason`` or registered harmlessly, and the gateway keeps answering its health probe.

The manifests mix what an attacker with registry access (or a poisoned manifests folder)
would try: catastrophic-backtracking and non-regular patterns, metadata / loopback /
odd-scheme URLs in every spelling, secret names that point at the gateway's own settings
or out of the secrets folder, stream names that point at other Redis keys, and oversized
fields. A registered one is then invoked with a hostile argument.
"""

from __future__ import annotations

import json
import random
import statistics
import threading
import time
from pathlib import Path
from typing import Any

import httpx
import pytest

from reach_common.stack import mint_key
from tests.conftest import Backends
from tests.e2e.processes import free_port, service_process

pytestmark = pytest.mark.slow
SEED = 20261130
COUNT = 200

PATTERNS = [
    "^(a+)+$",
    "(a|aa)+$",
    "(x+x+)+y",
    "^(([a-z])+.)+[A-Z]([a-z])+$",
    "(a)\\1",
    "(?=a)a",
    "(?<=a)b",
    "a{1000}{1000}",
    "[",
    "(" * 300 + "a" + ")" * 300,
    "\\p{Greek}+",
    "^SKU\\d{7}$",
    ".*.*.*.*.*.*.*.*=",
    "(?i)(a|b|ab)*c",
]
URLS = [
    "http://169.254.169.254/latest/meta-data/",
    "http://[::ffff:169.254.169.254]/x",
    "http://[::ffff:a9fe:a9fe]/x",
    "http://[64:ff9b::a9fe:a9fe]/x",
    "http://[::a9fe:a9fe]/x",
    "http://[2002:a9fe:a9fe::]/x",
    "http://2852039166/x",
    "http://0xa9.0xfe.0xa9.0xfe/x",
    "http://0x7f.1/x",
    "http://127.0.0.1:6379/",
    "http://localhost:5432/",
    "http://0.0.0.0/x",
    "http://10.0.0.1/x",
    "http://192.168.1.1/x",
    "http://metadata.google.internal/x",
    "http://[::1]/x",
    "http://user:pass@169.254.169.254/x",
    "file:///etc/passwd",
    "gopher://127.0.0.1:6379/_FLUSHALL",
    "http://example.com/" + "a" * 5000,
    "http://example.com/{path}",
    "http://example.com/{../../admin}",
    "http://example.com/{0}",
    "http://[fd00:ec2::254]/x",
    "http://100.100.100.200/x",
    "http://example.com/ok",
]
SECRETS = [
    "jwt_secret",
    "JWT_SECRET",
    "DATABASE_URL",
    "redis_url",
    "anthropic_api_key",
    "../../etc/passwd",
    "a/b",
    ".hidden",
    "x" * 300,
    "秘密",
    "ok_name",
    "",
]
STREAMS = [
    "reach:gateway:registry",
    "reach:gateway:tasks",
    "a:b",
    "",
    "x" * 100,
    "../x",
    "good-stream",
    "UPPER",
    "reports",
]


def _http(url: str, auth: dict[str, Any] | None = None, method: str = "GET") -> dict[str, Any]:
    return {"type": "http", "method": method, "url": url, "auth": auth or {"type": "none"}}


def _pattern(m: dict[str, Any], rng: random.Random) -> None:
    m["input_schema"]["properties"]["value"]["pattern"] = rng.choice(PATTERNS)


def _url(m: dict[str, Any], rng: random.Random) -> None:
    m["endpoint"] = _http(rng.choice(URLS))


def _secret(m: dict[str, Any], rng: random.Random) -> None:
    auth = {"type": rng.choice(["bearer", "api_key"]), "key": rng.choice(SECRETS)}
    m["endpoint"] = _http(rng.choice([*URLS, "http://example.com/ok"]), auth)


def _oauth(m: dict[str, Any], rng: random.Random) -> None:
    auth = {
        "type": "oauth2",
        "token_endpoint": rng.choice(URLS),
        "client_id": "c",
        "key": rng.choice(SECRETS),
    }
    m["endpoint"] = _http("http://example.com/ok", auth)


def _stream(m: dict[str, Any], rng: random.Random) -> None:
    m["endpoint"] = {"type": "queue", "stream": rng.choice(STREAMS), "target": m["endpoint"]}


def _python(m: dict[str, Any], rng: random.Random) -> None:
    m["endpoint"] = {
        "type": "python",
        "function": rng.choice(["os:system", "subprocess:run", "gateway.pytools:../x"]),
    }


def _fields(m: dict[str, Any], rng: random.Random) -> None:
    field, values = rng.choice(
        [
            ("description", ["x" * 20_000, "\u202e\u0000", ""]),
            ("permission", ["root", None]),
            ("rate_limit", ["999999999999/nanosecond", "lots", "1/second"]),
            ("timeout_ms", [-1, 0, 10**12]),
            ("tool_id", ["../../admin", "A" * 500, "ok_but_Upper"]),
        ]
    )
    m[field] = rng.choice(values)


MUTATIONS = [_pattern, _url, _secret, _oauth, _stream, _python, _fields]


def _manifest(rng: random.Random, n: int) -> dict[str, Any]:
    """A valid manifest with one or two hostile mutations."""
    tool_id = f"fuzz_{n:03d}"
    manifest: dict[str, Any] = {
        "tool_id": tool_id,
        "name": tool_id,
        "description": "A fuzzed tool.",
        "input_schema": {
            "type": "object",
            "properties": {"value": {"type": "string", "pattern": "^[a-z!]+$"}},
            "required": ["value"],
        },
        "endpoint": _http("http://example.com/ok"),
        "permission": "public",
    }
    for mutate in rng.sample(MUTATIONS, rng.choice([1, 1, 2])):
        mutate(manifest, rng)
    return manifest


def test_hostile_manifests_are_refused_clearly_or_registered_harmlessly(
    clean_state: Backends, tmp_path: Path
) -> None:
    key = mint_key(clean_state.database_url, "fuzzer", ["tool_admin", "ops"])
    admin = {"Authorization": f"Bearer {key}"}
    env = {
        "DATABASE_URL": clean_state.database_url,
        "REDIS_URL": clean_state.redis_url,
        "LOG_LEVEL": "WARNING",
        "AUTH_MODE": "strict",
        "JWT_SECRET": "gateway-jwt-secret-never-to-leave-0123456789",
        "JWT_ISSUER": "https://idp.example",
        "JWT_AUDIENCE": "reach",
    }
    rng = random.Random(SEED)
    manifests = [_manifest(rng, n) for n in range(COUNT)]
    probes: list[float] = []
    failed_probes: list[str] = []
    stop = threading.Event()

    with service_process("gateway", free_port(), env, tmp_path) as gateway:

        def probe() -> None:
            with httpx.Client(timeout=5) as client:
                while not stop.is_set():
                    started = time.perf_counter()
                    try:
                        ok = client.get(f"{gateway}/healthz").status_code == 200
                    except httpx.HTTPError as exc:
                        ok = False
                        failed_probes.append(type(exc).__name__)
                    probes.append((time.perf_counter() - started) * 1000)
                    if not ok:
                        failed_probes.append("status")
                    stop.wait(0.02)

        prober = threading.Thread(target=probe, daemon=True)
        prober.start()
        outcomes: dict[str, int] = {}
        try:
            with httpx.Client(timeout=30) as client:
                for manifest in manifests:
                    answer = client.post(f"{gateway}/tools/register", json=manifest, headers=admin)
                    assert answer.status_code < 500, (manifest, answer.text)
                    assert answer.headers["content-type"].startswith("application/json")
                    body = answer.json()
                    if answer.status_code == 201:
                        outcomes["registered"] = outcomes.get("registered", 0) + 1
                        called = client.post(
                            f"{gateway}/tools/{body['tool_id']}/invoke",
                            json={"arguments": {"value": "a" * 5000 + "!"}},
                            headers=admin,
                        )
                        assert called.status_code != 500, called.text
                        assert "gateway-jwt-secret" not in called.text
                        continue
                    assert body["reason"], body
                    assert body["message"], body
                    assert len(answer.content) < 16_384, "an error must not echo the input"
                    outcomes[body["reason"]] = outcomes.get(body["reason"], 0) + 1
        finally:
            stop.set()
            prober.join(timeout=10)
    print(f"outcomes over {COUNT} manifests: {json.dumps(outcomes, sort_keys=True)}")
    print(
        f"health probes: {len(probes)}, median {statistics.median(probes):.1f} ms, "
        f"p99 {_p99(probes):.1f} ms, max {max(probes):.1f} ms"
    )
    assert sum(outcomes.values()) == COUNT
    assert outcomes.get("registered", 0) < COUNT  # the hostile ones were refused
    assert not failed_probes
    # A stall (a regex or a body that freezes the event loop) shows as seconds, and as
    # many slow probes in a row. On 2 shared cores a lone probe can still lose a
    # scheduling slice (one of 32 took 103 ms in a CI run), so the 100 ms bar is held
    # by the share of probes over it, and the stall bar by the maximum.
    slow = [ms for ms in probes if ms >= 100]
    assert len(slow) <= max(1, len(probes) // 20), f"the gateway stalled: {slow}"
    assert max(probes) < 1000, "the gateway stalled while handling hostile manifests"


def _p99(values: list[float]) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, round(0.99 * len(ordered)))]
