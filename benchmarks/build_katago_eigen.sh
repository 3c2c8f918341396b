#!/usr/bin/env bash
# Build KataGo's CPU (Eigen) binary, the oracle the compare_katago*.py scripts run beside kata.
#
#   bash benchmarks/build_katago_eigen.sh KATAGO_CHECKOUT [EIGEN_INCLUDE_DIR]
#
# KATAGO_CHECKOUT: a clone of lightvector/KataGo (any 1.17 tag for the comparisons in this folder).
# EIGEN_INCLUDE_DIR: a folder holding Eigen's 'Eigen' and 'unsupported' header folders. Without it,
# the system's Eigen3 is used if cmake finds one; otherwise the headers are taken from the
# 'cmeel-eigen' wheel (pip download cmeel-eigen), which ships them under cmeel.prefix/include/eigen3.
# Needs cmake, a C++17 compiler and zlib headers; libzip is optional (only self-play needs it).
# The binary ends up at KATAGO_CHECKOUT/cpp/build/katago; export KATAGO_BINARY=<that path>.
set -euo pipefail
checkout=${1:?usage: build_katago_eigen.sh KATAGO_CHECKOUT [EIGEN_INCLUDE_DIR]}
eigen=${2:-}
[ -f "$checkout/cpp/CMakeLists.txt" ] || { echo "error: $checkout is not a KataGo checkout (no cpp/CMakeLists.txt)" >&2; exit 1; }
if [ -z "$eigen" ] && [ ! -d /usr/include/eigen3 ]; then
  work=$(mktemp -d)
  python3 -m pip download --no-deps -q -d "$work" cmeel-eigen
  (cd "$work" && python3 -m zipfile -e cmeel_eigen-*.whl .)
  eigen="$work/cmeel.prefix/include/eigen3"
fi
mkdir -p "$checkout/cpp/build"
cd "$checkout/cpp/build"
args=(-DUSE_BACKEND=EIGEN -DCMAKE_BUILD_TYPE=Release -DNO_GIT_REVISION=1)
[ -n "$eigen" ] && args+=("-DEIGEN3_INCLUDE_DIRS=$eigen")
cmake .. "${args[@]}"
make -j"$(nproc)"
echo "built $(pwd)/katago"
