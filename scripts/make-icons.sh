#!/usr/bin/env bash
# Draws Handoff's app icon with ImageMagick and writes the RGBA PNG sizes Tauri uses to
# icons/, with Windows' icon.ico and macOS' icon.icns. The committed icons were made by this script; run it again after changing it.
set -euo pipefail
cd "$(dirname "$0")/.."
out=icons
mkdir -p "$out"
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

# Background: a rounded square with a diagonal indigo-to-sky gradient.
convert -size 1024x1024 xc:white -sparse-color Barycentric '0,0 #4F46E5 1023,1023 #0EA5E9' "$work/gradient.png"
convert -size 1024x1024 xc:black -fill white -draw "roundrectangle 48,48 976,976 210,210" "$work/mask.png"
convert "$work/gradient.png" "$work/mask.png" -alpha off -compose CopyOpacity -composite "$work/background.png"

# Glyph: a speech bubble (the feedback) handing an arrow to a ringed node (the PR).
convert -size 1024x1024 xc:none \
  -stroke white -strokewidth 60 -fill none \
  -draw "roundrectangle 200,210 620,500 80,80" \
  -stroke none -fill white \
  -draw "polygon 290,470 290,620 420,480" \
  -stroke white -strokewidth 60 -fill none \
  -strokewidth 60 -draw "stroke-linejoin round path 'M 440,540 L 440,740 L 620,740'" \
  -stroke none -fill white \
  -draw "polygon 600,660 720,740 600,820" \
  -stroke white -strokewidth 60 -fill none \
  -draw "circle 820,740 820,820" \
  "$work/glyph.png"

convert "$work/background.png" "$work/glyph.png" -compose Over -composite +repage "PNG32:$out/icon.png"
for size in 32 64 128 256; do
  convert "$out/icon.png" -resize ${size}x${size} "PNG32:$out/${size}x${size}.png"
done
convert "$out/icon.png" -resize 256x256 "PNG32:$out/128x128@2x.png"
convert "$out/icon.png" -resize 512x512 "PNG32:$out/icon-512.png"

# Windows' .ico (which tauri-build needs to build there at all) and macOS' .icns, from
# the full-size drawing.
convert "$out/icon.png" -define icon:auto-resize=256,128,64,48,32,16 "$out/icon.ico"
icns_sizes=()
for size in 16 32 64 128 256 512 1024; do
  convert "$out/icon.png" -resize ${size}x${size} "PNG32:$work/icns-$size.png"
  icns_sizes+=("$size=$work/icns-$size.png")
done
python3 scripts/icns.py "$out/icon.icns" "${icns_sizes[@]}"

mv "$out/icon-512.png" "$out/icon.png"
echo "icons written to $out/"
cp "$out/64x64.png" ui/assets/handoff-64.png
