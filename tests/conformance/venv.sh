#!/usr/bin/env bash
# The conformance step's Python virtual environment (target/conformance-venv), with schemathesis at
# the version of requirements.txt: made once, a no-op when it is there with that version. run.sh
# calls it; CI makes it beside the first builds, so that the step itself only runs the checks.
set -euo pipefail
cd "$(dirname "$0")/../.."

venv=target/conformance-venv
if [ ! -x "$venv/bin/st" ] || ! "$venv/bin/pip" freeze 2>/dev/null | grep -qxF -f tests/conformance/requirements.txt; then
  python3 -m venv "$venv"
  "$venv/bin/pip" install --quiet --disable-pip-version-check -r tests/conformance/requirements.txt
fi
