#!/usr/bin/env bash
# The hash of every file of this checkout that the build in BUILD_DIR was made from: the
# sources and headers its compiler recorded (`ninja -t deps`, the paths under the checkout
# the build was configured from) and the CMake files. scripts/device-prebuild.sh records
# it; scripts/device-session.sh compares it on the GPU machine, so a carried build is used
# only while the files it was built from are unchanged, whatever else has changed.
# Usage: scripts/source-hash.sh BUILD_DIR
set -euo pipefail
cd "$(dirname "$0")/.."
b=${1:?build directory}
src=$(sed -n 's/^# Source directory: //p' "$b/CTestTestfile.cmake")
{
  ninja -C "$b" -t deps | sed -n "s|^    $src/||p"
  find CMakeLists.txt CMakePresets.json cmake calibrate kernels tests sim/io \( -name CMakeLists.txt -o -name '*.cmake' \
    -o -name CMakePresets.json \) -type f
} | LC_ALL=C sort -u | xargs sha256sum | sha256sum | cut -d' ' -f1
