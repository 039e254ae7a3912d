"""Reading a PNG screenshot's pixels with zlib alone: 8-bit RGB or RGBA, not interlaced (what Chromium writes)."""

from __future__ import annotations

import struct
import zlib

SIGNATURE = b"\x89PNG\r\n\x1a\n"
CHANNELS = {2: 3, 6: 4}  # colour type -> bytes per pixel


def _paeth(left: int, up: int, corner: int) -> int:
    guess = left + up - corner
    near_left, near_up, near_corner = abs(guess - left), abs(guess - up), abs(guess - corner)
    if near_left <= near_up and near_left <= near_corner:
        return left
    return up if near_up <= near_corner else corner


class Png:
    """A decoded image: ``width``, ``height`` and ``pixel(x, y)`` as an ``(r, g, b)`` tuple."""

    def __init__(self, data: bytes) -> None:
        if not data.startswith(SIGNATURE):
            raise ValueError("not a PNG")
        at, chunks, head = len(SIGNATURE), [], None
        while at < len(data):
            length, kind = struct.unpack(">I4s", data[at : at + 8])
            body = data[at + 8 : at + 8 + length]
            at += 12 + length
            if kind == b"IHDR":
                head = struct.unpack(">IIBBBBB", body)
            elif kind == b"IDAT":
                chunks.append(body)
        if head is None:
            raise ValueError("a PNG without IHDR")
        self.width, self.height, depth, colour, _, _, interlace = head
        if depth != 8 or colour not in CHANNELS or interlace:
            raise ValueError(f"unsupported PNG: depth {depth}, colour type {colour}, interlace {interlace}")
        self.step = CHANNELS[colour]
        self.rows = self._unfilter(zlib.decompress(b"".join(chunks)))

    def _unfilter(self, raw: bytes) -> list[bytearray]:
        stride, step = self.width * self.step, self.step
        rows: list[bytearray] = []
        previous = bytearray(stride)
        for y in range(self.height):
            start = y * (stride + 1)
            kind, row = raw[start], bytearray(raw[start + 1 : start + 1 + stride])
            for i in range(stride):
                left = row[i - step] if i >= step else 0
                up = previous[i]
                corner = previous[i - step] if i >= step else 0
                if kind == 1:
                    row[i] = (row[i] + left) & 0xFF
                elif kind == 2:
                    row[i] = (row[i] + up) & 0xFF
                elif kind == 3:
                    row[i] = (row[i] + (left + up) // 2) & 0xFF
                elif kind == 4:
                    row[i] = (row[i] + _paeth(left, up, corner)) & 0xFF
            rows.append(row)
            previous = row
        return rows

    def pixel(self, x: int, y: int) -> tuple[int, int, int]:
        at = x * self.step
        red, green, blue = self.rows[y][at : at + 3]
        return (red, green, blue)
