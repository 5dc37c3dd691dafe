#include "tune/trial.h"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <fstream>

#include <nlohmann/json.hpp>

namespace chokepoint::tune {
namespace {

constexpr std::pair<Outcome, const char*> kOutcomes[] = {
    {Outcome::kOk, "ok"},
    {Outcome::kOom, "oom"},
    {Outcome::kFailed, "failed"},
    {Outcome::kTimeout, "timeout"},
    {Outcome::kEarlyStop, "early_stop"},
    {Outcome::kNoMetric, "no_metric"},
    {Outcome::kInterrupted, "interrupted"},
};

template <typename T>
void put(nlohmann::json& j, const char* key, const std::optional<T>& v) {
  j[key] = v ? nlohmann::json(*v) : nlohmann::json(nullptr);
}

template <typename T>
std::optional<T> get(const nlohmann::json& j, const char* key) {
  if (!j.contains(key) || j[key].is_null()) return std::nullopt;
  return j[key].get<T>();
}

}  // namespace

const char* outcome_name(Outcome o) {
  for (const auto& [value, name] : kOutcomes) {
    if (value == o) return name;
  }
  return "failed";
}

std::optional<Outcome> outcome_from_name(const std::string& name) {
  for (const auto& [value, n] : kOutcomes) {
    if (name == n) return value;
  }
  return std::nullopt;
}

std::string trial_to_json_line(const Trial& t) {
  nlohmann::ordered_json config = nlohmann::ordered_json::object();
  for (const auto& [k, v] : t.config) config[k] = v;
  nlohmann::json j;
  j["id"] = t.id;
  j["outcome"] = outcome_name(t.outcome);
  put(j, "throughput", t.throughput);
  j["measured"] = t.measured;
  put(j, "peak_memory_bytes", t.peak_memory_bytes);
  j["memory_source"] = t.memory_source;
  j["seconds"] = t.seconds;
  put(j, "exit_code", t.exit_code);
  j["verdict"] = t.verdict;
  j["verdict_summary"] = t.verdict_summary;
  j["note"] = t.note;
  j["recording"] = t.recording;
  // The configuration first, in --param order (a JSON object keeps no order: a list).
  nlohmann::ordered_json line;
  line["config"] = nlohmann::ordered_json::array();
  for (const auto& [k, v] : t.config) line["config"].push_back({k, v});
  for (auto it = j.begin(); it != j.end(); ++it) line[it.key()] = *it;
  return line.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
}

Result<Trial> trial_from_json_line(const std::string& line) {
  try {
    const nlohmann::json j = nlohmann::json::parse(line);
    Trial t;
    for (const auto& kv : j.at("config"))
      t.config.emplace_back(kv.at(0).get<std::string>(), kv.at(1).get<std::string>());
    t.id = j.at("id").get<int>();
    const auto outcome = outcome_from_name(j.at("outcome").get<std::string>());
    if (!outcome) return Status::Error(ErrorCode::kInput, "unknown outcome " + j.at("outcome").dump());
    t.outcome = *outcome;
    t.throughput = get<double>(j, "throughput");
    t.measured = j.value("measured", 0);
    t.peak_memory_bytes = get<double>(j, "peak_memory_bytes");
    t.memory_source = j.value("memory_source", "");
    t.seconds = j.value("seconds", 0.0);
    t.exit_code = get<int>(j, "exit_code");
    t.verdict = j.value("verdict", "");
    t.verdict_summary = j.value("verdict_summary", "");
    t.note = j.value("note", "");
    t.recording = j.value("recording", "");
    return t;
  } catch (const nlohmann::json::exception& e) {
    return Status::Error(ErrorCode::kInput, e.what());
  }
}

Status append_trial(const std::string& path, const Trial& t) {
  // O_NOFOLLOW: a link planted at the trials file is refused, not written through.
  const int fd = ::open(path.c_str(), O_WRONLY | O_APPEND | O_CREAT | O_NOFOLLOW | O_CLOEXEC, 0644);
  if (fd < 0) return Status::Error(ErrorCode::kIo, "cannot append to '" + path + "': " + std::strerror(errno));
  const std::string line = trial_to_json_line(t) + "\n";
  size_t done = 0;
  while (done < line.size()) {
    const ssize_t n = ::write(fd, line.data() + done, line.size() - done);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) break;
    done += static_cast<size_t>(n);
  }
  const int err = errno;
  ::close(fd);
  if (done < line.size()) {
    return Status::Error(ErrorCode::kIo, "cannot append to '" + path + "': " + std::strerror(err));
  }
  return Status::Ok();
}

Result<std::vector<Trial>> read_trials(const std::string& path, int* bad) {
  std::vector<Trial> trials;
  if (bad != nullptr) *bad = 0;
  std::ifstream in(path);
  if (!in) {
    if (errno == ENOENT) return trials;
    return Status::Error(ErrorCode::kIo, "cannot read '" + path + "': " + std::strerror(errno));
  }
  std::string line;
  while (std::getline(in, line)) {
    if (line.find_first_not_of(" \t\r") == std::string::npos) continue;
    auto t = trial_from_json_line(line);
    if (t.ok()) {
      t->resumed = true;
      trials.push_back(std::move(t.value()));
    } else if (bad != nullptr) {
      ++*bad;
    }
  }
  return trials;
}

}  // namespace chokepoint::tune
