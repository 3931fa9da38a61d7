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
  visitValue(visitor, task.handle);
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
  if (task->handle.isUserdata()) __builtin_prefetch(task->handle.asUserdata());
}

}  // namespace

LuaTask::LuaTask(RuntimeImpl& r, vm::Thread* th) : rt(r), thread(th), data(th->data) {
  data->task = this;
  rt.addTask(this);
}

LuaTask::~LuaTask() {
  if (awaited) awaited->release();
  if (orphaned || !registered) return;  // its runtime or its thread may be gone already
  if (data) data->task = nullptr;
  if (outcome == sched::TaskState::kPanicked && !errorObserved) rt.noteUnobservedError(id(), aside ? aside->traceback : std::string());
  rt.removeTask(this);
}

// A suspended task's record is part of its memory (docs/design/tasks.md): 320 bytes is
// one of the allocator's size classes, the next is 384.
static_assert(sizeof(LuaTask) <= 320, "LuaTask outgrew its 320-byte size class");

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

// A task record or a channel (both carry gcDirty and dirtySlot) joins or leaves its
// shard's dirty list in constant time.
template <typename T>
void addDirtyLocked(std::vector<T*>& dirty, T* entry) {
  entry->gcDirty.store(true, std::memory_order_relaxed);
  dirty.push_back(entry);
  entry->dirtySlot = uint32_t(dirty.size());
}

template <typename T>
void removeDirtyLocked(std::vector<T*>& dirty, T* entry) {
  if (!entry->gcDirty.load(std::memory_order_relaxed)) return;
  T* last = dirty.back();
  dirty[entry->dirtySlot - 1] = last;
  last->dirtySlot = entry->dirtySlot;
  dirty.pop_back();
  entry->dirtySlot = 0;
  entry->gcDirty.store(false, std::memory_order_relaxed);
}

// After a collection: every entry is clean.
template <typename T>
void clearDirtyLocked(std::vector<T*>& dirty) {
  for (T* entry : dirty) {
    entry->dirtySlot = 0;
    entry->gcDirty.store(false, std::memory_order_relaxed);
  }
  dirty.clear();
}

void traceBuffer(gc::Visitor& visitor, Channel& ch) {
  ch.buffer.forEach([&](Value& v) { visitValue(visitor, v); });
}

}  // namespace

// A new record points to a young thread: dirty from the start.
void RuntimeImpl::addTask(LuaTask* task) {
  RegistryShard& shard = shardForNew();
  task->regShard = uint8_t(&shard - shards_.data());
  std::lock_guard lock(shard.mutex);
  shard.tasks.insert(task);
  addDirtyLocked(shard.dirty, task);
}

void RuntimeImpl::removeTask(LuaTask* task) {
  RegistryShard& shard = shards_[task->regShard];
  std::lock_guard lock(shard.mutex);
  if (shard.tasks.contains(task)) shard.tasks.erase(task);
  removeDirtyLocked(shard.dirty, task);
  task->registered = false;
}

void RuntimeImpl::noteRecordWritten(LuaTask& task) {
  if (task.gcDirty.load(std::memory_order_relaxed)) return;
  RegistryShard& shard = shards_[task.regShard];
  std::lock_guard lock(shard.mutex);
  if (!task.gcDirty.load(std::memory_order_relaxed) && shard.tasks.contains(&task)) addDirtyLocked(shard.dirty, &task);
}

void RuntimeImpl::noteChannelWritten(Channel& ch) {
  if (ch.gcDirty.load(std::memory_order_relaxed)) return;
  if (gc::fault::hit("rt.channel-dirty-drop")) return;
  RegistryShard& shard = shards_[ch.regShard];
  std::lock_guard lock(shard.mutex);
  if (!ch.gcDirty.load(std::memory_order_relaxed) && shard.channels.contains(&ch))
    addDirtyLocked(shard.dirtyChannels, &ch);
}

void RuntimeImpl::addChannel(Channel* ch) {
  RegistryShard& shard = shardForNew();
  ch->regShard = uint8_t(&shard - shards_.data());
  std::lock_guard lock(shard.mutex);
  shard.channels.insert(ch);
}

void RuntimeImpl::removeChannel(Channel* ch) {
  RegistryShard& shard = shards_[ch->regShard];
  std::lock_guard lock(shard.mutex);
  if (shard.channels.contains(ch)) shard.channels.erase(ch);
  removeDirtyLocked(shard.dirtyChannels, ch);
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
  for (RegistryShard& shard : shards_) {
    std::lock_guard lock(shard.mutex);
    traceShard(visitor, shard);
  }
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
  bool skipping = false;  // what the verifier was last told: only changes are told
  auto skippedByMinor = [&](const std::atomic<bool>& dirty) {
    bool clean = !dirty.load(std::memory_order_relaxed);
    if (pass != gc::Pass::kCheck || clean == skipping) return;
    skipping = clean;
    gc::setSkippedByMinor(visitor, clean);
  };
  if (pass == gc::Pass::kMinor) {
    for (LuaTask* task : shard.dirty) traceTask(visitor, *task);
    for (Channel* ch : shard.dirtyChannels) traceBuffer(visitor, *ch);
  } else {
    const SlotList<LuaTask>& tasks = shard.tasks;
    size_t n = tasks.slotCount();
    for (size_t i = 0; i < n; i++) {
      if (i + 2 * kAhead < n) prefetchRecord(tasks.at(i + 2 * kAhead));
      if (i + kAhead < n) prefetchReferents(tasks.at(i + kAhead));
      if (LuaTask* task = tasks.at(i)) {
        skippedByMinor(task->gcDirty);
        traceTask(visitor, *task);
      }
    }
    for (Channel* ch : shard.channels) {
      skippedByMinor(ch->gcDirty);
      traceBuffer(visitor, *ch);
    }
    if (skipping) gc::setSkippedByMinor(visitor, false);
  }
  if (pass != gc::Pass::kCheck) {
    clearDirtyLocked(shard.dirty);
    clearDirtyLocked(shard.dirtyChannels);
  }
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
    if (LuaTask* awaited = std::exchange(task->awaited, nullptr)) awaited->release();
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
