#!/usr/bin/env bash
# Build KataGo's CUDA binary on a GPU machine, the oracle compare_katago_gpu.py runs beside kata.
#
#   bash benchmarks/build_katago_cuda.sh KATAGO_SOURCE [ZLIB_INCLUDE_DIR]
#
# KATAGO_SOURCE: a KataGo 1.17.2 source tree (a clone, or the folder prepare_katago_cuda.sh makes: it
# holds cpp/). ZLIB_INCLUDE_DIR: a folder with zlib.h and zconf.h (default: KATAGO_SOURCE/../zlib-include
# when prepare_katago_cuda.sh made it, else the system's). Needs cmake, a C++17 compiler, the CUDA
# toolkit (nvcc, cuBLAS, NVRTC) and the machine's libz.so. cuDNN comes from the Python environment that
# holds torch (its nvidia/cudnn folder); KataGo 1.17.2 needs no libzip. Offline: nothing
# is downloaded. CUDA_ARCH (default 90, Hopper) picks the one GPU architecture compiled for: KataGo's
# CMakeLists.txt sets its own list unconditionally, so the script edits that file in KATAGO_SOURCE (give it
# prepare_katago_cuda.sh's copy, not a clone you keep).
# The binary ends up at KATAGO_SOURCE/cpp/build-cuda/katago; run it with
#   export LD_LIBRARY_PATH=<the cudnn lib folder this script prints>:$LD_LIBRARY_PATH
set -euo pipefail
case "${1:-}" in -h|--help) sed -n '2,/^set /p' "$0" | sed -n 's/^# \{0,1\}//p'; exit 0;; esac
src=${1:?usage: build_katago_cuda.sh KATAGO_SOURCE [ZLIB_INCLUDE_DIR]}
src=$(cd "$src" && pwd)
zlib_include=${2:-}
arch=${CUDA_ARCH:-90}
python=${PYTHON:-python3}
die() { echo "error: $*" >&2; exit 1; }
[ -f "$src/cpp/CMakeLists.txt" ] || die "$src is not a KataGo source tree (no cpp/CMakeLists.txt)"
command -v cmake > /dev/null || die "cmake is not installed"

# zlib: the carried headers (this machine may lack zlib1g-dev), the machine's shared library.
if [ -z "$zlib_include" ] && [ -f "$src/../zlib-include/zlib.h" ]; then zlib_include=$(cd "$src/../zlib-include" && pwd); fi
[ -z "$zlib_include" ] && [ -f /usr/include/zlib.h ] && zlib_include=/usr/include
[ -n "$zlib_include" ] && [ -f "$zlib_include/zlib.h" ] && [ -f "$zlib_include/zconf.h" ] \
  || die "no zlib.h/zconf.h: pass their folder as the second argument (prepare_katago_cuda.sh carries them)"
zlib_library=$(ldconfig -p 2>/dev/null | awk '/libz\.so(\.1)? .*x86-64/ {print $NF; exit}')
[ -z "$zlib_library" ] && for f in /usr/lib/x86_64-linux-gnu/libz.so.1 /lib/x86_64-linux-gnu/libz.so.1 /usr/lib64/libz.so.1; do
  [ -f "$f" ] && zlib_library=$f && break; done
[ -n "$zlib_library" ] || die "the machine's libz.so was not found"

# cuDNN 9 from the Python environment's nvidia-cudnn wheel (torch's own copy).
cudnn=$("$python" -c "import nvidia.cudnn; print(list(nvidia.cudnn.__path__)[0])" 2>/dev/null || true)
if [ -z "$cudnn" ]; then  # not importable from this Python: look through its site-packages
  cudnn=$("$python" -c "import site, os; print(next((os.path.join(p, 'nvidia', 'cudnn') for p in site.getsitepackages() + [site.getusersitepackages()] if os.path.isdir(os.path.join(p, 'nvidia', 'cudnn'))), ''))")
fi
[ -n "$cudnn" ] && [ -f "$cudnn/include/cudnn.h" ] || die "cuDNN not found in $python's environment (pip's nvidia-cudnn-cu12, which torch installs)"
cudnn_library=$(ls "$cudnn"/lib/libcudnn.so* 2>/dev/null | sort | head -1)
[ -n "$cudnn_library" ] || die "no libcudnn.so in $cudnn/lib"

# nvcc: PATH, or the usual toolkit folder.
nvcc=$(command -v nvcc || true)
[ -z "$nvcc" ] && for d in /usr/local/cuda/bin /usr/local/cuda-*/bin; do [ -x "$d/nvcc" ] && nvcc="$d/nvcc" && break; done
[ -n "$nvcc" ] || die "nvcc (the CUDA toolkit) is not installed on this machine; KataGo's CUDA backend needs it"

echo "nvcc: $nvcc ($("$nvcc" --version | tail -1))"
echo "cuDNN: $cudnn_library"
echo "zlib: $zlib_include/zlib.h, $zlib_library"
# KataGo's CMakeLists sets its own list of CUDA architectures after enable_language(CUDA), which
# would override -DCMAKE_CUDA_ARCHITECTURES; in this (carried, disposable) tree, keep only ours.
sed -i -E "s/^( *)set\(CMAKE_CUDA_ARCHITECTURES [0-9 ]+\)/\1set(CMAKE_CUDA_ARCHITECTURES $arch)/" "$src/cpp/CMakeLists.txt"
build="$src/cpp/build-cuda"
mkdir -p "$build"
cd "$build"
cmake .. -DUSE_BACKEND=CUDA -DCMAKE_BUILD_TYPE=Release -DNO_GIT_REVISION=1 \
  -DCMAKE_CUDA_COMPILER="$nvcc" -DCMAKE_CUDA_ARCHITECTURES="$arch" \
  -DCUDNN_INCLUDE_DIR="$cudnn/include" -DCUDNN_LIBRARY="$cudnn_library" \
  -DZLIB_INCLUDE_DIR="$zlib_include" -DZLIB_LIBRARY="$zlib_library"
make -j"$(nproc)" katago
echo "built $build/katago"
echo "run it with: export LD_LIBRARY_PATH=$cudnn/lib:\${LD_LIBRARY_PATH:-}"
