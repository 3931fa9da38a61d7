// The registry of tasks and channels: the runtime's root container. Every task's thread
// (so its frames), its handle, the values of its waits and every channel's buffer are
// traced and updated here by the collector, world stopped; so nothing stale survives a
// relocation into a task's next dispatch. Each shard's lock guards its sets; the
// collector also takes them, since a task may be released on the timer thread (not a
// mutator). Nothing holds two shard locks at once.
#include <algorithm>
#include <cstdio>
#include <utility>
#include <vector>

#include "gc/fault.h"
#include "gc/pass.h"
#include "runtime/runtime_impl.h"
#include "vm/debug.h"

namespace weft::runtime {

using vm::Value;

namespace {

void visitValue(gc::Visitor& visitor, Value& v) {
  if (v.isCollectable()) visitor.visit(vm::referenceSlot(v));
}

template <typename T>
void visitObject(gc::Visitor& visitor, T*& field) {
  if (field) visitor.visit(reinterpret_cast<gc::Object*&>(field));
}

void traceTask(gc::Visitor& visitor, LuaTask& task) {
  visitObject(visitor, task.thread);
  visitObject(visitor, task.handle);
  if (task.aside) visitValue(visitor, task.aside->error);
  for (uint32_t i = 0; i < task.resultCount; i++) visitValue(visitor, task.results[i]);
  task.wait.forEachRoot([&](Value& v) { visitValue(visitor, v); });
}

// The traced fields span the record's first lines after its bases (task.h).
void prefetchRecord(const LuaTask* task) {
  if (!task) return;
  __builtin_prefetch(&task->thread);
  __builtin_prefetch(&task->wait);
}

void prefetchReferents(const LuaTask* task) {
  if (!task) return;
  if (task->thread) __builtin_prefetch(task->thread);
  if (task->handle) __builtin_prefetch(task->handle);
}

}  // namespace

LuaTask::LuaTask(RuntimeImpl& r, vm::Thread* th) : rt(r), thread(th) {
  th->data->task = this;
  rt.addTask(this);
}

LuaTask::~LuaTask() {
  if (LuaTask* awaited = wait.takeAwaited()) awaited->release();
  if (orphaned || !registered) return;  // its runtime or its thread may be gone already
  if (outcome == sched::TaskState::kPanicked && !errorObserved) rt.noteUnobservedError(id(), aside ? aside->traceback : std::string());
  rt.removeTask(this);
}

// A suspended task's record is part of its memory (docs/design/tasks.md): 256 bytes is
// one of the allocator's size classes, the next is 320.
static_assert(sizeof(LuaTask) <= 256, "LuaTask outgrew its 256-byte size class");

TaskAside& LuaTask::makeAside() {
  if (!aside) aside = std::make_unique<TaskAside>();
  return *aside;
}

LuaTask* currentTask(RuntimeImpl& rt, vm::ThreadData* t) {
  return t->task ? static_cast<LuaTask*>(t->task) : rt.mainTask;
}

RuntimeImpl::RegistryShard& RuntimeImpl::shardForNew() {
  return shards_[currentRegistryShard() % kRegistryShards];
}

namespace {

// A task record or a channel joins or leaves one of its shard's lists (the dirty ones:
// `slot` is dirtySlot; a cycle's retrace lists: retraceSlot) in constant time.
template <typename T>
void listAdd(std::vector<T*>& list, T* entry, uint32_t T::*slot) {
  list.push_back(entry);
  entry->*slot = uint32_t(list.size());
}

template <typename T>
void listRemove(std::vector<T*>& list, T* entry, uint32_t T::*slot) {
  if (!(entry->*slot)) return;
  T* last = list.back();
  list[entry->*slot - 1] = last;
  last->*slot = entry->*slot;
  list.pop_back();
  entry->*slot = 0;
}

template <typename T>
void addDirtyLocked(std::vector<T*>& dirty, T* entry) {
  entry->gcDirty.store(true, std::memory_order_relaxed);
  listAdd(dirty, entry, &T::dirtySlot);
}

// A record leaving the registry leaves a hole in its dirty list, which the next
// collection empties: moving the list's last entry into its place wrote that entry's
// record, another task's, as likely as not last touched by the other worker (spawn+await
// on two workers: a task finished on one worker and its spawner's batch of new ones on
// the other met in the shard's lock, each hold a cache miss longer).
template <typename T>
void removeDirtyLocked(std::vector<T*>& dirty, T* entry) {
  if (!entry->gcDirty.load(std::memory_order_relaxed)) return;
  dirty[entry->dirtySlot - 1] = nullptr;
  entry->dirtySlot = 0;
  entry->gcDirty.store(false, std::memory_order_relaxed);
}

// After a collection: every entry is clean.
template <typename T>
void clearDirtyLocked(std::vector<T*>& dirty) {
  for (T* entry : dirty) {
    if (!entry) continue;
    entry->dirtySlot = 0;
    entry->gcDirty.store(false, std::memory_order_relaxed);
  }
  dirty.clear();
}

void traceBuffer(gc::Visitor& visitor, Channel& ch) {
  ch.buffer.forEach([&](Value& v) { visitValue(visitor, v); });
}

// Each shard under its lock, one at a time.
template <typename Shards, typename F>
void eachShardLocked(Shards& shards, F f) {
  for (auto& shard : shards) {
    std::lock_guard lock(shard.mutex);
    f(shard);
  }
}

void traceEntry(gc::Visitor& visitor, LuaTask& task) { traceTask(visitor, task); }
void traceEntry(gc::Visitor& visitor, Channel& ch) { traceBuffer(visitor, ch); }

// The first write since the last collection into an entry the cycle traced: it is
// listed to be traced again. (A later write before the next collection finds it dirty
// and takes no lock: that collection lists it, retraceDirtyLocked.)
template <typename T>
void retraceWrittenLocked(bool active, uint16_t cycle, CycleWalk<T>& walk, T* entry) {
  if (active && entry->cycleTraced == cycle && !entry->retraceSlot) listAdd(walk.retrace, entry, &T::retraceSlot);
}

// A minor during a cycle, before it cleans the dirty entries: those the cycle traced
// may have been written since without being noted, so they are listed.
template <typename T>
void retraceDirtyLocked(bool active, uint16_t cycle, CycleWalk<T>& walk, const std::vector<T*>& dirty) {
  for (T* entry : dirty)
    if (entry) retraceWrittenLocked(active, cycle, walk, entry);
}

// An entry the cycle traced, not written since (so not listed), below the cursor (so
// not a stale number from an older cycle of the same number): refers only to marked
// objects.
template <typename T>
bool tracedByCycle(bool active, uint16_t cycle, const CycleWalk<T>& walk, const T& entry) {
  return active && entry.cycleTraced == cycle && !entry.retraceSlot &&
         !entry.gcDirty.load(std::memory_order_relaxed) && entry.regSlot - 1 < walk.cursor;
}

// A slice: the listed entries, then the slots from the cursor, each costing
// kEntryWork bytes of the budget; true when nothing is left.
constexpr size_t kEntryWork = 128;

template <typename T>
bool walkSlice(gc::Visitor& visitor, uint16_t cycle, const SlotList<T>& slots, CycleWalk<T>& walk, size_t& budget) {
  constexpr size_t kAhead = 8;
  while (!walk.retrace.empty() && budget >= kEntryWork) {
    T* entry = walk.retrace.back();
    listRemove(walk.retrace, entry, &T::retraceSlot);
    traceEntry(visitor, *entry);
    entry->cycleTraced = cycle;
    budget -= kEntryWork;
  }
  size_t n = slots.slotCount();
  while (walk.cursor < n && budget >= kEntryWork) {
    if (walk.cursor + kAhead < n && slots.at(walk.cursor + kAhead)) __builtin_prefetch(slots.at(walk.cursor + kAhead));
    T* entry = slots.at(walk.cursor++);
    if (!entry || entry->retraceSlot) continue;  // a listed one is traced from the list
    traceEntry(visitor, *entry);
    entry->cycleTraced = cycle;
    budget -= kEntryWork;
  }
  return walk.retrace.empty() && walk.cursor >= n;
}

// The final pause: the dirty entries the cycle traced (written since, maybe unnoted),
// the listed ones and the slots the cursor did not reach, each once.
template <typename T>
void finishWalk(gc::Visitor& visitor, uint16_t cycle, const SlotList<T>& slots, CycleWalk<T>& walk,
                const std::vector<T*>& dirty) {
  for (T* entry : dirty)
    if (entry && entry->cycleTraced == cycle && !entry->retraceSlot && entry->regSlot - 1 < walk.cursor)
      traceEntry(visitor, *entry);
  for (T* entry : walk.retrace) {
    entry->retraceSlot = 0;
    traceEntry(visitor, *entry);
  }
  walk.retrace.clear();
  for (size_t i = walk.cursor; i < slots.slotCount(); i++)
    if (T* entry = slots.at(i)) traceEntry(visitor, *entry);
  walk.cursor = 0;
}

}  // namespace

// A new record points to a young thread: dirty from the start; during a cycle it is
// listed to be traced (its slot may lie below the cursor).
void RuntimeImpl::addTask(LuaTask* task) {
  RegistryShard& shard = shardForNew();
  task->regShard = uint8_t(&shard - shards_.data());
  std::lock_guard lock(shard.mutex);
  shard.tasks.insert(task);
  addDirtyLocked(shard.dirty, task);
  if (shard.cycleActive) listAdd(shard.taskWalk.retrace, task, &LuaTask::retraceSlot);
}

void RuntimeImpl::removeTask(LuaTask* task) {
  RegistryShard& shard = shards_[task->regShard];
  std::lock_guard lock(shard.mutex);
  // A task ended before its record goes leaves no thread (completeTask); one freed
  // before it ended still names its thread, read under the lock because the collector,
  // which rewrites `thread` when it moves, traces the record under it, and this may be
  // the timer thread, which is not a mutator.
  if (vm::ThreadData* t = task->data()) t->task = nullptr;
  if (shard.tasks.contains(task)) shard.tasks.erase(task);
  removeDirtyLocked(shard.dirty, task);
  listRemove(shard.taskWalk.retrace, task, &LuaTask::retraceSlot);
  task->registered = false;
}

void RuntimeImpl::noteRecordWritten(LuaTask& task) {
  if (task.gcDirty.load(std::memory_order_relaxed)) return;
  RegistryShard& shard = shards_[task.regShard];
  std::lock_guard lock(shard.mutex);
  if (task.gcDirty.load(std::memory_order_relaxed) || !shard.tasks.contains(&task)) return;
  addDirtyLocked(shard.dirty, &task);
  retraceWrittenLocked(shard.cycleActive, shard.cycle, shard.taskWalk, &task);
}

void RuntimeImpl::noteChannelWritten(Channel& ch) {
  if (ch.gcDirty.load(std::memory_order_relaxed)) return;
  if (gc::fault::hit("rt.channel-dirty-drop")) return;
  RegistryShard& shard = shards_[ch.regShard];
  std::lock_guard lock(shard.mutex);
  if (ch.gcDirty.load(std::memory_order_relaxed) || !shard.channels.contains(&ch)) return;
  addDirtyLocked(shard.dirtyChannels, &ch);
  retraceWrittenLocked(shard.cycleActive, shard.cycle, shard.channelWalk, &ch);
}

void RuntimeImpl::addChannel(Channel* ch) {
  RegistryShard& shard = shardForNew();
  ch->regShard = uint8_t(&shard - shards_.data());
  std::lock_guard lock(shard.mutex);
  shard.channels.insert(ch);
  if (shard.cycleActive) listAdd(shard.channelWalk.retrace, ch, &Channel::retraceSlot);
}

void RuntimeImpl::removeChannel(Channel* ch) {
  RegistryShard& shard = shards_[ch->regShard];
  std::lock_guard lock(shard.mutex);
  if (shard.channels.contains(ch)) shard.channels.erase(ch);
  removeDirtyLocked(shard.dirtyChannels, ch);
  listRemove(shard.channelWalk.retrace, ch, &Channel::retraceSlot);
}

std::vector<LuaTask*> RuntimeImpl::retainAllTasks() {
  std::vector<LuaTask*> all;
  for (RegistryShard& shard : shards_) {
    std::lock_guard lock(shard.mutex);
    for (LuaTask* task : shard.tasks) {
      task->retain();
      all.push_back(task);
    }
  }
  return all;
}

void RuntimeImpl::traceRoots(gc::Visitor& visitor) {
  visitObject(visitor, taskMeta);
  visitObject(visitor, channelMeta);
  eachShardLocked(shards_, [&](RegistryShard& shard) { traceShard(visitor, shard); });
}

// A hundred thousand suspended tasks are common: each costs cache misses on its record,
// then on its Thread object and handle (copied here). Records are prefetched 2 * kAhead
// tasks ahead, and the objects they point to kAhead ahead, once their record has arrived.
// A minor collection traces only the dirty records and the dirty channels' buffers: a
// record or buffer not written since the last collection holds only old references
// (docs/design/gc-v2.md). Every collection leaves everything clean; verification traces
// it all, changes nothing, and is told which references a minor would skip (gc/pass.h),
// so a write that was not noted shows as a young reference there.
void RuntimeImpl::traceShard(gc::Visitor& visitor, RegistryShard& shard) {
  constexpr size_t kAhead = 8;
  gc::Pass pass = gc::passOf(visitor);
  bool skipping = false, traced = false;  // what the verifier was last told: only changes are told
  auto tellVerifier = [&](const auto& entry, const auto& walk) {
    if (pass != gc::Pass::kCheck) return;
    if (bool clean = !entry.gcDirty.load(std::memory_order_relaxed); clean != skipping)
      gc::setSkippedByMinor(visitor, skipping = clean);
    if (bool black = tracedByCycle(shard.cycleActive, shard.cycle, walk, entry); black != traced)
      gc::setTracedByCycle(visitor, traced = black);
  };
  if (pass == gc::Pass::kMinor) {
    for (LuaTask* task : shard.dirty)
      if (task) traceTask(visitor, *task);
    for (Channel* ch : shard.dirtyChannels)
      if (ch) traceBuffer(visitor, *ch);
    retraceDirtyLocked(shard.cycleActive, shard.cycle, shard.taskWalk, shard.dirty);
    retraceDirtyLocked(shard.cycleActive, shard.cycle, shard.channelWalk, shard.dirtyChannels);
  } else {
    const SlotList<LuaTask>& tasks = shard.tasks;
    size_t n = tasks.slotCount();
    for (size_t i = 0; i < n; i++) {
      if (i + 2 * kAhead < n) prefetchRecord(tasks.at(i + 2 * kAhead));
      if (i + kAhead < n) prefetchReferents(tasks.at(i + kAhead));
      if (LuaTask* task = tasks.at(i)) {
        tellVerifier(*task, shard.taskWalk);
        traceTask(visitor, *task);
      }
    }
    for (Channel* ch : shard.channels) {
      tellVerifier(*ch, shard.channelWalk);
      traceBuffer(visitor, *ch);
    }
    if (skipping) gc::setSkippedByMinor(visitor, false);
    if (traced) gc::setTracedByCycle(visitor, false);
  }
  if (pass != gc::Pass::kCheck) {
    clearDirtyLocked(shard.dirty);
    clearDirtyLocked(shard.dirtyChannels);
  }
}

// ---- Incremental majors (docs/design/gc-v2.md "Incremental majors") ----
// The records and the channels' buffers are traced in the cycle's slices, so that
// neither its start nor its final pause costs what is parked:
//  - startCycle numbers the cycle and holds each shard's slot order; the slices walk the
//    slots from a cursor, tracing each entry and stamping it with the cycle's number.
//  - An entry written after a slice traced it is listed to be traced again: by its
//    first write since the last collection (noteRecordWritten, noteChannelWritten), or
//    by the minor that cleans it (a later write finds it dirty and notes nothing).
//    An entry added during the cycle is listed at once: its slot may lie below the
//    cursor.
//  - The final pause (finishCycle) traces what is listed, what the cursor did not
//    reach, and the dirty entries the cycle traced; then releases the slot order.
// All under each shard's lock, world stopped (a task may be released on the timer
// thread meanwhile).
void RuntimeImpl::startCycle(gc::Visitor& visitor) {
  visitObject(visitor, taskMeta);
  visitObject(visitor, channelMeta);
  eachShardLocked(shards_, [](RegistryShard& shard) {
    shard.cycle = static_cast<uint16_t>(shard.cycle + 1 == 0 ? 1 : shard.cycle + 1);
    shard.cycleActive = true;
    shard.tasks.holdOrder(true);
    shard.channels.holdOrder(true);
  });
}

// A runtime started while a cycle marked has no walk: its final pause traces it whole.
bool RuntimeImpl::traceCycleSlice(gc::Visitor& visitor, size_t& budget) {
  bool done = true;
  eachShardLocked(shards_, [&](RegistryShard& shard) {
    if (!shard.cycleActive) return;
    done &= walkSlice(visitor, shard.cycle, shard.tasks, shard.taskWalk, budget);
    done &= walkSlice(visitor, shard.cycle, shard.channels, shard.channelWalk, budget);
  });
  return done;
}

void RuntimeImpl::finishCycle(gc::Visitor& visitor) {
  visitObject(visitor, taskMeta);
  visitObject(visitor, channelMeta);
  eachShardLocked(shards_, [&](RegistryShard& shard) {
    if (!shard.cycleActive) return traceShard(visitor, shard);
    finishWalk(visitor, shard.cycle, shard.tasks, shard.taskWalk, shard.dirty);
    finishWalk(visitor, shard.cycle, shard.channels, shard.channelWalk, shard.dirtyChannels);
    shard.cycleActive = false;
    shard.tasks.holdOrder(false);
    shard.channels.holdOrder(false);
    clearDirtyLocked(shard.dirty);
    clearDirtyLocked(shard.dirtyChannels);
  });
}

std::string RuntimeImpl::describeBlockedTasks() {
  std::vector<std::pair<uint64_t, std::string>> lines;
  for (RegistryShard& shard : shards_) {
    std::lock_guard lock(shard.mutex);
    for (LuaTask* task : shard.tasks) {
      if (task->isDone()) continue;  // a task may be completing on a worker meanwhile
      std::string line = "  task ";
      line += task->isMain ? "main" : std::to_string(task->id());
      line += ": ";
      line += task->wait.phase() == WaitPhase::kWaiting ? task->describeWait() : std::string("not waiting");
      line += '\n';
      lines.emplace_back(task->id(), std::move(line));
    }
  }
  std::sort(lines.begin(), lines.end());
  std::string out;
  for (const auto& [id, line] : lines) out += line;
  return out;
}

void RuntimeImpl::cancelAllTasks() {
  for (LuaTask* task : retainAllTasks()) {
    if (!task->isMain && !task->isDone()) cancelTask(task);
    task->release();
  }
}

void RuntimeImpl::releaseLeftovers() {
  std::vector<LuaTask*> tasks;
  std::vector<Channel*> channels;
  for (RegistryShard& shard : shards_) {
    std::lock_guard lock(shard.mutex);
    for (LuaTask* task : shard.tasks.takeAll()) tasks.push_back(task);
    for (Channel* ch : shard.channels.takeAll()) channels.push_back(ch);
  }
  // Orphaned first, so that no destructor below or later reaches for this runtime. The
  // handles still holding tasks and channels release them when the heap lets them go (a
  // collection or the State's end); the rest go here. Every task is held meanwhile, so
  // dropping the references among them (awaited tasks) frees none under this loop.
  for (Channel* ch : channels) ch->orphaned = true;
  for (LuaTask* task : tasks) {
    task->orphaned = true;
    task->retain();
  }
  for (LuaTask* task : tasks) {
    if (LuaTask* awaited = task->wait.takeAwaited()) awaited->release();
  }
  for (LuaTask* task : tasks) task->release();
}

void RuntimeImpl::noteUnobservedError(uint64_t id, const std::string& traceback) {
  std::lock_guard lock(reportMutex_);
  unobserved_.emplace_back(id, traceback);
}

// In task id order, so the report does not depend on when the collector freed a task.
void RuntimeImpl::reportUnobservedErrors() {
  for (RegistryShard& shard : shards_) {
    std::lock_guard lock(shard.mutex);
    for (LuaTask* task : shard.tasks) {
      std::lock_guard done(task->doneLock);
      if (task->outcome != sched::TaskState::kPanicked || task->errorObserved) continue;
      task->errorObserved = true;
      noteUnobservedError(task->id(), task->aside ? task->aside->traceback : std::string());
    }
  }
  std::lock_guard lock(reportMutex_);
  std::sort(unobserved_.begin(), unobserved_.end());
  for (const auto& [id, traceback] : unobserved_) {
    std::fprintf(stderr, "weft: error in task %llu (never awaited): %s\n", (unsigned long long)id, traceback.c_str());
  }
  unobserved_.clear();
  std::fflush(stderr);
}

}  // namespace weft::runtime
