#!/usr/bin/env bash
# Gather what build_katago_cuda.sh needs on an offline GPU machine into one folder to carry there.
#
#   bash benchmarks/prepare_katago_cuda.sh KATAGO_SOURCE OUT_DIR
#
# KATAGO_SOURCE: a KataGo 1.17.2 clone (a work tree with cpp/) or a bare git directory of one (its HEAD
# is taken). OUT_DIR gets katago/cpp/ (the sources the build needs: the test data, models and recorded
# outputs under cpp/tests/{data,models,results} are left out, about 20 MB) and zlib-include/ (zlib.h,
# zconf.h from /usr/include, or from apt's zlib1g-dev package when this machine lacks them). Then on the
# GPU machine:  bash benchmarks/build_katago_cuda.sh OUT_DIR/katago
set -euo pipefail
src=${1:?usage: prepare_katago_cuda.sh KATAGO_SOURCE OUT_DIR}
out=${2:?usage: prepare_katago_cuda.sh KATAGO_SOURCE OUT_DIR}
die() { echo "error: $*" >&2; exit 1; }
skip='^cpp/tests/(data|models|results)/'
rm -rf "$out/katago" "$out/zlib-include"
mkdir -p "$out/katago" "$out/zlib-include"
if [ -f "$src/cpp/CMakeLists.txt" ]; then
  (cd "$src" && find cpp -type f -not -path '*/.git/*' | grep -Ev "$skip|^cpp/build") | while read -r f; do
    mkdir -p "$out/katago/$(dirname "$f")" && cp "$src/$f" "$out/katago/$f"; done
elif git --git-dir="$src" rev-parse --verify -q HEAD > /dev/null; then
  # A bare mirror may lack its largest blobs; the build needs none of the files left out above.
  git --git-dir="$src" ls-tree -r --name-only HEAD cpp | grep -Ev "$skip" | while read -r f; do
    mkdir -p "$out/katago/$(dirname "$f")"
    git --git-dir="$src" cat-file blob "HEAD:$f" > "$out/katago/$f" || die "$f is missing from $src"
  done
  echo "KataGo source: $(git --git-dir="$src" describe --tags HEAD 2>/dev/null || git --git-dir="$src" rev-parse HEAD)"
else
  die "$src is neither a KataGo checkout (cpp/CMakeLists.txt) nor a git directory"
fi
if [ -f /usr/include/zlib.h ] && [ -f /usr/include/zconf.h ]; then
  cp /usr/include/zlib.h /usr/include/zconf.h "$out/zlib-include/"
else
  work=$(mktemp -d)
  (cd "$work" && apt-get download zlib1g-dev > /dev/null && dpkg-deb -x zlib1g-dev_*.deb x)
  cp "$work"/x/usr/include/zlib.h "$work"/x/usr/include/zconf.h "$out/zlib-include/"
  rm -rf "$work"
fi
echo "ready: $(du -sh "$out" | cut -f1) in $out"
