"""Finding 25: a secret named only by its description reached the answer and the audit log.

A self-storage catalogue (``tests/data/selfstorage``) resets a gate's code with
``new_code``, described as 新密码 ("new password"); a gift-card check takes a card's
``security`` described as its PIN. Neither name looks like a secret, and neither
schema marks the value ``writeOnly`` or ``format: password``, so redaction passed them
through: the new gate code stood in the invoke answer and in every audit row. Redaction
now also reads the property's description (a password or passcode, a PIN, a CVV, 密码,
口令, 验证码).
"""

from __future__ import annotations

import json

import psycopg

from reach_common.db import libpq_url
from tests.conftest import Backends, app_client
from tests.gateway.conftest import ADMIN, GatewayFactory, http_tool
from tests.gateway.upstream import Upstream

GATE_CODE = "864213"
CARD_PIN = "4471"


async def test_a_secret_described_in_words_is_redacted(
    make_gateway: GatewayFactory, upstream: Upstream, clean_state: Backends
) -> None:
    schema = {
        "type": "object",
        "properties": {
            "rental_id": {"type": "string", "pattern": "^RA-\\d{6}$"},
            "new_code": {"type": "string", "description": "新密码，4-6位数字；留空则随机生成"},
            "security": {"type": "string", "description": "The card's PIN, if it has one"},
        },
        "required": ["rental_id"],
    }
    manifest = http_tool("reset_gate_code", upstream.url + "/gate", input_schema=schema)
    manifest["endpoint"]["method"] = "POST"
    arguments = {"rental_id": "RA-090112", "new_code": GATE_CODE, "security": CARD_PIN}
    app = make_gateway()
    async with app_client(app) as client:
        registered = await client.post("/tools/register", json=manifest, headers=ADMIN)
        assert registered.status_code in (200, 201), registered.text
        answer = await client.post("/tools/reset_gate_code/invoke", json={"arguments": arguments})
        await app.state.runtime.audit.flush()
    assert answer.status_code == 200, answer.text
    # The tool itself received the values it needs...
    sent = json.loads(upstream.received[0].body)
    assert (sent["new_code"], sent["security"]) == (GATE_CODE, CARD_PIN)
    # ...and they appear in no answer and no audit row.
    shown = answer.json()["arguments"]
    assert shown == {"rental_id": "RA-090112", "new_code": "[REDACTED]", "security": "[REDACTED]"}
    with psycopg.connect(libpq_url(clean_state.database_url)) as conn:
        rows = conn.execute("SELECT arguments::text FROM gateway.invocation").fetchall()
    assert rows
    for (stored,) in rows:
        assert GATE_CODE not in stored
        assert CARD_PIN not in stored
