#!/usr/bin/env bash
# Sets up a Debian 12 machine (as root) and builds and checks Weft. Idempotent: a second
# run installs nothing and rebuilds only what changed.
#
#   bash tools/setup.sh hello   install packages, build into build/, run examples/hello.lua
#   bash tools/setup.sh test    the same build, then: a sanitizer build (build-asan/, ASan +
#                               UBSan) running the unit tests and the plain Lua scripts, a
#                               short libFuzzer run when tests/fuzz/ has targets (build-fuzz/),
#                               and last every test of build/ (so ctest's summary closes the
#                               output). Exits non-zero if any stage failed.
#
# Knobs: WEFT_JOBS (default 2), WEFT_SKIP_SANITIZE=1, WEFT_FUZZ_SECONDS (default 60, split
# over the fuzz targets; 0 skips fuzzing).
set -euo pipefail
cd "$(dirname "$0")/.."

PACKAGES=(cmake ninja-build g++ clang libmimalloc-dev libgtest-dev libcli11-dev libedit-dev
          lua5.4 python3 pkg-config)
JOBS=${WEFT_JOBS:-2}
FUZZ_SECONDS=${WEFT_FUZZ_SECONDS:-60}

installPackages() {
  local missing=()
  for p in "${PACKAGES[@]}"; do
    dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
  done
  if ((${#missing[@]} > 0)); then
    echo "setup.sh: installing ${missing[*]}"
    apt-get update
    DEBIAN_FRONTEND=noninteractive apt-get install -y "${PACKAGES[@]}"
  fi
}

# configure DIR [cmake args...]: configures once; later runs let ninja re-run cmake itself.
configure() {
  local dir=$1
  shift
  if [[ ! -f $dir/build.ninja ]]; then
    cmake -S . -B "$dir" -G Ninja "$@"
  fi
}

buildMain() {
  configure build -DCMAKE_BUILD_TYPE=Release
  cmake --build build -j "$JOBS"
}

sanitizerPass() {
  configure build-asan -DCMAKE_BUILD_TYPE=Release -DWEFT_SANITIZE=ON
  cmake --build build-asan -j "$JOBS"
  # Unit tests and the plain scripts; stress and oracle runs add nothing under ASan here.
  ASAN_OPTIONS=detect_leaks=1 ctest --test-dir build-asan --output-on-failure -j "$JOBS" \
    -E '^lua\..*\.(relocate|oracle)$'
}

fuzzPass() {
  [[ -f tests/fuzz/CMakeLists.txt && $FUZZ_SECONDS -gt 0 ]] || return 0
  configure build-fuzz -DCMAKE_BUILD_TYPE=Release -DWEFT_FUZZ=ON -DWEFT_TESTS=ON \
    -DCMAKE_CXX_COMPILER=clang++ -DCMAKE_C_COMPILER=clang
  cmake --build build-fuzz -j "$JOBS" --target tests/fuzz/all
  local targets=()
  while IFS= read -r -d '' t; do targets+=("$t"); done < <(
    find build-fuzz/tests/fuzz -maxdepth 1 -type f -executable -print0 | sort -z)
  ((${#targets[@]} > 0)) || return 0
  local each=$((FUZZ_SECONDS / ${#targets[@]}))
  ((each > 0)) || each=1
  for t in "${targets[@]}"; do
    local name corpus
    name=$(basename "$t")
    corpus=build-fuzz/corpus/$name
    mkdir -p "$corpus"
    local seeds=()
    [[ -d tests/fuzz/corpus/$name ]] && seeds=("tests/fuzz/corpus/$name")
    echo "setup.sh: fuzzing $name for ${each}s"
    "$t" -max_total_time="$each" -print_final_stats=1 "$corpus" "${seeds[@]}"
  done
}

case "${1:-}" in
  hello)
    installPackages
    buildMain
    build/tools/weft examples/hello.lua
    ;;
  test)
    installPackages
    buildMain
    build/tools/weft examples/hello.lua
    failed=()
    if [[ ${WEFT_SKIP_SANITIZE:-0} != 1 ]]; then
      sanitizerPass || failed+=("sanitizer pass")
      fuzzPass || failed+=("fuzz run")
    fi
    if ((${#failed[@]} > 0)); then echo "setup.sh: FAILED: ${failed[*]} (details above)"; fi
    status=0
    ctest --test-dir build --output-on-failure -j "$JOBS" || status=$?
    if ((${#failed[@]} > 0)); then exit 1; fi
    exit "$status"
    ;;
  *)
    echo "usage: bash tools/setup.sh hello|test" >&2
    exit 2
    ;;
esac
