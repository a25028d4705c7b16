"""A page not in Latin script is read again in its script's pack; a Latin page never pays for asking."""

from __future__ import annotations

import io

import pytest

from agent.reading import ocr
from agent.reading.ocr import script

from .test_ocr import Answering, found

# The English pass reads the first page a band at a time until a language tells; where none does,
# the bands after the first read nothing here.
QUIET_BANDS = [[] for _ in range(ocr.DETECT_BANDS - 1)]


def scan() -> bytes:
    from PIL import Image

    out = io.BytesIO()
    Image.new("L", (1240, 1754), 255).save(out, "PNG", dpi=(150, 150))  # an A4 scan at 150 dpi
    return out.getvalue()


def illegible(words: int, legible: int) -> list:
    """An English pass over a page in another script: its digits read, the rest specks of low confidence."""
    read = [ocr.Found("0571-5550188", 0, 0, 10, 10, 92.0, 0, 10) for _ in range(legible)]
    return read + [ocr.Found("Rit", 0, 0, 10, 10, 31.0, 0, 10) for _ in range(words - legible)]


def test_a_page_the_english_pass_cannot_read_is_read_in_the_pack_of_the_script_it_is_printed_in(monkeypatch):
    tesseract = Answering(illegible(60, 8), *QUIET_BANDS, illegible(60, 9), [])
    monkeypatch.setattr(ocr, "_engine", tesseract)
    monkeypatch.setattr(script, "_script", lambda tesseract, image, dpi: "Han")
    monkeypatch.setattr(script, "installed", lambda tesseract, pack: True)
    monkeypatch.setattr(ocr, "_turn", lambda tesseract, small, dpi, found: (0, found))
    _layout, reading = ocr.read_image(scan())
    assert tesseract.asked[-1][1] == "chi_sim+eng"
    assert reading.languages == "chi_sim+eng"


def test_a_script_whose_pack_is_not_installed_is_read_as_before(monkeypatch):
    tesseract = Answering(illegible(60, 8), *QUIET_BANDS, illegible(60, 9), [])
    monkeypatch.setattr(ocr, "_engine", tesseract)
    monkeypatch.setattr(script, "_script", lambda tesseract, image, dpi: "Cyrillic")
    monkeypatch.setattr(ocr, "_turn", lambda tesseract, small, dpi, found: (0, found))
    _layout, reading = ocr.read_image(scan())
    assert reading.languages == "eng"  # as any page of specks, not words (ocr.ILLEGIBLE_SHARE)


def test_a_latin_page_never_asks_its_script(monkeypatch):
    def asked(*args):
        raise AssertionError("a Latin page paid for the script detection")

    # no language stands out among its words, yet they are legible: English, read in all seven
    tesseract = Answering(found("Acme Ltd 12 High Street London"), *QUIET_BANDS,
                          found("Thanks Kind regards Orders shipped"), [])
    monkeypatch.setattr(ocr, "_engine", tesseract)
    monkeypatch.setattr(script, "_script", asked)
    monkeypatch.setattr(ocr, "_turn", lambda tesseract, small, dpi, found: (0, found))  # a few words: not turned
    _layout, reading = ocr.read_image(scan())
    assert reading.languages == ocr.LANGUAGES
    assert not script.needs_script(found("Acme Ltd 12 High Street London Thanks Kind regards"), legible=10)


def word(text: str, left: int, width: int = 40, top: int = 100) -> ocr.Found:
    return ocr.Found(text, left, top, width, 40, 90.0, top, 50)


def test_the_characters_of_a_chinese_name_are_one_word_and_a_spaced_out_label_keeps_its_gap():
    words = [word("名", 100), word("称", 300), word(":", 345, 8), word("上海", 360, 80), word("蓝", 442),
             word("湾纸业", 481, 120), word("有限公司", 600, 160), word("021-5550123", 900, 200),
             word("Acme", 100, 80, top=300), word("Ltd", 190, 60, top=300)]
    assert [w.text for w in script.glued(words)] == ["名", "称", ":", "上海蓝湾纸业有限公司", "021-5550123", "Acme",
                                                      "Ltd"]
    assert script.reads_cjk("chi_sim+eng") and not script.reads_cjk(ocr.LANGUAGES)


def test_the_script_detection_on_a_blank_page_tells_no_script(needs_ocr):
    from PIL import Image

    assert script._script(ocr.engine(), Image.new("L", (827, 1169), 255), 100) is None


@pytest.mark.parametrize("words", [[], illegible(5, 0)])
def test_a_page_of_a_few_words_tells_nothing_of_its_script(words):
    assert not script.needs_script(words, legible=0)
