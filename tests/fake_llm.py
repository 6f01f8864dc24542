"""A scripted OpenAI-compatible server on 127.0.0.1, for driving the real openai client in tests.

Each role (coder, judge; told apart by the system prompt) has a script: a list
of steps, served in order, the last one repeating. A step is a dict:
``content`` (the answer text), ``status`` (an HTTP error code instead of an
answer), ``delay`` (seconds to wait first: longer than the client's timeout
makes a server that never answers), ``usage`` ((prompt, completion) tokens).
"""

from __future__ import annotations

import json
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer


class FakeLLM:
    def __init__(self, coder: list[dict], judge: list[dict] | None = None) -> None:
        self.scripts = {"coder": list(coder), "judge": list(judge or [{"content": "{}"}])}
        self.served = {"coder": 0, "judge": 0}
        self.requests: list[tuple[str, dict]] = []
        self.lock = threading.Lock()
        self.server = ThreadingHTTPServer(("127.0.0.1", 0), self._handler())
        self.server.daemon_threads = True
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self.server.server_address[1]}/v1"

    def __enter__(self) -> FakeLLM:
        self.thread.start()
        return self

    def __exit__(self, *exc) -> None:
        self.server.shutdown()
        self.server.server_close()

    def calls(self, role: str) -> list[dict]:
        return [body for r, body in self.requests if r == role]

    def next_step(self, body: dict) -> tuple[str, dict]:
        system = next((m["content"] for m in body.get("messages", []) if m.get("role") == "system"), "")
        role = "judge" if "You are the judge" in system else "coder"
        with self.lock:
            self.requests.append((role, body))
            script = self.scripts[role]
            step = script[min(self.served[role], len(script) - 1)]
            self.served[role] += 1
        return role, step

    def _handler(self):
        fake = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *args) -> None:  # quiet
                pass

            def do_POST(self) -> None:
                length = int(self.headers.get("content-length", 0))
                body = json.loads(self.rfile.read(length) or b"{}")
                _, step = fake.next_step(body)
                time.sleep(step.get("delay", 0))
                status = step.get("status", 200)
                if status != 200:
                    payload = {"error": {"message": f"scripted {status}", "type": "scripted", "code": status}}
                    self._send(status, payload, {"retry-after-ms": "10"})
                    return
                prompt, completion = step.get("usage", (1000, 500))
                payload = {
                    "id": "chatcmpl-fake",
                    "object": "chat.completion",
                    "created": int(time.time()),
                    "model": body.get("model", "fake"),
                    "choices": [
                        {
                            "index": 0,
                            "message": {"role": "assistant", "content": step.get("content", "")},
                            "finish_reason": "stop",
                        }
                    ],
                    "usage": {
                        "prompt_tokens": prompt,
                        "completion_tokens": completion,
                        "total_tokens": prompt + completion,
                    },
                }
                self._send(200, payload, {})

            def _send(self, status: int, payload: dict, headers: dict) -> None:
                data = json.dumps(payload).encode()
                try:
                    self.send_response(status)
                    self.send_header("content-type", "application/json")
                    self.send_header("content-length", str(len(data)))
                    for key, value in headers.items():
                        self.send_header(key, value)
                    self.end_headers()
                    self.wfile.write(data)
                except (BrokenPipeError, ConnectionResetError):
                    pass  # the client gave up (a timeout test)

        return Handler


def answer(code: str, prose: str = "Here is the kernel.") -> dict:
    return {"content": f"{prose}\n\n```python\n{code}```\n"}


def judge_answer(advice: dict) -> dict:
    return {"content": "```json\n" + json.dumps(advice) + "\n```", "usage": (800, 100)}
