#include "samples/recording_writer.h"

#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <charconv>
#include <cmath>
#include <cstring>
#include <ctime>
#include <filesystem>

#include "base/safe_write.h"
#include "samples/meta_json.h"

namespace chokepoint::samples {
namespace fs = std::filesystem;

namespace {

std::string errno_text(const std::string& what, int err) { return what + ": " + std::strerror(err); }

void append_int(std::string& out, int64_t v) {
  char buf[24];
  const auto [p, ec] = std::to_chars(buf, buf + sizeof buf, v);
  out.append(buf, p);
}

// Shortest text that reads back to the same double; JSON has no NaN or Inf: null.
void append_double(std::string& out, double v) {
  if (!std::isfinite(v)) {
    out += "null";
    return;
  }
  char buf[32];
  const auto [p, ec] = std::to_chars(buf, buf + sizeof buf, v);
  out.append(buf, p);
}

std::string dump_line(const nlohmann::json& j) {
  // comm and cmdline come from other programs and may hold invalid UTF-8: replace it
  // instead of throwing.
  return j.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace) + "\n";
}

}  // namespace

std::string default_recording_dir(int64_t realtime_ns) {
  const time_t secs = static_cast<time_t>(realtime_ns / 1'000'000'000);
  tm local{};
  localtime_r(&secs, &local);
  char buf[64];
  std::strftime(buf, sizeof buf, "chokepoint-%Y%m%d-%H%M%S", &local);
  return buf;
}

Status write_meta_atomically(const std::string& dir, const RunMeta& meta) {
  const std::string path = (fs::path(dir) / kMetaFile).string();
  const std::string text = run_meta_to_json(meta).dump(2, ' ', false, nlohmann::json::error_handler_t::replace) + "\n";
  SafeWriteOptions o;
  o.sync = true;
  return write_file_safely(path, text, o);
}

bool is_recording_file_name(const std::string& name) {
  // The tracer's names (tracer/trace_format.h, tracer/control.h; samples/ does not depend
  // on tracer/): its traces, and the control socket of an on-demand job, which one killed
  // with SIGKILL leaves behind.
  const std::string cptrace = ".cptrace", cptrace_gz = ".cptrace.gz";
  return name == kMetaFile || name == kSamplesFile || name == kSamplesGzFile || name == kStackFile ||
         name == std::string(kStackFile) + ".gz" || name == kStackLogFile || name == kSourcesFile ||
         (name.starts_with("trace-") && (name.ends_with(cptrace) || name.ends_with(cptrace_gz))) ||
         (name.starts_with("control-") && name.ends_with(".sock")) ||
         (name.starts_with(kStackBurstPrefix) && (name.ends_with(".json") || name.ends_with(".json.gz")));
}

std::vector<std::string> existing_recording_files(const std::string& dir) {
  std::vector<std::string> out;
  std::error_code ec;
  for (fs::directory_iterator it(dir, ec), end; !ec && it != end; it.increment(ec)) {
    const std::string name = it->path().filename().string();
    if (is_recording_file_name(name)) out.push_back(name);
  }
  std::sort(out.begin(), out.end());
  return out;
}

Result<std::unique_ptr<RecordingWriter>> RecordingWriter::create(const std::string& dir, const RunMeta& start_meta,
                                                                 bool replace) {
  std::error_code ec;
  std::vector<std::string> created;  // the directories this call makes, deepest first
  for (fs::path p = fs::absolute(dir, ec); !ec && !p.empty() && !fs::exists(fs::symlink_status(p, ec));
       p = p.parent_path()) {
    created.push_back(p.string());
    if (p == p.parent_path()) break;
  }
  ec.clear();
  fs::create_directories(dir, ec);
  if (ec) return Status::Error("cannot create recording directory " + dir + ": " + ec.message());
  const std::vector<std::string> old = existing_recording_files(dir);
  if (!old.empty() && !replace) {
    std::string names;
    for (const std::string& n : old) names += (names.empty() ? "" : ", ") + n;
    return Status::Error(dir + " already holds a recording (" + names + "); it is not overwritten");
  }
  for (const std::string& n : old) {  // replace: the old run's files go, links themselves and not their targets
    if (::unlink((fs::path(dir) / n).c_str()) != 0 && errno != ENOENT) {
      return Status::Error(errno_text("cannot remove " + (fs::path(dir) / n).string(), errno));
    }
  }
  // samples.jsonl first, created exclusively: of two runs started on one directory at
  // once, one gets it and the other stops here, before it touches meta.json.
  const std::string samples = (fs::path(dir) / kSamplesFile).string();
  auto fd = create_new_file(samples, 0644, O_APPEND);
  if (!fd.ok()) return fd.status();
  if (Status s = write_meta_atomically(dir, start_meta); !s.ok()) {
    ::close(fd.value());
    ::unlink(samples.c_str());
    return s;
  }
  return std::unique_ptr<RecordingWriter>(new RecordingWriter(dir, fd.value(), std::move(created)));
}

void RecordingWriter::discard() {
  if (fd_ >= 0) ::close(fd_);
  fd_ = -1;
  for (const char* name : {kSamplesFile, kMetaFile}) ::unlink((fs::path(dir_) / name).c_str());
  for (const std::string& d : created_dirs_) {
    if (::rmdir(d.c_str()) != 0) break;  // not empty (someone else's file): kept, with its parents
  }
}

RecordingWriter::~RecordingWriter() {
  if (fd_ >= 0) ::close(fd_);
}

Status RecordingWriter::write_all(const std::string& bytes) {
  if (fd_ < 0) return Status::Error("recording already finished");
  size_t done = 0;
  while (done < bytes.size()) {
    const ssize_t n = ::write(fd_, bytes.data() + done, bytes.size() - done);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) return Status::Error(errno_text("cannot append to the recording", errno));
    done += static_cast<size_t>(n);
  }
  bytes_written_ += bytes.size();
  return Status::Ok();
}

const std::string& RecordingWriter::encode(const Tick& tick) {
  buffer_.clear();
  // Declarations first: a reader meets every series id before its first use.
  for (const Sample& s : tick.samples) {
    const auto [it, inserted] = series_ids_.try_emplace(Key{s.metric, s.entity},
                                                        static_cast<uint32_t>(series_ids_.size()));
    if (!inserted) continue;
    buffer_ += "{\"k\":\"series\",\"id\":";
    append_int(buffer_, it->second);
    buffer_ += ",\"metric\":\"";
    buffer_ += metric_info(s.metric).name;
    buffer_ += "\",\"entity\":\"";
    buffer_ += format_entity(s.entity);
    buffer_ += "\"}\n";
  }
  buffer_ += "{\"k\":\"tick\",\"t\":";
  append_int(buffer_, tick.time_ns);
  buffer_ += ",\"v\":[";
  bool first = true;
  for (const Sample& s : tick.samples) {
    if (!first) buffer_ += ',';
    first = false;
    buffer_ += '[';
    append_int(buffer_, series_ids_.find(Key{s.metric, s.entity})->second);
    buffer_ += ',';
    if (s.valid) {
      append_double(buffer_, s.value);
    } else {
      buffer_ += "null";
    }
    buffer_ += ']';
  }
  buffer_ += "]}\n";
  return buffer_;
}

Status RecordingWriter::append(const Tick& tick) { return write_all(encode(tick)); }

Status RecordingWriter::process_seen(const ProcessMeta& process) {
  nlohmann::json j = process_to_json(process);
  j["k"] = "process";
  return write_all(dump_line(j));
}

Status RecordingWriter::process_exited(int64_t pid, int64_t realtime_ns) {
  return write_all(dump_line({{"k", "exit"}, {"pid", pid}, {"t", realtime_ns}}));
}

Status RecordingWriter::finish(const RunMeta& final_meta) {
  if (fd_ >= 0) {
    ::fsync(fd_);
    ::close(fd_);
    fd_ = -1;
  }
  return write_meta_atomically(dir_, final_meta);
}

}  // namespace chokepoint::samples
