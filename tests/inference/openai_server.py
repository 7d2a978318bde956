"""A tiny OpenAI-compatible chat server for the tests: stdlib http.server on 127.0.0.1, HF backend behind it.

It answers ``/v1/models`` and ``/v1/chat/completions`` in vLLM's response shape, including
vLLM's ``return_token_ids`` / ``return_tokens_as_token_ids`` extensions unless started with
``token_ids=False`` (then it answers like a plain OpenAI server: token strings only).
"""

from __future__ import annotations

import json
import threading
from contextlib import contextmanager
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

from posttrain.inference.base import SamplingParams


def _params(body: dict) -> SamplingParams:
    temperature = float(body.get("temperature", 1.0))
    return SamplingParams(n=int(body.get("n", 1)), temperature=temperature,
                          top_p=float(body.get("top_p", 1.0)), max_new_tokens=int(body.get("max_tokens", 16)),
                          stop=tuple(body.get("stop") or ()), seed=body.get("seed"),
                          greedy=temperature == 0.0, tools=tuple(body.get("tools") or ()))


def _answer(backend, body: dict, token_ids: bool) -> dict:
    group = backend.generate([body["messages"]], _params(body))[0]
    tok = backend.tokenizer
    as_ids = token_ids and body.get("return_tokens_as_token_ids")
    choices = []
    for i, c in enumerate(group):
        content = [{"token": f"token_id:{t}" if as_ids else tok.decode([t]), "logprob": lp}
                   for t, lp in zip(c.token_ids_T, c.logprobs_T)]
        choice = {"index": i, "message": {"role": "assistant", "content": c.text},
                  "finish_reason": c.finish_reason,
                  "logprobs": {"content": content} if body.get("logprobs") else None}
        if token_ids and body.get("return_token_ids"):
            choice["token_ids"] = list(c.token_ids_T)
        choices.append(choice)
    answer = {"id": "cmpl-test", "object": "chat.completion", "model": body["model"], "choices": choices}
    if token_ids and body.get("return_token_ids"):
        answer["prompt_token_ids"] = list(group[0].prompt_token_ids)
    return answer


@contextmanager
def serve(backend, *, token_ids: bool = True, fail_first: int = 0):
    """Serve ``backend`` on a free loopback port; yields the base URL and the request log."""
    lock = threading.Lock()  # the HF backend is not re-entrant
    log: list[dict] = []
    failures = [fail_first]

    class Handler(BaseHTTPRequestHandler):
        def log_message(self, *args):  # keep test output clean
            pass

        def _send(self, code: int, payload: dict) -> None:
            data = json.dumps(payload).encode()
            self.send_response(code)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)

        def do_GET(self):
            if self.path == "/v1/models":
                self._send(200, {"object": "list", "data": [{"id": "tiny", "object": "model"}]})
            else:
                self._send(404, {"error": "not found"})

        def do_POST(self):
            body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
            if self.path != "/v1/chat/completions":
                return self._send(404, {"error": "not found"})
            with lock:
                log.append(body)
                if failures[0] > 0:
                    failures[0] -= 1
                    return self._send(503, {"error": "warming up"})
                try:
                    answer = _answer(backend, body, token_ids)
                except Exception as exc:  # surfaced to the client as an HTTP error
                    return self._send(400, {"error": str(exc)})
            self._send(200, answer)

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}", log
    finally:
        server.shutdown()
        server.server_close()
        thread.join(5)
