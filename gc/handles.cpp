// Scoped and persistent handles: roots the collector visits and updates.
//
// Protocol: a HandleScope (inline, heap.h) records its mutator's handle-stack height and
// restores it when it ends, so scopes nest strictly LIFO per thread. Each stack is one
// reserved mapping that never moves, which keeps every Handle's slot pointer valid while
// its scope lives. Persistent handles are slots in a table with a free list, shared by
// every mutator: the table changes under the heap lock; a freed slot holds nullptr and
// is skipped.
#include <mutex>

#include "gc/heap_internal.h"

namespace weft::gc {

PersistentHandle::PersistentHandle(Heap& heap, Object* obj) : heap_(heap) {
  Heap::Impl& impl = *heap.impl_;
  std::lock_guard lock(impl.mutex);
  if (impl.persistentFree.empty()) {
    index_ = impl.persistent.size();
    impl.persistent.push_back(obj);
  } else {
    index_ = impl.persistentFree.back();
    impl.persistentFree.pop_back();
    impl.persistent[index_] = obj;
  }
}

PersistentHandle::~PersistentHandle() {
  Heap::Impl& impl = *heap_.impl_;
  std::lock_guard lock(impl.mutex);
  impl.persistent[index_] = nullptr;
  impl.persistentFree.push_back(index_);
}

Object* PersistentHandle::get() const { return heap_.impl_->persistent[index_]; }

void PersistentHandle::set(Object* obj) { heap_.impl_->persistent[index_] = obj; }

}  // namespace weft::gc
