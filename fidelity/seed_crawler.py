#!/usr/bin/env python3
"""The seed article's integrated crawler, run for real.

Its TokenBucket, Throttled and worker are copied below as the article prints
them; main() is the article's, with the queue size, worker count, rate and
per-host limit taken from a fidelity scenario. The client is an in-process
fake upstream: per host a token-bucket quota (rate, burst) checked when a
request arrives, a lognormal latency for an admitted request, and a 429 with
an optional Retry-After after reject_latency otherwise. Everything runs on
the real asyncio event loop in real time.

Measured per run: elapsed time, successes, 429s, timeouts, the time each
bucket.acquire() really took (p50, p90, p99, mean), and the time-average
number of requests inside the upstream.

    python3 seed_crawler.py SCENARIO_NAME [--repeats N] [--seed S]

prints one JSON object per run. Python 3.11+ standard library only.
"""

import argparse
import asyncio
import json
import logging
import math
import random
import sys
import time
from collections import defaultdict

log = logging.getLogger("throttle")

# --------------------------------------------------------------------------
# The seed article's code.


class TokenBucket:
    def __init__(self, rate: float, capacity: float | None = None) -> None:
        self.rate, self.capacity = rate, capacity if capacity is not None else rate
        self._tokens, self._updated = self.capacity, time.monotonic()
        self._lock = asyncio.Lock()

    async def acquire(self, tokens: float = 1.0) -> float:
        waited = 0.0
        while True:
            async with self._lock:
                now = time.monotonic()
                self._tokens = min(self.capacity,
                                   self._tokens + (now - self._updated) * self.rate)
                self._updated = now
                if self._tokens >= tokens:
                    self._tokens -= tokens
                    return waited
                delay = (tokens - self._tokens) / self.rate
            waited += delay
            await asyncio.sleep(delay)


class Throttled:
    """Per-host concurrency + global rate, with cooperative 429 backoff."""

    def __init__(self, rate: float, per_host: int = 8) -> None:
        self.bucket = TokenBucket(rate)
        self.host_sems: dict[str, asyncio.Semaphore] = defaultdict(
            lambda: asyncio.Semaphore(per_host))
        self.paused_until: dict[str, float] = {}
        self.stats = {"waited": 0.0, "throttled": 0, "calls": 0}

    async def get(self, client, host: str, path: str):
        pause = self.paused_until.get(host, 0.0) - time.monotonic()
        if pause > 0:                                   # a 429 is still in effect
            await asyncio.sleep(pause)
        self.stats["waited"] += await self.bucket.acquire()
        async with self.host_sems[host]:
            self.stats["calls"] += 1
            response = await client.get(f"https://{host}{path}")
            if response.status_code == 429:
                delay = float(response.headers.get("Retry-After", 0)) or \
                    random.uniform(1.0, 5.0)
                # Pause the whole host, not just this caller: every concurrent
                # task sees the same quota, so they must all back off together.
                self.paused_until[host] = time.monotonic() + delay
                self.stats["throttled"] += 1
                raise TimeoutError(f"429 from {host}, paused {delay:.1f}s")
            return response


async def worker(name: str, queue: asyncio.Queue, api: Throttled, client) -> None:
    while True:
        host, path = await queue.get()
        try:
            async with asyncio.timeout(10):
                await api.get(client, host, path)
        except TimeoutError as exc:                     # includes the 429 pause
            log.warning("%s: %s", name, exc)
        except Exception:
            log.exception("%s: unexpected failure on %s%s", name, host, path)
        finally:
            queue.task_done()

# --------------------------------------------------------------------------
# The fidelity scenarios: each is also a limitsim scenario in scenarios/.

SCENARIOS = {
    # The article's own configuration: 90/s of a 100/s quota per host.
    "seed": dict(targets=900, hosts=4, rate=90.0, per_host=8, workers=16, queue=500,
                 quota_rate=100.0, quota_burst=100, retry_after=1.0),
    # The bucket binds well below the quota.
    "bucket-binds": dict(targets=600, hosts=1, rate=50.0, per_host=8, workers=16, queue=500,
                         quota_rate=100.0, quota_burst=100, retry_after=1.0),
    # The quota is below the bucket; the server names its Retry-After.
    "quota-binds-retry-after": dict(targets=900, hosts=1, rate=90.0, per_host=8, workers=16, queue=500,
                                    quota_rate=40.0, quota_burst=40, retry_after=1.0),
    # The same without Retry-After: the article pauses uniform(1, 5) s.
    "quota-binds-no-retry-after": dict(targets=400, hosts=1, rate=90.0, per_host=8, workers=16, queue=500,
                                       quota_rate=40.0, quota_burst=40, retry_after=0.0),
    # Several hosts, each quota below its share of the bucket.
    "hosts": dict(targets=900, hosts=4, rate=90.0, per_host=8, workers=16, queue=500,
                  quota_rate=15.0, quota_burst=15, retry_after=1.0),
}
LATENCY_MEDIAN, LATENCY_SIGMA, REJECT_LATENCY = 0.120, 0.5, 0.005

# --------------------------------------------------------------------------
# The fake upstream and the measurements.


class Response:
    def __init__(self, status_code: int, headers: dict[str, str]) -> None:
        self.status_code, self.headers = status_code, headers


class Level:
    """A time-weighted count: how many requests are inside the upstream."""

    def __init__(self) -> None:
        self.n, self.area, self.last, self.start = 0, 0.0, time.monotonic(), time.monotonic()

    def move(self, d: int) -> None:
        now = time.monotonic()
        self.area += self.n * (now - self.last)
        self.n, self.last = self.n + d, now

    def mean(self) -> float:
        self.move(0)
        return self.area / max(1e-9, self.last - self.start)


class FakeClient:
    def __init__(self, sc: dict, rng: random.Random) -> None:
        self.sc, self.rng = sc, rng
        now = time.monotonic()
        self.tokens = defaultdict(lambda: float(sc["quota_burst"]))
        self.updated = defaultdict(lambda: now)
        self.inflight = Level()
        self.ok = 0

    async def get(self, url: str) -> Response:
        host = url.split("/")[2]
        sc = self.sc
        self.inflight.move(+1)
        try:
            now = time.monotonic()
            self.tokens[host] = min(sc["quota_burst"], self.tokens[host] + (now - self.updated[host]) * sc["quota_rate"])
            self.updated[host] = now
            if self.tokens[host] >= 1:
                self.tokens[host] -= 1
                await asyncio.sleep(math.exp(math.log(LATENCY_MEDIAN) + LATENCY_SIGMA * self.rng.gauss(0, 1)))
                self.ok += 1
                return Response(200, {})
            await asyncio.sleep(REJECT_LATENCY)
            headers = {"Retry-After": str(sc["retry_after"])} if sc["retry_after"] > 0 else {}
            return Response(429, headers)
        finally:
            self.inflight.move(-1)


def quantile(xs: list[float], q: float) -> float:
    if not xs:
        return 0.0
    s = sorted(xs)
    return s[min(len(s) - 1, max(0, math.ceil(q * len(s)) - 1))]


async def crawl(sc: dict, seed: int) -> dict:
    rng = random.Random(seed)
    random.seed(seed + 1)  # the article's random.uniform fallback
    client = FakeClient(sc, rng)
    hosts = [f"h{i}.example" for i in range(sc["hosts"])]
    targets = [(hosts[i % len(hosts)], f"/item/{i}") for i in range(sc["targets"])]
    api = Throttled(rate=sc["rate"], per_host=sc["per_host"])
    waits: list[float] = []
    seed_acquire = api.bucket.acquire

    async def timed_acquire(tokens: float = 1.0) -> float:
        t0 = time.monotonic()
        try:
            return await seed_acquire(tokens)
        finally:
            waits.append(time.monotonic() - t0)
    api.bucket.acquire = timed_acquire

    # The article's main(), with the scenario's sizes.
    start = time.monotonic()
    queue: asyncio.Queue = asyncio.Queue(maxsize=sc["queue"])
    tasks = [asyncio.create_task(worker(f"w{i}", queue, api, client)) for i in range(sc["workers"])]
    for target in targets:
        await queue.put(target)
    await queue.join()
    elapsed = time.monotonic() - start
    for t in tasks:
        t.cancel()
    await asyncio.gather(*tasks, return_exceptions=True)
    ok, throttled = client.ok, api.stats["throttled"]
    return {
        "elapsed_s": elapsed,
        "succeeded": ok,
        "responses_429": throttled,
        "timed_out": sc["targets"] - ok - throttled,
        "goodput_rps": ok / elapsed,
        "wait_mean_s": sum(waits) / max(1, len(waits)),
        "wait_p50_s": quantile(waits, 0.50),
        "wait_p90_s": quantile(waits, 0.90),
        "wait_p99_s": quantile(waits, 0.99),
        "in_flight_mean": client.inflight.mean(),
    }


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("scenario", choices=sorted(SCENARIOS))
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument("--seed", type=int, default=1)
    args = ap.parse_args()
    logging.basicConfig(level=logging.ERROR)
    for k in range(args.repeats):
        out = asyncio.run(crawl(SCENARIOS[args.scenario], args.seed + k))
        out["scenario"], out["seed"] = args.scenario, args.seed + k
        print(json.dumps(out), flush=True)


if __name__ == "__main__":
    sys.exit(main())
