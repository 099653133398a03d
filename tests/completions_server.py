"""A small OpenAI-style completions server for the tests of the ``lm-eval:`` family: it scores the
token ids lm-eval's ``local-completions`` backend sends (``echo=True, logprobs=1, max_tokens=1``)
with a real transformers causal LM (one right-padded forward pass per request) and answers as an
OpenAI completions endpoint does, or in one of the wrong ways real servers answer (``mode``):

* ``ok``: one log-probability per prompt token (``None`` for the first) plus the generated token;
* ``generated-only``: only the generated token's (llama.cpp's ``llama-server`` gives none for the
  prompt);
* ``zeros``: 0.0 for every token;
* ``dropped``: the prompt's last token left out (a server that re-tokenises and loses one);
* ``echo-key``: 401, echoing the Authorization header it received in its error body.

Every request must carry ``Authorization: Bearer <key>`` when ``key`` is set (401 otherwise).
"""
from __future__ import annotations

import contextlib
import json
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import torch

from served import in_thread


class _Handler(BaseHTTPRequestHandler):
    server_version = "contstim-test-completions"

    def log_message(self, *args):  # keep the test output clean
        pass

    def _send(self, status: int, body: dict) -> None:
        data = json.dumps(body).encode()
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def do_POST(self):  # noqa: N802 - http.server's name
        state = self.server.state
        payload = json.loads(self.rfile.read(int(self.headers.get("Content-Length", 0))) or b"{}")
        state["requests"] += 1
        auth = self.headers.get("Authorization", "")
        if state["mode"] == "echo-key":
            self._send(401, {"error": {"message": f"invalid credentials {auth}"}})
            return
        if state["key"] and auth != f"Bearer {state['key']}":
            self._send(401, {"error": {"message": "missing or wrong API key"}})
            return
        prompts = payload["prompt"]
        prompts = prompts if isinstance(prompts[0], list) else [prompts]
        logps = _log_softmax(state["model"], prompts)
        choices = [self._choice(i, ids, logp, state["mode"]) for i, (ids, logp) in enumerate(zip(prompts, logps))]
        self._send(200, {"id": "cmpl-test", "object": "text_completion", "model": payload.get("model"),
                         "choices": choices})

    @staticmethod
    def _choice(index: int, ids: list[int], logp: torch.Tensor, mode: str) -> dict:
        values = [None] + [float(logp[i - 1, ids[i]]) for i in range(1, len(ids))]
        generated = int(logp[-1].argmax())
        values.append(float(logp[-1, generated]))
        tops = [None] + [{"t": float(logp[i - 1].max())} for i in range(1, len(ids))] + [{"t": values[-1]}]
        if mode == "generated-only":
            values, tops = values[-1:], tops[-1:]
        elif mode == "zeros":
            values = [None] + [0.0] * (len(values) - 1)
            tops = [None] + [{"t": 0.0}] * (len(tops) - 1)
        elif mode == "dropped":
            values, tops = values[:-2] + values[-1:], tops[:-2] + tops[-1:]
        return {"index": index, "text": "", "finish_reason": "length",
                "logprobs": {"token_logprobs": values, "top_logprobs": tops, "tokens": [str(t) for t in ids]}}


def _log_softmax(model, prompts: list[list[int]]) -> list[torch.Tensor]:
    """For each prompt (token ids), the float64 log-softmax of ``model``'s next-token logits at each
    of its positions (``[len(prompt), vocabulary]``), all prompts of a request in one right-padded
    forward pass (positions and attention as for the prompt alone; one pass per request instead of
    one per prompt is what makes the 264-sentence evaluation cheap)."""
    longest = max(len(ids) for ids in prompts)
    padded = torch.tensor([ids + [0] * (longest - len(ids)) for ids in prompts])
    mask = torch.tensor([[1] * len(ids) + [0] * (longest - len(ids)) for ids in prompts])
    with torch.inference_mode():
        logits = model(input_ids=padded, attention_mask=mask).logits
    return [torch.log_softmax(logits[k, :len(ids)].double(), -1) for k, ids in enumerate(prompts)]


@contextlib.contextmanager
def completions_server(model, *, mode: str = "ok", key: str | None = None):
    """Serve ``model`` (a transformers causal LM in float32, in eval mode: the tests pass the one
    the ``smollm2`` fixture has loaded, instead of loading the weights again for every server) on
    127.0.0.1 until the block ends; yields ``(completions URL, state)`` (``state["mode"]`` may be
    changed while it runs, ``state["requests"]`` counts the requests)."""
    if model.training or model.dtype != torch.float32:
        raise ValueError(f"completions_server serves a float32 model in eval mode, got {model.dtype}, "
                         f"training={model.training}")
    server = ThreadingHTTPServer(("127.0.0.1", 0), _Handler)
    server.state = {"model": model, "mode": mode, "key": key, "requests": 0}
    with in_thread(server) as base:
        yield f"{base}/v1/completions", server.state
