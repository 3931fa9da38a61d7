// Deterministic mode: one seeded chooser makes every scheduling decision, time is
// logical, and a run's decisions can be recorded, replayed and explored
// (docs/design/deterministic.md).
//
// Protocol:
//  - No timer thread starts. One thread at a time holds the coordinator's **role**: it
//    runs the coordinator loop, which makes every decision and commits one task's step
//    at a time. The host thread, which runs the main task (the program's), holds it
//    first. Whenever the main task reaches a schedule point (it spent its budget,
//    finished an ordered operation, or waits), its thread runs the loop (runInline)
//    until the chooser picks the main task again.
//  - An **inline waiter** is a task whose frames stay on its thread's stack while it
//    waits: the main task at every schedule point, and any task that waits under a
//    native frame (a sort comparator, a gsub function). Its thread never runs another
//    task's step: those would sit on top of the waiter's frames, and the waiter could
//    not go on before they did. So its thread, holding the role, hands the chosen step
//    to a **spare** thread (started on demand) together with the role, and parks until
//    the role comes back with its own task chosen. A spare runs steps and the loop until
//    it hands the role to the thread of a chosen inline waiter; then it idles. A step
//    that waits under a native frame makes its spare an inline waiter's thread in turn.
//    Each thread has at most one inline waiter, and each waiter whose wait ended is a
//    candidate. Exactly one thread runs the loop or a committed step at any moment: the
//    others wait for it.
//  - A step is one dispatch: it ends when the task waits, yields, finishes, or spends
//    its budget; an ordered operation (a channel operation, spawn, await, select, sleep,
//    task.now, a cancel) sets the budget to zero, so the step ends at the safepoint
//    that follows it. Budgets count VM work units, so steps end at the same instruction
//    in every run. A step run where the role is that ends at a safepoint is decided
//    there (continueInPlace): picked again, its task's next step goes on in the same
//    dispatch.
//  - Parallel steps (more than one worker): runner threads (workers 1..N-1) run the
//    steps of queued candidates ahead, newest first, up to their first **gate**: an
//    ordered operation, an effect on the world (print, io, os, the collector's
//    controls), the task's end, or the safepoint where its budget runs out. There the
//    step waits until the chooser picks it (it is committed) and then runs to its end,
//    while the coordinator waits for that end. A step not started when it is picked
//    runs where the role is (or on a spare), committed from its start. So everything another
//    task or the world can see happens in decision order, and the decisions are those
//    of one worker; only what a step reads from tables other tasks write is not
//    determined. Only a task whose last step was long (a quarter of the budget or
//    more) runs ahead: a short step costs less on the coordinator than its hand-over
//    between threads. Phases of a step (DetStep::phase, under mu_): kIdle (not a
//    candidate) -> kQueued (a candidate) -> kAhead (a runner runs it) or kInline (the
//    coordinator does) -> kEnded (the runner's dispatch ended) -> kIdle at settling.
//  - Candidates of a step: the inline waiters whose waits ended first, in the order they
//    began waiting, then the ready tasks in the order the run made them ready, except that a task
//    whose step ended by a yield or its budget goes first, behind the chooser's favourite
//    newest (as the worker loop puts it behind its queue). Same decisions, same
//    order: the candidate lists of a replay are the recording's, and a differing one is
//    a divergence.
//  - The logical clock advances by kNanosPerUnit for every work unit a step spends, and
//    jumps to the earliest timer when nothing can run; timers fire in (deadline, id)
//    order on the coordinator, before each decision.
//  - Threads: the chooser and previous_ belong to whichever thread holds the role (one at
//    a time; the hand-over goes through mu_); ready_, the steps' phases, the inline
//    waiters and the role's holder are under mu_, which a host thread posting to a port
//    takes too; the timers are under timerMu_.
#pragma once

#include <atomic>
#include <condition_variable>
#include <cstdint>
#include <deque>
#include <functional>
#include <map>
#include <mutex>
#include <string>
#include <thread>
#include <unordered_map>
#include <vector>

#include "runtime/sched/schedule_file.h"
#include "runtime/sched/scheduler.h"
#include "runtime/sched/task_ring.h"
#include "runtime/sched/victim_order.h"

namespace weft::runtime {

struct SchedulerInternals;
struct WorkerCore;

// Logical nanoseconds per VM work unit (a safepoint): about what one costs in real time,
// so that a slice of 10,000 units is 0.2 ms of logical time.
inline constexpr uint64_t kNanosPerUnit = 20;

// A task's state in deterministic mode's parallel steps (Task::det_, made on first use:
// DetCoordinator::stepOf). DetCoordinator::mu_ guards it, except cancelAtStart, written
// under it before the task is queued and read by the thread that took the task (under it
// too) when its step starts. The phase and the commit are written under mu_ (or by the
// thread of a step that ran where the role is, at its end: DetCoordinator::dispatchHere)
// and also read without it (passGate, showsReady: atomics, see there).
struct DetStep {
  std::atomic<uint8_t> phase{0};       // DetCoordinator's StepPhase
  std::atomic<bool> committed{false};  // the chooser picked the step: it may pass its gates
  bool cancelAtStart = false;
  bool operationEnded = false;                // the task's thread in its step; the settling thread after
  int32_t budgetAtOperation = 0;              // likewise
  uint32_t lastUnits = 0;                     // work units its last step spent
  RunOutcome outcome = RunOutcome::kYielded;  // how a step ended on a runner
  int32_t budget = 0;                         // what it left of its budget
};

// The candidates of a decision: the inline waiters that can run first, then the ready
// tasks (kRun); a select's cases have no ids (ready == nullptr). `joining`, when set, is
// a ready task for this decision only, first or last among them (continueInPlace).
struct DetCandidates {
  const std::vector<uint64_t>* waiters = nullptr;  // ids counted from DeterministicOptions::firstId (runId)
  const TaskRing* ready = nullptr;
  uint64_t firstId = 1;
  const Task* joining = nullptr;
  bool joinsFirst = false;
  uint32_t waiterCount() const { return waiters ? uint32_t(waiters->size()) : 0; }
  // The ready task at `i` among the ready ones, `joining` included.
  const Task* readyAt(size_t i) const {
    if (!joining) return (*ready)[i];
    if (joinsFirst) return i == 0 ? joining : (*ready)[i - 1];
    return i == ready->size() ? joining : (*ready)[i];
  }
  uint64_t idAt(uint32_t i) const {
    uint32_t w = waiterCount();
    return i < w ? (*waiters)[i] : readyAt(i - w)->id() - firstId + 1;
  }
};

// A thread that may hold the coordinator's role: the host thread, a runner, a spare.
// Its fields are under DetCoordinator::mu_.
struct DetThread {
  enum class Kind : uint8_t { kHost, kRunner, kSpare };
  // What the role's last holder asked of this thread when it handed the role over.
  enum class HandOff : uint8_t { kNone, kResume, kCommit, kDeadlock };
  explicit DetThread(Kind k) : kind(k) {}
  Kind kind;
  HandOff handOff = HandOff::kNone;
  Task* commit = nullptr;   // kCommit: the step to run, chosen and committed
  Task* waiter = nullptr;   // its inline waiter, if any
  const std::function<bool()>* enabled = nullptr;  // the waiter's: whether it can go on
};

// The seeded chooser of a deterministic run: every decision goes through decide().
class DetChooser {
 public:
  explicit DetChooser(const DeterministicOptions& options);
  // Chooses an index in [0, n) for a decision over n candidates (kRun) or over n select
  // cases (kSelect: `c` is not read). `setHash`: the
  // candidates' DecisionSet hash; `previous`: the task the last step ran. false when a
  // replay diverged from its recording (divergence() tells where).
  bool decide(DecisionKind kind, uint32_t n, uint64_t setHash, uint64_t previous,
              const DetCandidates& c, uint32_t& index);
  // A decision over one candidate, which is no choice: neither recorded nor replayed
  // (half of a ping-pong's steps); PCT counts it as a step.
  void noChoice(DecisionKind kind) { runSteps_ += kind == DecisionKind::kRun; }
  // Ends the recording streamed to DeterministicOptions::recordPath; false with `error`
  // set. Once.
  bool finishRecording(std::string& error) { return recording_.finishFile(error); }
  const std::string& divergence() const { return divergence_; }
  // A replay that ended before its recording did: what is left ("" otherwise).
  std::string unreplayed() const;

 private:
  uint32_t pick(DecisionKind kind, uint32_t n, uint64_t previous, const DetCandidates& c);
  uint32_t pickRandom(uint32_t n);
  uint32_t pickPct(uint32_t n, uint64_t previous, const DetCandidates& c);
  uint64_t priorityOf(uint64_t id);

  DeterministicOptions options_;
  Rng rng_;
  ScheduleWriter recording_;
  uint64_t decisions_ = 0;  // every decision so far (the script's position)
  uint64_t runSteps_ = 0;   // kRun decisions so far (PCT counts these)
  std::string divergence_;
  // PCT: each task's priority (higher runs first), and the steps at which the running
  // task's priority drops below every initial one.
  std::unordered_map<uint64_t, uint64_t> priority_;
  std::vector<uint64_t> changePoints_;
};

class DetCoordinator {
 public:
  DetCoordinator(SchedulerInternals& in, const DeterministicOptions& options);

  // A task became ready (spawn, wake, cancel of a suspended task): it joins the
  // candidates, the newest. The scheduler's reference comes with it. Any thread.
  // `behind`: its step yielded or spent its budget, so it joins as the oldest.
  void enqueue(Task* t, bool behind = false);
  TimerId addTimer(uint64_t deadlineNanos, std::function<void()> fn);
  bool cancelTimer(TimerId id);
  // The logical clock: nanoseconds since the run began. Any thread (relaxed: only the
  // coordinator advances it, and everything that reads it in a deterministic way runs
  // on the coordinator).
  uint64_t nowNanos() const { return clock_.load(std::memory_order_relaxed); }
  // A task's id as the run's decisions name it (DeterministicOptions::firstId).
  uint64_t runId(const Task* t) const { return t->id() - options_.firstId + 1; }
  // Work units the inline task spent since its last step (the main task's own slices).
  void charge(int64_t units);
  uint64_t chooseCase(uint64_t n);
  // `waiter` waits with its frames on this thread's stack until `enabled()` and the
  // chooser picks it; meanwhile this thread coordinates while it holds the role, and
  // hands the role and the steps it chose to other threads (the protocol).
  InlineRun runInline(Task* waiter, const std::function<bool()>& enabled);
  // Writes the recording (DeterministicOptions::recordPath) once; "" or an error.
  std::string finish();
  const std::string& divergence() const { return chooser_.divergence(); }
  // Parallel steps: starts a runner on each worker but the first (Scheduler::start),
  // wakes every waiting thread when the scheduler closes, joins the runners and the
  // spares (shutdown).
  Status startRunners();
  void onClosed();
  void joinThreads();
  void drain();  // shutdown: drops every queued task
  // The gate of a step (Scheduler::passGate, waitCommitted, showsReady).
  bool passGate(Task* t);
  bool waitCommitted(Task* t);
  bool showsReady(const Task* t);
  // On the thread of a step committed where the role is, at a safepoint where its budget
  // ran out (Scheduler::continueStep): true when the chooser picks its task again and its
  // next step goes on here.
  bool continueInPlace(Task* t, int32_t budgetLeft);

 private:
  // kParked: a committed step on a runner waits under a native frame; its runner ends
  // and settles it once the chooser picks it again.
  enum StepPhase : uint8_t { kIdle, kQueued, kAhead, kInline, kEnded, kParked };
  static DetStep& stepOf(const Task* t);
  static void setPhase(Task* t, StepPhase phase);
  static void setCommitted(Task* t, bool committed);
  // Before every decision: without the lock while no timer is due (most steps).
  bool timerDue() const { return earliest_.load(std::memory_order_relaxed) <= nowNanos(); }
  void fireDueTimers() {
    if (timerDue()) [[unlikely]] fireDueTimersSlow();
  }
  void fireDueTimersSlow();
  void noteEarliestLocked();
  bool earliestTimer(uint64_t& deadline);
  bool waitForOutside();
  DetThread& thisThread();
  // A decision of the loop: the chosen inline waiter's thread, or the chosen ready task
  // and its index among the ready tasks the decision saw.
  struct Choice {
    DetThread* resume = nullptr;
    Task* next = nullptr;
    size_t at = 0;
    bool diverged = false;  // a replay met other candidates than its recording's
  };
  InlineRun coordinate(DetThread& me);
  bool gatherCandidatesLocked(uint32_t& n, uint64_t& hash);
  bool decideLocked(Choice& c, const Task* joining = nullptr, bool joinsFirst = false);
  void removeReadyLocked(Task* t, size_t at);
  bool commitLocked(const Choice& c);
  InlineRun awaitHandOff(DetThread& me);
  void handOffLocked(DetThread& to, DetThread::HandOff what, Task* commit = nullptr);
  InlineRun handOffStep(DetThread& me, Task* t);
  InlineRun giveUpRole(DetThread& me);
  void spare(DetThread& me);
  void dispatch(Task* t, bool here);
  void dispatchHere(Task* t);
  StepPhase awaitStepEnd(Task* t);
  void settleRunnerStep(Task* t, WorkerCore& c);
  void settleStep(Task* t, RunOutcome out, int32_t budget, WorkerCore& c);
  void runner(WorkerCore& c);
  Task* takeAheadLocked();
  bool worthAhead(const Task* t) const;
  uint32_t workOf(const Task* t, int32_t budgetLeft) const;

  SchedulerInternals& in_;
  DeterministicOptions options_;
  DetChooser chooser_;
  std::mutex mu_;
  std::condition_variable outside_;       // enqueue from another thread
  std::condition_variable steps_;         // a step was committed or ended, or closed
  std::condition_variable work_;          // runners: a step worth running ahead was queued
  std::condition_variable handOffs_;      // a DetThread got the role, or closed
  TaskRing ready_;                        // mu_: oldest first (requeued steps go first)
  std::vector<std::thread> runners_;      // started and joined by the lifecycle's callers
  DetThread host_{DetThread::Kind::kHost};
  DetThread* holder_ = &host_;            // mu_: the thread that holds the role
  std::vector<DetThread*> waiting_;       // mu_: threads with an inline waiter, oldest first
  std::deque<DetThread> spares_;          // mu_: every spare (a deque: their addresses stay)
  std::vector<DetThread*> idleSpares_;    // mu_
  std::vector<std::thread> spareThreads_; // mu_; joined by joinThreads
  // The holder's scratch for one decision: the inline waiters that can run, and their ids.
  std::vector<DetThread*> inlineThreads_;
  std::vector<uint64_t> inlineIds_;
  uint64_t readyHash_ = 0;                // mu_: the sum of decisionMemberHash(id) over ready_
  std::atomic<uint64_t> clock_{0};
  // The timers: added and fired in decision order, but a step running ahead cancels the
  // timer of the wait it finishes (harmless early: its task is a candidate until its
  // commit, so no jump of the clock can reach that deadline meanwhile).
  std::mutex timerMu_;
  std::map<std::pair<uint64_t, TimerId>, std::function<void()>> timers_;  // timerMu_; (deadline, id)
  std::unordered_map<TimerId, uint64_t> timerDeadline_;                  // timerMu_
  TimerId nextTimer_ = 1;                                                // timerMu_
  std::atomic<uint64_t> earliest_{UINT64_MAX};  // written under timerMu_: the first deadline
  uint64_t previous_ = 0;  // the task the last step ran
  // The role's holder's: a decision continueInPlace made for the step now ending, which
  // it also charged to the clock (settleStep then does not).
  Choice decided_;
  bool chargedInPlace_ = false;
  bool finished_ = false;
  bool parallel_ = false;  // runners run steps ahead; set by startRunners, before any task
};

}  // namespace weft::runtime
