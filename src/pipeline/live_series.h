// The sampled metrics of a recording over time, bucketed for the HTML report's charts:
// each GPU's activity (utilization, SM, tensor, DRAM) and PCIe, the host's CPU, and the
// DataLoader workers' CPU.
#pragma once

#include <vector>

#include "report/report.h"
#include "samples/recording_reader.h"

namespace chokepoint::pipeline {

// Buckets over [start_ns, end_ns] (the first and last tick); sets s.series and
// s.series_bucket_s.
void add_live_series(report::LiveSummary& s, const samples::Recording& rec, int64_t start_ns, int64_t end_ns);

}  // namespace chokepoint::pipeline
