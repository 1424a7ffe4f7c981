#!/bin/bash
# A memory file of MB megabytes through the pre-commit hook, `git commit`, `git pull` (post-merge) and
# `git memex pull`: wall time and peak RSS of each (docs/git.md: an oversized blob is refused from its
# size, never read). Usage, from the repository root with the venv on PATH: bench/big_file.sh 20
set -u
MB=${1:-20}
D=$(mktemp -d)
export GIT_MEMEX_HOME=$D/home HOME=$D
git config --global user.email a@b; git config --global user.name a; git config --global init.defaultBranch main
git init -q $D/origin.git --bare
git clone -q $D/origin.git $D/a 2>/dev/null; cd $D/a
git commit -q --allow-empty -m init; git push -q origin main 2>/dev/null
git-memex init --yes >/dev/null 2>&1; git add -A; git commit -q -m memex; git push -q origin main
git clone -q $D/origin.git $D/b; (cd $D/b && git-memex init --yes >/dev/null 2>&1)
id=01JABCDEFGHJKMNPQRSTVWXYZ0
python3 - $MB .ai/open-memex/$id.md <<PY
import sys
mb=int(sys.argv[1]); p=sys.argv[2]
head="---\nid: 01JABCDEFGHJKMNPQRSTVWXYZ0\nscope: project\nreview_state: proposed\n---\n"
open(p,"w").write(head+("lorem ipsum dolor sit amet "*40+"\n")*(mb*1024*1024//1081))
PY
git add -A
echo "== pre-commit hook alone (${MB} MB)"; /usr/bin/time -f "%e s %M KB" git-memex hook pre-commit; echo "rc=$?" || true
echo "== timeout 60 git commit"; /usr/bin/time -f "%e s %M KB" timeout 60 git commit -q -m big 2>&1 | tail -3 || true
git commit -q --no-verify -m big 2>/dev/null || true; git push -q origin main
cd $D/b
echo "== git pull --ff-only (post-merge)"; /usr/bin/time -f "%e s %M KB" git pull -q --ff-only 2>&1 | tail -3
git reset -q --hard HEAD~1
echo "== git memex pull"; /usr/bin/time -f "%e s %M KB" git-memex pull 2>&1 | tail -3
rm -rf $D
