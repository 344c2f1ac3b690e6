"""Send a catalogue's router the longest requests /run accepts, built to be costly.

For each folder of manifests: a gateway in process (as ``bench_shipped.py`` starts it,
throwaway embedded Postgres and Redis), then ``POST /run`` (dry run) with 4,000-character
requests, each one piece written over and over (digits, dates, Chinese words whose
reading is long, labels, separators …) or words drawn from the catalogue's own
manifests. Prints, per folder, the slowest requests and any answer of 500 or more: a
request must cost about its length, and never crash the router.

    python scripts/fuzz_requests.py tests/data/*/manifests manifests

Timings are wall time of one request at a time; compare runs made on the same machine.
"""

from __future__ import annotations

import asyncio
import json
import random
import sys
import time
from collections.abc import Awaitable
from pathlib import Path
from typing import Annotated, Any, TypeVar

import bench_shipped
import httpx
import typer

_T = TypeVar("_T")
LONGEST = 4000  # /run's user_query limit
PIECES = [
    "a", "1", "1 ", "1.", "1/", "1-", "1:", "-1", "_", "a-", "a.", "a1", "A1 ", "SKU1",
    "#1 ", "id ", "no.1 ", "@a", "a@", "(", '"', "'", "=", ": ", "x50 ", "10mg ", "$1", "1%",
    "1e", "+1 ", "2025-01-01 ", "01/02/2025 ", "for two ", "this weekend ", "and ", "not ",
    "\n", "我", "第", "今晚", "明年1月", "下午3点", "九折", "元", "支行", "姓", "全部", "的",
    "，", "、", "两", "十", "点", "号", "月", "年", "预订人", "名字",
]  # fmt: skip
DRAWN = 40  # requests of the catalogue's own words, per folder
SLOWEST = 5


def requests_for(manifests: Path, seed: int) -> list[str]:
    """The pieces written out to ``LONGEST`` characters, then ``DRAWN`` requests of words
    from the folder's manifests mixed with the pieces."""
    built = [(piece * (LONGEST // len(piece) + 1))[:LONGEST] for piece in PIECES]
    words: list[str] = []
    for path in sorted(manifests.glob("*.json")):
        try:
            words += json.dumps(json.loads(path.read_text()), ensure_ascii=False).split()
        except ValueError:
            continue
    rng = random.Random(seed)  # noqa: S311 - requests to send, not a secret
    pool = words + PIECES
    for _ in range(DRAWN):
        text = ""
        while len(text) < LONGEST:
            text += rng.choice(pool) + rng.choice((" ", "", ", ", "的"))
        built.append(text[:LONGEST])
    return built


Timed = tuple[float, float, int, str]  # milliseconds, longest loop stall (ms), status, text


def fuzz(manifests: Path, seed: int) -> list[Timed]:
    """(milliseconds, longest loop stall, status, request) for each request, slowest first."""
    return sorted(timed_run(requests_for(manifests, seed), manifests), reverse=True)


async def longest_stall(work: Awaitable[_T]) -> tuple[_T, float]:
    """``work``'s result, and the longest the event loop went without turning meanwhile
    (ms): a ticker asks to run every millisecond, so a free loop shows 1-2 ms. The wait
    from the ticker's last turn to the end of ``work`` counts too."""
    last = [time.perf_counter()]
    gaps = [0.0]
    done = asyncio.Event()

    async def tick() -> None:
        while not done.is_set():
            await asyncio.sleep(0.001)
            now = time.perf_counter()
            gaps.append(now - last[0])
            last[0] = now

    ticker = asyncio.create_task(tick())
    try:
        result = await work
    finally:
        gaps.append(time.perf_counter() - last[0])
        done.set()
        await ticker
    return result, max(gaps) * 1000


def timed_run(texts: list[str], manifests: Path) -> list[Timed]:
    """(milliseconds, longest loop stall, status, request) for each of ``texts`` sent to a
    gateway in process serving the folder ``manifests``, in the order sent."""
    timed: list[Timed] = []
    send = bench_shipped.send

    async def timed_send(client: httpx.AsyncClient, request: dict[str, Any], *args: Any) -> Any:
        started = time.perf_counter()
        (outcome, data), stall = await longest_stall(send(client, request, *args))
        spent = (time.perf_counter() - started) * 1000
        timed.append((spent, stall, outcome.status, request["query"]))
        return outcome, data

    bench_shipped.send = timed_send  # type: ignore[assignment]
    try:
        # a first Chinese request reads the dictionary (once per process): not timed below
        rows = [{"query": "你好", "gold": None}]
        rows += [{"query": text, "gold": None} for text in texts]
        asyncio.run(bench_shipped.run_all(rows, manifests))
    finally:
        bench_shipped.send = send  # type: ignore[assignment]
    return timed[1:]


def main(
    folders: Annotated[list[Path], typer.Argument(help="Folders of manifests.")],
    seed: Annotated[int, typer.Option(help="Seed of the drawn requests.")] = 7,
) -> None:
    failed = 0
    for folder in folders:
        if not folder.is_dir():
            raise typer.BadParameter(f"{folder} is not a folder")
        results = fuzz(folder, seed)
        errors = [r for r in results if r[2] >= 500]
        failed += len(errors)
        median = sorted(r[0] for r in results)[len(results) // 2]
        stalls = sorted(r[1] for r in results)
        print(
            f"{folder}: {len(results)} requests, median {median:.0f} ms, "
            f"slowest {results[0][0]:.0f} ms, answers of 500 or more: {len(errors)}; "
            f"longest event-loop stall: median {stalls[len(stalls) // 2]:.0f} ms, "
            f"worst {stalls[-1]:.0f} ms"
        )
        for ms, stall, status, text in results[:SLOWEST] + errors:
            print(f"  {ms:7.0f} ms  (loop stalled {stall:4.0f} ms)  {status}  {text[:40]!r}")
    raise typer.Exit(1 if failed else 0)


if __name__ == "__main__":
    sys.setrecursionlimit(10000)
    typer.run(main)
