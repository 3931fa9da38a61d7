#!/usr/bin/env bash
# The ThreadSanitizer stage: configures build-tsan/ (Release + -DWEFT_TSAN=ON), builds the
# scheduler's and the collector's unit tests (and the runtime's, once that target exists)
# and runs them. Any TSan report fails the stage: halt_on_error stops at the first one and
# exits non-zero.
#
#   bash tools/tsan.sh        from anywhere; tools/setup.sh calls it as a test stage
#
# Knobs: WEFT_JOBS (default 2), WEFT_TSAN_DIR (default build-tsan), WEFT_STRESS_SEED
# (replays a stress test's seed).
set -euo pipefail
cd "$(dirname "$0")/.."

JOBS=${WEFT_JOBS:-2}
DIR=${WEFT_TSAN_DIR:-build-tsan}
export TSAN_OPTIONS=${TSAN_OPTIONS:-halt_on_error=1:second_deadlock_stack=1}

# Configures once; later runs let ninja re-run cmake itself.
if [[ ! -f $DIR/build.ninja ]]; then
  cmake -S . -B "$DIR" -G Ninja -DCMAKE_BUILD_TYPE=Release -DWEFT_TSAN=ON
fi

targets=(weft_sched_tests weft_gc_tests)
# weft_runtime_tests exists only when tests/unit/runtime/ has sources.
if ninja -C "$DIR" -t targets all 2>/dev/null | grep -q '^weft_runtime_tests:'; then
  targets+=(weft_runtime_tests)
fi
ninja -C "$DIR" -j "$JOBS" "${targets[@]}"

status=0
for t in "${targets[@]}"; do
  echo "tsan.sh: running $t"
  "$DIR/tests/$t" || status=1
done
exit "$status"
