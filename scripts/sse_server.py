"""A real Server-Sent Events server for Courier's conformance tests (issue #18): sse-starlette on uvicorn.

Nobody here wrote the event encoding, the ping comments or the HTTP server: sse-starlette writes every event (CRLF line
ends by default, multi-line data split into `data:` lines, `: ping` comments), uvicorn frames the chunked response.
This file only decides what to send.

Routes:
  GET /ticks?count=5&interval_ms=0&drop_after=&retry=&ping_ms=
      `count` events `id: n`, `event: tick`, `data: {"n": n}`, resuming after `Last-Event-ID` (204 when nothing is
      left). `retry` adds `retry: ms` to the first event. `ping_ms` sets sse-starlette's ping interval (a `: ping`
      comment). `drop_after=k`: the generator raises after `k` events, and uvicorn closes the connection without the
      last chunk (a dropped stream).
  GET /mixed       one event each of: multi-line data, a comment, non-ASCII data, an event with only data.
  GET /test/count  {"ticks": n}: the /ticks requests seen so far.

Prints `listening on 127.0.0.1:PORT` once it listens (port 0: any free port, or the first argument).
"""

import asyncio
import json
import socket
import sys

import uvicorn
from sse_starlette.sse import EventSourceResponse, ServerSentEvent
from starlette.applications import Starlette
from starlette.responses import JSONResponse, Response
from starlette.routing import Route

state = {"ticks": 0}


class Dropped(Exception):
    """Raised inside a stream to make uvicorn cut the connection."""


def number(params, name, default=None):
    value = params.get(name)
    return int(value) if value is not None and value.lstrip("-").isdigit() else default


async def ticks(request):
    state["ticks"] += 1
    params = request.query_params
    count = number(params, "count", 5)
    interval = number(params, "interval_ms", 0) / 1000
    drop_after = number(params, "drop_after")
    retry = number(params, "retry")
    ping = number(params, "ping_ms")
    last = request.headers.get("last-event-id", "")
    start = int(last) + 1 if last.isdigit() else 0
    if start >= count:
        return Response(status_code=204)

    async def events():
        sent = 0
        for n in range(start, count):
            if sent and interval:
                await asyncio.sleep(interval)
            yield ServerSentEvent(
                data=json.dumps({"n": n}), event="tick", id=str(n), retry=retry if sent == 0 else None
            )
            sent += 1
            if drop_after is not None and sent >= drop_after:
                raise Dropped(f"dropped after {sent} events")

    return EventSourceResponse(events(), ping=(ping / 1000) if ping else 15)


async def mixed(request):
    async def events():
        yield ServerSentEvent(data="first line\nsecond line\r\nthird line", event="multi", id="m1")
        yield ServerSentEvent(comment="a comment the client skips")
        yield ServerSentEvent(data="héllo wörld ✓ 😀", event="unicode", id="m2")
        yield ServerSentEvent(data="only data")

    return EventSourceResponse(events())


async def count(request):
    return JSONResponse({"ticks": state["ticks"]})


app = Starlette(routes=[Route("/ticks", ticks), Route("/mixed", mixed), Route("/test/count", count)])


def main():
    port = int(sys.argv[1]) if len(sys.argv) > 1 else 0
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    sock.bind(("127.0.0.1", port))
    sock.listen(128)
    print(f"listening on 127.0.0.1:{sock.getsockname()[1]}", flush=True)
    config = uvicorn.Config(app, log_level="warning", timeout_graceful_shutdown=1)
    uvicorn.Server(config).run(sockets=[sock])


if __name__ == "__main__":
    main()
