"""Every answer of the real remote-server is JSON, a request uvicorn cannot parse included (issue 31,
the attack's third finding: `Content-Length: -5` was answered in plain text, before any application
code ran). Raw bytes over a socket on 127.0.0.1, since an HTTP client refuses to send these."""

from __future__ import annotations

import json
import socket

import httpx
import pytest

from server_support import remote_server  # noqa: F401  (fixture)

MALFORMED = {  # what h11 cannot parse: uvicorn answered each with a plain-text 400
    "negative length": b"POST /v1/propose HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n"
                       b"Content-Length: -5\r\n\r\n{}",
    "length not a number": b"POST /v1/propose HTTP/1.1\r\nHost: x\r\nContent-Length: five\r\n\r\n",
    "two lengths": b"POST /v1/propose HTTP/1.1\r\nHost: x\r\nContent-Length: 2\r\nContent-Length: 3\r\n\r\n{}",
    "no request line": b"GARBAGE\r\n\r\n",
    "header without colon": b"GET /v1/health HTTP/1.1\r\nHost x\r\n\r\n",
    "space before colon": b"GET /v1/health HTTP/1.1\r\nHost : x\r\n\r\n",
    "unknown transfer coding": b"POST /v1/propose HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: gzip\r\n\r\n",
    "bad chunk size": b"POST /v1/propose HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\nzz\r\n{}\r\n0\r\n\r\n",
    "no Host": b"GET /v1/health HTTP/1.1\r\n\r\n",
}
ODD = {  # what h11 reads as some request: the application answers, in JSON too
    "HTTP/2 preface": b"PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n",
    "unknown version": b"GET /v1/health HTTP/9.9\r\nHost: x\r\n\r\n",
    "control byte in a header": b"GET /v1/health HTTP/1.1\r\nHost: x\r\nX-A: a\x01b\r\n\r\n",
    "websocket upgrade": b"GET /v1/health HTTP/1.1\r\nHost: x\r\nConnection: Upgrade\r\nUpgrade: websocket\r\n"
                         b"Sec-WebSocket-Version: 13\r\nSec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\n\r\n",
}


def exchange(url: str, raw: bytes) -> list[tuple[int, dict[str, str], bytes]]:
    """Send `raw` and read until the server closes: each answer as (status, headers, body)."""
    host, port = url.removeprefix("http://").split(":")
    data = b""
    with socket.create_connection((host, int(port)), timeout=30) as sock:  # a hang guard only
        sock.sendall(raw)
        sock.shutdown(socket.SHUT_WR)  # no more requests: the server answers and closes
        while chunk := sock.recv(65536):
            data += chunk
    answers = []
    while data:
        head, sep, rest = data.partition(b"\r\n\r\n")
        assert sep, data
        lines = head.decode("latin-1").split("\r\n")
        headers = {k.strip().lower(): v.strip() for k, _, v in (line.partition(":") for line in lines[1:])}
        length = int(headers["content-length"])
        answers.append((int(lines[0].split()[1]), headers, rest[:length]))
        data = rest[length:]
    return answers


@pytest.mark.parametrize("case", sorted(MALFORMED))
def test_a_request_uvicorn_cannot_parse_is_answered_in_json(remote_server, case):  # noqa: F811
    s = remote_server
    ((status, headers, body),) = exchange(s.url, MALFORMED[case])
    assert status == 400, (case, status, body)
    assert headers["content-type"] == "application/json", (case, headers)
    doc = json.loads(body)
    assert set(doc) == {"error"} and "not HTTP/1.1 this server can read" in doc["error"], doc
    assert httpx.get(f"{s.url}/v1/health").status_code == 200  # the server goes on


@pytest.mark.parametrize("case", sorted(ODD))
def test_every_answer_to_an_odd_request_is_json(remote_server, case):  # noqa: F811
    s = remote_server
    answers = exchange(s.url, ODD[case])
    assert answers, case
    for status, headers, body in answers:
        assert headers["content-type"] == "application/json" and json.loads(body), (case, status, body)
    s.stop()
    assert "Traceback" not in s.stderr()
