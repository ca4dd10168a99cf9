"""Draw the confirm page's app icons into web/ (Pillow): a white check mark on the page's green.

    .venv/bin/python scripts/make_icons.py

icon-192.png and icon-512.png (purpose "any": a rounded square), icon-maskable-512.png (purpose
"maskable": full bleed, the mark inside the central 80 % circle a launcher may crop to) and
icon-180.png (apple-touch-icon: full bleed, iOS rounds the corners). Drawn at 4x and scaled down,
so the edges are smooth; the output is the same on every run. The PNGs are committed: run this
again only to change the design, and check web/manifest.webmanifest still names every file.
"""

from __future__ import annotations

from pathlib import Path

from PIL import Image, ImageDraw

WEB = Path(__file__).resolve().parents[1] / "web"
GREEN = (27, 94, 32, 255)  # --accent of app.css (light)
WHITE = (255, 255, 255, 255)
SCALE = 4


def icon(size: int, *, full_bleed: bool, mark: float) -> Image.Image:
    """A ``size`` px icon; ``mark`` is the check mark's width as a fraction of the icon."""
    big = size * SCALE
    image = Image.new("RGBA", (big, big), (0, 0, 0, 0))
    draw = ImageDraw.Draw(image)
    if full_bleed:
        draw.rectangle((0, 0, big, big), fill=GREEN)
    else:
        draw.rounded_rectangle((0, 0, big - 1, big - 1), radius=big * 0.22, fill=GREEN)
    # The check mark: two strokes meeting at the bottom, centred on the icon's optical centre.
    width = big * mark
    left, top = (big - width) / 2, big / 2 - width * 0.22
    points = [(left, top + width * 0.28), (left + width * 0.36, top + width * 0.62), (left + width, top)]
    stroke = round(width * 0.16)
    draw.line(points, fill=WHITE, width=stroke, joint="curve")
    for x, y in (points[0], points[-1]):
        draw.ellipse((x - stroke / 2, y - stroke / 2, x + stroke / 2, y + stroke / 2), fill=WHITE)
    return image.resize((size, size), Image.LANCZOS)


def main() -> None:
    icons = {
        "icon-192.png": icon(192, full_bleed=False, mark=0.56),
        "icon-512.png": icon(512, full_bleed=False, mark=0.56),
        "icon-maskable-512.png": icon(512, full_bleed=True, mark=0.44),
        "icon-180.png": icon(180, full_bleed=True, mark=0.52).convert("RGB"),
    }
    for name, image in icons.items():
        image.save(WEB / name, optimize=True)
        print(f"web/{name}: {image.size[0]}x{image.size[1]}, {(WEB / name).stat().st_size:,} B")


if __name__ == "__main__":
    main()
