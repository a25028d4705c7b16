"""Tesseract in this process, through its C API: the words of a page with their boxes and confidence."""

from __future__ import annotations

import atexit
import contextlib
import ctypes
import ctypes.util
import os
import time
from dataclasses import dataclass
from typing import Any

# Debian's seven packs (English first); Tesseract tries the next model only for words the
# first reads badly. A document is read in its own language and English (``language``).
LANGUAGES = "eng+deu+fra+nld+spa+ita+pol"

# Tesseract's page segmentation: 4 reads the page as one column of lines of any size. The lines
# are rebuilt from the words' positions anyway (as a text layer's are); 3 (find blocks and
# columns) dropped a receipt's right-hand amounts and reads no better on invoices (ocrbench).
PAGE_SEGMENTATION = 4

# Models kept loaded per process, besides the English one: loading "deu+eng" takes 0.15 s of
# CPU and all seven 0.5 s, which a worker reviewing documents of a few languages in turn paid
# at every change of language. Three sets (all seven among them) take about 130 MB more than one.
MAX_READERS = 3

NOT_INSTALLED = "OCR is not installed on this server (Debian's tesseract-ocr), so a scan cannot be read"


# Leptonica, which Tesseract holds its images in, prints its own errors on stderr ("Error in
# boxClipToRectangle: box outside rectangle" for a box at the edge of a small image): nothing a
# review acts on, and a worker's stderr is its log. Its levels run from 1 (all) to 6 (none).
LEPTONICA = "lept"
LEPTONICA_SILENT = 6


def _quiet_leptonica() -> None:
    path = ctypes.util.find_library(LEPTONICA)
    if path:
        with contextlib.suppress(OSError, AttributeError):  # another build of it: its messages stay
            ctypes.CDLL(path).setMsgSeverity(LEPTONICA_SILENT)


class Unavailable(Exception):
    """Tesseract or its language packs are not installed here."""


@dataclass(frozen=True)
class Found:
    """A word as Tesseract reports it, in pixels, with its line's band."""

    text: str
    left: int
    top: int
    width: int
    height: int
    conf: float
    line_top: int
    line_height: int


class Engine:
    """Tesseract in this process: one API that reads pages in English to tell the document's
    language, and up to MAX_READERS that read them in a document's languages (the least
    recently used unloaded first)."""

    def __init__(self, library: str) -> None:
        os.environ.setdefault("OMP_THREAD_LIMIT", "1")  # one core per job: threads cost more CPU than they save
        path = ctypes.util.find_library(library) if "/" not in library and ".so" not in library else library
        if not path:
            raise Unavailable(NOT_INSTALLED)
        try:
            lib = ctypes.CDLL(path)
        except OSError:
            raise Unavailable(NOT_INSTALLED) from None
        lib.TessBaseAPICreate.restype = ctypes.c_void_p
        lib.TessBaseAPIDelete.argtypes = [ctypes.c_void_p]
        lib.TessBaseAPIInit3.argtypes = [ctypes.c_void_p, ctypes.c_char_p, ctypes.c_char_p]
        lib.TessBaseAPIGetDatapath.argtypes = [ctypes.c_void_p]
        lib.TessBaseAPIGetDatapath.restype = ctypes.c_char_p
        lib.TessBaseAPISetVariable.argtypes = [ctypes.c_void_p, ctypes.c_char_p, ctypes.c_char_p]
        lib.TessBaseAPISetPageSegMode.argtypes = [ctypes.c_void_p, ctypes.c_int]
        lib.TessBaseAPISetImage.argtypes = [ctypes.c_void_p, ctypes.c_void_p, ctypes.c_int, ctypes.c_int,
                                            ctypes.c_int, ctypes.c_int]
        lib.TessBaseAPISetSourceResolution.argtypes = [ctypes.c_void_p, ctypes.c_int]
        lib.TessBaseAPIRecognize.argtypes = [ctypes.c_void_p, ctypes.c_void_p]
        lib.TessBaseAPIGetTsvText.argtypes = [ctypes.c_void_p, ctypes.c_int]
        lib.TessBaseAPIGetTsvText.restype = ctypes.c_void_p  # freed with TessDeleteText
        lib.TessDeleteText.argtypes = [ctypes.c_void_p]
        lib.TessBaseAPIClear.argtypes = [ctypes.c_void_p]
        _quiet_leptonica()
        self.lib = lib
        self.library = library
        self.detector = self._api("eng")
        datapath = (lib.TessBaseAPIGetDatapath(self.detector) or b"").decode(errors="replace")
        missing = [lang for lang in LANGUAGES.split("+") if not os.path.isfile(os.path.join(datapath,
                                                                                           f"{lang}.traineddata"))]
        if missing:
            raise Unavailable(f"OCR is installed without its language packs ({', '.join(missing)}), so a scan "
                              "cannot be read")
        self.readers: dict[str, Any] = {}  # by languages, the most recently used last
        self.loading_seconds = 0.0  # CPU spent loading language sets on a change of language (ocrbench)
        atexit.register(self.close)  # freed before the library's own teardown, which warns of leaks

    def close(self) -> None:
        for api in (*self.readers.values(), self.detector):
            if api is not None:
                self.lib.TessBaseAPIDelete(api)
        self.detector = None
        self.readers = {}

    def _api(self, languages: str) -> Any:
        """A TessBaseAPI with ``languages`` loaded, or ``Unavailable``."""
        api = self.lib.TessBaseAPICreate()
        if self.lib.TessBaseAPIInit3(api, None, languages.encode()) != 0:
            self.lib.TessBaseAPIDelete(api)
            raise Unavailable(f"OCR is installed without its language packs ({languages}), so a scan cannot be read")
        self.lib.TessBaseAPISetPageSegMode(api, PAGE_SEGMENTATION)
        # Tesseract's own messages ("Detected 52 diacritics") go nowhere, never to the worker's log.
        self.lib.TessBaseAPISetVariable(api, b"debug_file", b"/dev/null")
        return api

    def read(self, image: Any, dpi: float, languages: str) -> list[Found]:
        """The words of an 8-bit grey PIL image read in ``languages`` ("spa+eng")."""
        if languages == "eng":
            return self._words(self.detector, image, dpi)
        reader = self.readers.pop(languages, None)
        if reader is None:
            while len(self.readers) >= MAX_READERS:  # the least recently used goes
                self.lib.TessBaseAPIDelete(self.readers.pop(next(iter(self.readers))))
            began = time.process_time()
            reader = self._api(languages)
            self.loading_seconds += time.process_time() - began
        self.readers[languages] = reader
        return self._words(reader, image, dpi)

    def _words(self, api: Any, image: Any, dpi: float) -> list[Found]:
        """Text, left, top, width, height (pixels), confidence, and the top and height of its line."""
        lib = self.lib
        pixels = image.tobytes()
        lib.TessBaseAPISetImage(api, pixels, image.width, image.height, 1, image.width)
        lib.TessBaseAPISetSourceResolution(api, round(dpi))
        try:
            if lib.TessBaseAPIRecognize(api, None) != 0:
                return []
            raw = lib.TessBaseAPIGetTsvText(api, 0)
            try:
                tsv = ctypes.string_at(raw).decode("utf-8", errors="replace") if raw else ""
            finally:
                if raw:
                    lib.TessDeleteText(raw)
        finally:
            lib.TessBaseAPIClear(api)
        found = []
        line = (0, 0)
        for row in tsv.splitlines():
            cells = row.split("\t")
            if len(cells) < 12 or cells[0] not in ("4", "5"):
                continue
            try:
                left, top, w, h = (int(c) for c in cells[6:10])
                conf = float(cells[10])
            except ValueError:
                continue
            if cells[0] == "4":
                line = (top, h)
            elif cells[11].strip():
                found.append(Found(cells[11].strip(), left, top, w, h, max(conf, 0.0), *line))
        return found
