// Round trip of the recording format and the ways a run can end badly: chokepoint
// killed mid-line, killed before the final meta.json, a damaged line.
#include <unistd.h>

#include <cstring>
#include <filesystem>
#include <fstream>

#include <gtest/gtest.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>

#include "samples/meta_json.h"
#include "samples/recording_reader.h"
#include "samples/recording_writer.h"

namespace chokepoint::samples {
namespace {
namespace fs = std::filesystem;

std::string fresh_dir(const std::string& name) {
  const std::string dir = ::testing::TempDir() + "/recording_" + name + "_" + std::to_string(getpid());
  fs::remove_all(dir);
  return dir;
}

RunMeta start_meta() {
  RunMeta m;
  m.chokepoint_version = "0.1.0";
  m.command = {"python3", "train.py", "--epochs", "1"};
  m.pid = 4242;
  m.start_ns = 1'700'000'000'000'000'000;
  m.interval_ns = 100'000'000;
  m.host = {{"hostname", "dev"}, {"cpus", "2"}};
  return m;
}

Tick tick(int64_t t, double sm) {
  Tick k{t, {}};
  k.add(MetricId::kGpuSmActive, Entity::gpu(0), sm);
  k.add_invalid(MetricId::kGpuTensorActive, Entity::gpu(0));
  k.add(MetricId::kProcCpuPct, Entity::process(4242), 99.5);
  k.add(MetricId::kThreadState, Entity::thread(4242, 4243), 'R');
  return k;
}

ProcessMeta process(int64_t pid, ProcessRole role) {
  ProcessMeta p;
  p.pid = pid;
  p.ppid = 4242;
  p.comm = "pt_data_worker";
  p.cmdline = {"python3", "train.py"};
  p.role = role;
  p.first_seen_ns = 1'700'000'000'100'000'000;
  return p;
}

TEST(Recording, RoundTripsEverySampleAndTheFinalMeta) {
  const std::string dir = fresh_dir("roundtrip");
  auto w = RecordingWriter::create(dir, start_meta());
  ASSERT_TRUE(w.ok()) << w.status().message();
  ASSERT_TRUE(w.value()->process_seen(process(4300, ProcessRole::kDataLoaderWorker)).ok());
  ASSERT_TRUE(w.value()->append(tick(1'700'000'000'100'000'000, 12.25)).ok());
  ASSERT_TRUE(w.value()->append(tick(1'700'000'000'200'000'000, 0.1 + 0.2)).ok());
  ASSERT_TRUE(w.value()->process_exited(4300, 1'700'000'000'250'000'000).ok());
  RunMeta end = start_meta();
  end.end_ns = 1'700'000'000'300'000'000;
  end.exit_code = 3;
  GpuMeta g;
  g.index = 0;
  g.name = "NVIDIA H200";
  g.max_link_gen = 5;
  g.pids = {4242};
  g.used = true;
  end.gpus = {g};
  ProcessMeta p = process(4300, ProcessRole::kDataLoaderWorker);
  p.exited = true;
  end.processes = {p};
  ASSERT_TRUE(w.value()->finish(end).ok());

  auto r = read_recording(dir);
  ASSERT_TRUE(r.ok()) << r.status().message();
  const Recording& rec = r.value();
  EXPECT_TRUE(rec.complete);
  EXPECT_TRUE(rec.stats.empty()) << rec.stats.front().name;
  EXPECT_EQ(rec.ticks, 2u);
  EXPECT_EQ(rec.meta.exit_code, 3);
  EXPECT_EQ(rec.meta.command, start_meta().command);
  EXPECT_EQ(rec.meta.host.at("cpus"), "2");
  ASSERT_EQ(rec.meta.gpus.size(), 1u);
  EXPECT_EQ(rec.meta.gpus[0].max_link_gen, 5u);
  EXPECT_FALSE(rec.meta.gpus[0].sm_count.has_value());
  ASSERT_EQ(rec.meta.processes.size(), 1u);
  EXPECT_EQ(rec.meta.processes[0].role, ProcessRole::kDataLoaderWorker);
  const Series* sm = rec.samples.find(MetricId::kGpuSmActive, Entity::gpu(0));
  ASSERT_NE(sm, nullptr);
  EXPECT_EQ(sm->values, (std::vector<double>{12.25, 0.1 + 0.2}));  // exact: shortest round trip
  EXPECT_EQ(sm->time_ns[1], 1'700'000'000'200'000'000);
  const Series* tensor = rec.samples.find(MetricId::kGpuTensorActive, Entity::gpu(0));
  ASSERT_NE(tensor, nullptr);
  EXPECT_EQ(tensor->valid, (std::vector<uint8_t>{0, 0}));
  const Series* state = rec.samples.find(MetricId::kThreadState, Entity::thread(4242, 4243));
  ASSERT_NE(state, nullptr);
  EXPECT_EQ(state->values[0], 'R');
}

TEST(Recording, RefusesToMixTwoRunsInOneDirectory) {
  const std::string dir = fresh_dir("twice");
  auto w = RecordingWriter::create(dir, start_meta());
  ASSERT_TRUE(w.ok());
  auto again = RecordingWriter::create(dir, start_meta());
  EXPECT_FALSE(again.ok());
}

std::string slurp(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(in), {});
}

TEST(Recording, NeverOverwritesAMetaJsonItDidNotWrite) {
  const std::string dir = fresh_dir("meta_only");
  fs::create_directories(dir);
  std::ofstream(fs::path(dir) / kMetaFile) << "{\"mine\": true}\n";
  auto w = RecordingWriter::create(dir, start_meta());
  ASSERT_FALSE(w.ok());
  EXPECT_EQ(w.status().message(), dir + " already holds a recording (meta.json); it is not overwritten");
  EXPECT_EQ(slurp(dir + "/meta.json"), "{\"mine\": true}\n");
  EXPECT_FALSE(fs::exists(fs::path(dir) / kSamplesFile));
  EXPECT_EQ(existing_recording_files(dir), std::vector<std::string>{"meta.json"});
}

TEST(Recording, ReplaceRemovesTheOldRunsFilesAndNotWhatTheyLinkTo) {
  const std::string dir = fresh_dir("replace");
  fs::create_directories(dir);
  const std::string victim = dir + ".victim";
  std::ofstream(victim) << "precious\n";
  fs::create_symlink(victim, fs::path(dir) / kSamplesFile);
  fs::create_symlink(victim, fs::path(dir) / kMetaFile);
  std::ofstream(fs::path(dir) / "trace-77.cptrace") << "old trace";
  {  // the control socket of an on-demand job killed with SIGKILL
    const int s = ::socket(AF_UNIX, SOCK_STREAM, 0);
    sockaddr_un a{};
    a.sun_family = AF_UNIX;
    const std::string path = dir + "/control-77.sock";
    ASSERT_LT(path.size(), sizeof a.sun_path);
    std::memcpy(a.sun_path, path.c_str(), path.size() + 1);
    ASSERT_EQ(::bind(s, reinterpret_cast<const sockaddr*>(&a), sizeof a), 0);
    ::close(s);
  }
  std::ofstream(fs::path(dir) / kStackLogFile) << "old py-spy log";
  std::ofstream(fs::path(dir) / kSourcesFile) << "{}";
  std::ofstream(fs::path(dir) / "notes.txt") << "not ours";
  EXPECT_EQ(existing_recording_files(dir),
            (std::vector<std::string>{"control-77.sock", "meta.json", "pyspy.log", "samples.jsonl", "sources.json",
                                      "trace-77.cptrace"}));
  auto w = RecordingWriter::create(dir, start_meta(), /*replace=*/true);
  ASSERT_TRUE(w.ok()) << w.status().message();
  ASSERT_TRUE(w.value()->append(tick(1'700'000'000'100'000'000, 1)).ok());
  ASSERT_TRUE(w.value()->finish(start_meta()).ok());
  EXPECT_EQ(slurp(victim), "precious\n");
  EXPECT_FALSE(fs::is_symlink(fs::path(dir) / kSamplesFile));
  EXPECT_FALSE(fs::exists(fs::path(dir) / "trace-77.cptrace"));
  EXPECT_FALSE(fs::exists(fs::symlink_status(fs::path(dir) / "control-77.sock")));
  EXPECT_FALSE(fs::exists(fs::path(dir) / kStackLogFile));  // a later py-spy log must not append to it
  EXPECT_FALSE(fs::exists(fs::path(dir) / kSourcesFile));
  EXPECT_EQ(slurp(dir + "/notes.txt"), "not ours");
  auto r = read_recording(dir);
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(r->ticks, 1u);
  fs::remove(victim);
}

TEST(Recording, MetaJsonIsNotWrittenThroughAPlantedTemporaryName) {
  // The old writer wrote DIR/meta.json.tmp with O_TRUNC, following a link planted there.
  const std::string dir = fresh_dir("planted_tmp");
  fs::create_directories(dir);
  const std::string victim = dir + ".victim";
  std::ofstream(victim) << "precious\n";
  fs::create_symlink(victim, fs::path(dir) / "meta.json.tmp");
  auto w = RecordingWriter::create(dir, start_meta());
  ASSERT_TRUE(w.ok()) << w.status().message();
  ASSERT_TRUE(w.value()->finish(start_meta()).ok());
  EXPECT_EQ(slurp(victim), "precious\n");
  EXPECT_NE(slurp(dir + "/meta.json").find("train.py"), std::string::npos);
  fs::remove(victim);
}

TEST(Recording, CrashLosesOnlyTheCutLineAndRebuildsProcesses) {
  const std::string dir = fresh_dir("crash");
  {
    auto w = RecordingWriter::create(dir, start_meta());
    ASSERT_TRUE(w.ok());
    ASSERT_TRUE(w.value()->process_seen(process(4300, ProcessRole::kDataLoaderWorker)).ok());
    ASSERT_TRUE(w.value()->append(tick(1'700'000'000'100'000'000, 1)).ok());
    ASSERT_TRUE(w.value()->append(tick(1'700'000'000'200'000'000, 2)).ok());
    // kill -9 while the third tick was being written: no finish(), half a line.
  }
  std::ofstream(fs::path(dir) / kSamplesFile, std::ios::app) << "{\"k\":\"tick\",\"t\":1700000000300000000,\"v\":[[0,3";

  auto r = read_recording(dir);
  ASSERT_TRUE(r.ok());
  EXPECT_FALSE(r->complete);
  EXPECT_EQ(r->ticks, 2u);
  ASSERT_NE(r->stat("truncated_last_line"), nullptr);
  EXPECT_EQ(r->stat("truncated_last_line")->count, 1u);
  ASSERT_NE(r->stat("recording_incomplete"), nullptr);
  EXPECT_EQ(r->meta.command, start_meta().command);  // the start meta is there
  ASSERT_EQ(r->meta.processes.size(), 1u);
  EXPECT_EQ(r->meta.processes[0].pid, 4300);
  EXPECT_FALSE(r->meta.processes[0].exited);
  EXPECT_EQ(r->meta.processes[0].last_seen_ns, 1'700'000'000'200'000'000);
  EXPECT_EQ(r->samples.find(MetricId::kGpuSmActive, Entity::gpu(0))->values, (std::vector<double>{1, 2}));
}

TEST(Recording, CountsDamagedAndForeignLines) {
  const std::string dir = fresh_dir("damaged");
  fs::create_directories(dir);
  std::ofstream(fs::path(dir) / kSamplesFile)
      << "{\"k\":\"series\",\"id\":0,\"metric\":\"gpu.sm_active\",\"entity\":\"gpu:0\"}\n"
      << "{\"k\":\"series\",\"id\":1,\"metric\":\"gpu.future_metric\",\"entity\":\"gpu:0\"}\n"
      << "not json at all\n"
      << "{\"k\":\"tick\",\"t\":5,\"v\":[[0,1.5],[1,7],[9,1]]}\n"
      << "{\"k\":\"annotation\",\"text\":\"later versions\"}\n";
  auto r = read_recording(dir);
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(r->ticks, 1u);
  EXPECT_EQ(r->stat("malformed_lines")->count, 1u);
  EXPECT_EQ(r->stat("unknown_metrics")->count, 1u);
  EXPECT_EQ(r->stat("unknown_series")->count, 1u);
  EXPECT_EQ(r->stat("unknown_records")->count, 1u);
  EXPECT_NE(r->stat("meta_missing"), nullptr);
  EXPECT_EQ(r->samples.find(MetricId::kGpuSmActive, Entity::gpu(0))->values, (std::vector<double>{1.5}));
  EXPECT_FALSE(read_recording(fresh_dir("empty")).ok());
}

TEST(Recording, FieldsOfTheWrongTypeAndTicksGoingBackAreCountedNotThrown) {
  const std::string dir = fresh_dir("types");
  fs::create_directories(dir);
  // Found by fuzz/recording_fuzzer: a string id made the reader throw.
  std::ofstream(fs::path(dir) / kSamplesFile)
      << "{\"k\":\"series\",\"id\":\"0\",\"metric\":1,\"entity\":[]}\n"
      << "{\"k\":\"series\",\"id\":0,\"metric\":\"gpu.sm_active\",\"entity\":\"gpu:0\"}\n"
      << "{\"k\":\"tick\",\"t\":10,\"v\":[[0,1]]}\n"
      << "{\"k\":\"tick\",\"t\":9,\"v\":[[0,2]]}\n"
      << "{\"k\":\"tick\",\"t\":11,\"v\":[[0,3]]}\n"
      << "{\"k\":\"exit\",\"pid\":\"x\",\"t\":1}\n";
  auto r = read_recording(dir);
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(r->ticks, 2u);
  EXPECT_EQ(r->stat("ticks_out_of_order")->count, 1u);
  EXPECT_EQ(r->stat("malformed_lines")->count, 2u);
  EXPECT_EQ(r->samples.find(MetricId::kGpuSmActive, Entity::gpu(0))->values, (std::vector<double>{1, 3}));
}

// Issue 13: one 400 MB line in samples.jsonl took 1.6 GB. A line past the bound is skipped
// unread (counted), the records after it are read.
TEST(Recording, AnOversizedLineIsSkippedNotHeld) {
  const std::string dir = fresh_dir("oversized");
  fs::create_directories(dir);
  {
    std::ofstream out(fs::path(dir) / kSamplesFile);
    out << "{\"k\":\"series\",\"id\":0,\"metric\":\"gpu.sm_active\",\"entity\":\"gpu:0\"}\n";
    out << "{\"k\":\"tick\",\"t\":10,\"v\":[[0,1]]}\n";
    out << "{\"k\":\"process\",\"comm\":\"" << std::string(kMaxRecordingLineBytes + 100, 'a') << "\"}\n";
    out << "{\"k\":\"tick\",\"t\":11,\"v\":[[0,3]]}\n";
  }
  auto r = read_recording(dir);
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(r->stat("oversized_lines")->count, 1u);
  EXPECT_EQ(r->ticks, 2u);
  EXPECT_EQ(r->samples.find(MetricId::kGpuSmActive, Entity::gpu(0))->values, (std::vector<double>{1, 3}));
}

// Issue 13: losses know out of how many, so the diagnosis can scale its confidence.
TEST(Recording, LossesCountTicksOutOfOrderAndGpuReadsThatFailedAfterAnswering) {
  const std::string dir = fresh_dir("losses");
  fs::create_directories(dir);
  {
    std::ofstream out(fs::path(dir) / kSamplesFile);
    out << "{\"k\":\"series\",\"id\":0,\"metric\":\"gpu.utilization\",\"entity\":\"gpu:0\"}\n";
    out << "{\"k\":\"series\",\"id\":1,\"metric\":\"gpu.utilization\",\"entity\":\"gpu:1\"}\n";
    // GPU 1 never answers (NOT_SUPPORTED: not a loss); GPU 0 answers, then is lost.
    out << "{\"k\":\"tick\",\"t\":10,\"v\":[[0,90],[1,null]]}\n";
    out << "{\"k\":\"tick\",\"t\":20,\"v\":[[0,null],[1,null]]}\n";
    out << "{\"k\":\"tick\",\"t\":15,\"v\":[[0,50],[1,null]]}\n";
    out << "{\"k\":\"tick\",\"t\":30,\"v\":[[0,null],[1,null]]}\n";
    out << "{\"k\":\"tick\",\"t\":40,\"v\":[[0,95],[1,null]]}\n";
  }
  auto r = read_recording(dir);
  ASSERT_TRUE(r.ok());
  auto loss = [&](const std::string& what) -> const DataLoss* {
    for (const DataLoss& l : r->losses) {
      if (l.what == what) return &l;
    }
    return nullptr;
  };
  ASSERT_NE(loss("ticks out of time order"), nullptr);
  EXPECT_EQ(loss("ticks out of time order")->lost, 1);
  EXPECT_EQ(loss("ticks out of time order")->total, 5);
  const DataLoss* gpu = loss("GPU utilization reads that failed after the GPU had answered");
  ASSERT_NE(gpu, nullptr);
  EXPECT_EQ(gpu->lost, 2);   // t=20 and t=30 on GPU 0; none of GPU 1's
  EXPECT_EQ(gpu->total, 3);  // GPU 0's reads after its first answer
  EXPECT_EQ(r->stat("gpu_reads_failed")->count, 2u);
}

// Issue 13: a FIFO planted as meta.json or samples.jsonl hung the reader (a FIFO's open
// waits for a writer). Neither is opened; the recording reads with what is a file.
TEST(Recording, FifosInPlaceOfItsFilesDoNotHang) {
  const std::string dir = fresh_dir("fifo");
  fs::create_directories(dir);
  ASSERT_EQ(::mkfifo((fs::path(dir) / kMetaFile).c_str(), 0600), 0);
  ASSERT_EQ(::mkfifo((fs::path(dir) / kSamplesFile).c_str(), 0600), 0);
  auto r = read_recording(dir);  // would block forever before
  ASSERT_TRUE(r.ok());
  EXPECT_NE(r->stat("meta_unreadable"), nullptr);
  EXPECT_NE(r->stat("samples_unreadable"), nullptr);
  EXPECT_EQ(r->ticks, 0u);
}

// Issue 13: one field of the wrong type in meta.json is named, the rest of it kept, and
// the interval rebuilt from the ticks.
TEST(Recording, OneWrongFieldOfMetaIsNamedAndTheRestKept) {
  const std::string dir = fresh_dir("wrongfield");
  fs::create_directories(dir);
  std::ofstream(fs::path(dir) / kMetaFile)
      << R"({"format":"chokepoint.recording","format_version":1,"interval_ns":"fast","pid":42,
            "gpus":[{"index":0,"name":"NVIDIA H200","used":"yes"}],"end_ns":100})";
  std::ofstream(fs::path(dir) / kSamplesFile)
      << "{\"k\":\"series\",\"id\":0,\"metric\":\"host.procs_running\",\"entity\":\"host\"}\n"
      << "{\"k\":\"tick\",\"t\":10,\"v\":[[0,1]]}\n"
      << "{\"k\":\"tick\",\"t\":60,\"v\":[[0,1]]}\n"
      << "{\"k\":\"tick\",\"t\":110,\"v\":[[0,1]]}\n";
  auto r = read_recording(dir);
  ASSERT_TRUE(r.ok());
  ASSERT_NE(r->stat("meta_fields_unreadable"), nullptr);
  EXPECT_EQ(r->stat("meta_fields_unreadable")->count, 2u);
  EXPECT_NE(r->stat("meta_fields_unreadable")->description.find("interval_ns, gpus[].used"), std::string::npos)
      << r->stat("meta_fields_unreadable")->description;
  EXPECT_EQ(r->meta.pid, 42);
  ASSERT_EQ(r->meta.gpus.size(), 1u);
  EXPECT_EQ(r->meta.gpus[0].name, "NVIDIA H200");
  EXPECT_EQ(r->meta.interval_ns, 50);
}

// Found by fuzz/recording_fuzzer with UBSan fatal: a huge float where an integer belongs
// was cast unchecked. Such a field, or one of the wrong type, is left unset, never 0.
TEST(Recording, NumbersThatDoNotFitAreLeftUnset) {
  ProcessMeta p;
  ASSERT_TRUE(
      process_from_json(nlohmann::json::parse(R"({"pid": 42, "rank": 1.8e25, "cpus_allowed": [0, 1.8e25]})"), &p));
  EXPECT_EQ(p.pid, 42);
  EXPECT_FALSE(p.rank.has_value());
  EXPECT_FALSE(p.cpus_allowed.has_value());
  ProcessMeta q;
  ASSERT_TRUE(process_from_json(nlohmann::json::parse(R"({"pid": 7, "rank": 3, "cpus_allowed": [0, 5]})"), &q));
  EXPECT_EQ(q.rank, 3);
  EXPECT_EQ(q.cpus_allowed, (std::vector<unsigned>{0, 5}));
}

TEST(Recording, ReadsGzippedSamples) {
  const std::string dir = fresh_dir("gz");
  fs::create_directories(dir);
  const std::string text =
      "{\"k\":\"series\",\"id\":0,\"metric\":\"gpu.sm_active\",\"entity\":\"gpu:0\"}\n"
      "{\"k\":\"tick\",\"t\":5,\"v\":[[0,1.5]]}\n"
      "{\"k\":\"tick\",\"t\":6,\"v\":[[0,2.5]]}\n";
  ASSERT_EQ(std::system(("printf '%s' '" + text + "' | gzip -c > " + dir + "/" + kSamplesGzFile).c_str()), 0);
  auto r = read_recording(dir);
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(r->ticks, 2u);
  EXPECT_EQ(r->samples.find(MetricId::kGpuSmActive, Entity::gpu(0))->values, (std::vector<double>{1.5, 2.5}));
}

TEST(Recording, DefaultDirectoryNameCarriesTheStartTime) {
  const std::string d = default_recording_dir(1'700'000'000'000'000'000);
  EXPECT_EQ(d.rfind("chokepoint-2023", 0), 0u) << d;
  EXPECT_EQ(d.size(), std::string("chokepoint-20231114-221320").size());
}

// Issue 47: what a damaged or foreign recording held was believed. A samples.jsonl of NUL
// bytes read as 0 ticks without a word; a format version from the future was read
// silently; values no machine reads (-8,388,608 TiB of GPU memory) became findings.
TEST(Recording, NulBytesAreCountedNotSkipped) {
  const std::string dir = fresh_dir("nul");
  {
    auto w = RecordingWriter::create(dir, start_meta());
    ASSERT_TRUE(w.ok());
  }
  std::ofstream(fs::path(dir) / kSamplesFile, std::ios::binary) << std::string(4096, '\0');
  auto r = read_recording(dir);
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(r->ticks, 0u);
  ASSERT_NE(r->stat("malformed_lines"), nullptr);
  EXPECT_EQ(r->stat("truncated_last_line"), nullptr);
  // The same with newlines among them: every line of NULs is one malformed line.
  std::ofstream(fs::path(dir) / kSamplesFile, std::ios::binary) << std::string(10, '\0') << "\n"
                                                                << std::string(5, '\0') << "\n";
  r = read_recording(dir);
  ASSERT_TRUE(r.ok());
  ASSERT_NE(r->stat("malformed_lines"), nullptr);
  EXPECT_EQ(r->stat("malformed_lines")->count, 2u);
}

TEST(Recording, ANewerFormatVersionIsSaid) {
  const std::string dir = fresh_dir("future");
  RunMeta m = start_meta();
  m.format_version = 999;
  {
    auto w = RecordingWriter::create(dir, m);
    ASSERT_TRUE(w.ok());
    ASSERT_TRUE(w.value()->append(tick(1'700'000'000'100'000'000, 1)).ok());
  }
  auto r = read_recording(dir);
  ASSERT_TRUE(r.ok());
  ASSERT_NE(r->stat("meta_newer_format"), nullptr);
  EXPECT_NE(r->stat("meta_newer_format")->description.find("999"), std::string::npos);
  EXPECT_EQ(r->ticks, 1u);  // read as version 1 all the same
}

TEST(Recording, TicksBefore1970AreNotRecords) {
  const std::string dir = fresh_dir("negative");
  {
    auto w = RecordingWriter::create(dir, start_meta());
    ASSERT_TRUE(w.ok());
    ASSERT_TRUE(w.value()->append(tick(-1'700'000'000'200'000'000, 1)).ok());
    ASSERT_TRUE(w.value()->append(tick(-1'700'000'000'100'000'000, 2)).ok());
    ASSERT_TRUE(w.value()->append(tick(1'700'000'000'100'000'000, 3)).ok());
  }
  auto r = read_recording(dir);
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(r->ticks, 1u);
  ASSERT_NE(r->stat("malformed_lines"), nullptr);
  EXPECT_EQ(r->stat("malformed_lines")->count, 2u);
}

TEST(Recording, ImplausibleValuesAreReadAsNotSampled) {
  const std::string dir = fresh_dir("implausible");
  {
    auto w = RecordingWriter::create(dir, start_meta());
    ASSERT_TRUE(w.ok());
    Tick k{1'700'000'000'100'000'000, {}};
    k.add(MetricId::kGpuMemoryUsedBytes, Entity::gpu(0), -9.223372036854776e18);
    k.add(MetricId::kGpuSmActive, Entity::gpu(0), 250);
    k.add(MetricId::kProcCpuPct, Entity::process(4242), 350);  // three and a half cores: fine
    k.add(MetricId::kGpuTemperatureC, Entity::gpu(0), -5);     // a cold room: fine
    ASSERT_TRUE(w.value()->append(k).ok());
  }
  auto r = read_recording(dir);
  ASSERT_TRUE(r.ok());
  ASSERT_NE(r->stat("implausible_values"), nullptr);
  EXPECT_EQ(r->stat("implausible_values")->count, 2u);
  EXPECT_EQ(r->samples.find(MetricId::kGpuMemoryUsedBytes, Entity::gpu(0))->valid, (std::vector<uint8_t>{0}));
  EXPECT_EQ(r->samples.find(MetricId::kGpuSmActive, Entity::gpu(0))->valid, (std::vector<uint8_t>{0}));
  EXPECT_EQ(r->samples.find(MetricId::kProcCpuPct, Entity::process(4242))->valid, (std::vector<uint8_t>{1}));
  EXPECT_EQ(r->samples.find(MetricId::kGpuTemperatureC, Entity::gpu(0))->valid, (std::vector<uint8_t>{1}));
}

}  // namespace
}  // namespace chokepoint::samples

namespace chokepoint::samples {
namespace {

TEST(Recording, StackBurstsRoundTripInMetaJson) {
  RunMeta m;
  m.stacks.tool = "py-spy 0.4.3";
  m.stacks.file = kStackFile;
  m.stacks.rate_hz = 20;
  m.stacks.bursts = {{"pyspy-burst-1.json", 1'700'000'000'000'000'000, 500},
                     {"pyspy-burst-2.json", 1'700'000'012'000'000'000, 500}};
  RunMeta back;
  std::vector<std::string> bad;
  ASSERT_TRUE(run_meta_from_json(run_meta_to_json(m), &back, &bad));
  EXPECT_TRUE(bad.empty());
  EXPECT_EQ(back.stacks.bursts, m.stacks.bursts);
  // Their files belong to the recording (run --force removes them); others do not.
  EXPECT_TRUE(is_recording_file_name("pyspy-burst-1.json"));
  EXPECT_TRUE(is_recording_file_name("pyspy-burst-12.json.gz"));
  EXPECT_FALSE(is_recording_file_name("pyspy-burst-1.txt"));
  EXPECT_FALSE(is_recording_file_name("notes.json"));
}

}  // namespace
}  // namespace chokepoint::samples
