"""A fake OpenAI-compatible endpoint for tests: canned answers, streamed like a real server.

    python3 fake_openai_server.py --script SCRIPT.json --record REQUESTS.jsonl

Listens on 127.0.0.1 on a free port, prints "PORT <n>" on stdout, and exits when its stdin
closes (the test that started it is done). Standard library only.

SCRIPT.json:
    {"model": "fake-model",                 # what /v1/models lists
     "responses": [RESPONSE, ...]}          # one per chat request, in order; the last repeats
RESPONSE:
    {"choices": ["answer 0", ...],          # the answers; at most the request's n are sent
     "reasoning": ["thoughts 0", ...],      # optional: sent apart, as reasoning_content
     "chunk": 16,                           # characters per streamed delta
     "finish_reason": "stop",
     "ignore_n": false,                     # answer with one choice whatever n is (llama.cpp)
     "status": 200, "error": "why",         # an HTTP error instead of an answer
     "bad_json": false,                     # a stream event that is not JSON
     "stall_after": null,                   # after this many events, stop sending (no end)
     "stream": true}                        # false: one JSON completion instead of a stream
Answers are parameterised by the request: "{{n}}", "{{seed}}", "{{temperature}}", "{{top_p}}",
"{{max_tokens}}", "{{model}}" and "{{index}}" are replaced by its values.

Every request is appended to REQUESTS.jsonl as {"method", "path", "authorization", "body"}
before it is answered, so a test can assert what was sent.
"""
import argparse
import json
import os
import sys
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer


class State:
    def __init__(self, script, record):
        self.script = script
        self.record = record
        self.lock = threading.Lock()
        self.served = 0

    def next_response(self):
        with self.lock:
            responses = self.script.get("responses") or [{"choices": [""]}]
            response = responses[min(self.served, len(responses) - 1)]
            self.served += 1
            return response

    def log(self, entry):
        with self.lock, open(self.record, "a", encoding="utf-8") as f:
            f.write(json.dumps(entry) + "\n")


def fill(text, body, index):
    values = {
        "n": body.get("n", 1), "seed": body.get("seed"), "temperature": body.get("temperature"),
        "top_p": body.get("top_p"), "max_tokens": body.get("max_tokens"),
        "model": body.get("model"), "index": index,
    }
    for name, value in values.items():
        text = text.replace("{{" + name + "}}", str(value))
    return text


class Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    state = None

    def log_message(self, *args):  # keep the test's output clean
        pass

    def send_json(self, status, payload):
        data = json.dumps(payload).encode()
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def record(self, body):
        self.state.log({"method": self.command, "path": self.path,
                        "authorization": self.headers.get("Authorization"), "body": body})

    def do_GET(self):
        self.record(None)
        if self.path.rstrip("/").endswith("/models"):
            self.send_json(200, {"object": "list",
                                 "data": [{"id": self.state.script.get("model", "fake-model"),
                                           "object": "model"}]})
        else:
            self.send_json(404, {"error": {"message": "no route " + self.path}})

    def do_POST(self):
        length = int(self.headers.get("Content-Length") or 0)
        raw = self.rfile.read(length)
        try:
            body = json.loads(raw)
        except ValueError:
            self.record(raw.decode(errors="replace"))
            self.send_json(400, {"error": {"message": "the body is not JSON"}})
            return
        self.record(body)
        if not self.path.rstrip("/").endswith("/chat/completions"):
            self.send_json(404, {"error": {"message": "no route " + self.path}})
            return
        response = self.state.next_response()
        if response.get("status", 200) != 200:
            self.send_json(response["status"],
                           {"error": {"message": response.get("error", "failed")}})
            return
        n = 1 if response.get("ignore_n") else int(body.get("n", 1))
        texts = [fill(t, body, i) for i, t in enumerate(response.get("choices", [])[:n])]
        thoughts = [fill(t, body, i) for i, t in enumerate(response.get("reasoning", [])[:n])]
        finish = response.get("finish_reason", "stop")
        if not response.get("stream", True) or not body.get("stream"):
            self.send_json(200, {"object": "chat.completion", "model": body.get("model"),
                                 "choices": [{"index": i, "finish_reason": finish,
                                              "message": {"role": "assistant", "content": t}}
                                             for i, t in enumerate(texts)]})
            return
        self.stream(body, response, texts, thoughts, finish)

    def stream(self, body, response, texts, thoughts, finish):
        self.send_response(200)
        self.send_header("Content-Type", "text/event-stream")
        self.send_header("Cache-Control", "no-cache")
        self.send_header("Connection", "close")
        self.end_headers()
        chunk = max(1, int(response.get("chunk", 16)))
        stall_after = response.get("stall_after")
        sent = 0

        def event(payload):
            nonlocal sent
            if stall_after is not None and sent >= stall_after:
                time.sleep(3600)  # the client must give up or cancel
            data = payload if isinstance(payload, str) else json.dumps(payload)
            self.wfile.write(("data: " + data + "\n\n").encode())
            self.wfile.flush()
            sent += 1

        def delta(index, field, text, reason=None):
            event({"object": "chat.completion.chunk", "model": body.get("model"),
                   "choices": [{"index": index, "delta": {field: text} if field else {},
                                "finish_reason": reason}]})

        self.wfile.write(b": keep-alive\n\n")
        if response.get("bad_json"):
            event("{this is not json")
        # Interleave the choices, as servers that batch n samples do.
        pieces = []
        for i in range(len(texts)):
            own = []
            if i < len(thoughts):
                own += [("reasoning_content", thoughts[i][k:k + chunk])
                        for k in range(0, len(thoughts[i]), chunk)]
            own += [("content", texts[i][k:k + chunk]) for k in range(0, len(texts[i]), chunk)]
            pieces.append(own)
        step = 0
        while any(step < len(p) for p in pieces):
            for i, own in enumerate(pieces):
                if step < len(own):
                    delta(i, own[step][0], own[step][1])
            step += 1
        for i in range(len(texts)):
            delta(i, None, None, finish)
        event("[DONE]")


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--script", required=True)
    parser.add_argument("--record", required=True)
    args = parser.parse_args()
    with open(args.script, encoding="utf-8") as f:
        script = json.load(f)
    Handler.state = State(script, args.record)
    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    server.daemon_threads = True
    print("PORT", server.server_address[1], flush=True)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    sys.stdin.read()  # until the test closes our stdin
    os._exit(0)


if __name__ == "__main__":
    main()
