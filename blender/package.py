"""Packages the weft Blender add-on as an installable zip (Edit ▸ Preferences ▸ Add-ons ▸
Install...): python3 blender/package.py [--out ZIP]  (default: blender/dist/weft_blender.zip)."""

import argparse
import zipfile
from pathlib import Path

HERE = Path(__file__).resolve().parent
ADDON = HERE / "weft_blender"


def package(out: Path) -> Path:
    out.parent.mkdir(parents=True, exist_ok=True)
    files = sorted(p for p in ADDON.rglob("*.py") if "__pycache__" not in p.parts)
    with zipfile.ZipFile(out, "w", zipfile.ZIP_DEFLATED) as z:
        for f in files:
            z.write(f, Path("weft_blender") / f.relative_to(ADDON))
    return out


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--out", type=Path, default=HERE / "dist" / "weft_blender.zip")
    print(package(parser.parse_args().out))
