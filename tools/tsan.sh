#!/usr/bin/env bash
# The ThreadSanitizer stage: configures build-tsan/ (Release + -DWEFT_TSAN=ON) and runs,
# under TSan: the scheduler's, the collector's and the runtime's unit tests; the VM's
# tests of racing slot stores, concurrent table writes and the thread pool; and every
# task script of tests/lua (`-- weft-tasks`) at --workers 4, through tests/lua/run.py, so
# the races of real Lua programs on four workers are checked too; and, in deterministic
# mode, the scripts whose tasks wait under native frames (the coordinator's role passes
# between threads: docs/design/deterministic.md). With the JIT's module
# (LLVM 19 found), the JIT under TSan: its unit tests (the compile thread, installation,
# recompilation and freeing against running interpreters), every task script again with
# --jit=eager at --workers 4 (each function compiled on the compile thread while other
# workers run, code entered from every worker), and tests/cli/jit_tasks.py (compiled loops
# preempted, migrating and cancelled). Any TSan report fails the stage: halt_on_error
# stops at the first one and exits non-zero.
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

targets=(weft_sched_tests weft_gc_tests weft_runtime_tests weft_vm_tests weft)
# weft_jit_tests exists only when CMake found LLVM (jit/CMakeLists.txt).
jit=0
if ninja -C "$DIR" -t query weft_jit_tests >/dev/null 2>&1; then
  jit=1
  targets+=(weft_jit_tests)
fi
ninja -C "$DIR" -j "$JOBS" "${targets[@]}"

# The VM tests that race threads on purpose; the rest of that binary is single-threaded.
vmRaceFilter='SlotAccess.*:ConcurrentTableWrite*:ThreadPool.*'

status=0
for t in weft_sched_tests weft_gc_tests weft_runtime_tests; do
  echo "tsan.sh: running $t"
  "$DIR/tests/$t" || status=1
done
echo "tsan.sh: running weft_vm_tests ($vmRaceFilter)"
"$DIR/tests/weft_vm_tests" --gtest_filter="$vmRaceFilter" || status=1

weft=$DIR/tools/weft
[[ $weft == /* ]] || weft=$PWD/$weft
passed=0
failed=()
for script in tests/lua/*.lua; do
  head -n 5 "$script" | grep -q -- '-- weft-tasks' || continue
  if python3 tests/lua/run.py --mode workers4 --weft "$weft" "$script"; then
    passed=$((passed + 1))
  else
    failed+=("$(basename "$script")")
    status=1
  fi
done
echo "tsan.sh: task scripts at --workers 4: $passed passed, ${#failed[@]} failed ${failed[*]}"

# run.py's deterministic mode runs each with --workers=1, then --workers=4 under stress.
for name in task_native_wait task_main_waits task_main_ends_nested; do
  echo "tsan.sh: running $name deterministic"
  python3 tests/lua/run.py --mode deterministic --weft "$weft" "tests/lua/$name.lua" || status=1
done

if [[ $jit == 1 ]]; then
  echo "tsan.sh: running weft_jit_tests"
  "$DIR/tests/weft_jit_tests" || status=1
  passed=0
  failed=()
  for script in tests/lua/*.lua; do
    head -n 5 "$script" | grep -q -- '-- weft-tasks' || continue
    # run.py's jit mode adds --jit=eager; the worker count comes from the environment.
    if WEFT_WORKERS=4 python3 tests/lua/run.py --mode jit --weft "$weft" "$script"; then
      passed=$((passed + 1))
    else
      failed+=("$(basename "$script")")
      status=1
    fi
  done
  echo "tsan.sh: task scripts with --jit=eager at --workers 4: $passed passed, ${#failed[@]} failed ${failed[*]}"
  echo "tsan.sh: running tests/cli/jit_tasks.py"
  python3 tests/cli/jit_tasks.py --weft "$weft" || status=1
fi
exit "$status"
