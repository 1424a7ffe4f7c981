"""The session block's token estimate against real BPE tokenizers (o200k_base and cl100k_base).

`make install` puts the npm package gpt-tokenizer (MIT, offline) into .venv/node; these tests
run it with the machine's node. Where npm or node is missing the tests are skipped with that
reason: the estimator's own rules are tested in test_textproc.py either way.

The lines below were written for this test, after the estimator was calibrated on others.
"""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from git_memex.core.textproc import estimate_tokens

from conftest import git, run_cli

NODE_MODULES = Path(sys.prefix) / "node" / "node_modules"
COUNT_JS = """
const o = require('gpt-tokenizer/cjs/encoding/o200k_base');
const c = require('gpt-tokenizer/cjs/encoding/cl100k_base');
let data = '';
process.stdin.on('data', d => data += d);
process.stdin.on('end', () => {
  const texts = JSON.parse(data);
  process.stdout.write(JSON.stringify(texts.map(t => Math.max(o.encode(t).length, c.encode(t).length))));
});
"""

pytestmark = pytest.mark.skipif(
    shutil.which("node") is None or not (NODE_MODULES / "gpt-tokenizer").is_dir(),
    reason=f"no node or no gpt-tokenizer in {NODE_MODULES} (make install puts it there when npm exists)",
)

HELD_OUT = [
    "- [project/gotcha] The release script aborts when CHANGELOG.md has no entry for the new version (id 01KC2A9F3M)",
    "- [project/decision] Feature flags live in flags.yaml; LaunchDarkly was dropped in 2025 for cost (id 01KC2AA0QX)",
    "- [project/fact] 测试数据库每天凌晨三点重置，不要在里面保存重要数据 (id 01KC2AB7TT)",
    "- [project/howto] Regenerate the gRPC stubs with `buf generate proto/` after editing any .proto file (id 01KC2ACC11)",
    "- [personal/preference] Show me the diff before committing anything (id 01KC2ADD22)",
    "- [project/warning] kubectl apply -f k8s/prod/ needs the prod context; `kubectx prod` first (id 01KC2AEE33)",
    "- [project/lesson] 上次线上事故是因为缓存过期时间设成了 0，导致所有请求都打到数据库 (id 01KC2AFF44)",
    "- [project/fact] ログは CloudWatch の /app/api グループに 30 日間保存される (id 01KC2AGG55)",
    "- [project/constraint] Node 20.x only; the sharp dependency has no prebuilt binary for 22 yet (id 01KC2AHH66)",
    "- [project/architecture] Orders flow api -> queue (SQS orders-v2) -> worker -> Postgres orders.orders (id 01KC2AJJ77)",
    "- [project/fact] Der Build-Server heißt ci-02 und läuft unter Ubuntu 24.04 (id 01KC2AKK88)",
    "- [project/workflow] 合并 PR 前至少需要一位 owner 审批，CI 必须全绿 (id 01KC2AMM99)",
    "- [project/gotcha] pytest -n auto breaks test_sqlite_lock: run it with -p no:xdist (id 01KC2ANNAA)",
    "- [project/fact] Staging URL is https://staging.example.internal:8443/api/v3 (id 01KC2APPBB)",
]


def bpe(texts: list[str]) -> list[int]:
    r = subprocess.run(["node", "-e", COUNT_JS], input=json.dumps(texts), capture_output=True, text=True,
                       cwd=NODE_MODULES.parent, timeout=60, check=True)
    return json.loads(r.stdout)


def test_estimate_tracks_bpe_on_held_out_lines() -> None:
    counts = bpe(HELD_OUT)
    estimates = [estimate_tokens(t) for t in HELD_OUT]
    for text, e, b in zip(HELD_OUT, estimates, counts, strict=True):
        assert 0.8 * b <= e <= 1.4 * b, (text, e, b)
    total_e, total_b = sum(estimates), sum(counts)
    assert total_b * 0.97 <= total_e <= total_b * 1.25, (total_e, total_b)


@pytest.mark.parametrize("budget", [200, 400])
def test_the_block_fits_its_budget_as_bpe_counts_it(repo: Path, budget: int) -> None:
    for i, text in enumerate(HELD_OUT):
        body = text.split("] ", 1)[1].rsplit(" (id ", 1)[0]
        assert run_cli("add", body, "--scope", "personal" if i % 4 == 0 else "project").code == 0
    git("config", "memex.injectMaxTokens", str(budget), cwd=repo)
    r = run_cli("context", "--json")
    assert r.code == 0, r.err
    block = r.json()
    assert block["items"], "something fits"
    (real,) = bpe([block["text"]])
    assert real <= budget, (real, block["tokens"], budget)
    assert block["tokens"] <= budget
    # ids are cut to unique 10-character prefixes, not 26-character ULIDs
    assert all(len(line.rsplit("(id ", 1)[1].rstrip(")")) == 10 for line in (i["line"] for i in block["items"]))
