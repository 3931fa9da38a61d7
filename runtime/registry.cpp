// The registry of tasks and channels: the runtime's root container. Every task's thread
// (so its frames), its handle, the values of its waits and every channel's buffer are
// traced and updated here by the collector, world stopped; so nothing stale survives a
// relocation into a task's next dispatch. regMutex_ guards the sets; the collector also
// takes it, since a task may be released on the timer thread (not a mutator).
#include <algorithm>
#include <cstdio>
#include <utility>
#include <vector>

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
  visitValue(visitor, task.delivered);
  visitValue(visitor, task.error);
  for (Value& v : task.results) visitValue(visitor, v);
  for (Waiter& w : task.waiters) visitValue(visitor, w.value);
}

// The traced fields span the record's first lines after its bases (task.h).
void prefetchRecord(const LuaTask* task) {
  if (!task) return;
  __builtin_prefetch(&task->thread);
  __builtin_prefetch(&task->waiters);
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
  if (outcome == sched::TaskState::kPanicked && !errorObserved) rt.noteUnobservedError(id(), traceback ? *traceback : std::string());
  rt.removeTask(this);
}

LuaTask* currentTask(RuntimeImpl& rt, vm::ThreadData* t) {
  return t->task ? static_cast<LuaTask*>(t->task) : rt.mainTask;
}

void RuntimeImpl::addTask(LuaTask* task) {
  std::lock_guard lock(regMutex_);
  tasks_.insert(task);
}

void RuntimeImpl::removeTask(LuaTask* task) {
  std::lock_guard lock(regMutex_);
  if (tasks_.contains(task)) tasks_.erase(task);
  task->registered = false;
}

void RuntimeImpl::addChannel(Channel* ch) {
  std::lock_guard lock(regMutex_);
  channels_.insert(ch);
}

void RuntimeImpl::removeChannel(Channel* ch) {
  std::lock_guard lock(regMutex_);
  if (channels_.contains(ch)) channels_.erase(ch);
}

void RuntimeImpl::traceRoots(gc::Visitor& visitor) {
  visitObject(visitor, taskMeta);
  visitObject(visitor, channelMeta);
  std::lock_guard lock(regMutex_);
  // A hundred thousand suspended tasks are common: each costs cache misses on its
  // record, then on its Thread object and handle (copied here). Records are prefetched
  // 2 * kAhead tasks ahead, and the objects they point to kAhead ahead, once their
  // record has arrived.
  constexpr size_t kAhead = 8;
  size_t n = tasks_.slotCount();
  for (size_t i = 0; i < n; i++) {
    if (i + 2 * kAhead < n) prefetchRecord(tasks_.at(i + 2 * kAhead));
    if (i + kAhead < n) prefetchReferents(tasks_.at(i + kAhead));
    if (LuaTask* task = tasks_.at(i)) traceTask(visitor, *task);
  }
  for (Channel* ch : channels_) {
    ch->buffer.forEach([&](Value& v) { visitValue(visitor, v); });
  }
}

std::string RuntimeImpl::describeBlockedTasks() {
  std::string out;
  std::lock_guard lock(regMutex_);
  std::vector<LuaTask*> sorted;
  for (LuaTask* task : tasks_) sorted.push_back(task);
  std::sort(sorted.begin(), sorted.end(), [](LuaTask* a, LuaTask* b) { return a->id() < b->id(); });
  for (LuaTask* task : sorted) {
    if (task->done) continue;
    out += "  task ";
    out += task->isMain ? "main" : std::to_string(task->id());
    out += ": ";
    out += task->phase() == WaitPhase::kWaiting ? task->describeWait() : std::string("not waiting");
    out += '\n';
  }
  return out;
}

void RuntimeImpl::cancelAllTasks() {
  std::vector<LuaTask*> alive;
  {
    std::lock_guard lock(regMutex_);
    for (LuaTask* task : tasks_) {
      if (task->isMain || task->done) continue;
      task->retain();
      alive.push_back(task);
    }
  }
  for (LuaTask* task : alive) {
    cancelTask(task);
    task->release();
  }
}

void RuntimeImpl::releaseLeftovers() {
  std::vector<LuaTask*> tasks;
  std::vector<Channel*> channels;
  {
    std::lock_guard lock(regMutex_);
    tasks = tasks_.takeAll();
    channels = channels_.takeAll();
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
  {
    std::lock_guard lock(regMutex_);
    for (LuaTask* task : tasks_) {
      std::lock_guard done(task->doneMutex);
      if (task->outcome != sched::TaskState::kPanicked || task->errorObserved) continue;
      task->errorObserved = true;
      noteUnobservedError(task->id(), task->traceback ? *task->traceback : std::string());
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
