#!/usr/bin/env bash
# Sets up a Debian 12 machine (as root) and builds and checks Weft. Idempotent: a second
# run installs nothing and rebuilds only what changed.
#
#   bash tools/setup.sh hello   install packages, build into build/, run examples/hello.lua
#   bash tools/setup.sh test    the same build, then: a sanitizer build (build-asan/, ASan +
#                               UBSan) running every test but the lua5.4 oracle runs and
#                               most generational runs (the relocate-stress runs of every
#                               Lua script included), a
#                               ThreadSanitizer build (build-tsan/, tools/tsan.sh: the
#                               scheduler's, collector's and runtime's unit tests, the VM's
#                               race tests and the task scripts at --workers 4), a
#                               short libFuzzer run when tests/fuzz/ has targets (build-fuzz/),
#                               and last every test of build/ (so ctest's summary closes the
#                               output). Exits non-zero if any stage failed.
#
# Knobs: WEFT_JOBS (default 2), WEFT_SKIP_SANITIZE=1, WEFT_FUZZ_SECONDS (default 60, split
# over the fuzz targets; 0 skips fuzzing).
set -euo pipefail
cd "$(dirname "$0")/.."

# clang's libFuzzer and sanitizer runtimes are only a Recommends of clang: name them.
PACKAGES=(cmake ninja-build g++ clang libclang-rt-14-dev libmimalloc-dev libgtest-dev libcli11-dev
          libedit-dev lua5.4 liblua5.4-dev python3 pkg-config lua-lpeg lua-cjson lua-filesystem llvm-19-dev
          time lld-19)
JOBS=${WEFT_JOBS:-2}
FUZZ_SECONDS=${WEFT_FUZZ_SECONDS:-60}
# Any sanitizer report fails the stage: ASan and UBSan stop at the first report (the
# builds also pass -fno-sanitize-recover=undefined), and the exit status says so.
export ASAN_OPTIONS=halt_on_error=1:detect_leaks=1
export UBSAN_OPTIONS=halt_on_error=1:print_stacktrace=1

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
  configure build -DCMAKE_BUILD_TYPE=Release || return 1
  cmake --build build -j "$JOBS"
}

# The stage functions run as `stage || failed+=(...)`, where bash ignores set -e: every
# step that can fail says `|| return 1` itself.
sanitizerPass() {
  configure build-asan -DCMAKE_BUILD_TYPE=Release -DWEFT_SANITIZE=ON || return 1
  cmake --build build-asan -j "$JOBS" || return 1
  # Every test but the oracle runs (lua5.4 is not built with ASan): the relocate runs
  # above all, where a stale pointer into moved or freed memory is what ASan shows. Of
  # the generational runs (which cost as much again), only the scripts that store young
  # objects into old ones in every way run here: the barrier's, the remembered set's
  # and the parked stacks' cases; the main build runs all of them.
  # Stress collections come at every 4th safepoint instead of every one (the main
  # build's runs keep every one): under ASan each costs about ten times more, and the
  # relocate runs were two thirds of the stage.
  WEFT_TEST_GC_INTERVAL_SCALE=4 ctest --test-dir build-asan --output-on-failure -j "$JOBS" -E '^lua\..*\.(oracle|generational)$' || return 1
  WEFT_TEST_GC_INTERVAL_SCALE=4 ctest --test-dir build-asan --output-on-failure -j "$JOBS" -L generational \
    -R '^lua\.(lang_gc|lang_closures|lang_coroutines|lang_metamethods|lib_table|task_channels|task_shared_table|task_upvalue_race)\.' || return 1
}

# Each target gets an equal share of FUZZ_SECONDS over its seeds (tests/fuzz/corpus/NAME)
# and what earlier runs found (build-fuzz/corpus/NAME, which libFuzzer extends). A crash,
# a sanitizer report, a run over 10 s or over 2 GiB fails the stage; the input is kept
# as build-fuzz/crash-* for `build-fuzz/tests/fuzz/NAME build-fuzz/crash-...`.
fuzzPass() {
  [[ -f tests/fuzz/CMakeLists.txt && $FUZZ_SECONDS -gt 0 ]] || return 0
  configure build-fuzz -DCMAKE_BUILD_TYPE=Release -DWEFT_FUZZ=ON -DWEFT_TESTS=ON \
    -DCMAKE_CXX_COMPILER=clang++ -DCMAKE_C_COMPILER=clang || return 1
  cmake --build build-fuzz -j "$JOBS" --target tests/fuzz/all || return 1
  local targets=()
  while IFS= read -r -d '' t; do targets+=("$t"); done < <(
    find build-fuzz/tests/fuzz -maxdepth 1 -type f -executable -print0 | sort -z)
  ((${#targets[@]} > 0)) || return 0
  local each=$((FUZZ_SECONDS / ${#targets[@]}))
  ((each > 0)) || each=1
  local status=0
  for t in "${targets[@]}"; do
    local name corpus
    name=$(basename "$t")
    corpus=build-fuzz/corpus/$name
    mkdir -p "$corpus"
    local seeds=()
    [[ -d tests/fuzz/corpus/$name ]] && seeds=("tests/fuzz/corpus/$name")
    echo "setup.sh: fuzzing $name for ${each}s"
    "$t" -max_total_time="$each" -timeout=10 -rss_limit_mb=2048 -print_final_stats=1 \
      -artifact_prefix=build-fuzz/ "$corpus" "${seeds[@]}" || status=1
  done
  return "$status"
}

# timed NAME COMMAND...: runs COMMAND and reports how long it took. Its output also goes
# to $LOGS/NAME.log, for the digest of a failed stage (digest).
LOGS=$(mktemp -d)
trap 'rm -rf "$LOGS"' EXIT
timed() {
  local name=$1 start=$SECONDS rc
  shift
  set +e
  "$@" 2>&1 | tee "$LOGS/$name.log"
  rc=${PIPESTATUS[0]}
  set -e
  echo "setup.sh: $name took $((SECONDS - start))s"
  return "$rc"
}

# digest NAME: what a failed stage said of its failure, printed after ctest's summary,
# since a CI log is often read from its tail only: the sanitizer's first report, the
# lines that name a failing test, and the stage's last lines.
digest() {
  local log="$LOGS/$1.log"
  [[ -f $log ]] || return 0
  echo "setup.sh: ---- digest of the $1 ----"
  grep -m 1 -A 40 -E '^(WARNING: ThreadSanitizer|==[0-9]+==ERROR|.*runtime error:)' "$log" || true
  grep -E '(FAILED|Failed|failed|deadlock|error:|Timeout|\*\*\*)' "$log" | grep -v ' 0 failed' | tail -n 25 || true
  echo "setup.sh: ... its last lines:"
  tail -n 15 "$log"
}

case "${1:-}" in
  hello)
    installPackages
    buildMain
    build/tools/weft examples/hello.lua
    ;;
  test)
    installPackages
    timed "main build" buildMain
    build/tools/weft examples/hello.lua
    failed=()
    if [[ ${WEFT_SKIP_SANITIZE:-0} != 1 ]]; then
      timed "sanitizer pass" sanitizerPass || failed+=("sanitizer pass")
      timed "thread sanitizer pass" bash tools/tsan.sh || failed+=("thread sanitizer pass")
      timed "fuzz run" fuzzPass || failed+=("fuzz run")
    fi
    if ((${#failed[@]} > 0)); then echo "setup.sh: FAILED: ${failed[*]} (details above)"; fi
    status=0
    ctest --test-dir build --output-on-failure -j "$JOBS" || status=$?
    # Said again at the end: a CI log is often read from its tail only.
    if ((${#failed[@]} > 0)); then
      for f in "${failed[@]}"; do digest "$f"; done
      echo "setup.sh: FAILED: ${failed[*]} (digest above)"
      exit 1
    fi
    exit "$status"
    ;;
  *)
    echo "usage: bash tools/setup.sh hello|test" >&2
    exit 2
    ;;
esac
