// The importer interface (after Perfetto trace_processor): each format lives in its own
// folder and provides an Importer; registry.cc lists them explicitly (no static-init
// registration). The CLI opens a file, peeks at its first bytes, asks each importer
// whether it recognizes them, and lets the first that does read the file into the model.
#pragma once

#include <map>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "base/status.h"
#include "timeline/import_stats.h"
#include "timeline/model.h"

namespace chokepoint::importers {

// Progress callback: bytes of the input files consumed so far and their total size. For
// gzip input both count compressed bytes (the uncompressed size is not known up front).
using ProgressFn = void (*)(void* ctx, uint64_t bytes_done, uint64_t bytes_total);

struct ImportOptions {
  ProgressFn progress = nullptr;
  void* progress_ctx = nullptr;
  // The first bytes of files already read by the caller (decompressed, at least 64 KiB or
  // the whole file), by path: a file found here is sniffed from them and not opened twice.
  const std::map<std::string, std::string>* heads = nullptr;
};

class Importer {
 public:
  virtual ~Importer() = default;
  // Short format name, e.g. "kineto".
  virtual std::string_view name() const = 0;
  // One line describing what files the format covers, for "unknown format" errors.
  virtual std::string_view description() const = 0;
  // The file name endings of the format ({".json", ".json.gz"}): which files of a
  // directory are read, and what "no trace files" lists.
  virtual std::vector<std::string_view> file_suffixes() const = 0;
  // True when `head` (the first bytes of the decompressed file, up to 64 KiB) looks like
  // this format.
  virtual bool sniff(std::string_view head) const = 0;
  // Reads `path` into `tl` as source `source_index` (the caller has appended
  // tl.sources[source_index] already). Odd input goes into `stats`; a non-ok status
  // means nothing usable could be read.
  virtual Status import(const std::string& path, int32_t source_index, timeline::Timeline& tl,
                        timeline::ImportStats& stats, const ImportOptions& opts) = 0;
};

// All importers, in the order they are tried.
std::vector<std::unique_ptr<Importer>> all_importers();

// True when `file_name` ends with a suffix one of `importers` declares.
bool is_trace_file_name(const std::vector<std::unique_ptr<Importer>>& importers, std::string_view file_name);
// "*.json, *.json.gz, *.cptrace, *.cptrace.gz": the suffixes of `importers`, in order.
std::string trace_file_patterns(const std::vector<std::unique_ptr<Importer>>& importers);

// Imports one file or every recognized file of a directory (sorted by name) into `tl`,
// then finalizes it. Fails with a one-line message naming the understood formats when a
// file is not recognized.
Status import_paths(const std::vector<std::string>& paths, timeline::Timeline& tl, timeline::ImportStats& stats,
                    const ImportOptions& opts = {});

}  // namespace chokepoint::importers
