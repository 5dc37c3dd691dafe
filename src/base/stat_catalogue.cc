#include "base/stat_catalogue.h"

#include <iterator>

namespace chokepoint {
namespace {

// In StatId order (checked below). Descriptions are shown in every report that raises
// them: change one only together with the golden tests.
constexpr StatDef kStats[] = {
    {StatId::kImportDuplicateEvents, "import_duplicate_events", "import", Severity::kWarning,
     "Events recorded twice (same kind, place, times and ids) were kept once."},
    {StatId::kImportOwnOutputs, "import_own_outputs", "import", Severity::kInfo,
     "chokepoint's own outputs in an input directory (a Chrome export, a JSON report) are not traces of "
     "the run; skipped."},
    {StatId::kImportSkippedFiles, "import_skipped_files", "import", Severity::kInfo,
     "Files in an input directory that are empty or not a recognized trace were skipped."},
    {StatId::kImportDuplicateFiles, "import_duplicate_files", "import", Severity::kWarning,
     "A trace present both plain and gzipped (X.json and X.json.gz) is one run, not two ranks: it was "
     "read once, from the plain file ({}).",
     "read F, not F.gz"},
    {StatId::kImportSameContent, "import_same_content", "import", Severity::kWarning,
     "inputs holding the same bytes as another input (a copy under another name, a second path to one file) are "
     "one input: each was read once ({})",
     "F (same as G)"},
    {StatId::kImportBrokenEntries, "import_broken_entries", "import", Severity::kWarning,
     "entries of an input directory named like traces that could not be followed (a symbolic link loop or a "
     "dangling link), skipped: {}",
     "name: why"},
    {StatId::kImportFailedFiles, "import_failed_files", "import", Severity::kWarning,
     "Files in an input directory that are traces but could not be read were left out, the others "
     "analyzed ({}).",
     "each file: why"},
    {StatId::kImportRanksByDevice, "import_ranks_by_device", "import", Severity::kInfo,
     "CUPTI traces that name no rank, one process per GPU, each running NCCL kernels: read as the ranks of one "
     "job, numbered in the order of their GPUs ({})",
     "rank N: GPU G, pid P"},
    {StatId::kKinetoEventsIgnored, "kineto_events_ignored", "kineto", Severity::kInfo,
     "Events without a place in the model (flows, counters, instants, Trace spans, sort "
     "metadata) were skipped."},
    {StatId::kKinetoNonNumericPid, "kineto_non_numeric_pid", "kineto", Severity::kInfo,
     "Events whose pid or tid is missing or a string (\"Spans\") rather than a process/thread "
     "or device/stream id were skipped."},
    {StatId::kKinetoMalformedEvent, "kineto_malformed_event", "kineto", Severity::kWarning,
     "Events that are not valid JSON (bad escapes, unescaped quotes or control characters) "
     "were skipped; reading resumed at the next event."},
    {StatId::kKinetoNonObjectEvent, "kineto_non_object_event", "kineto", Severity::kWarning,
     "Elements of traceEvents that are not JSON objects were skipped."},
    {StatId::kKinetoInvalidUtf8, "kineto_invalid_utf8", "kineto", Severity::kInfo,
     "Events containing invalid UTF-8 were kept with the invalid bytes replaced by '?'."},
    {StatId::kKinetoBadNumber, "kineto_bad_number", "kineto", Severity::kWarning,
     "Numeric fields holding something else (bare N/A, empty strings) were treated as "
     "unknown."},
    {StatId::kKinetoIntOverflow, "kineto_int_overflow", "kineto", Severity::kInfo,
     "Integer fields beyond the 64-bit range were treated as unknown."},
    {StatId::kKinetoIdOutOfRange, "kineto_id_out_of_range", "kineto", Severity::kInfo,
     "Ids too wide for the model (pid/tid beyond 32 bits, odd device or stream ids) were "
     "folded or treated as unknown."},
    {StatId::kKinetoMissingTimestamp, "kineto_missing_timestamp", "kineto", Severity::kWarning,
     "Events without a readable ts were skipped."},
    {StatId::kKinetoMissingDuration, "kineto_missing_duration", "kineto", Severity::kWarning,
     "Complete events without a readable dur were given zero duration."},
    {StatId::kKinetoNegativeDuration, "kineto_negative_duration", "kineto", Severity::kWarning,
     "Events with a negative duration were given zero duration."},
    {StatId::kKinetoDuplicateKey, "kineto_duplicate_key", "kineto", Severity::kInfo,
     "Events repeating a key kept its last value."},
    {StatId::kKinetoTruncated, "kineto_truncated", "kineto", Severity::kWarning,
     "The trace ends in the middle of the data (cut-off file); all complete events before "
     "that point were kept."},
    {StatId::kKinetoGzipCorrupt, "kineto_gzip_corrupt", "kineto", Severity::kWarning,
     "The gzip stream ended early or is corrupt; only the data decoded before that point "
     "was read."},
    {StatId::kKinetoEmptyTrace, "kineto_empty_trace", "kineto", Severity::kWarning,
     "The trace's traceEvents array is empty."},
    {StatId::kKinetoNoSteps, "kineto_no_steps", "kineto", Severity::kWarning,
     "The trace has no ProfilerStep#N annotations (profiler not driven by prof.step()); "
     "steps must be inferred."},
    {StatId::kKinetoUnknownDevice, "kineto_unknown_device", "kineto", Severity::kWarning,
     "GPU events ran on devices absent from deviceProperties, so those devices have no "
     "name or limits."},
    {StatId::kKinetoBadMetadata, "kineto_bad_metadata", "kineto", Severity::kWarning,
     "A top-level member (deviceProperties, distributedInfo, baseTimeNanoseconds or the "
     "object around traceEvents) could not be read."},
    {StatId::kKinetoNoBaseTime, "kineto_no_base_time", "kineto", Severity::kInfo,
     "The trace has no baseTimeNanoseconds (an older profiler, or a file cut off before "
     "it), so its times may not line up with other ranks' traces."},
    {StatId::kKinetoEventsCut, "kineto_events_cut", "kineto", Severity::kWarning,
     "The file is cut off inside traceEvents. torch.profiler writes the CPU ops first and the GPU work and CUDA "
     "calls after them: GPU work whose launching call was cut is lost data, and the verdict is withheld when most "
     "of it is (give the whole file)."},
    {StatId::kCuptiOtherSubscriber, "cupti_other_subscriber", "cupti", Severity::kWarning,
     "another CUPTI client (torch.profiler, nsys, ncu) held the process: it has no CUDA trace"},
    {StatId::kCuptiNotStarted, "cupti_not_started", "cupti", Severity::kWarning,
     "CUPTI would not start in the process: no CUDA trace"},
    {StatId::kCuptiBadString, "cupti_bad_string", "cupti", Severity::kCritical,
     "string records longer than the file; reading stopped"},
    {StatId::kCuptiDroppedRecords, "cupti_dropped_records", "cupti", Severity::kWarning,
     "activity records CUPTI dropped (its buffers were full): the trace misses some GPU work"},
    {StatId::kCuptiGzipTruncated, "cupti_gzip_truncated", "cupti", Severity::kWarning,
     "the compressed trace is cut off or corrupt; read up to there"},
    {StatId::kCuptiTruncated, "cupti_truncated", "cupti", Severity::kWarning,
     "the trace has no end record: the process died before flushing (SIGKILL, crash); its last buffers are missing"},
    {StatId::kCuptiNvtxUnclosed, "cupti_nvtx_unclosed", "cupti", Severity::kInfo,
     "NVTX ranges still open when the trace ended; left out"},
    {StatId::kCuptiBadTimes, "cupti_bad_times", "cupti", Severity::kWarning,
     "records whose end is before their start, longer than a day or out of range; skipped"},
    {StatId::kCuptiUnknownString, "cupti_unknown_string", "cupti", Severity::kWarning,
     "records naming a string the file never defined"},
    {StatId::kCuptiUnknownRecords, "cupti_unknown_records", "cupti", Severity::kInfo,
     "record kinds this version does not know; skipped"},
    {StatId::kCuptiNvtxUnmatched, "cupti_nvtx_unmatched", "cupti", Severity::kInfo,
     "NVTX range ends without their start (opened before CUDA initialized); left out"},
    {StatId::kCuptiBadKernelDims, "cupti_bad_kernel_dims", "cupti", Severity::kWarning,
     "kernels whose grid or block size is outside CUDA's limits (damaged records); size left unknown"},
    {StatId::kCuptiBadCopySizes, "cupti_bad_copy_sizes", "cupti", Severity::kWarning,
     "copies or memsets of more than 256 TiB (damaged records); size left unknown"},
    {StatId::kCuptiWindow, "cupti_window", "cupti", Severity::kInfo,
     "trace files of one trace window each (run --trace-steps, --trace-time, on demand): the trace covers those "
     "windows only, not the whole run"},
    {StatId::kCuptiWindowCut, "cupti_window_cut", "cupti", Severity::kWarning,
     "trace windows cut short: the process exited inside the window (its trace is kept up to the exit)"},
    {StatId::kNsysBadTimes, "nsys_bad_times", "nsys", Severity::kWarning,
     "records whose end is before their start, longer than a day or out of range; skipped"},
    {StatId::kNsysUnknownString, "nsys_unknown_string", "nsys", Severity::kWarning,
     "kernels, calls or threads naming a string StringIds does not hold; left unnamed"},
    {StatId::kNsysBadKernelDims, "nsys_bad_kernel_dims", "nsys", Severity::kWarning,
     "kernels whose grid or block size is outside CUDA's limits (damaged rows); size left unknown"},
    {StatId::kNsysBadCopySizes, "nsys_bad_copy_sizes", "nsys", Severity::kWarning,
     "copies or memsets of a negative size or more than 256 TiB (damaged rows); size left unknown"},
    {StatId::kNsysNvtxUnclosed, "nsys_nvtx_unclosed", "nsys", Severity::kInfo,
     "NVTX ranges without an end (still open when the capture stopped); left out"},
    {StatId::kNsysDamaged, "nsys_damaged", "nsys", Severity::kWarning,
     "the export is damaged or cut off (a table could not be read to its end); read up to there"},
    {StatId::kMetaIntervalRebuilt, "meta_interval_rebuilt", "recording", Severity::kInfo,
     "no sampling interval in meta.json; taken from the ticks' spacing"},
    {StatId::kMetaGpusRebuilt, "meta_gpus_rebuilt", "recording", Severity::kWarning,
     "no GPU list in meta.json; GPUs rebuilt from the samples, and every GPU that ran anything is judged (which "
     "of them the command used is unknown)"},
    {StatId::kMetaUnreadable, "meta_unreadable", "recording", Severity::kWarning,
     "meta.json is not valid recording metadata; run facts are missing"},
    {StatId::kMetaNewerFormat, "meta_newer_format", "recording", Severity::kWarning,
     "the recording's format version is {}, newer than this chokepoint reads (1): read as version 1, what the "
     "newer version added is ignored; a newer chokepoint reads it whole",
     "version"},
    {StatId::kMetaFieldsUnreadable, "meta_fields_unreadable", "recording", Severity::kWarning,
     "fields of meta.json with a value of the wrong type, left out (the samples are read as usual): {}", "field names"},
    {StatId::kMetaMissing, "meta_missing", "recording", Severity::kWarning, "no meta.json; run facts are missing"},
    {StatId::kSamplesUnreadable, "samples_unreadable", "recording", Severity::kCritical,
     "samples.jsonl could not be read ({}); no samples", "why"},
    {StatId::kTruncatedLastLine, "truncated_last_line", "recording", Severity::kWarning,
     "the last line of samples.jsonl was cut (chokepoint killed while writing); dropped"},
    {StatId::kOversizedLines, "oversized_lines", "recording", Severity::kCritical,
     "lines of samples.jsonl longer than 4 MiB (no chokepoint record is); skipped unread"},
    {StatId::kMalformedLines, "malformed_lines", "recording", Severity::kCritical,
     "lines of samples.jsonl that are not recording records; skipped"},
    {StatId::kTicksOutOfOrder, "ticks_out_of_order", "recording", Severity::kWarning,
     "ticks not later than the tick before them; skipped"},
    {StatId::kUnknownSeries, "unknown_series", "recording", Severity::kCritical,
     "tick values naming an undeclared series; skipped"},
    {StatId::kImplausibleValues, "implausible_values", "recording", Severity::kWarning,
     "sampled values no machine can read (negative, not finite, a share above 100%); read as not sampled"},
    {StatId::kUnknownMetrics, "unknown_metrics", "recording", Severity::kInfo,
     "series of metrics this chokepoint version does not know; ignored"},
    {StatId::kUnknownRecords, "unknown_records", "recording", Severity::kInfo,
     "record kinds this chokepoint version does not know; ignored"},
    {StatId::kGpuReadsFailed, "gpu_reads_failed", "recording", Severity::kWarning,
     "GPU utilization reads that failed after the GPU had answered (GPU lost, driver error); those ticks have no GPU "
     "data"},
    {StatId::kRecordingIncomplete, "recording_incomplete", "recording", Severity::kWarning,
     "no end-of-run meta.json: chokepoint stopped without finishing (crash or kill -9); processes rebuilt from "
     "samples.jsonl"},
    {StatId::kRecordingInProgress, "recording_in_progress", "recording", Severity::kInfo,
     "the recording is still being written (its chokepoint runs on this host): this report covers the run so "
     "far, and the run has not ended"},
    {StatId::kTraceUnreadable, "trace_unreadable", "analysis", Severity::kWarning, "{}",
     "why the recording's trace files could not be read"},
};
static_assert(std::size(kStats) == static_cast<size_t>(StatId::kCount));

constexpr bool in_order() {
  for (size_t i = 0; i < std::size(kStats); ++i) {
    if (static_cast<size_t>(kStats[i].id) != i) return false;
  }
  return true;
}
static_assert(in_order(), "kStats must list the stats in StatId order");

std::string fill(std::string_view description, std::string_view detail) {
  const size_t at = description.find("{}");
  if (at == std::string_view::npos) return std::string(description);
  std::string s;
  s.reserve(description.size() + detail.size());
  s.append(description.substr(0, at)).append(detail).append(description.substr(at + 2));
  return s;
}

}  // namespace

const StatDef& stat_def(StatId id) { return kStats[static_cast<size_t>(id)]; }

std::span<const StatDef> all_stats() { return kStats; }

std::optional<StatId> find_stat(std::string_view name) {
  for (const StatDef& d : kStats) {
    if (d.name == name) return d.id;
  }
  return std::nullopt;
}

std::string stat_description(StatId id, std::string_view detail) { return fill(stat_def(id).description, detail); }

std::string stat_listing_description(const StatDef& def) {
  if (def.detail.empty()) return std::string(def.description);
  std::string hole(1, '<');
  hole.append(def.detail).push_back('>');
  return fill(def.description, hole);
}

}  // namespace chokepoint
