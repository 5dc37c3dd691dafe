#include "live/stack_sampling.h"

#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iterator>

#include <nlohmann/json.hpp>

#include "base/safe_write.h"
#include "base/terminal_text.h"
#include "live/burst_schedule.h"
#include "sampler/proc/roles.h"
#include "samples/recording_writer.h"

namespace chokepoint::live {

namespace {

using samples::kSourcesFile;
using samples::kStackFile;
constexpr const char* kStackLog = samples::kStackLogFile;
constexpr int kMaxAttempts = 4;
// The interpreter needs a moment after exec before py-spy can find it.
constexpr int64_t kStartDelayNs = 300'000'000;
// Without a judge: a burst in which the job's stacks hardly changed (py-spy's chrome trace
// opens a frame only where the stack changes: under this many, against ~1200 for a training
// loop at 500 Hz) caught it standing still in one long call (burst_schedule.h).
constexpr size_t kStillBelowFrames = 200;
// The job's source lines kept in sources.json, at most.
constexpr size_t kMaxSourceLines = 4000;
// A GPU that ran kernels in its last sample period (the first burst waits for it:
// burst_schedule.h).
constexpr double kBusyPct = 1;

// The frames py-spy opened in a chrome trace file (each "ph":"B" event).
size_t frames_opened(const std::filesystem::path& path) {
  std::ifstream f(path, std::ios::binary);
  const std::string text((std::istreambuf_iterator<char>(f)), std::istreambuf_iterator<char>());
  size_t n = 0;
  for (size_t at = text.find("\"ph\":\"B\""); at != std::string::npos; at = text.find("\"ph\":\"B\"", at + 1)) ++n;
  return n;
}

bool python_process(const samples::ProcessMeta& p) {
  return sampler::proc::is_python(p.cmdline) || p.comm.rfind("python", 0) == 0 || p.comm == "pt_main_thread";
}

// py-spy's messages and file names are not ours: escaped (base/terminal_text.h).
void say(bool quiet, const std::string& text) {
  if (!quiet) std::fprintf(stderr, "chokepoint: %s\n", escape_controls(text).c_str());
}

}  // namespace

StackSampling::StackSampling(const StackOptions& o, std::string dir, bool quiet)
    : o_(o), dir_(std::move(dir)), quiet_(quiet) {
  if (!o_.enabled) {
    gave_up_ = true;
    note_ = "not sampled (--no-stacks)";
    return;
  }
  std::string why;
  binary_ = sampler::find_pyspy(o_.pyspy, &why);
  if (binary_.empty()) {
    gave_up_ = true;
    note_ = why;
    return;
  }
  version_ = sampler::pyspy_version(binary_);
  if (version_.empty()) version_ = "py-spy";
}

StackSampling::~StackSampling() = default;

void StackSampling::poll_burst(const Session& session, int64_t now_realtime_ns, int64_t now_monotonic_ns) {
  if (o_.burst_hz <= 0) return;
  if (!schedule_) schedule_.emplace(attached_mono_);
  bool gpu_read = false, gpu_busy = false;
  for (const auto& [key, s] : session.latest().values) {
    if (key.metric != samples::MetricId::kGpuUtilization || !s.valid) continue;
    gpu_read = true;
    gpu_busy |= s.value >= kBusyPct;
  }
  // Every tick, while a burst runs too: what the GPU did during one decides what follows.
  const bool due = schedule_->due(now_monotonic_ns, gpu_read, gpu_busy);
  if (burst_) {
    if (burst_->poll()) end_burst(false, now_monotonic_ns);
    return;
  }
  if (!due) return;
  schedule_->started(now_monotonic_ns);
  sampler::PySpyOptions po;
  po.binary = binary_;
  po.rate_hz = o_.burst_hz;
  po.duration_s = static_cast<int>(BurstSchedule::kBurstNs / 1'000'000'000);
  burst_file_ = samples::kStackBurstPrefix + std::to_string(schedule_->started_count()) + ".json";
  po.out_file = (std::filesystem::path(dir_) / burst_file_).string();
  po.log_file = (std::filesystem::path(dir_) / kStackLog).string();
  auto r = sampler::PySpyRecorder::start(po, rec_->target(), now_realtime_ns);
  if (r.ok()) {
    burst_ = std::move(r.value());
  } else {
    schedule_->ended(now_monotonic_ns, BurstOutcome::kNoLoop);  // one that did not run shows nothing
  }
}

// What the burst just kept showed: what the judge reads in the bursts so far (a burst that
// stood still in one call goes round no loop); without one, a burst that moved counts and
// settles it.
BurstOutcome StackSampling::outcome(const std::filesystem::path& path) const {
  if (!o_.judge) return frames_opened(path) < kStillBelowFrames ? BurstOutcome::kNoLoop : BurstOutcome::kLoopSure;
  const BurstSteps j = o_.judge(dir_, bursts_);
  return !j.loop_in_last ? BurstOutcome::kNoLoop : j.sure ? BurstOutcome::kLoopSure : BurstOutcome::kLoopUnsure;
}

// Keeps the burst's file when py-spy wrote samples; `stop` asks it to end first (the run
// is over).
void StackSampling::end_burst(bool stop, int64_t now_monotonic_ns) {
  if (!burst_) return;
  if (stop) burst_->stop(5'000'000'000);
  burst_cpu_s_ += burst_->cpu_s();
  std::error_code ec;
  const auto path = std::filesystem::path(dir_) / burst_file_;
  if (std::filesystem::file_size(path, ec) > 2 && !ec) {
    bursts_.push_back({burst_file_, burst_->origin_ns(), o_.burst_hz});
    if (!stop) schedule_->ended(now_monotonic_ns, outcome(path));
  } else {
    std::filesystem::remove(path, ec);
    if (!stop) schedule_->ended(now_monotonic_ns, BurstOutcome::kNoLoop);  // no samples: nothing seen
  }
  burst_.reset();
}

void StackSampling::poll(const Session& session, int64_t now_realtime_ns, int64_t now_monotonic_ns) {
  if (gave_up_) return;
  if (rec_) {
    const auto code = rec_->poll();
    if (!code) {  // recording
      poll_burst(session, now_realtime_ns, now_monotonic_ns);
      return;
    }
    // py-spy exited while the job runs on. With samples written, that is its recording
    // (it follows the process it attached to; an exec ends it): keep it.
    std::error_code fec;
    if (*code == 0 && std::filesystem::file_size(std::filesystem::path(dir_) / kStackFile, fec) > 2 && !fec) {
      gave_up_ = true;
      return;
    }
    // Otherwise it could not attach (too early, or not allowed).
    note_ = "py-spy exited with " + std::to_string(*code) + (rec_->error().empty() ? "" : ": " + rec_->error());
    if (rec_->permission_denied()) {
      gave_up_ = true;
      note_ =
          "py-spy may not read the job's memory (ptrace not permitted: run as the job's user with "
          "kernel.yama.ptrace_scope <= 1, as root, or give the container CAP_SYS_PTRACE): " +
          rec_->error();
      say(quiet_, "Python stacks: " + note_ + "; everything else goes on");
      rec_.reset();
      return;
    }
    if (attempts_ >= kMaxAttempts) {
      gave_up_ = true;
      note_ = "py-spy could not attach: " + (rec_->error().empty() ? "exit " + std::to_string(*code) : rec_->error());
      say(quiet_, "Python stacks: " + note_ + "; everything else goes on");
      rec_.reset();
      return;
    }
    rec_.reset();
    std::error_code ec;
    std::filesystem::remove(std::filesystem::path(dir_) / kStackFile, ec);  // its log stays
    next_attempt_mono_ = now_monotonic_ns + 1'000'000'000;
    return;
  }
  if (now_monotonic_ns < next_attempt_mono_) return;
  // The topmost Python process of the tree, seen long enough for its interpreter to start.
  const auto& procs = session.processes();
  const samples::ProcessMeta* target = nullptr;
  for (const auto& [pid, p] : procs) {
    if (p.exited || !python_process(p)) continue;
    const auto parent = procs.find(p.ppid);
    if (parent != procs.end() && python_process(parent->second) && !parent->second.exited) continue;
    if (target == nullptr || p.first_seen_ns < target->first_seen_ns) target = &p;
  }
  if (target == nullptr || now_realtime_ns - target->first_seen_ns < kStartDelayNs) return;
  ++attempts_;
  std::error_code ec;
  cwd_ = std::filesystem::read_symlink("/proc/" + std::to_string(target->pid) + "/cwd", ec).string();
  sampler::PySpyOptions po;
  po.binary = binary_;
  po.rate_hz = o_.rate_hz;
  po.subprocesses = o_.subprocesses;
  po.out_file = (std::filesystem::path(dir_) / kStackFile).string();
  po.log_file = (std::filesystem::path(dir_) / kStackLog).string();
  auto r = sampler::PySpyRecorder::start(po, target->pid, now_realtime_ns);
  if (!r.ok()) {
    gave_up_ = true;
    note_ = r.status().message();
    say(quiet_, "Python stacks: " + note_);
    return;
  }
  rec_ = std::move(r.value());
  attached_mono_ = now_monotonic_ns;
}

void StackSampling::finish(Session& session) {
  samples::StacksMeta m;
  if (!rec_ && !gave_up_ && !note_.empty()) note_ += " (the job ended before another attempt)";
  if (!rec_) {
    m.note = !note_.empty() ? note_ : "no Python process in the job";
    session.set_stacks(m);
    return;
  }
  end_burst(true, 0);
  rec_->stop(10'000'000'000);
  session.add_sampler_cpu_ms("stacks", (rec_->cpu_s() + burst_cpu_s_) * 1e3);
  const std::string file = (std::filesystem::path(dir_) / kStackFile).string();
  std::error_code ec;
  const auto size = std::filesystem::file_size(file, ec);
  if (ec || size == 0) {
    m.note = "py-spy wrote no samples" + (rec_->error().empty() ? std::string() : ": " + rec_->error());
    say(quiet_, "Python stacks: " + m.note);
    session.set_stacks(m);
    return;
  }
  m.tool = version_;
  m.file = kStackFile;
  m.origin_ns = rec_->origin_ns();
  m.pid = rec_->target();
  m.rate_hz = o_.rate_hz;
  m.bursts = bursts_;
  // The lines the bursts name too: the hot spots read them in the run's samples' place.
  auto lines = sampler::source_lines_of(file, cwd_, kMaxSourceLines);
  for (const auto& b : bursts_) {
    if (lines.size() >= kMaxSourceLines) break;
    lines.merge(sampler::source_lines_of((std::filesystem::path(dir_) / b.file).string(), cwd_,
                                         kMaxSourceLines - lines.size()));
  }
  if (!lines.empty()) {
    const nlohmann::json j(lines);
    if (write_file_safely((std::filesystem::path(dir_) / kSourcesFile).string(),
                          j.dump(1, ' ', false, nlohmann::json::error_handler_t::replace) + "\n")
            .ok()) {
      m.sources_file = kSourcesFile;
    }
  }
  session.set_stacks(m);
}

}  // namespace chokepoint::live
