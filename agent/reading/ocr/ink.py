"""A page rendered in colour, as the grey Tesseract reads: its luminance a quarter of the way to its
darkest channel.

Luminance makes a light, saturated colour a pale grey: a logo's yellow letter (251, 196, 3) is 186 of
255, which Tesseract's threshold over a page of black print and white paper can drop ("Go gle"). Its
darkest channel is 3. A quarter of the way there (140) it is read as print, while a highlighter's pale
wash over black text (250, 240, 120: 204) stays far lighter than the text on it. Black, grey and white
print are what they were. Further toward the darkest channel (a half), the page's threshold moved
enough to cost a grey label its last letters ("Tota") on the real corpus's one colour logo: a quarter
read both.
"""

from __future__ import annotations

from typing import Any

DARKEST_SHARE = 0.25  # how far from the luminance toward the darkest channel


def grey(image: Any) -> Any:
    """An 8-bit grey PIL image of a PIL image in any mode."""
    from PIL import Image, ImageChops

    if image.mode not in ("RGB", "RGBA", "RGBX"):
        return image.convert("L")
    rgb = image.convert("RGB")
    red, green, blue = rgb.split()
    darkest = ImageChops.darker(ImageChops.darker(red, green), blue)
    return Image.blend(rgb.convert("L"), darkest, DARKEST_SHARE)
