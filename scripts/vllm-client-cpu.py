#!/usr/bin/env python3
# vllm-client-cpu.py URL N STREAMS OUTPUT_TOKENS
#
# Drives vLLM's own openai-chat request function, unchanged, as
# `vllm bench serve` drives it (one aiohttp session, a semaphore of STREAMS),
# for N requests against URL (cmd/fakellm, or any OpenAI-compatible server),
# and prints the client's CPU per request (getrusage over the requests),
# wall time and TTFT percentiles as one JSON line: the figure
# docs/benchmarks.md compares with `bench run` on the same workload.
#
# The request function is imported from an installed vLLM
# (vllm.benchmarks.lib.endpoint_request_func); where vLLM cannot be
# installed, VLLM_REQUEST_FUNC may name a directory holding that file
# (endpoint_request_func.py, as vLLM ships it). No vLLM code is in this
# project.
import asyncio
import json
import os
import resource
import sys
import time

try:
    from vllm.benchmarks.lib.endpoint_request_func import (
        RequestFuncInput, async_request_openai_chat_completions)
except ImportError:
    sys.path.insert(0, os.environ.get("VLLM_REQUEST_FUNC", "."))
    from endpoint_request_func import (  # type: ignore
        RequestFuncInput, async_request_openai_chat_completions)

import aiohttp


async def main(url, n, streams, out_len):
    conn = aiohttp.TCPConnector(limit=streams, limit_per_host=streams, ttl_dns_cache=300,
                                use_dns_cache=True, keepalive_timeout=60,
                                enable_cleanup_closed=True, force_close=False)
    sem = asyncio.Semaphore(streams)
    timeout = aiohttp.ClientTimeout(total=6 * 3600)
    async with aiohttp.ClientSession(connector=conn, trust_env=True, timeout=timeout) as session:
        async def one():
            async with sem:
                return await async_request_openai_chat_completions(RequestFuncInput(
                    prompt="go " * 16, api_url=url + "/v1/chat/completions", prompt_len=16,
                    output_len=out_len, model="fake"), session)
        r0, t0 = resource.getrusage(resource.RUSAGE_SELF), time.perf_counter()
        outs = await asyncio.gather(*[one() for _ in range(n)])
        t1, r1 = time.perf_counter(), resource.getrusage(resource.RUSAGE_SELF)
    cpu = (r1.ru_utime - r0.ru_utime) + (r1.ru_stime - r0.ru_stime)
    ttft = sorted(o.ttft * 1000 for o in outs if o.success)
    print(json.dumps({"ok": sum(o.success for o in outs), "n": n,
                      "cpu_ms_per_req": cpu / n * 1000, "wall_s": t1 - t0,
                      "ttft_p50_ms": ttft[len(ttft) // 2] if ttft else None,
                      "ttft_p99_ms": ttft[int(len(ttft) * 0.99)] if ttft else None,
                      "maxrss_mb": r1.ru_maxrss / 1024}))


if __name__ == "__main__":
    url, n, streams, out_len = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), int(sys.argv[4])
    asyncio.run(main(url, n, streams, out_len))
