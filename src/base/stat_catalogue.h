// The one catalogue of import and analysis stats (docs/ARCHITECTURE.md convention 2: bad
// input is counted, not fatal): every stat any reader may raise, with its stable name,
// severity and description. Readers raise stats by StatId only, so a stat that is not
// here does not compile; `chokepoint analyze --list-stats` prints the list.
//
// A description may hold one "{}": the reader fills it with what it knows at the time
// (file names, a reason); `detail` names what goes there for the listing.
#pragma once

#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>

#include "base/severity.h"

namespace chokepoint {

enum class StatId : uint16_t {
  // importers/registry: what the multi-file import did with the inputs.
  kImportDuplicateEvents,
  kImportOwnOutputs,
  kImportSkippedFiles,
  kImportDuplicateFiles,
  kImportSameContent,
  kImportBrokenEntries,
  kImportFailedFiles,
  kImportRanksByDevice,
  // importers/kineto: PyTorch profiler JSON.
  kKinetoEventsIgnored,
  kKinetoNonNumericPid,
  kKinetoMalformedEvent,
  kKinetoNonObjectEvent,
  kKinetoInvalidUtf8,
  kKinetoBadNumber,
  kKinetoIntOverflow,
  kKinetoIdOutOfRange,
  kKinetoMissingTimestamp,
  kKinetoMissingDuration,
  kKinetoNegativeDuration,
  kKinetoDuplicateKey,
  kKinetoTruncated,
  kKinetoGzipCorrupt,
  kKinetoEmptyTrace,
  kKinetoNoSteps,
  kKinetoUnknownDevice,
  kKinetoBadMetadata,
  kKinetoNoBaseTime,
  kKinetoEventsCut,
  // importers/cupti: the tracer's .cptrace files.
  kCuptiOtherSubscriber,
  kCuptiNotStarted,
  kCuptiBadString,
  kCuptiDroppedRecords,
  kCuptiGzipTruncated,
  kCuptiTruncated,
  kCuptiNvtxUnclosed,
  kCuptiBadTimes,
  kCuptiUnknownString,
  kCuptiUnknownRecords,
  kCuptiNvtxUnmatched,
  kCuptiBadKernelDims,
  kCuptiBadCopySizes,
  kCuptiWindow,
  kCuptiWindowCut,
  // importers/nsys: Nsight Systems' SQLite export.
  kNsysBadTimes,
  kNsysUnknownString,
  kNsysBadKernelDims,
  kNsysBadCopySizes,
  kNsysNvtxUnclosed,
  kNsysDamaged,
  // samples/recording_reader: a recording of run/watch.
  kMetaIntervalRebuilt,
  kMetaGpusRebuilt,
  kMetaUnreadable,
  kMetaNewerFormat,
  kMetaFieldsUnreadable,
  kMetaMissing,
  kSamplesUnreadable,
  kTruncatedLastLine,
  kOversizedLines,
  kMalformedLines,
  kTicksOutOfOrder,
  kUnknownSeries,
  kImplausibleValues,
  kUnknownMetrics,
  kUnknownRecords,
  kGpuReadsFailed,
  kRecordingIncomplete,
  kRecordingInProgress,
  // pipeline: analysis of a recording.
  kTraceUnreadable,
  kCount
};

struct StatDef {
  StatId id;
  std::string_view name;    // stable id, e.g. "kineto_truncated"
  std::string_view reader;  // who raises it: import, kineto, cupti, recording, analysis
  Severity severity;
  std::string_view description;  // one sentence for humans; may hold one "{}"
  std::string_view detail = {};  // what fills "{}", for the listing
};

const StatDef& stat_def(StatId id);
// Every stat, in StatId order.
std::span<const StatDef> all_stats();
// The stat named `name`, if there is one.
std::optional<StatId> find_stat(std::string_view name);
// The description with `detail` in place of its "{}" (none: as it is).
std::string stat_description(StatId id, std::string_view detail = {});
// The description as the listing shows it: "{}" replaced by "<detail>".
std::string stat_listing_description(const StatDef& def);

}  // namespace chokepoint
