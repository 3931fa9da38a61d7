// The deterministic coordinator and its chooser (protocol in deterministic.h).
#include "runtime/sched/deterministic.h"

#include <algorithm>
#include <bit>
#include <chrono>
#include <cstdio>
#include <system_error>

#include "runtime/sched/internals.h"

namespace weft::runtime {

// --- the chooser -------------------------------------------------------------------------

DetChooser::DetChooser(const DeterministicOptions& options)
    : options_(options), rng_(options.seed), recording_(options.seed, options.budget) {
  if (!options_.recordPath.empty()) recording_.streamTo(options_.recordPath);
  if (options_.strategy == DetStrategy::kPct && options_.pctDepth > 1) {
    uint64_t horizon = std::max<uint64_t>(options_.pctSteps, 1);
    for (uint32_t i = 1; i < options_.pctDepth; i++) changePoints_.push_back(1 + rng_.below(horizon));
  }
}

// PCT's priorities: initial ones at or above pctDepth, so that the i-th change point's
// priority i is below all of them.
uint64_t DetChooser::priorityOf(uint64_t id) {
  auto [it, fresh] = priority_.try_emplace(id, 0);
  if (fresh) it->second = options_.pctDepth + rng_.below(uint64_t(1) << 40);
  return it->second;
}

uint32_t DetChooser::pickPct(uint32_t n, uint64_t previous, const DetCandidates& c) {
  for (size_t i = 0; i < changePoints_.size(); i++) {
    if (changePoints_[i] == runSteps_ && previous != 0) priority_[previous] = i + 1;
  }
  uint32_t best = 0;
  uint64_t bestPriority = 0;
  for (uint32_t i = 0; i < n; i++) {
    uint64_t p = priorityOf(c.idAt(i));
    if (i == 0 || p > bestPriority) {
      best = i;
      bestPriority = p;
    }
  }
  return best;
}

// The candidates are in the order they became ready, the newest last, with a task that
// yielded or spent its budget first (as the worker loop queues it behind the others). Like
// the worker loop, which runs what a dispatch just spawned or woke first (a tree of tasks
// depth first, so few are alive at once), the newest is chosen three times in four, the one
// before it three in sixteen, and so on; one decision in 256 is uniform over all, so
// every candidate keeps a chance at every step and a task that yields in a loop cannot
// starve the others.
uint32_t DetChooser::pickRandom(uint32_t n) {
  uint64_t r = rng_.next();
  if ((r & 255) == 0) return uint32_t(rng_.below(n));
  uint64_t back = uint64_t(std::countr_zero(r >> 8 | (uint64_t(1) << 55))) / 2;
  return back >= n ? 0 : uint32_t(n - 1 - back);
}

uint32_t DetChooser::pick(DecisionKind kind, uint32_t n, uint64_t previous,
                          const DetCandidates& c) {
  switch (options_.strategy) {
    case DetStrategy::kRandom:
      return kind == DecisionKind::kRun ? pickRandom(n) : uint32_t(rng_.below(n));
    case DetStrategy::kUniform:
      return uint32_t(rng_.below(n));
    case DetStrategy::kPct:
      return kind == DecisionKind::kRun ? pickPct(n, previous, c) : uint32_t(rng_.below(n));
    case DetStrategy::kReplay:
    case DetStrategy::kPrefix:
      break;
  }
  // Past a prefix: no preemption. The task the last step ran goes on when it still can
  // (a requeued task is the first ready candidate); otherwise the first candidate runs.
  uint32_t requeued = c.waiterCount();
  if (kind == DecisionKind::kRun && n > requeued && c.idAt(requeued) == previous) return requeued;
  return 0;
}

bool DetChooser::decide(DecisionKind kind, uint32_t n, uint64_t setHash, uint64_t previous,
                        const DetCandidates& c, uint32_t& index) {
  if (n == 1) {
    noChoice(kind);
    index = 0;
    return true;
  }
  uint16_t hash = foldSetHash(setHash);
  const std::vector<Decision>& script = options_.script.decisions;
  bool scripted = false;
  if ((options_.strategy == DetStrategy::kReplay || options_.strategy == DetStrategy::kPrefix) &&
      decisions_ < script.size()) {
    const Decision& d = script[decisions_];
    if (options_.strategy == DetStrategy::kReplay && (d.kind != kind || d.size != n || d.setHash != hash)) {
      divergence_ = "replay diverged from the recording at step " + std::to_string(decisions_ + 1) + ": the recording " +
                    (d.kind == DecisionKind::kRun ? "ran one of " + std::to_string(d.size) + " runnable tasks"
                                                  : "chose case " + std::to_string(d.index + 1) + " of a select among " +
                                                        std::to_string(d.size) + " ready cases") +
                    "; this run has " + std::to_string(n) +
                    (kind == DecisionKind::kRun ? " runnable tasks" : " ready select cases") +
                    (d.size == n ? " (a different set)" : "") +
                    (previous ? ", after a step of task " + std::to_string(previous) : "");
      return false;
    }
    // A prefix (exploration) takes the recorded index where it still fits.
    scripted = d.index < n;
    if (scripted) index = d.index;
  } else if (options_.strategy == DetStrategy::kReplay) {
    divergence_ = "replay diverged from the recording at step " + std::to_string(decisions_ + 1) +
                  ": the recording ended there, and this run goes on";
    return false;
  }
  if (!scripted) index = pick(kind, n, previous, c);
  decisions_++;
  if (kind == DecisionKind::kRun) runSteps_++;
  if (!options_.recordPath.empty()) recording_.add(Decision{kind, index, n, hash});
  return true;
}

std::string DetChooser::unreplayed() const {
  size_t recorded = options_.script.decisions.size();
  if (options_.strategy != DetStrategy::kReplay || decisions_ >= recorded) return "";
  return "replay: the program ended after " + std::to_string(decisions_) + " of the recording's " +
         std::to_string(recorded) + " decisions";
}

// --- the coordinator ---------------------------------------------------------------------

namespace {

// A task's DetStep, made by whichever thread needs it first (a compare-exchange keeps one;
// acq_rel: a reader sees it constructed). A task that never runs in this mode has none.
DetStep& stepIn(std::atomic<DetStep*>& slot) {
  DetStep* step = slot.load(std::memory_order_acquire);
  if (step) return *step;
  auto* made = new DetStep;
  if (slot.compare_exchange_strong(step, made, std::memory_order_acq_rel, std::memory_order_acquire)) return *made;
  delete made;
  return *step;
}

}  // namespace

DetStep& DetCoordinator::stepOf(const Task* t) { return stepIn(t->det_); }

bool Task::cancelledBeforeReady() const { return stepIn(det_).cancelAtStart; }

void Task::endStepAtOperation(int32_t budgetLeft) {
  DetStep& step = stepIn(det_);
  step.operationEnded = true;
  step.budgetAtOperation = budgetLeft;
}

// A step's phase and commit are written under mu_ (or where no other thread can read
// them: dispatchHere), which orders them for every reader that takes it: a plain store
// suffices (a seq_cst one is a fence on every step). The commit's release pairs with
// passGate's lock-free acquire.
void DetCoordinator::setPhase(Task* t, StepPhase phase) { stepOf(t).phase.store(phase, std::memory_order_relaxed); }
void DetCoordinator::setCommitted(Task* t, bool committed) {
  stepOf(t).committed.store(committed, std::memory_order_release);
}

DetCoordinator::DetCoordinator(SchedulerInternals& in, const DeterministicOptions& options)
    : in_(in), options_(options), chooser_(options) {}

void DetCoordinator::enqueue(Task* t, bool behind) {
  {
    std::lock_guard lock(mu_);
    if (behind) ready_.pushFront(t);
    else ready_.pushBack(t);
    readyHash_ += decisionMemberHash(runId(t));
    setPhase(t, kQueued);
    setCommitted(t, false);
    // Read where the task becomes ready, in decision order: a cancellation made after
    // this point reaches the task at a gate, since its step may already run ahead.
    stepOf(t).cancelAtStart = t->cancelRequested();
  }
  outside_.notify_one();
  if (parallel_ && worthAhead(t)) work_.notify_one();
}

TimerId DetCoordinator::addTimer(uint64_t deadlineNanos, std::function<void()> fn) {
  std::lock_guard lock(timerMu_);
  TimerId id = nextTimer_++;
  timers_.emplace(std::make_pair(deadlineNanos, id), std::move(fn));
  timerDeadline_[id] = deadlineNanos;
  noteEarliestLocked();
  return id;
}

bool DetCoordinator::cancelTimer(TimerId id) {
  std::lock_guard lock(timerMu_);
  auto it = timerDeadline_.find(id);
  if (it == timerDeadline_.end()) return false;
  timers_.erase({it->second, id});
  timerDeadline_.erase(it);
  noteEarliestLocked();
  return true;
}

// Relaxed: a timer is added or cancelled by the coordinator's own thread or by a step
// it waited for through mu_ (a wait's timer is armed after its ordered gate), so the
// value it reads is never older than its decision order needs.
void DetCoordinator::noteEarliestLocked() {
  earliest_.store(timers_.empty() ? UINT64_MAX : timers_.begin()->first.first, std::memory_order_relaxed);
}

void DetCoordinator::charge(int64_t units) {
  if (units > 0) clock_.fetch_add(uint64_t(units) * kNanosPerUnit, std::memory_order_relaxed);
}

uint64_t DetCoordinator::chooseCase(uint64_t n) {
  uint32_t index = 0;
  if (!chooser_.decide(DecisionKind::kSelect, uint32_t(n), 0, previous_, DetCandidates{}, index)) {
    in_.executor.onDiverged(chooser_.divergence());
  }
  return index;
}

bool DetCoordinator::earliestTimer(uint64_t& deadline) {
  std::lock_guard lock(timerMu_);
  if (timers_.empty()) return false;
  deadline = timers_.begin()->first.first;
  return true;
}

// Slow path of fireDueTimers: a timer may be due.
void DetCoordinator::fireDueTimersSlow() {
  for (;;) {
    if (!timerDue()) return;
    std::function<void()> fn;
    {
      std::lock_guard lock(timerMu_);
      if (timers_.empty() || timers_.begin()->first.first > nowNanos()) return;
      auto node = timers_.extract(timers_.begin());
      timerDeadline_.erase(node.key().second);
      noteEarliestLocked();
      fn = std::move(node.mapped());
    }
    fn();  // claims a wait and publishes its task: enqueue takes mu_
  }
}

// Nothing can run and no timer is pending, but the executor says a thread outside may
// still publish (a host posting to a port): wait for it, a little at a time, as the
// waiter's own wait may end from outside too (false: nothing can come).
bool DetCoordinator::waitForOutside() {
  if (!in_.executor.mayPublishFromOutside()) return false;
  std::unique_lock lock(mu_);
  outside_.wait_for(lock, std::chrono::milliseconds(1), [&] { return !ready_.empty() || in_.isClosed(); });
  return true;
}

namespace {
// The calling thread's DetThread: a runner's or a spare's; nullptr on the host thread.
thread_local DetThread* tlsDetThread = nullptr;
}  // namespace

DetThread& DetCoordinator::thisThread() { return tlsDetThread ? *tlsDetThread : host_; }

InlineRun DetCoordinator::runInline(Task* waiter, const std::function<bool()>& enabled) {
  DetThread& me = thisThread();
  bool holder;
  {
    std::lock_guard lock(mu_);
    WEFT_CHECK(!me.waiter, "a thread has one inline waiter");
    me.waiter = waiter;
    me.enabled = &enabled;
    waiting_.push_back(&me);
    holder = holder_ == &me;
    // A runner's committed step waits under a native frame: its committer, waiting for
    // the step's end (awaitStepEnd), goes on deciding without it.
    if (!holder) setPhase(waiter, kParked);
  }
  if (!holder) steps_.notify_all();
  InlineRun out = holder ? coordinate(me) : awaitHandOff(me);
  std::lock_guard lock(mu_);
  std::erase(waiting_, &me);
  me.waiter = nullptr;
  me.enabled = nullptr;
  return out;
}

// The inline waiters that can go on, then the ready tasks: their count and hash.
bool DetCoordinator::gatherCandidatesLocked(uint32_t& n, uint64_t& hash) {
  inlineThreads_.clear();
  inlineIds_.clear();
  hash = readyHash_;
  for (DetThread* d : waiting_) {
    if (!(*d->enabled)()) continue;
    uint64_t id = runId(d->waiter);
    inlineThreads_.push_back(d);
    inlineIds_.push_back(id);
    hash += decisionMemberHash(id);
  }
  n = uint32_t(inlineThreads_.size() + ready_.size());
  return n > 0;
}

// Under mu_: the chooser's decision among the candidates gathered now; false when there
// are none.
bool DetCoordinator::decideLocked(Choice& c, const Task* joining, bool joinsFirst) {
  uint32_t n;
  uint64_t hash;
  bool any = gatherCandidatesLocked(n, hash);
  if (joining) {
    n++;
    hash += decisionMemberHash(runId(joining));
  } else if (!any) {
    return false;
  }
  DetCandidates cand{&inlineIds_, &ready_, options_.firstId, joining, joinsFirst};
  uint32_t index = 0;
  if (n == 1) {
    chooser_.noChoice(DecisionKind::kRun);
  } else if (!chooser_.decide(DecisionKind::kRun, n, hash, previous_, cand, index)) {
    c.diverged = true;
    return true;
  }
  previous_ = cand.idAt(index);
  if (index < inlineThreads_.size()) {
    c.resume = inlineThreads_[index];
  } else {
    c.at = index - inlineThreads_.size();
    c.next = const_cast<Task*>(cand.readyAt(c.at));
  }
  return true;
}

// Under mu_: the chosen task leaves the candidates; `at` is where the decision saw it.
void DetCoordinator::removeReadyLocked(Task* t, size_t at) {
  if (at >= ready_.size() || ready_[at] != t) at = ready_.find(t);
  ready_.erase(at);
  readyHash_ -= decisionMemberHash(runId(t));
}

// Under mu_: the chosen step is committed. true when no runner took it: it runs where
// the role is.
bool DetCoordinator::commitLocked(const Choice& c) {
  removeReadyLocked(c.next, c.at);
  setCommitted(c.next, true);
  bool here = stepOf(c.next).phase == kQueued;
  if (here) setPhase(c.next, kInline);
  return here;
}

// The loop, on the thread that holds the role. Returns when `me`'s own waiter was
// chosen, or (for a thread without one) once the role went to another thread.
InlineRun DetCoordinator::coordinate(DetThread& me) {
  for (;;) {
    if (in_.isClosed()) return InlineRun::kClosed;
    // A decision continueInPlace made for the step that just ended, or a new one.
    Choice c = std::exchange(decided_, Choice{});
    bool decided = c.next || c.resume || c.diverged;
    if (!decided) fireDueTimers();
    bool here = false;
    {
      // One lock per step: a host thread may append to ready_ (a port's post).
      std::lock_guard lock(mu_);
      if (!decided) decided = decideLocked(c);
      if (c.next) here = commitLocked(c);
    }
    if (c.diverged) {
      in_.executor.onDiverged(chooser_.divergence());  // ends the run, from any holder
      return InlineRun::kDiverged;
    }
    if (!decided) {
      if (uint64_t next; earliestTimer(next)) {
        clock_.store(std::max(nowNanos(), next), std::memory_order_relaxed);
        continue;
      }
      if (waitForOutside()) continue;
      // The host thread reports a deadlock (or aborts the main task's wait at the prompt).
      if (&me == &host_) return InlineRun::kDeadlock;
      {
        std::lock_guard lock(mu_);
        handOffLocked(host_, DetThread::HandOff::kDeadlock);
      }
      return giveUpRole(me);
    }
    if (c.resume == &me) return InlineRun::kChosen;
    if (c.resume) {
      {
        std::lock_guard lock(mu_);
        handOffLocked(*c.resume, DetThread::HandOff::kResume);
      }
      return giveUpRole(me);
    }
    // A step a runner took runs there; one that runs here must not sit on a waiter.
    if (here && me.waiter) return handOffStep(me, c.next);
    dispatch(c.next, here);
  }
}

// The step of `t`, committed here, ends at a safepoint that can suspend it (its budget
// ran out or an ordered operation ended it): what settleStep and coordinate would do
// next, done without leaving the step. The chooser decides among the candidates with the
// task joining them where settleStep would put it. Picked again (true), its next step
// begins here: the bookkeeping of a step's end and start, without the dispatch (most
// steps of a tree of tasks end at a spawn or a send and go on). Otherwise (false) the
// step ends the usual way, and coordinate applies the decision (decided_) once
// settleStep has put the task where the decision saw it.
bool DetCoordinator::continueInPlace(Task* t, int32_t budgetLeft) {
  if (stepOf(t).phase.load(std::memory_order_relaxed) != kInline || in_.isClosed()) return false;
  budgetLeft = std::clamp(budgetLeft, 0, in_.slice);
  charge(in_.slice - budgetLeft);
  chargedInPlace_ = true;
  fireDueTimers();
  bool behind = !stepOf(t).operationEnded;
  Choice c;
  {
    std::lock_guard lock(mu_);
    decideLocked(c, t, behind);
    if (c.next != t) {
      decided_ = c;
      return false;
    }
    stepOf(t).lastUnits = workOf(t, budgetLeft);
    stepOf(t).cancelAtStart = t->cancelRequested();
  }
  chargedInPlace_ = false;
  stepOf(t).operationEnded = false;
  WorkerCore& core = *in_.cores[tlsCurrentWorker ? tlsCurrentWorker->index() : 0];
  bump(core.counters.budgetExhaustions);
  bump(core.counters.tasksRun);
  WEFT_CHECK(SchedulerInternals::settle(t, RunOutcome::kBudgetSpent) && SchedulerInternals::beginRun(t),
             "a running task goes on");
  return true;
}

// Under mu_: `to` holds the role from now on.
void DetCoordinator::handOffLocked(DetThread& to, DetThread::HandOff what, Task* commit) {
  holder_ = &to;
  to.handOff = what;
  to.commit = commit;
  handOffs_.notify_all();
}

// The chosen step `t` runs on an idle spare (started if none is), which takes the role.
InlineRun DetCoordinator::handOffStep(DetThread& me, Task* t) {
  std::unique_lock lock(mu_);
  DetThread* s;
  if (!idleSpares_.empty()) {
    s = idleSpares_.back();
    idleSpares_.pop_back();
  } else {
    s = &spares_.emplace_back(DetThread::Kind::kSpare);
    try {
      spareThreads_.emplace_back([this, s] { spare(*s); });
    } catch (const std::system_error&) {
      spares_.pop_back();
      lock.unlock();
      enqueue(t);  // the shutdown's drain releases it
      in_.self.close("could not start a worker thread");
      return InlineRun::kClosed;
    }
  }
  handOffLocked(*s, DetThread::HandOff::kCommit, t);
  lock.unlock();
  return giveUpRole(me);
}

// After handing the role over: a thread with an inline waiter parks until the role
// comes back; a spare idles (spare()), a runner runs steps ahead again (runner()).
InlineRun DetCoordinator::giveUpRole(DetThread& me) {
  if (me.waiter) return awaitHandOff(me);
  if (me.kind == DetThread::Kind::kSpare) {
    std::lock_guard lock(mu_);
    idleSpares_.push_back(&me);
  }
  return InlineRun::kChosen;
}

// Detached from the collector: the steps of the role's holder may collect.
InlineRun DetCoordinator::awaitHandOff(DetThread& me) {
  in_.executor.detachForStep();
  DetThread::HandOff what;
  {
    std::unique_lock lock(mu_);
    handOffs_.wait(lock, [&] { return me.handOff != DetThread::HandOff::kNone || in_.isClosed(); });
    what = std::exchange(me.handOff, DetThread::HandOff::kNone);
  }
  if (!in_.executor.attachAfterStep().isOk()) return InlineRun::kClosed;
  switch (what) {
    case DetThread::HandOff::kResume:
      return InlineRun::kChosen;
    case DetThread::HandOff::kDeadlock:
      return InlineRun::kDeadlock;
    case DetThread::HandOff::kNone:
    case DetThread::HandOff::kCommit:  // only an idle spare is given a step
      break;
  }
  return InlineRun::kClosed;
}

// A spare: runs the step it is handed with the role, then the loop, until it hands the
// role on. Attached only while it holds the role.
void DetCoordinator::spare(DetThread& me) {
  tlsDetThread = &me;
  bool started = in_.executor.onThreadStart().isOk();  // failing, it closed the scheduler
  for (;;) {
    Task* t = nullptr;
    {
      std::unique_lock lock(mu_);
      handOffs_.wait(lock, [&] { return me.handOff != DetThread::HandOff::kNone || in_.isClosed(); });
      if (me.handOff == DetThread::HandOff::kNone) break;
      me.handOff = DetThread::HandOff::kNone;
      t = std::exchange(me.commit, nullptr);
    }
    // A step handed over runs even when the scheduler closed meanwhile (the executor
    // ends it at once), so that its task is settled and released.
    bool attached = started && in_.executor.attachAfterStep().isOk();
    dispatchHere(t);
    if (attached) {
      coordinate(me);
      in_.executor.detachForStep();
    }
  }
  if (started) in_.executor.onThreadStop();
  tlsDetThread = nullptr;
}

// Commits the chosen task's step: runs it here if no runner took it, else lets it pass
// its gate and waits for its end (the coordinator's next decision depends on it). A
// runner's step that parked under a native frame is settled by its runner later.
void DetCoordinator::dispatch(Task* t, bool here) {
  if (here) return dispatchHere(t);
  if (awaitStepEnd(t) != kEnded) return;
  Worker* w = tlsCurrentWorker;
  settleRunnerStep(t, w ? *in_.cores[w->index()] : *in_.cores[0]);
}

void DetCoordinator::settleRunnerStep(Task* t, WorkerCore& c) {
  RunOutcome out;
  int32_t budget;
  {
    std::lock_guard lock(mu_);
    const DetStep& step = stepOf(t);
    out = step.outcome;
    budget = step.budget;
    setPhase(t, kIdle);
    setCommitted(t, false);
    stepOf(t).lastUnits = workOf(t, budget);
  }
  settleStep(t, out, budget, c);
}

// One step on this thread: the worker loop's dispatch and settling (worker.cpp). On a
// spare it counts as worker 0's; on a runner holding the role, as its own.
void DetCoordinator::dispatchHere(Task* t) {
  WEFT_CHECK(SchedulerInternals::beginRun(t), "a queued task is ready");
  Worker* outer = tlsCurrentWorker;
  WorkerCore& c = outer ? *in_.cores[outer->index()] : *in_.cores[0];
  tlsCurrentWorker = c.worker;
  bump(c.counters.tasksRun);
  int32_t budget = in_.slice;
  RunOutcome out;
  try {
    out = in_.executor.runTask(*c.worker, *t, budget);
  } catch (...) {
    out = RunOutcome::kPanicked;
  }
  tlsCurrentWorker = outer;
  // Without the lock: while the task runs (it is in no list), only its own thread reads
  // its phase and commit (passGate, continueInPlace), besides showsReady from a committed
  // step, and none other runs now. Whoever reads them next comes after settle's
  // release (a wake, then enqueue under mu_), or is this thread (enqueue).
  setPhase(t, kIdle);
  setCommitted(t, false);
  stepOf(t).lastUnits = workOf(t, budget);
  settleStep(t, out, budget, c);
}

// Detached from the collector: the step may collect, and so may the steps running ahead.
// kEnded, or kParked when the step waits under a native frame on its runner.
DetCoordinator::StepPhase DetCoordinator::awaitStepEnd(Task* t) {
  steps_.notify_all();  // a step waiting at its gate goes on
  in_.executor.detachForStep();
  StepPhase phase;
  {
    std::unique_lock lock(mu_);
    const DetStep& step = stepOf(t);
    steps_.wait(lock, [&] { return step.phase == kEnded || step.phase == kParked; });
    phase = StepPhase(step.phase.load(std::memory_order_relaxed));
  }
  if (!in_.executor.attachAfterStep().isOk()) return kParked;
  return phase;
}

void DetCoordinator::settleStep(Task* t, RunOutcome out, int32_t budget, WorkerCore& c) {
  // A step whose end continueInPlace saw was charged there (its clock fired the timers).
  if (!std::exchange(chargedInPlace_, false)) charge(in_.slice - std::max(budget, 0));
  if (out == RunOutcome::kBudgetSpent) bump(c.counters.budgetExhaustions);
  // A yield or a spent budget joins as the oldest; a step ended by an ordered operation
  // (a spawn, a send that did not wait) stays the newest, so the task likely goes on, as
  // on a worker (depth first: skynet keeps 1.1 million tasks alive otherwise).
  bool behind = out == RunOutcome::kYielded || (out == RunOutcome::kBudgetSpent && !stepOf(t).operationEnded);
  stepOf(t).operationEnded = false;
  if (SchedulerInternals::settle(t, out)) enqueue(t, behind);
}

// --- parallel steps ----------------------------------------------------------------------

Status DetCoordinator::startRunners() {
  parallel_ = in_.workerCount > 1;
  try {
    for (unsigned i = 1; i < in_.workerCount; i++) runners_.emplace_back([this, &c = *in_.cores[i]] { runner(c); });
  } catch (const std::system_error&) {
    in_.self.close("could not start a worker thread");
    return Status(StatusCode::kFatal);
  }
  return Status::ok();
}

void DetCoordinator::onClosed() {
  { std::lock_guard lock(mu_); }  // a waiter between its check and its sleep sees `closed`
  steps_.notify_all();
  work_.notify_all();
  outside_.notify_all();
  handOffs_.notify_all();
}

void DetCoordinator::joinThreads() {
  for (std::thread& r : runners_) r.join();
  runners_.clear();
  std::vector<std::thread> spares;
  {
    std::lock_guard lock(mu_);
    spares.swap(spareThreads_);
  }
  for (std::thread& s : spares) s.join();
}

// The work units a step did: an ordered operation ends a step by zeroing its budget.
uint32_t DetCoordinator::workOf(const Task* t, int32_t budgetLeft) const {
  const DetStep& step = stepOf(t);
  if (step.operationEnded) budgetLeft = step.budgetAtOperation;
  return uint32_t(in_.slice - std::clamp(budgetLeft, 0, in_.slice));
}

bool DetCoordinator::worthAhead(const Task* t) const { return stepOf(t).lastUnits >= uint32_t(in_.slice / 4); }

// The newest candidate worth running ahead that no thread runs, among the newest few
// (the chooser favours the newest: pickRandom), so that a long ready list costs nothing.
Task* DetCoordinator::takeAheadLocked() {
  constexpr size_t kScan = 64;
  size_t end = ready_.size() > kScan ? ready_.size() - kScan : 0;
  for (size_t i = ready_.size(); i-- > end;) {
    Task* t = ready_[i];
    if (stepOf(t).phase == kQueued && worthAhead(t)) {
      setPhase(t, kAhead);
      return t;
    }
  }
  return nullptr;
}

// A runner: runs candidates' steps ahead, each up to its gate and, once committed, to
// its end, which it reports for the coordinator to settle. Attached only while it runs.
void DetCoordinator::runner(WorkerCore& c) {
  if (!in_.executor.onThreadStart().isOk()) return;  // the executor closed the scheduler
  DetThread me(DetThread::Kind::kRunner);
  tlsDetThread = &me;
  tlsCurrentWorker = c.worker;
  for (;;) {
    in_.executor.onIdle(*c.worker);
    Task* t = nullptr;
    {
      std::unique_lock lock(mu_);
      work_.wait(lock, [&] { return in_.isClosed() || (t = takeAheadLocked()) != nullptr; });
    }
    // A step taken runs even when the scheduler closed meanwhile (the executor ends it
    // at once): a coordinator may have committed it and wait for its end.
    if (!t) break;
    int32_t budget = in_.slice;
    RunOutcome out = RunOutcome::kYielded;  // a step that could not start changes nothing
    if (in_.executor.onBusy(*c.worker).isOk()) {
      WEFT_CHECK(SchedulerInternals::beginRun(t), "a queued task is ready");
      bump(c.counters.tasksRun);
      try {
        out = in_.executor.runTask(*c.worker, *t, budget);
      } catch (...) {
        out = RunOutcome::kPanicked;
      }
      if (out == RunOutcome::kBudgetSpent) bump(c.counters.budgetExhaustions);
    }
    bool holder;
    {
      std::lock_guard lock(mu_);
      DetStep& step = stepOf(t);
      step.outcome = out;
      step.budget = budget;
      setPhase(t, kEnded);
      holder = holder_ == &me;
    }
    if (!holder) {
      steps_.notify_all();
      continue;
    }
    // The step parked under a native frame and the chooser picked it again: this thread
    // holds the role, settles the step and coordinates until it hands the role on.
    settleRunnerStep(t, c);
    coordinate(me);
  }
  in_.executor.onIdle(*c.worker);
  in_.executor.onThreadStop();
  tlsCurrentWorker = nullptr;
  tlsDetThread = nullptr;
}

// On the step's own thread. Without the lock: only a commit (the coordinator's, under
// mu_) changes the phase or the commit of a step running here; acquire orders what the
// coordinator did before it. A stale "not committed" only takes the lock.
bool DetCoordinator::passGate(Task* t) {
  if (!parallel_) return true;
  DetStep& step = stepOf(t);
  if (step.committed.load(std::memory_order_acquire) || step.phase.load(std::memory_order_relaxed) != kAhead) {
    return true;
  }
  std::lock_guard lock(mu_);
  return step.committed || step.phase != kAhead;
}

bool DetCoordinator::waitCommitted(Task* t) {
  std::unique_lock lock(mu_);
  const DetStep& step = stepOf(t);
  steps_.wait(lock, [&] { return step.committed || in_.isClosed(); });
  return step.committed;
}

// From a committed step, about another task: no commit can happen meanwhile (the
// coordinator waits for this step), and a runner moves an uncommitted step only forward,
// from kQueued (false; its state is still ready) to kAhead and kEnded (true); relaxed
// reads suffice, as wake and cancel ask only after reading the task's state as running.
bool DetCoordinator::showsReady(const Task* t) {
  if (!parallel_) return false;
  const DetStep& step = stepOf(t);
  uint8_t phase = step.phase.load(std::memory_order_relaxed);
  return !step.committed.load(std::memory_order_relaxed) && (phase == kAhead || phase == kEnded);
}

std::string DetCoordinator::finish() {
  if (finished_) return "";
  finished_ = true;
  if (std::string left = chooser_.unreplayed(); !left.empty()) std::fprintf(stderr, "weft: %s\n", left.c_str());
  if (options_.recordPath.empty()) return "";
  std::string error;
  chooser_.finishRecording(error);
  return error;
}

void DetCoordinator::drain() {
  std::vector<Task*> rest;
  {
    std::lock_guard lock(mu_);
    ready_.drainTo(rest);
    readyHash_ = 0;
  }
  for (Task* t : rest) t->release();
  std::lock_guard lock(timerMu_);
  timers_.clear();
  timerDeadline_.clear();
  noteEarliestLocked();
}

}  // namespace weft::runtime
