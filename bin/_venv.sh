# Sourced by bin/demo and bin/test: make .venv with Python >= 3.11 and install the project.
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$ROOT"
PYTHON="${PYTHON:-python3}"
# bin/check and bin/test may start side by side (CI runs them so): one sets .venv up at a time.
exec {venv_lock}<"${BASH_SOURCE[0]}"
flock "$venv_lock"

# pip's own failures still fail the script; only its noise about unused local indexes goes.
quiet_pip() { .venv/bin/python -m pip "$@" 2> >(grep -v "^WARNING: Location" >&2); }

# One line on standard error per slow step, said before it starts; a warm run, which installs
# nothing, says nothing.
say() { echo "bin/$(basename "$0"): $*" >&2; }

if [ ! -x .venv/bin/python ]; then
    "$PYTHON" -c 'import sys; assert sys.version_info >= (3, 11), "Python 3.11 or newer is needed"'
    say "creating .venv (first run only)…"
    "$PYTHON" -m venv .venv
    quiet_pip install -q --upgrade pip
fi
# pip runs every time (it is quick when everything is there); the line is said only when it
# has work to do: a new .venv, or a pyproject.toml changed since the last install of "$1".
STAMP=".venv/.installed-$1"
WANTED="$(cksum < pyproject.toml)"
if [ "$(cat "$STAMP" 2>/dev/null)" != "$WANTED" ]; then
    say "installing Python packages (about a minute the first time)…"
fi
# The dependencies of the project and of the extra "$1" (an extra naming another, as test names
# bench, brings its own), never the project itself: the apps are imported from this work tree, not
# from a copy in .venv that an edit would not reach (tests/standalone runs `jobs` on a path
# without the other apps, which an installed copy would put back).
.venv/bin/python - "$1" > .venv/requirements-"$1".txt <<'PY'
import sys
import tomllib

with open("pyproject.toml", "rb") as file:
    project = tomllib.load(file)["project"]


def needs(extra):
    for requirement in project["optional-dependencies"][extra]:
        if requirement.startswith(project["name"] + "["):
            yield from needs(requirement.split("[", 1)[1].rstrip("]"))
        else:
            yield requirement


print("\n".join([*project["dependencies"], *needs(sys.argv[1])]))
PY
quiet_pip install -q --disable-pip-version-check -r .venv/requirements-"$1".txt
echo "$WANTED" > "$STAMP"

# OCR for scans and photos: Debian's Tesseract, its seven language packs and Simplified Chinese, installed when
# missing and this runs as root with apt-get; otherwise one line says what that means.
OCR_PACKAGES="tesseract-ocr tesseract-ocr-eng tesseract-ocr-deu tesseract-ocr-fra tesseract-ocr-nld tesseract-ocr-spa tesseract-ocr-ita tesseract-ocr-pol tesseract-ocr-chi-sim"
has_langs() {
    command -v tesseract >/dev/null || return 1
    local langs
    langs="$(tesseract --list-langs 2>/dev/null)"
    for lang in "$@"; do grep -qx "$lang" <<<"$langs" || return 1; done
}
ocr_installed() { has_langs eng deu fra nld spa ita pol; }
if ! has_langs eng deu fra nld spa ita pol chi_sim; then
    if [ "$(id -u)" = "0" ] && command -v apt-get >/dev/null \
        && say "installing Tesseract OCR with apt-get (first run only, about a minute)…" \
        && { apt-get update -qq >/dev/null 2>&1 || true; } \
        && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq $OCR_PACKAGES >/dev/null 2>&1 && ocr_installed; then
        :
    elif ocr_installed; then
        say "Tesseract has no Simplified Chinese (as root: apt-get install tesseract-ocr-chi-sim); Chinese pages are read as Latin script"
    else
        say "OCR is not installed (as root: apt-get install $OCR_PACKAGES); scans and photos will be reviewed as unreadable"
    fi
fi
exec {venv_lock}<&-
