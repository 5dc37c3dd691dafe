#include "samples/series.h"

#include <charconv>

namespace chokepoint::samples {

std::string format_entity(const Entity& e) {
  switch (e.kind) {
    case EntityKind::kHost: return "host";
    case EntityKind::kGpu: return "gpu:" + std::to_string(e.id);
    case EntityKind::kProcess: return "pid:" + std::to_string(e.id);
    case EntityKind::kThread: return "tid:" + std::to_string(e.pid) + "/" + std::to_string(e.id);
  }
  return "?";
}

namespace {
bool parse_int(std::string_view s, int64_t* out) {
  if (s.empty()) return false;
  const auto [p, ec] = std::from_chars(s.data(), s.data() + s.size(), *out);
  return ec == std::errc() && p == s.data() + s.size();
}
}  // namespace

bool parse_entity(std::string_view text, Entity* out) {
  if (text == "host") {
    *out = Entity::host();
    return true;
  }
  const auto colon = text.find(':');
  if (colon == std::string_view::npos) return false;
  const std::string_view kind = text.substr(0, colon);
  const std::string_view rest = text.substr(colon + 1);
  int64_t a = 0;
  if (kind == "gpu" && parse_int(rest, &a)) {
    *out = Entity::gpu(a);
    return true;
  }
  if (kind == "pid" && parse_int(rest, &a)) {
    *out = Entity::process(a);
    return true;
  }
  if (kind == "tid") {
    const auto slash = rest.find('/');
    int64_t tid = 0;
    if (slash != std::string_view::npos && parse_int(rest.substr(0, slash), &a) &&
        parse_int(rest.substr(slash + 1), &tid)) {
      *out = Entity::thread(a, tid);
      return true;
    }
  }
  return false;
}

size_t SeriesKeyHash::operator()(const SeriesKey& k) const {
  uint64_t h = static_cast<uint64_t>(k.metric) * 0x9E3779B97F4A7C15ull;
  h ^= (static_cast<uint64_t>(k.entity.kind) + 0x632BE59BD9B4E019ull + (h << 6) + (h >> 2));
  h ^= (static_cast<uint64_t>(k.entity.id) + 0x9E3779B97F4A7C15ull + (h << 6) + (h >> 2));
  h ^= (static_cast<uint64_t>(k.entity.pid) + 0x9E3779B97F4A7C15ull + (h << 6) + (h >> 2));
  return static_cast<size_t>(h);
}

SeriesIndex SampleStore::series_index(MetricId metric, const Entity& entity) {
  const auto [it, inserted] = index_.try_emplace(Key{metric, entity}, static_cast<SeriesIndex>(series_.size()));
  if (inserted) series_.push_back(Series{metric, entity, {}, {}, {}});
  return it->second;
}

const Series* SampleStore::find(MetricId metric, const Entity& entity) const {
  const auto it = index_.find(Key{metric, entity});
  return it == index_.end() ? nullptr : &series_[it->second];
}

void SampleStore::append(SeriesIndex s, int64_t time_ns, double value, bool valid) {
  Series& series = series_[s];
  series.time_ns.push_back(time_ns);
  series.values.push_back(valid ? value : 0.0);
  series.valid.push_back(valid ? 1 : 0);
}

void SampleStore::append(const Tick& tick) {
  for (const Sample& s : tick.samples) append(series_index(s.metric, s.entity), tick.time_ns, s.value, s.valid);
}

std::vector<const Series*> SampleStore::of_metric(MetricId metric) const {
  std::vector<const Series*> out;
  for (const Series& s : series_) {
    if (s.metric == metric) out.push_back(&s);
  }
  return out;
}

}  // namespace chokepoint::samples
