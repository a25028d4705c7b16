"""The script a page is printed in, for a page the English pass cannot read: its OCR languages.

The first page's English pass (``language``) reads a Latin page's words with confidence. A page
in another script (Chinese, say) comes back from it as a few confident words (its digits) among
many illegible ones. Only such a page is asked Tesseract's orientation-and-script detection
(``osd``, a model of its own, at the English pass's low resolution: a twentieth of a second), and
read again in that script's pack with English when the pack is installed. A Latin page never
pays for this: its English pass already reads most of its words.
"""

from __future__ import annotations

import ctypes
import os
from typing import Any

from .tesseract import Engine, Found

# Tesseract's script names, as its detection reports them, and the Debian pack that reads each
# (``tesseract-ocr-chi-sim``). A script whose pack is not installed here is read as before.
PACKS = {"Han": "chi_sim"}
# A first page whose English pass reads fewer than this share of its words legibly (confident,
# with three letters or digits) is asked its script. English, German or Polish pages of the
# corpora read 0.6 to 0.9 so; a Chinese invoice read in English 0.2 (its numbers only).
LEGIBLE_SHARE = 0.4
MIN_WORDS = 10  # fewer words than this tell nothing either way (a blank or tiny page)
SCRIPT_CONFIDENCE = 0.5  # Tesseract's own confidence in the script it names, below which it names none

_osd: dict[int, Any] = {}  # per engine, the API with the detection model loaded


def needs_script(found: list[Found], *, legible: int) -> bool:
    """Whether the English pass's ``found`` words (``legible`` of them legible) show a page not in Latin script."""
    return len(found) >= MIN_WORDS and legible < LEGIBLE_SHARE * len(found)


def languages_for(tesseract: Engine, image: Any, dpi: float) -> str | None:
    """The languages to read a page in that is not in Latin script ("chi_sim+eng"), or None when
    its script is Latin, not told, or read by no pack installed here."""
    script = _script(tesseract, image, dpi)
    pack = PACKS.get(script or "")
    if pack is None or not installed(tesseract, pack):
        return None
    return f"{pack}+eng"


def installed(tesseract: Engine, pack: str) -> bool:
    datapath = (tesseract.lib.TessBaseAPIGetDatapath(tesseract.detector) or b"").decode(errors="replace")
    return os.path.isfile(os.path.join(datapath, f"{pack}.traineddata"))


def _script(tesseract: Engine, image: Any, dpi: float) -> str | None:
    """Tesseract's name for the script of an 8-bit grey PIL image ("Han"), None when it tells none."""
    lib = tesseract.lib
    api = _osd.get(id(tesseract))
    if api is None:
        if not installed(tesseract, "osd"):
            return None
        lib.TessBaseAPIDetectOrientationScript.argtypes = [
            ctypes.c_void_p, ctypes.POINTER(ctypes.c_int), ctypes.POINTER(ctypes.c_float),
            ctypes.POINTER(ctypes.c_char_p), ctypes.POINTER(ctypes.c_float)]
        lib.TessBaseAPIDetectOrientationScript.restype = ctypes.c_int
        api = lib.TessBaseAPICreate()
        if lib.TessBaseAPIInit3(api, None, b"osd") != 0:
            lib.TessBaseAPIDelete(api)
            return None
        lib.TessBaseAPISetVariable(api, b"debug_file", b"/dev/null")
        _osd.clear()  # an engine replaced (another library named) leaves its detector behind
        _osd[id(tesseract)] = api
    pixels = image.tobytes()
    lib.TessBaseAPISetImage(api, pixels, image.width, image.height, 1, image.width)
    lib.TessBaseAPISetSourceResolution(api, round(dpi))
    degrees, orientation_conf = ctypes.c_int(0), ctypes.c_float(0.0)
    name, script_conf = ctypes.c_char_p(), ctypes.c_float(0.0)
    try:
        ok = lib.TessBaseAPIDetectOrientationScript(api, ctypes.byref(degrees), ctypes.byref(orientation_conf),
                                                    ctypes.byref(name), ctypes.byref(script_conf))
    finally:
        lib.TessBaseAPIClear(api)
    if not ok or not name.value or script_conf.value < SCRIPT_CONFIDENCE:
        return None
    return name.value.decode(errors="replace")


# Tesseract reports a Chinese line as many short words (a character or two each) that the layout
# would join with spaces ("武汉 市 车 城 物流 有 限 公司"); the script prints none between them.
# Two such words of one line are one word when the gap between them is less than this share of
# their height (a label spaced out on purpose, "名    称", keeps its gap); boxes may overlap a little.
GLUE_GAP = 1.5


def _cjk(char: str) -> bool:
    return "\u3400" <= char <= "\u9fff" or "\uf900" <= char <= "\ufaff" or "\u3000" <= char <= "\u303f" or \
        "\uff00" <= char <= "\uffef"


def glued(words: list[Found]) -> list[Found]:
    """``words`` with each run of adjacent Chinese words of one line made one word (its box the
    run's, its confidence the lowest); words of other scripts as they are."""
    out: list[Found] = []
    for word in words:
        last = out[-1] if out else None
        if (last is not None and last.line_top == word.line_top and _cjk(last.text[-1]) and _cjk(word.text[0])
                and -last.width < word.left - (last.left + last.width) < GLUE_GAP * max(last.height, word.height, 1)):
            top = min(last.top, word.top)
            out[-1] = Found(last.text + word.text, last.left, top,
                             max(word.left + word.width, last.left + last.width) - last.left,
                             max(last.top + last.height, word.top + word.height) - top, min(last.conf, word.conf),
                             last.line_top, last.line_height)
        else:
            out.append(word)
    return out


def reads_cjk(languages: str) -> bool:
    """Whether ``languages`` ("chi_sim+eng") read a script written without spaces between words."""
    return any(lang.startswith(("chi_", "jpn")) for lang in languages.split("+"))
