"""Every answer of the real remote-server is JSON, a request uvicorn cannot parse included (issue 31,
the attack's third finding: `Content-Length: -5` was answered in plain text, before any application
code ran). Raw bytes over a socket on 127.0.0.1, since an HTTP client refuses to send these."""

from __future__ import annotations

import json
import socket

import httpx
import pytest

from server_support import remote_server, start_remote_server  # noqa: F401  (fixtures)

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


# ------------------------------------------------------------------ half-open sockets, broken chunked bodies
AUTH = "Authorization: Bearer {token}\r\n"
HALF = {  # (what is sent, then nothing: the connection stays open)
    "half a request line": b"POST /v1/prop",
    "half the headers": b"POST /v1/propose HTTP/1.1\r\nHost: x\r\nContent-Type: appl",
    "half a body": b"POST /v1/propose HTTP/1.1\r\nHost: x\r\n{auth}Content-Type: application/json\r\n"
                   b"Content-Length: 100\r\n\r\n{\"file\": ",
    "half a chunked body": b"POST /v1/propose HTTP/1.1\r\nHost: x\r\n{auth}Content-Type: application/json\r\n"
                           b"Transfer-Encoding: chunked\r\n\r\n9\r\n{\"file\": \r\n",
}


def _held_open(url: str, raw: bytes) -> bytes:
    """Send `raw`, keep the socket open for writing, and read until the server closes it."""
    host, port = url.removeprefix("http://").split(":")
    data = b""
    with socket.create_connection((host, int(port)), timeout=60) as sock:  # a hang guard only
        if raw:
            sock.sendall(raw)
        while chunk := sock.recv(65536):
            data += chunk
    return data


def test_a_half_open_connection_is_timed_out_and_the_server_goes_on(start_remote_server, tmp_path):  # noqa: F811
    """Attack finding 8: a client that connects and sends nothing, or half a request, held its
    connection (and a body's reader) for ever. With --read-timeout, each wait for the client's next
    bytes is bounded: half a request is answered 408 in JSON, a silent connection is closed; the
    server serves the next client, and logs no traceback."""
    from server_support import write_tokens

    token_file = tmp_path / "tokens"
    tokens = write_tokens(token_file)
    s = start_remote_server(tmp_path / "served", token_file, "--read-timeout", "0.5", tokens=tokens)
    assert _held_open(s.url, b"") == b""  # sent nothing: closed, nothing to answer
    for name, raw in HALF.items():
        got = _held_open(s.url, raw.replace(b"{auth}", AUTH.format(token=tokens["proposer"]).encode()))
        head, _, body = got.partition(b"\r\n\r\n")
        assert head.startswith(b"HTTP/1.1 408 "), (name, got)
        assert "did not arrive in time" in json.loads(body)["error"], name
    r = httpx.get(f"{s.url}/v1/health", timeout=30)
    assert r.status_code == 200 and r.json()["ok"] is True
    r = httpx.post(f"{s.url}/v1/propose", content=b"{}", timeout=30,
                   headers={"Authorization": f"Bearer {tokens['proposer']}", "Content-Type": "application/json"})
    assert r.status_code == 400  # a whole request is answered as before
    assert "Traceback" not in s.stderr() and "internal error" not in s.stderr()


BROKEN_CHUNKS = {  # a chunked body that breaks after the application started reading it
    "bad size after a chunk": [b"9\r\n{\"file\": \r\n", b"zz\r\nxx\r\n0\r\n\r\n"],
    "chunk longer than its size": [b"9\r\n{\"file\": \r\n", b"2\r\n\"abc\"\r\n0\r\n\r\n"],
    "size past any length": [b"9\r\n{\"file\": \r\n", b"ffffffffffffffffffffffffffffffffff\r\nx\r\n"],
    "bad trailer": [b"9\r\n{\"file\": \r\n", b"0\r\nnot a header\r\n\r\n"],
}


@pytest.mark.parametrize("case", sorted(BROKEN_CHUNKS))
def test_a_broken_chunked_body_is_a_json_400_and_no_log_of_internals(start_remote_server, tmp_path, case):  # noqa: F811
    """Attack finding 8: an error in a chunked body is answered 400 in JSON; the log holds at most
    one line about it, no traceback and no internal detail."""
    import time

    from server_support import write_tokens

    token_file = tmp_path / "tokens"
    tokens = write_tokens(token_file)
    s = start_remote_server(tmp_path / "served", token_file, tokens=tokens)
    before = s.stderr().splitlines()
    head = (b"POST /v1/propose HTTP/1.1\r\nHost: x\r\n" + AUTH.format(token=tokens["proposer"]).encode()
            + b"Content-Type: application/json\r\nTransfer-Encoding: chunked\r\n\r\n")
    host, port = s.url.removeprefix("http://").split(":")
    data = b""
    with socket.create_connection((host, int(port)), timeout=60) as sock:  # a hang guard only
        sock.sendall(head + BROKEN_CHUNKS[case][0])
        time.sleep(0.2)  # let the application start reading the body (the order, not a measurement)
        sock.sendall(BROKEN_CHUNKS[case][1])
        while chunk := sock.recv(65536):
            data += chunk
    status, _, body = data.partition(b"\r\n\r\n")
    assert status.startswith(b"HTTP/1.1 400 "), data
    assert set(json.loads(body)) == {"error"}
    assert httpx.get(f"{s.url}/v1/health", timeout=30).status_code == 200
    after = s.stderr().splitlines()[len(before):]
    assert len(after) <= 1 and not any("Traceback" in line or "internal error" in line for line in after), after
