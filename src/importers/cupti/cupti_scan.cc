#include "importers/cupti/cupti_scan.h"

#include <cstring>
#include <string_view>
#include <unordered_set>

#include "importers/input/byte_source.h"
#include "tracer/trace_format.h"

namespace chokepoint::importers {
namespace {

using tracer::FileHeader;
using tracer::Record;
using tracer::RecordKind;

constexpr uint64_t kMaxStringBytes = 1 << 20;  // as the importer: checked before allocating

// Exactly n bytes, or false at the end of the input or on an error.
bool read_exact(ByteSource& in, char* dst, size_t n) {
  while (n > 0) {
    auto got = in.read(dst, n);
    if (!got.ok() || got.value() == 0) return false;
    dst += got.value();
    n -= got.value();
  }
  return true;
}

}  // namespace

Result<CuptiFileScan> scan_cupti_file(const std::string& path) {
  auto opened = open_file(path);
  if (!opened.ok()) return opened.status();
  ByteSource& in = *opened.value();
  FileHeader h{};
  if (!read_exact(in, reinterpret_cast<char*>(&h), sizeof h) ||
      std::memcmp(h.magic, tracer::kMagic, sizeof h.magic) != 0 || h.record_size != sizeof(Record)) {
    return Status::Error(ErrorCode::kInput, path + ": not a chokepoint CUPTI trace");
  }
  CuptiFileScan out;
  out.pid = h.pid;
  out.window = h.window;
  std::unordered_set<uint32_t> nccl_names;
  std::unordered_set<uint32_t> kernel_names;
  Record r{};
  std::string text;
  while (read_exact(in, reinterpret_cast<char*>(&r), sizeof r)) {
    const auto kind = static_cast<RecordKind>(r.kind);
    if (kind == RecordKind::kString) {
      if (r.start > kMaxStringBytes) break;
      text.resize((r.start + sizeof(Record) - 1) / sizeof(Record) * sizeof(Record));
      if (!read_exact(in, text.data(), text.size())) break;
      if (std::string_view(text.data(), r.start).find("nccl") != std::string_view::npos) nccl_names.insert(r.name);
      continue;
    }
    if (kind == RecordKind::kEnd) break;
    if (kind != RecordKind::kKernel) continue;
    out.devices.insert(r.device);
    ++out.kernels;
    kernel_names.insert(r.name);
  }
  for (uint32_t n : kernel_names) out.nccl = out.nccl || nccl_names.contains(n);
  return out;
}

}  // namespace chokepoint::importers
