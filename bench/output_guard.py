"""What the output guard (`core.output.GuardedStream`) costs a write, by kind of text.

    python -m bench.output_guard

Each figure is the best of 5 repeats, in microseconds per write, beside its reference measured in
the same run: the narrow guard the module had before it escaped every Cc/Cf/Co/Cs/Zl/Zp
character (its file-name masking, then one search of `_UNSAFE`, the C0/C1 and bidi regex, and a
substitution only when it matched). ASCII text takes the same path as the narrow guard
(`str.isascii`, then that regex), so its ratio is ~1; a non-ASCII text pays for reading the
categories of its non-word characters.
"""

from __future__ import annotations

import io
import timeit

from git_memex.core import output

TEXTS = {
    "ASCII line (a log line)": "2026-12-05T09:08:50Z  created  01M92QCYAX  local:ann@example.com: the cache lives in /var/cache/app\n",
    "ASCII 20 KB": "the deploy runs nightly at two; the cache lives in /var/cache/app and is cleared weekly\n" * 230,
    "line with one arrow": "review pipeline: draft 1 \u2192 proposed 0 \u2192 approved 0\n",
    "mixed English/Chinese 11 KB": "the cache \u2192 lives in /var/cache/app, \u7f13\u5b58 lives here\n" * 200,
    "Chinese 3,600 characters": "\u7f13\u5b58\u76ee\u5f55\u5728\u8fd9\u91cc\uff0c\u6bcf\u665a\u4e24\u70b9\u6e05\u7406\u4e00\u6b21\u3002\n" * 200,
    "a zero-width space on every line, 4 KB": "the cache \u200b lives\n" * 200,
}


class _Narrow:
    """The guard as it was: masking, then the C0/C1 and bidi regex only."""

    def __init__(self) -> None:
        self._stream = io.StringIO()

    def write(self, text: str) -> int:
        text = output.mask_file_names(text)
        u = output._UNSAFE
        self._stream.write(u.sub(output._escape, text) if u.search(text) else text)
        return len(text)


def best(stream: object, text: str) -> float:
    n = 2000 if len(text) < 200 else 100
    write = stream.write  # type: ignore[attr-defined]
    return min(timeit.repeat(lambda: write(text), number=n, repeat=5)) / n * 1e6


def main() -> None:
    print("| text | narrow guard (us) | guard (us) | ratio |\n|---|---|---|---|")
    for name, text in TEXTS.items():
        ref = best(_Narrow(), text)
        now = best(output.GuardedStream(io.StringIO()), text)
        print(f"| {name} | {ref:.1f} | {now:.1f} | {now / ref:.2f} |")


if __name__ == "__main__":
    main()
