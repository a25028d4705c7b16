# Sourced by bin/demo and bin/test: make .venv with Python >= 3.11 and install the project.
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$ROOT"
PYTHON="${PYTHON:-python3}"

# pip's own failures still fail the script; only its noise about unused local indexes goes.
quiet_pip() { .venv/bin/python -m pip "$@" 2> >(grep -v "^WARNING: Location" >&2); }

if [ ! -x .venv/bin/python ]; then
    "$PYTHON" -c 'import sys; assert sys.version_info >= (3, 11), "Python 3.11 or newer is needed"'
    "$PYTHON" -m venv .venv
    quiet_pip install -q --upgrade pip
fi
quiet_pip install -q --disable-pip-version-check ".[$1]"
