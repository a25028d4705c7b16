# Sourced by bin/demo and bin/test: make .venv with Python >= 3.11 and install the project.
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$ROOT"
PYTHON="${PYTHON:-python3}"
if [ ! -x .venv/bin/python ]; then
    "$PYTHON" -c 'import sys; assert sys.version_info >= (3, 11), "Python 3.11 or newer is needed"'
    "$PYTHON" -m venv .venv
    .venv/bin/python -m pip install -q --upgrade pip
fi
.venv/bin/python -m pip install -q --disable-pip-version-check -e ".[$1]" 2>&1 | grep -v "^WARNING: Location" || true
