// The explicit list of importers (no static-init registration) and the multi-file entry
// point: directory expansion, format sniffing, then one importer per file.
#include <sys/stat.h>

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <set>
#include <type_traits>
#include <utility>

#include "base/read_file.h"
#include "importers/cupti/cupti_importer.h"
#include "importers/importer.h"
#include "importers/input/byte_source.h"
#include "importers/input/same_content.h"
#include "importers/kineto/kineto_importer.h"
#include "importers/nsys/nsys_importer.h"
#include "tracer/trace_format.h"

namespace chokepoint::importers {
namespace {

constexpr size_t kSniffBytes = 64 << 10;
// A JSON object whose first 64 KiB name no trace key (a Chrome trace with a large
// "otherData" or metadata block before "traceEvents") is looked at again this far in.
constexpr size_t kDeepSniffBytes = 16 << 20;

bool ends_with(const std::string& s, std::string_view suffix) {
  return s.size() >= suffix.size() && s.compare(s.size() - suffix.size(), suffix.size(), suffix) == 0;
}

// The error of a file that cannot be read, naming it. An I/O error (kIo, the default)
// always names its file; one of content (kInput) is said of its file here.
Status cannot_read(const std::string& path, const std::string& why, ErrorCode code = ErrorCode::kIo) {
  return Status::Error(code, "cannot read '" + path + "': " + why);
}

struct InputFile {
  std::string path;
  bool from_directory = false;  // found by listing a directory, not named by the user
};

// The trace files directly inside directory `path`, sorted by name. Entries named like a
// trace that cannot be followed (a symbolic link loop, a dangling link) go to `broken`.
Status expand_directory(const std::string& path, const std::vector<std::unique_ptr<Importer>>& importers,
                        std::vector<InputFile>* files, std::vector<std::string>* broken) {
  std::vector<std::string> found;
  std::error_code ec;
  for (std::filesystem::directory_iterator it(path, ec), end; !ec && it != end; it.increment(ec)) {
    std::error_code type_ec;
    const bool regular = it->is_regular_file(type_ec);
    if (!is_trace_file_name(importers, it->path().filename().string())) continue;
    if (regular) {
      found.push_back(it->path().string());
    } else if (type_ec) {
      broken->push_back(it->path().filename().string() + ": " + type_ec.message());
    }
  }
  if (ec) return cannot_read(path, ec.message());
  if (found.empty()) {
    return Status::Error(ErrorCode::kInput,
                         "no trace files (" + trace_file_patterns(importers) + ") in directory '" + path + "'");
  }
  std::sort(found.begin(), found.end());
  for (auto& f : found) files->push_back({std::move(f), true});
  return Status::Ok();
}

// Each path named by the user: a file as it is, a directory as the trace files in it.
Status expand_paths(const std::vector<std::string>& paths, const std::vector<std::unique_ptr<Importer>>& importers,
                    std::vector<InputFile>* files, std::vector<std::string>* broken) {
  for (const std::string& path : paths) {
    struct stat st;
    if (::stat(path.c_str(), &st) != 0) return cannot_read(path, std::strerror(errno));
    if (S_ISDIR(st.st_mode)) {
      if (Status s = expand_directory(path, importers, files, broken); !s.ok()) return s;
      continue;
    }
    // A FIFO would block the read until a writer comes (forever, for a stray one), a
    // device never ends: only files, whose size is known, are read.
    if (!S_ISREG(st.st_mode)) {
      return cannot_read(path, file_kind_name(st.st_mode) +
                                   "; analyze reads trace files and directories (save the stream to a file first)");
    }
    files->push_back({path, false});
  }
  return Status::Ok();
}

// True when gzip file `gz` holds `plain`: its trailer's ISIZE (RFC 1952: the size of the
// uncompressed data mod 2^32, the last 4 bytes, little-endian) is the size of `plain`. A
// cheap test that needs no inflating; a damaged .gz beside a different plain file fails it.
bool gzip_of(const std::string& gz, const std::string& plain) {
  std::error_code ec1, ec2;
  const uintmax_t plain_size = std::filesystem::file_size(plain, ec1);
  const uintmax_t gz_size = std::filesystem::file_size(gz, ec2);
  if (ec1 || ec2 || gz_size < 18) return false;
  FILE* f = std::fopen(gz.c_str(), "rb");
  if (f == nullptr) return false;
  unsigned char t[4] = {};
  const bool read = std::fseek(f, -4, SEEK_END) == 0 && std::fread(t, 1, 4, f) == 4;
  std::fclose(f);
  const uint32_t isize = static_cast<uint32_t>(t[0]) | static_cast<uint32_t>(t[1]) << 8 |
                         static_cast<uint32_t>(t[2]) << 16 | static_cast<uint32_t>(t[3]) << 24;
  return read && isize == static_cast<uint32_t>(plain_size);
}

// A trace kept both plain and gzipped (trace.json beside trace.json.gz, after a gunzip -k)
// is one run, not two ranks: the plain file is read (no inflating), the other dropped.
// Returns how many were dropped; `dropped` gets the first one's names.
int64_t drop_compressed_twins(std::vector<InputFile>* files, std::string* dropped) {
  std::vector<InputFile> kept;
  int64_t n = 0;
  for (const InputFile& f : *files) {
    if (ends_with(f.path, ".gz")) {
      const std::string plain = f.path.substr(0, f.path.size() - 3);
      const bool twin = std::any_of(files->begin(), files->end(),
                                    [&](const InputFile& o) { return o.path == plain; }) &&
                        gzip_of(f.path, plain);
      if (twin) {
        if (n++ == 0) *dropped = "read " + plain + ", not " + f.path;
        continue;
      }
    }
    kept.push_back(f);
  }
  *files = std::move(kept);
  return n;
}

// The same bytes under two names (a copy, a second path to one file) are one input: the
// first name is read, the others dropped and named in the stat.
void drop_same_content(std::vector<InputFile>* files, timeline::ImportStats& stats) {
  std::vector<std::string> paths;
  for (const InputFile& f : *files) paths.push_back(f.path);
  std::vector<std::pair<std::string, std::string>> dropped;
  const std::vector<std::string> kept = distinct_contents(paths, &dropped);
  if (dropped.empty()) return;
  // Kept paths in their order, each once: a path given twice is one of them (`analyze t t`
  // counted its 6 steps as 12).
  std::vector<InputFile> out;
  size_t next = 0;
  for (const InputFile& f : *files) {
    if (next < kept.size() && f.path == kept[next]) {
      out.push_back(f);
      ++next;
    }
  }
  *files = std::move(out);
  std::string names;
  for (const auto& [twin, first] : dropped) names += (names.empty() ? "" : "; ") + twin + " (same as " + first + ")";
  stats.add(StatId::kImportSameContent, names, static_cast<int64_t>(dropped.size()));
}

uint64_t file_size_or_zero(const std::string& path) {
  std::error_code ec;
  const uintmax_t size = std::filesystem::file_size(path, ec);
  return ec ? 0 : size;
}

std::string understood(const std::vector<std::unique_ptr<Importer>>& importers) {
  std::string s;
  for (const auto& imp : importers) {
    if (!s.empty()) s += "; ";
    s += std::string(imp->name()) + ": " + std::string(imp->description());
  }
  return s;
}

// Progress over all files: each file's bytes are offset by the files before it.
struct MultiFileProgress {
  ImportOptions outer;
  uint64_t done_before = 0;
  uint64_t total = 0;
  static void report(void* ctx, uint64_t done, uint64_t /*file_total*/) {
    auto* self = static_cast<MultiFileProgress*>(ctx);
    self->outer.progress(self->outer.progress_ctx, self->done_before + done, self->total);
  }
};

// Equal values, where unknown floats (NaN) equal each other.
template <typename T>
bool same_value(const T& a, const T& b) {
  if constexpr (std::is_floating_point_v<T>) {
    return a == b || (std::isnan(a) && std::isnan(b));
  } else {
    return a == b;
  }
}

// Rows repeated exactly (every column equal) describe one event recorded twice, which
// would double-count busy time; keep the first. After sorting, copies share start and
// end; look back a few rows among those (rows of other sources may sit in between), which
// stays linear even when many events share one timestamp.
template <typename Table>
int64_t remove_duplicate_rows(Table& t) {
  constexpr size_t kLookBack = 8;
  const size_t n = t.size();
  std::vector<uint8_t> duplicate(n, 0);
  int64_t count = 0;
  for (size_t i = 1; i < n; ++i) {
    for (size_t j = i - 1, seen = 0; seen < kLookBack; --j, ++seen) {
      if (t.start[j] != t.start[i] || t.end[j] != t.end[i]) break;
      bool same = !duplicate[j];
      t.for_each_column([&](auto& col) { same = same && same_value(col[i], col[j]); });
      if (same) {
        duplicate[i] = 1;
        ++count;
        break;
      }
      if (j == 0) break;
    }
  }
  if (count == 0) return 0;
  t.for_each_column([&](auto& col) {
    size_t out = 0;
    for (size_t i = 0; i < n; ++i) {
      if (!duplicate[i]) col[out++] = col[i];
    }
    col.resize(out);
  });
  return count;
}

void remove_duplicates(timeline::Timeline& tl, timeline::ImportStats& stats) {
  const int64_t n = remove_duplicate_rows(tl.gpu_ops) + remove_duplicate_rows(tl.cpu_ranges) +
                    remove_duplicate_rows(tl.runtime_calls) + remove_duplicate_rows(tl.sync_events) +
                    remove_duplicate_rows(tl.gpu_annotations) + remove_duplicate_rows(tl.steps);
  if (n > 0) {
    stats.add(StatId::kImportDuplicateEvents, n);
  }
}

}  // namespace

std::vector<std::unique_ptr<Importer>> all_importers() {
  std::vector<std::unique_ptr<Importer>> list;
  list.push_back(make_kineto_importer());
  list.push_back(make_cupti_importer());
  list.push_back(make_nsys_importer());
  return list;
}

bool is_trace_file_name(const std::vector<std::unique_ptr<Importer>>& importers, std::string_view file_name) {
  for (const auto& imp : importers) {
    for (std::string_view suffix : imp->file_suffixes()) {
      if (file_name.ends_with(suffix)) return true;
    }
  }
  return false;
}

std::string trace_file_patterns(const std::vector<std::unique_ptr<Importer>>& importers) {
  std::string s;
  for (const auto& imp : importers) {
    for (std::string_view suffix : imp->file_suffixes()) s += (s.empty() ? "*" : ", *") + std::string(suffix);
  }
  return s;
}

namespace {

// chokepoint's own outputs written into a directory of traces (`analyze DIR --format chrome
// -o DIR/x.json`, `-f json -o DIR/report.json`) are not more ranks of the run: the Chrome
// export ends with its generator, the JSON report starts with its schema.
bool is_own_output(const std::string& path, const std::string& head) {
  if (head.find("\"schema\": \"chokepoint.report/") != std::string::npos ||
      head.find("\"schema\":\"chokepoint.report/") != std::string::npos) {
    return true;
  }
  if (ends_with(path, ".gz")) return false;
  std::FILE* f = std::fopen(path.c_str(), "rb");
  if (f == nullptr) return false;
  std::string tail(512, '\0');
  size_t n = 0;
  if (std::fseek(f, -static_cast<long>(tail.size()), SEEK_END) == 0 || std::fseek(f, 0, SEEK_SET) == 0) {
    n = std::fread(tail.data(), 1, tail.size(), f);
  }
  std::fclose(f);
  tail.resize(n);
  return tail.find("\"otherData\":{\"generator\":\"chokepoint ") != std::string::npos;
}

// A JSON object whose trace keys come after more than kDeepSniffBytes of other members (a
// 20 MiB "otherData" before "traceEvents"): the whole file is scanned in windows, each
// shown to the importers as the object's head ("{" + window), without holding the file.
template <typename Pick>
Importer* pick_by_scan(const std::string& file, const Pick& pick) {
  constexpr size_t kWindow = 4 << 20, kOverlap = 4096;
  Result<std::unique_ptr<ByteSource>> src = open_file(file);
  if (!src.ok()) return nullptr;
  std::string window = "{";
  std::vector<char> buf(kWindow);
  for (;;) {
    Result<size_t> r = src.value()->read(buf.data(), buf.size());
    if (!r.ok() || r.value() == 0) return nullptr;
    window.append(buf.data(), r.value());
    if (Importer* chosen = pick(window)) return chosen;
    // Keep the tail, in case a key is cut between two reads.
    window = "{" + window.substr(window.size() - std::min(window.size() - 1, kOverlap));
  }
}

// The importer that recognizes `head`, the first bytes of `file`; a JSON object whose
// first 64 KiB name no trace key is looked at again further in. Null when none does.
Importer* choose_importer(const std::string& file, const std::string& head,
                          const std::vector<std::unique_ptr<Importer>>& importers) {
  auto pick = [&](const std::string& h) -> Importer* {
    for (const auto& imp : importers) {
      if (!h.empty() && imp->sniff(h)) return imp.get();
    }
    return nullptr;
  };
  Importer* chosen = pick(head);
  const size_t first = head.find_first_not_of(" \t\r\n");
  if (!chosen && head.size() == kSniffBytes && first != std::string::npos && head[first] == '{') {
    Result<std::string> deeper = read_head(file, kDeepSniffBytes);
    if (deeper.ok()) chosen = pick(deeper.value());
    if (!chosen && deeper.ok() && deeper.value().size() == kDeepSniffBytes) chosen = pick_by_scan(file, pick);
  }
  return chosen;
}

// Where one pass over the files puts what it finds (import_files).
struct FilePass {
  const std::vector<std::unique_ptr<Importer>>& importers;
  timeline::Timeline& tl;
  timeline::ImportStats& stats;
  ImportOptions file_opts;
  MultiFileProgress& progress;
  std::vector<std::pair<std::string, std::string>>* failed;
  size_t* imported;
};

// The head of `file` to sniff: the caller's (ImportOptions::heads, read once by the input
// plan), else read now.
Result<std::string> sniff_head(const std::string& file, const ImportOptions& o) {
  if (o.heads != nullptr) {
    if (auto it = o.heads->find(file); it != o.heads->end()) return it->second.substr(0, kSniffBytes);
  }
  return read_head(file, kSniffBytes);
}

// One file of import_files: sniffed, then imported, skipped or named in *failed.
Status import_file(const InputFile& input, FilePass& pass) {
  const std::string& file = input.path;
  Result<std::string> head = sniff_head(file, pass.file_opts);
  if (!head.ok()) {
    if (!input.from_directory) return head.status();
    pass.failed->emplace_back(file, head.status().message());
    return Status::Ok();
  }
  if (input.from_directory && is_own_output(file, head.value())) {
    pass.stats.add(StatId::kImportOwnOutputs);
    pass.progress.done_before += file_size_or_zero(file);
    return Status::Ok();
  }
  Importer* chosen = choose_importer(file, head.value(), pass.importers);
  if (!chosen && input.from_directory) {
    // A directory of traces often holds other JSON too (configs, results): skip it.
    pass.stats.add(StatId::kImportSkippedFiles);
    pass.progress.done_before += file_size_or_zero(file);
    return Status::Ok();
  }
  if (head.value().empty()) return cannot_read(file, "the file is empty", ErrorCode::kInput);
  if (!chosen) {
    return cannot_read(file, "not a recognized trace format (understood: " + understood(pass.importers) + ")",
                       ErrorCode::kInput);
  }
  const auto source_index = static_cast<int32_t>(pass.tl.sources.size());
  timeline::Source src;
  src.path = file;
  src.format = std::string(chosen->name());
  pass.tl.sources.push_back(src);
  const Status st = chosen->import(file, source_index, pass.tl, pass.stats, pass.file_opts);
  if (!st.ok()) {
    // An I/O error names the file already; any other is said of it here.
    if (!input.from_directory) return st.code() == ErrorCode::kIo ? st : cannot_read(file, st.message(), st.code());
    pass.failed->emplace_back(file, st.message());
    return Status::Ok();
  }
  ++*pass.imported;
  pass.progress.done_before += file_size_or_zero(file);
  return Status::Ok();
}

// One pass over the files: each one sniffed and imported into `tl`. A file listed from a
// directory that is not a trace, or chokepoint's own output, is skipped; one that fails to
// import is named in *failed (the caller imports again without it: its half-read rows are
// in `tl`). A file the user named fails the whole import.
Status import_files(const std::vector<InputFile>& files, const std::set<std::string>& skip,
                    const std::vector<std::unique_ptr<Importer>>& importers, timeline::Timeline& tl,
                    timeline::ImportStats& stats, const ImportOptions& opts, MultiFileProgress& progress,
                    std::vector<std::pair<std::string, std::string>>* failed, size_t* imported) {
  FilePass pass{importers, tl, stats, opts, progress, failed, imported};
  if (opts.progress) {
    pass.file_opts.progress = &MultiFileProgress::report;
    pass.file_opts.progress_ctx = &progress;
  }
  for (const InputFile& input : files) {
    if (skip.count(input.path) > 0) continue;
    if (Status st = import_file(input, pass); !st.ok()) return st;
  }
  return Status::Ok();
}

}  // namespace

namespace {

// Every file of a directory is imported or skipped with a warning, never half: the ones
// that failed left rows behind, so the others are imported again without them, into a
// fresh `tl` and the stats as they were before (`before`). `names` gets "file: why; ...".
Status import_again_without(const std::vector<std::pair<std::string, std::string>>& failed,
                            const std::vector<InputFile>& files,
                            const std::vector<std::unique_ptr<Importer>>& importers,
                            const timeline::ImportStats& before, timeline::Timeline& tl, timeline::ImportStats& stats,
                            const ImportOptions& opts, MultiFileProgress& progress, size_t* imported,
                            std::string* names) {
  std::set<std::string> skip;
  for (const auto& [file, why] : failed) {
    skip.insert(file);
    *names += (names->empty() ? "" : "; ") + std::filesystem::path(file).filename().string() + ": " + why;
  }
  tl = timeline::Timeline{};
  stats = before;
  *imported = 0;
  std::vector<std::pair<std::string, std::string>> again;
  progress.done_before = 0;
  Status st = import_files(files, skip, importers, tl, stats, opts, progress, &again, imported);
  if (!st.ok()) return st;
  stats.add(StatId::kImportFailedFiles, *names, static_cast<int64_t>(failed.size()));
  return Status::Ok();
}

}  // namespace

Status import_paths(const std::vector<std::string>& paths, timeline::Timeline& tl, timeline::ImportStats& stats,
                    const ImportOptions& opts) {
  if (paths.empty()) return Status::Error(ErrorCode::kInput, "no input trace given");
  const std::vector<std::unique_ptr<Importer>> importers = all_importers();
  std::vector<InputFile> files;
  std::vector<std::string> broken;
  Status st = expand_paths(paths, importers, &files, &broken);
  if (!st.ok()) return st;
  if (!broken.empty()) {
    std::string names;
    for (const std::string& b : broken) names += (names.empty() ? "" : "; ") + b;
    stats.add(StatId::kImportBrokenEntries, names, static_cast<int64_t>(broken.size()));
  }
  std::string dropped;
  if (const int64_t twins = drop_compressed_twins(&files, &dropped); twins > 0) {
    stats.add(StatId::kImportDuplicateFiles, dropped, twins);
  }
  drop_same_content(&files, stats);

  MultiFileProgress progress{opts};
  for (const InputFile& f : files) progress.total += file_size_or_zero(f.path);
  const timeline::ImportStats before = stats;
  std::vector<std::pair<std::string, std::string>> failed;
  size_t imported = 0;
  st = import_files(files, {}, importers, tl, stats, opts, progress, &failed, &imported);
  if (!st.ok()) return st;
  std::string names;
  if (!failed.empty()) {
    st = import_again_without(failed, files, importers, before, tl, stats, opts, progress, &imported, &names);
    if (!st.ok()) return st;
  }
  if (imported == 0) {
    return Status::Error(ErrorCode::kInput, "no recognized trace in " +
                                                (paths.size() == 1 ? "'" + paths[0] + "'" : "the inputs") +
                                                " (understood: " + understood(importers) +
                                                (failed.empty() ? ")" : "); the traces could not be read: " + names));
  }
  tl.finalize();
  remove_duplicates(tl, stats);
  return Status::Ok();
}

}  // namespace chokepoint::importers
