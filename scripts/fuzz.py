"""Fuzz every service from its own OpenAPI document with Schemathesis.

Starts shop, retriever, gateway and agent as real processes on loopback ports
(strict auth, over ``DATABASE_URL`` / ``REDIS_URL`` or throwaway embedded
servers), mints the API keys the routes need (an admin key for the gateway, a
user key for the agent, a ``retriever_writer`` key for the retriever), then
runs ``schemathesis run`` against each ``/openapi.json`` with every check and
every phase (examples, coverage, fuzzing, stateful over the links Schemathesis
infers), a bounded number of examples per operation. Prints, per run:
operations tested, test cases generated, server errors, schema violations and
any other failed check.

    make fuzz                                 # the long run
    python scripts/fuzz.py --examples 5       # what CI runs (tests/fuzz/)

The gateway is fuzzed in two runs, because its tools reach real addresses:

- ``gateway-calls``: invoking tools (``/tools/{id}/invoke``, ``/run``, approvals,
  tasks, ``/upstreams``) over the shipped tools only, which point at the shop and
  the retriever on loopback; the registry cannot change in this run;
- ``gateway``: everything else (the registry, keys, traces, audit, MCP servers),
  with nothing that calls a tool, so a fuzzed manifest is stored but never called.

Not fuzzed, anywhere: ``POST /tools/import/openapi`` with a ``url`` and
``POST /mcp/servers`` (both make the gateway connect to an address taken from
the request: fuzzing them would send traffic to arbitrary hosts), and ``/mcp``
(JSON-RPC over Streamable HTTP, outside the OpenAPI document).
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tempfile
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from contextlib import ExitStack, contextmanager
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Annotated, Any

import typer
from rich.console import Console
from rich.table import Table

from reach_common.embedded import temporary_backends
from reach_common.processes import free_port, running_service
from reach_common.stack import SERVICE_KEY_ENV, SERVICE_KEY_SECRET, mint_key

ROOT = Path(__file__).resolve().parents[1]
console = Console(highlight=False)

# Schemathesis' failure classes (the JSON report's "type"), sorted into what the table shows.
SERVER_ERRORS = frozenset({"ServerError", "ContentTypeServerError"})
SCHEMA_VIOLATIONS = frozenset(  # the answer is not what the OpenAPI document says
    {
        "UndefinedStatusCode",
        "MissingContentType",
        "UndefinedContentType",
        "MalformedMediaType",
        "MissingHeaders",
        "JsonSchemaError",
        "MalformedJson",
        "ContentDeserializationError",
        "DiscriminatorMismatch",
    }
)
# Operations that call a tool: fuzzed in the gateway-calls run only.
CALLS = r"^/(run|tasks/.*|upstreams|approvals.*|tools/\{tool_id\}/invoke)$"
# Operations that connect to an address from the request (or spawn a command): never fuzzed.
OUTBOUND = ("POST /tools/import/openapi", "POST /mcp/servers")


@dataclass(frozen=True)
class Target:
    """One ``schemathesis run``: a service, the key it sends, which operations."""

    name: str
    service: str
    key: str
    options: tuple[str, ...] = ()


@dataclass
class Result:
    name: str
    operations_tested: int
    operations_total: int
    examples: int
    server_errors: int
    schema_violations: int
    other_failures: int
    errors: int
    failures: list[dict[str, Any]] = field(default_factory=list)


def targets(database_url: str) -> list[Target]:
    admin = mint_key(database_url, "fuzz-admin", ["admin", "ops"])
    user = mint_key(database_url, "fuzz-user", [])
    writer = mint_key(database_url, "fuzz-writer", ["retriever_writer"])
    outbound = [f"--exclude-name={label}" for label in OUTBOUND]
    return [
        Target("shop", "shop", user),
        Target("retriever", "retriever", writer),
        Target("agent", "agent", user),
        # Tool calls first, while the registry holds only the shipped tools.
        Target("gateway-calls", "gateway", admin, (f"--include-path-regex={CALLS}",)),
        Target("gateway", "gateway", admin, (f"--exclude-path-regex={CALLS}", *outbound)),
    ]


def stack_env(database_url: str, redis_url: str, ports: dict[str, int]) -> dict[str, str]:
    env = {
        "DATABASE_URL": database_url,
        "REDIS_URL": redis_url,
        "LOG_LEVEL": "WARNING",
        "AUTH_MODE": "strict",
        # The shipped tools point at the shop and the retriever, here on loopback.
        "EGRESS_ALLOWLIST": "127.0.0.1",
        "TOOL_AUTO_DISCOVERY": "true",
        "MANIFESTS_DIR": str(ROOT / "manifests"),
        # The rag_* tools' key, bound to the retriever's host, as `make run` does.
        SERVICE_KEY_ENV: mint_key(database_url, "fuzz-gateway-tools", ["retriever_writer"]),
        "TOOL_SECRET_HOSTS": json.dumps({SERVICE_KEY_SECRET: ["retriever"]}),
    }
    for name, port in ports.items():
        env[f"{name.upper()}_URL"] = f"http://127.0.0.1:{port}"
    return env


@contextmanager
def running_stack(database_url: str, redis_url: str, log_dir: Path) -> Iterator[dict[str, str]]:
    """The four services as processes; yields their base URLs by name."""
    ports = {name: free_port() for name in ("shop", "retriever", "gateway", "agent")}
    env = stack_env(database_url, redis_url, ports)
    with ExitStack() as stack, ThreadPoolExecutor(max_workers=len(ports)) as pool:
        # All four start together (each loads its embedder); each stops on exit.
        started = {
            name: pool.submit(
                stack.enter_context,
                running_service(name, port, env, log_dir, cwd=ROOT, ready_timeout=180),
            )
            for name, port in ports.items()
        }
        yield {name: future.result().url for name, future in started.items()}


def schemathesis_command(
    target: Target, url: str, report: Path, examples: int, seed: int, max_time: int | None
) -> list[str]:
    command = [
        sys.executable,
        "-m",
        "schemathesis.cli",
        "run",
        f"{url}/openapi.json",
        "--checks=all",
        f"--max-examples={examples}",
        f"--seed={seed}",
        "--workers=1",
        "--request-timeout=30",
        "--suppress-health-check=all",
        f"--header=Authorization: Bearer {target.key}",
        "--report=json",
        f"--report-json-path={report}",
        "--output-sanitize=true",
        *target.options,
    ]
    if max_time is not None:
        command.append(f"--max-time={max_time}")
    return command


def summarise(name: str, document: dict[str, Any]) -> Result:
    """The counts of one run, from Schemathesis' JSON report."""
    failures = document.get("failures") or []

    def count(kinds: set[str] | frozenset[str]) -> int:
        return sum(f["count"] for f in failures if f["type"] in kinds)

    everything = {f["type"] for f in failures}
    operations = document.get("operations") or {}
    return Result(
        name=name,
        operations_tested=operations.get("tested", 0),
        operations_total=operations.get("selected", 0),
        examples=document["test_cases"]["generated"],
        server_errors=count(SERVER_ERRORS),
        schema_violations=count(SCHEMA_VIOLATIONS),
        other_failures=count(everything - SCHEMA_VIOLATIONS - SERVER_ERRORS),
        errors=sum(e["count"] for e in document.get("errors") or []),
        failures=failures,
    )


def fuzz_target(
    target: Target, url: str, work: Path, examples: int, seed: int, max_time: int | None
) -> Result:
    report = work / f"{target.name}.json"
    command = schemathesis_command(target, url, report, examples, seed, max_time)
    with (work / f"{target.name}.out").open("wb") as out:
        subprocess.run(command, stdout=out, stderr=subprocess.STDOUT, cwd=work, check=False)  # noqa: S603
    if not report.exists():
        tail = (work / f"{target.name}.out").read_text(errors="replace")[-2000:]
        raise RuntimeError(f"schemathesis wrote no report for {target.name}:\n{tail}")
    return summarise(target.name, json.loads(report.read_text()))


def fuzz_all(
    work: Path, examples: int, seed: int, max_time: int | None, only: list[str]
) -> list[Result]:
    """Backends, the stack, then the Schemathesis runs: all but the last together (two
    cores serve them while each waits on the network), then the registry run alone, once
    no other run calls a tool any more."""
    with temporary_backends() as (database_url, redis_url):
        chosen = [t for t in targets(database_url) if not only or t.name in only]
        with running_stack(database_url, redis_url, work) as urls:

            def run(target: Target) -> Result:
                console.print(f"fuzzing {target.name} ({urls[target.service]})")
                url = urls[target.service]
                return fuzz_target(target, url, work, examples, seed, max_time)

            first = [t for t in chosen if t.name != "gateway"]
            with ThreadPoolExecutor(max_workers=len(first) or 1) as pool:
                results = list(pool.map(run, first))
            results += [run(t) for t in chosen if t.name == "gateway"]
    return results


def print_table(results: list[Result]) -> None:
    table = Table(title="Schemathesis, every check, every phase")
    for column in (
        "run",
        "operations tested",
        "examples",
        "server errors",
        "schema violations",
        "other failures",
        "errors",
    ):
        table.add_column(column, justify="left" if column == "run" else "right")
    for r in results:
        table.add_row(
            r.name,
            f"{r.operations_tested}/{r.operations_total}",
            str(r.examples),
            str(r.server_errors),
            str(r.schema_violations),
            str(r.other_failures),
            str(r.errors),
        )
    console.print(table)
    for r in results:
        for f in r.failures:
            console.print(
                f"[red]{r.name}: {f['type']} x{f['count']}: {f['title']} {f['operations']}"
            )


cli = typer.Typer(add_completion=False)


@cli.command()
def main(
    examples: Annotated[int, typer.Option(help="Most test cases per operation and phase.")] = 25,
    seed: Annotated[int, typer.Option(help="Hypothesis seed, for a run you can repeat.")] = 19,
    max_time: Annotated[int | None, typer.Option(help="Seconds each run may take at most.")] = None,
    only: Annotated[list[str], typer.Option(help="Fuzz only these runs (repeatable).")] = [],  # noqa: B006
    json_out: Annotated[Path | None, typer.Option("--json", help="Write the counts here.")] = None,
    keep: Annotated[Path | None, typer.Option(help="Keep logs and reports in this folder.")] = None,
) -> None:
    """Fuzz the four services; exit 1 on a server error, a schema violation or a run error.

    The other checks' failures (data the schema allows but a route refuses on meaning,
    ``Allow`` headers) are printed, not fatal."""
    with ExitStack() as stack:
        work = keep or Path(stack.enter_context(tempfile.TemporaryDirectory(prefix="reach-fuzz-")))
        work.mkdir(parents=True, exist_ok=True)
        results = fuzz_all(work, examples, seed, max_time, only)
    print_table(results)
    if json_out is not None:
        json_out.write_text(json.dumps([asdict(r) for r in results], indent=2))
    bad = any(r.server_errors or r.schema_violations or r.errors for r in results)
    raise typer.Exit(1 if bad else 0)


if __name__ == "__main__":
    os.environ.setdefault("PYTHONUNBUFFERED", "1")
    cli()
