// The time-series model of a recording, columnar: one Series per (metric, entity) with
// parallel columns of timestamps, values and validity. Backends produce a Tick (one
// sampling instant, a flat list of samples); the store and the recording writer both
// consume Ticks, so the live view, the saved file and `analyze` see the same data.
//
// Timestamps are CLOCK_REALTIME nanoseconds so they line up with CUPTI and Kineto
// traces of the same run; rates inside the backends use CLOCK_MONOTONIC deltas.
#pragma once

#include <compare>
#include <cstdint>
#include <string>
#include <unordered_map>
#include <vector>

#include "samples/metric.h"

namespace chokepoint::samples {

// Who a sample describes: the host, GPU `id`, process `id` (a PID) or thread `id` (a
// TID) of process `pid`.
struct Entity {
  EntityKind kind = EntityKind::kHost;
  int64_t id = 0;
  int64_t pid = 0;  // threads only: the owning process

  static Entity host() { return {EntityKind::kHost, 0, 0}; }
  static Entity gpu(int64_t index) { return {EntityKind::kGpu, index, 0}; }
  static Entity process(int64_t pid) { return {EntityKind::kProcess, pid, 0}; }
  static Entity thread(int64_t pid, int64_t tid) { return {EntityKind::kThread, tid, pid}; }

  auto operator<=>(const Entity&) const = default;
};

// "host", "gpu:0", "pid:4242", "tid:4242/4250": the spelling used in recordings.
std::string format_entity(const Entity& e);
bool parse_entity(std::string_view text, Entity* out);

struct Sample {
  MetricId metric;
  Entity entity;
  double value = 0;
  bool valid = true;  // false: sampled, but the source could not give it (never shown as 0)
};

struct Tick {
  int64_t time_ns = 0;  // CLOCK_REALTIME
  std::vector<Sample> samples;

  void add(MetricId m, const Entity& e, double v) { samples.push_back({m, e, v, true}); }
  void add_invalid(MetricId m, const Entity& e) { samples.push_back({m, e, 0.0, false}); }
};

struct Series {
  MetricId metric;
  Entity entity;
  std::vector<int64_t> time_ns;
  std::vector<double> values;
  std::vector<uint8_t> valid;  // 1 valid, 0 sampled but unavailable

  size_t size() const { return time_ns.size(); }
};

using SeriesIndex = uint32_t;

// A series' identity, the key of maps from series to anything: the metric and what it was
// measured on.
struct SeriesKey {
  MetricId metric;
  Entity entity;
  bool operator==(const SeriesKey&) const = default;
};
struct SeriesKeyHash {
  size_t operator()(const SeriesKey& k) const;
};

class SampleStore {
 public:
  // The index of the series for (metric, entity), created empty on first use.
  SeriesIndex series_index(MetricId metric, const Entity& entity);
  const Series* find(MetricId metric, const Entity& entity) const;

  void append(SeriesIndex s, int64_t time_ns, double value, bool valid);
  void append(const Tick& tick);

  const std::vector<Series>& series() const { return series_; }
  // Every series of one metric (one per GPU, per process ...), in creation order.
  std::vector<const Series*> of_metric(MetricId metric) const;

 private:
  using Key = SeriesKey;
  std::vector<Series> series_;
  std::unordered_map<Key, SeriesIndex, SeriesKeyHash> index_;
};

}  // namespace chokepoint::samples
