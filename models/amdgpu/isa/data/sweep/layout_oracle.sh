#!/bin/sh
# Builds addrlib_layout.cpp against the addrlib of a ROCR-Runtime source tree and writes
# the image layout oracle, tests/data/image_layout.txt (texel addresses of gfx9 layouts as
# ROCr's image code computes them).
# Usage: sh layout_oracle.sh ROCR_RUNTIME_SOURCE_DIR   (needs g++)
set -eu
here=$(cd "$(dirname "$0")" && pwd)
rocr=${1:?usage: layout_oracle.sh ROCR_RUNTIME_SOURCE_DIR}
addr="$rocr/runtime/hsa-runtime/image/addrlib"
[ -d "$addr" ] || addr="$rocr/src/image/addrlib"
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
g++ -O1 -w -std=c++17 -DNDEBUG -DLITTLEENDIAN_CPU=1 \
    -I"$addr/inc" -I"$addr/src" -I"$addr/src/core" -I"$addr/src/chip/r800" -I"$addr/src/chip/gfx9" \
    -I"$addr/src/chip/gfx10" -I"$addr/src/chip/gfx11" -I"$addr/src/chip/gfx12" \
    "$here/addrlib_layout.cpp" "$addr"/src/addrinterface.cpp "$addr"/src/core/*.cpp \
    "$addr"/src/gfx9/*.cpp "$addr"/src/gfx10/*.cpp "$addr"/src/gfx11/*.cpp "$addr"/src/gfx12/*.cpp \
    "$addr"/src/r800/*.cpp -o "$work/addrlib_layout"
"$work/addrlib_layout" > "$here/../../tests/data/image_layout.txt"
wc -l "$here/../../tests/data/image_layout.txt"
