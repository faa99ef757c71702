"""QR code images of short URLs: options, their validation, rendering, caching.

`size` is the image's width and height in pixels, exactly, with the quiet zone
(`margin` modules, 4 by default) inside it:

- SVG: segno's path in a viewBox measured in modules, shown at `size` × `size`
  pixels, so the symbol and its quiet zone fill the image exactly.
- PNG: every module is a whole number of pixels (crisp edges scan best), the
  largest that fits; the pixels left over widen the quiet zone evenly. The PNG
  is written here (zlib + struct, a 1-bit palette image): segno's own PNG
  writer only makes images whose side is a multiple of the module size, and
  Pillow would be a runtime dependency for twenty lines of code.

Rendering is pure and deterministic, so an image is cached by (short URL,
options) and its ETag is a hash of its bytes.
"""

from __future__ import annotations

import functools
import hashlib
import io
import re
import struct
import zlib
from typing import Literal

import msgspec
import segno

from shortlink.errors import ValidationError

Format = Literal["svg", "png"]
ErrorCorrection = Literal["L", "M", "Q", "H"]

FORMATS: tuple[Format, ...] = ("svg", "png")
ERROR_CORRECTIONS: tuple[ErrorCorrection, ...] = ("L", "M", "Q", "H")
MIN_SIZE, MAX_SIZE, DEFAULT_SIZE = 128, 2048, 512
MIN_MARGIN, MAX_MARGIN, DEFAULT_MARGIN = 0, 16, 4
# "#" is optional: an unencoded "#" in a query string starts the fragment, so
# "color=1a2b3c" is the form that survives being typed into a browser.
HEX_COLOR_PATTERN = r"^#?([0-9a-fA-F]{3}|[0-9a-fA-F]{6})$"
# Phone cameras need dark modules on a clearly lighter background; below this
# contrast (WCAG ratio) a code is unreliable on screens and in print.
MIN_CONTRAST = 3.0
CACHE_ENTRIES = 256

MEDIA_TYPES: dict[str, str] = {"svg": "image/svg+xml", "png": "image/png"}


class QrOptions(msgspec.Struct, frozen=True):
    """Validated, normalised options: colours are lowercase #rrggbb."""

    format: Format = "svg"
    size: int = DEFAULT_SIZE
    color: str = "#000000"
    bg_color: str = "#ffffff"
    margin: int = DEFAULT_MARGIN
    error_correction: ErrorCorrection = "M"


class QrImage(msgspec.Struct, frozen=True):
    content: bytes
    media_type: str
    etag: str  # strong, quoted: '"<hash>"'


def normalise_color(field: str, value: str) -> str:
    if not re.fullmatch(HEX_COLOR_PATTERN, value):
        raise ValidationError(field, "must be a hex colour: #rgb or #rrggbb, the # optional")
    digits = value.removeprefix("#").lower()
    if len(digits) == 3:
        digits = "".join(digit * 2 for digit in digits)
    return f"#{digits}"


def _luminance(color: str) -> float:
    """WCAG relative luminance of a #rrggbb colour."""

    def linear(channel: int) -> float:
        c = channel / 255
        return c / 12.92 if c <= 0.03928 else ((c + 0.055) / 1.055) ** 2.4

    r, g, b = (linear(int(color[i : i + 2], 16)) for i in (1, 3, 5))
    return 0.2126 * r + 0.7152 * g + 0.0722 * b


def _whole_number(field: str, value: int | str, low: int, high: int, unit: str) -> int:
    """An int, or a query value of ASCII digits only: "512.0", "1e3", "+512" and " 512" are not sizes."""
    text = str(value)
    if not re.fullmatch(r"[0-9]{1,6}", text) or not low <= int(text) <= high:
        raise ValidationError(field, f"must be an integer from {low} to {high} ({unit})")
    return int(text)


def make_options(
    *,
    format: str = "svg",
    size: int | str = DEFAULT_SIZE,
    color: str = "#000000",
    bg_color: str = "#ffffff",
    margin: int | str = DEFAULT_MARGIN,
    error_correction: str = "M",
) -> QrOptions:
    """Check every option; a bad one raises ValidationError naming the API parameter."""
    if format not in FORMATS:
        raise ValidationError("format", "must be svg or png")
    size = _whole_number("size", size, MIN_SIZE, MAX_SIZE, "pixels")
    margin = _whole_number("margin", margin, MIN_MARGIN, MAX_MARGIN, "modules")
    if error_correction not in ERROR_CORRECTIONS:
        raise ValidationError("errorCorrection", "must be one of L, M, Q, H")
    dark, light = normalise_color("color", color), normalise_color("bgColor", bg_color)
    lighter, darker = _luminance(light), _luminance(dark)
    if (lighter + 0.05) / (darker + 0.05) < MIN_CONTRAST:
        raise ValidationError(
            "color",
            f"must be darker than bgColor, with a contrast ratio of at "
            f"least {MIN_CONTRAST:g}:1, or phones cannot scan the code",
        )
    return QrOptions(
        format=format,
        size=size,
        color=dark,
        bg_color=light,
        margin=margin,
        error_correction=error_correction,
    )


@functools.lru_cache(maxsize=CACHE_ENTRIES)
def render(short_url: str, options: QrOptions) -> QrImage:
    """The image for these options, from the cache when it was rendered before."""
    # boost_error: segno raises the level when that fits in the same symbol, so
    # errorCorrection is a minimum and never makes the code denser.
    code = segno.make_qr(short_url, error=options.error_correction)
    modules = int(code.symbol_size(scale=1, border=options.margin)[0])
    if modules > options.size:
        raise ValidationError("size", f"must be at least {modules} pixels for this link with margin {options.margin}")
    content = _svg(code, options) if options.format == "svg" else _png(code, modules, options)
    etag = '"' + hashlib.sha256(content).hexdigest()[:32] + '"'
    return QrImage(content=content, media_type=MEDIA_TYPES[options.format], etag=etag)


def _svg(code: segno.QRCode, options: QrOptions) -> bytes:
    out = io.BytesIO()
    # omitsize makes segno write a viewBox in modules instead of width/height.
    code.save(
        out,
        kind="svg",
        scale=1,
        border=options.margin,
        dark=options.color,
        light=options.bg_color,
        omitsize=True,
        xmldecl=False,
    )
    size = options.size
    return out.getvalue().replace(
        b"<svg ", f'<svg width="{size}" height="{size}" shape-rendering="crispEdges" '.encode(), 1
    )


def _png(code: segno.QRCode, modules: int, options: QrOptions) -> bytes:
    size = options.size
    scale = size // modules
    before = (size - modules * scale) // 2
    after = size - modules * scale - before
    rows = []
    for module_row in code.matrix_iter(scale=1, border=options.margin):
        bits = "".join("1" if dark else "0" for dark in module_row for _ in range(scale))
        bits = "0" * before + bits + "0" * after
        # Filter byte 0, then the row packed 8 pixels a byte (palette index 1 = dark).
        packed = b"\x00" + int(bits + "0" * (-size % 8), 2).to_bytes((size + 7) // 8, "big")
        rows.extend([packed] * scale)
    blank = b"\x00" + bytes((size + 7) // 8)
    raw = blank * before + b"".join(rows) + blank * after
    palette = bytes.fromhex(options.bg_color[1:] + options.color[1:])
    return b"".join(
        [
            b"\x89PNG\r\n\x1a\n",
            _chunk(b"IHDR", struct.pack(">IIBBBBB", size, size, 1, 3, 0, 0, 0)),  # 1-bit palette
            _chunk(b"PLTE", palette),
            _chunk(b"IDAT", zlib.compress(raw, 9)),
            _chunk(b"IEND", b""),
        ]
    )


def _chunk(kind: bytes, data: bytes) -> bytes:
    return struct.pack(">I", len(data)) + kind + data + struct.pack(">I", zlib.crc32(kind + data))
