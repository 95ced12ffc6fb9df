#!/usr/bin/env bash
# Builds the Python bindings into a virtual environment under target/ (default target/venv):
# creates it with Debian's python3 (package python3-venv), installs maturin and pytest from PyPI,
# then `pip install ./crates/python` as a user would. Idempotent; re-run after changing the
# bindings. Usage: scripts/python-venv.sh [VENV]
set -euo pipefail
cd "$(dirname "$0")/.."
venv=${1:-target/venv}
case "$venv" in /*) ;; *) venv="$PWD/$venv" ;; esac

# Debian's interpreter, where there is one: the one install-deps.sh gives venv and headers to.
py=${PYTHON:-python3}
[ -z "${PYTHON:-}" ] && [ -x /usr/bin/python3 ] && py=/usr/bin/python3

if [ ! -x "$venv/bin/python" ]; then
  "$py" -m venv "$venv"
fi
pip=("$venv/bin/python" -m pip --quiet --disable-pip-version-check)
if ! "$venv/bin/python" -c 'import maturin, pytest' 2>/dev/null; then
  "${pip[@]}" install 'maturin>=1.9.4,<2' 'pytest>=7'
fi
# The venv's maturin builds it (no isolated build environment to download again), into the
# workspace's target/ like every other crate.
# SEACCESS_PROFILE (`make test` sets ci) picks the Cargo profile, so that the tests reuse what
# `cargo test` built rather than building everything again under release.
profile=${SEACCESS_PROFILE:-release}
PATH="$venv/bin:$PATH" MATURIN_PEP517_ARGS="--profile $profile" "${pip[@]}" install --no-build-isolation ./crates/python
"$venv/bin/python" -c 'import seaccess; print("python: seaccess installed in '"$venv"'")'
