#!/usr/bin/env bash
# Apply pooled_validation.patch to a worktree of the commit it was made on and run probe.py there
# (README.md in this folder). Usage: bash run.sh [python]   (from anywhere in the repository)
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
repo=$(git -C "$here" rev-parse --show-toplevel)
py=${1:-$repo/.venv/bin/python}
tree=$(mktemp -d)/tree
git -C "$repo" worktree add -q --detach "$tree" 5fb25cd
trap 'git -C "$repo" worktree remove --force "$tree"' EXIT
git -C "$tree" apply "$here/pooled_validation.patch"
PYTHONDONTWRITEBYTECODE=1 "$py" "$here/probe.py" "$tree"
