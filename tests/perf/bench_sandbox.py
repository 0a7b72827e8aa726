"""Sandbox performance figures (printed as one JSON object; `make bench` runs this).

- create + exec("true") + destroy, median over 20, per backend (targets: docker <= 1.0 s,
  local <= 0.05 s);
- exec("true") in a warm docker sandbox, median over 20 (target <= 0.1 s);
- 8 docker sandboxes at once, each running a 1-second command: wall time (target <= 3 s), cold
  and with the containers prewarmed (started beforehand; the prewarm time is reported apart);
- the offline image: build time (a fresh build only with --rebuild) and size.

Backends that are unavailable are reported as such rather than failing the run.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
import time
from concurrent.futures import ThreadPoolExecutor

from sabench.sandbox.protocol import get_backend, open_sandbox
from sabench.sandbox.types import SandboxSpec

ROUNDS = 20
CONCURRENT = 8


def _timed(action) -> float:
    started = time.perf_counter()
    action()
    return time.perf_counter() - started


def lifecycle(backend: str) -> dict[str, float]:
    """Median and spread of create + exec("true") + destroy."""

    def once() -> None:
        with open_sandbox(SandboxSpec(backend=backend)) as box:
            if not box.exec("true").ok:
                raise RuntimeError(f"{backend}: `true` failed")

    once()  # warm-up: first-use imports and caches are not what is measured
    times = [_timed(once) for _ in range(ROUNDS)]
    return {"median_s": round(statistics.median(times), 4), "min_s": round(min(times), 4),
            "max_s": round(max(times), 4), "rounds": ROUNDS}


def warm_exec(backend: str) -> dict[str, float]:
    with open_sandbox(SandboxSpec(backend=backend)) as box:
        box.exec("true")
        times = [_timed(lambda: box.exec("true")) for _ in range(ROUNDS)]
    return {"median_s": round(statistics.median(times), 4), "rounds": ROUNDS}


def concurrent(backend: str, prewarm: bool) -> dict[str, float]:
    """Wall time for N sandboxes opened at once, each running `sleep 1`, then destroyed.

    With `prewarm` the containers are started beforehand (DockerBackend.prewarm, timed apart).
    """
    spec = SandboxSpec(backend=backend)
    warmed = _timed(lambda: get_backend(backend).prewarm(spec, CONCURRENT)) if prewarm else 0.0

    def one(_: int) -> bool:
        with open_sandbox(spec) as box:
            return box.exec("sleep 1").ok

    started = time.perf_counter()
    with ThreadPoolExecutor(CONCURRENT) as pool:
        results = list(pool.map(one, range(CONCURRENT)))
    wall = time.perf_counter() - started
    figures = {"sandboxes": CONCURRENT, "wall_s": round(wall, 3), "all_ok": all(results)}
    if prewarm:
        figures["prewarm_s"] = round(warmed, 3)
    return figures


def offline_image(rebuild: bool) -> dict[str, object]:
    from sabench.sandbox.images import build_offline

    report = build_offline(force=rebuild, log=lambda line: print(line, file=sys.stderr))
    return report.model_dump()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rebuild", action="store_true",
                        help="time a fresh offline image build (a few minutes)")
    args = parser.parse_args()
    figures: dict[str, object] = {}
    for backend in ("docker", "local"):
        ok, why = get_backend(backend).available(SandboxSpec(backend=backend))
        if not ok:
            figures[backend] = {"unavailable": why}
            continue
        figures[backend] = {"create_exec_destroy": lifecycle(backend)}
        if backend == "docker":
            figures[backend]["warm_exec"] = warm_exec(backend)
            figures[backend]["concurrent_1s_cold"] = concurrent(backend, prewarm=False)
            figures[backend]["concurrent_1s_prewarmed"] = concurrent(backend, prewarm=True)
    try:
        figures["offline_image"] = offline_image(args.rebuild)
    except Exception as exc:  # no engine or no root: say so, keep the other figures
        figures["offline_image"] = {"unavailable": str(exc)}
    figures["machine"] = {"cpus": os.cpu_count(), "load_avg_1m": round(os.getloadavg()[0], 2)}
    print(json.dumps(figures, indent=1))


if __name__ == "__main__":
    main()
