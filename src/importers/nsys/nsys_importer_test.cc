// Unit tests of the nsys importer on databases made here, one table at a time: what an
// export of another nsys version lacks, damaged rows, and databases that are no export.
// The real thing (known counts, analyze of the same records as a .cptrace) is
// tests/golden/nsys_golden_test.cc.
#include "importers/nsys/nsys_importer.h"

#include <gtest/gtest.h>
#include <sqlite3.h>

#include <fstream>
#include <sstream>
#include <string>

namespace chokepoint::importers {
namespace {

// A database in memory made by `sql`, as the bytes of its file.
std::string database(const std::string& sql) {
  sqlite3* db = nullptr;
  EXPECT_EQ(sqlite3_open(":memory:", &db), SQLITE_OK);
  char* err = nullptr;
  EXPECT_EQ(sqlite3_exec(db, sql.c_str(), nullptr, nullptr, &err), SQLITE_OK) << (err ? err : "");
  sqlite3_free(err);
  sqlite3_int64 n = 0;
  unsigned char* bytes = sqlite3_serialize(db, "main", &n, 0);
  std::string out(reinterpret_cast<const char*>(bytes), static_cast<size_t>(n));
  sqlite3_free(bytes);
  sqlite3_close(db);
  return out;
}

struct Imported {
  Status status;
  timeline::Timeline tl;
  timeline::ImportStats stats;
};

Imported import(const std::string& bytes) {
  Imported r;
  r.tl.sources.push_back({});
  r.status = import_nsys_buffer(bytes, 0, r.tl, r.stats);
  return r;
}

// The tables of an export of Nsight Systems 2022.2 (export schema 2.9), as few columns as
// it had and no ENUM_* tables, with one kernel launch, one pageable copy and one sync.
const char* kOldExport = R"sql(
CREATE TABLE StringIds (id INTEGER NOT NULL PRIMARY KEY, value TEXT NOT NULL);
INSERT INTO StringIds VALUES (1, 'cudaLaunchKernel_v7000'), (2, 'saxpy(int, float, float*, float*)'),
  (3, 'cudaMemcpy_v3020'), (4, 'cudaDeviceSynchronize_v3020');
CREATE TABLE CUPTI_ACTIVITY_KIND_RUNTIME (start INTEGER NOT NULL, end INTEGER NOT NULL, eventClass INTEGER NOT NULL,
  globalTid INTEGER, correlationId INTEGER, nameId INTEGER NOT NULL, returnValue INTEGER NOT NULL);
INSERT INTO CUPTI_ACTIVITY_KIND_RUNTIME VALUES (1000, 5000, 0, 302119224788637, 7, 1, 0),
  (6000, 9000, 0, 302119224788637, 8, 3, 0), (9500, 20000, 0, 302119224788637, 9, 4, 0);
CREATE TABLE CUPTI_ACTIVITY_KIND_KERNEL (start INTEGER NOT NULL, end INTEGER NOT NULL, deviceId INTEGER NOT NULL,
  contextId INTEGER NOT NULL, streamId INTEGER NOT NULL, correlationId INTEGER, globalPid INTEGER,
  demangledName INTEGER NOT NULL, shortName INTEGER NOT NULL, registersPerThread INTEGER NOT NULL,
  gridX INTEGER NOT NULL, gridY INTEGER NOT NULL, gridZ INTEGER NOT NULL, blockX INTEGER NOT NULL,
  blockY INTEGER NOT NULL, blockZ INTEGER NOT NULL, staticSharedMemory INTEGER NOT NULL,
  dynamicSharedMemory INTEGER NOT NULL);
INSERT INTO CUPTI_ACTIVITY_KIND_KERNEL VALUES (5500, 8000, 0, 1, 7, 7, 302119224786944, 2, 2, 16, 4096, 1, 1, 256,
  1, 1, 0, 1024);
CREATE TABLE CUPTI_ACTIVITY_KIND_MEMCPY (start INTEGER NOT NULL, end INTEGER NOT NULL, deviceId INTEGER NOT NULL,
  contextId INTEGER NOT NULL, streamId INTEGER NOT NULL, correlationId INTEGER, globalPid INTEGER,
  bytes INTEGER NOT NULL, copyKind INTEGER NOT NULL, srcKind INTEGER, dstKind INTEGER);
INSERT INTO CUPTI_ACTIVITY_KIND_MEMCPY VALUES (8100, 8900, 0, 1, 7, 8, 302119224786944, 4096, 1, 0, 2);
CREATE TABLE CUPTI_ACTIVITY_KIND_SYNCHRONIZATION (start INTEGER NOT NULL, end INTEGER NOT NULL,
  deviceId INTEGER NOT NULL, contextId INTEGER NOT NULL, streamId INTEGER NOT NULL, correlationId INTEGER,
  globalPid INTEGER, syncType INTEGER NOT NULL, eventId INTEGER NOT NULL);
INSERT INTO CUPTI_ACTIVITY_KIND_SYNCHRONIZATION VALUES (9600, 19900, 0, 1, 4294967295, 9, 302119224786944, 4, 0);
)sql";

TEST(NsysImporter, SniffsSqliteOnly) {
  EXPECT_TRUE(sniff_nsys(std::string("SQLite format 3\0rest", 20)));
  EXPECT_FALSE(sniff_nsys("SQLite format 3"));  // without its NUL: text that says so
  EXPECT_FALSE(sniff_nsys("{\"traceEvents\": []}"));
}

TEST(NsysImporter, ReadsAnOlderExportWithoutItsEnumTables) {
  Imported r = import(database(kOldExport));
  ASSERT_TRUE(r.status.ok()) << r.status.message();
  EXPECT_EQ(r.tl.sources[0].format, "nsys");
  const auto& g = r.tl.gpu_ops;
  ASSERT_EQ(g.size(), 2u);
  EXPECT_EQ(r.tl.strings.view(g.name[0]), "saxpy(int, float, float*, float*)");
  EXPECT_EQ(g.grid[0][0], 4096);
  EXPECT_EQ(g.block[0][0], 256);
  EXPECT_EQ(g.registers[0], 16);
  EXPECT_EQ(g.shared_mem[0], 1024);
  EXPECT_EQ(g.copy_kind[1], timeline::CopyKind::kHtoD);
  EXPECT_EQ(g.src_kind[1], timeline::MemKind::kPageable);  // nsys' 0, CUPTI's 1
  EXPECT_EQ(g.dst_kind[1], timeline::MemKind::kDevice);
  EXPECT_EQ(r.tl.strings.view(g.name[1]), "Memcpy HtoD (Pageable -> Device)");
  // GlobalIds (a real export's): pid 1230493 in bits 24-47, its main thread's tid (the same) in bits 0-23.
  const auto& c = r.tl.runtime_calls;
  ASSERT_EQ(c.size(), 3u);
  EXPECT_EQ(c.pid[0], 1230493);
  EXPECT_EQ(c.tid[0], 1230493);
  EXPECT_EQ(c.correlation[0], g.correlation[0]) << "a launch and its kernel share the correlation";
  ASSERT_EQ(r.tl.sync_events.size(), 1u);
  EXPECT_EQ(r.tl.sync_events.kind[0], timeline::SyncKind::kContextSync);
  EXPECT_EQ(r.tl.sync_events.tid[0], 1230493) << "from the cudaDeviceSynchronize with its correlation";
  EXPECT_EQ(r.stats.count("nsys_bad_times"), 0);
}

TEST(NsysImporter, CountsDamagedRowsAndKeepsTheRest) {
  Imported r = import(database(std::string(kOldExport) + R"sql(
INSERT INTO CUPTI_ACTIVITY_KIND_KERNEL VALUES (30000, 29000, 0, 1, 7, 10, 302119224786944, 2, 2, 16, 1, 1, 1, 1, 1, 1,
  0, 0);
INSERT INTO CUPTI_ACTIVITY_KIND_KERNEL VALUES (31000, 32000, 0, 1, 7, 11, 302119224786944, 99, 99, 16, 0, 1, 1, 4096,
  1, 1, 0, 0);
INSERT INTO CUPTI_ACTIVITY_KIND_MEMCPY VALUES (33000, 34000, 0, 1, 7, 12, 302119224786944, -5, 1, 0, 2);
CREATE TABLE NVTX_EVENTS (start INTEGER NOT NULL, end INTEGER, eventType INTEGER NOT NULL, text TEXT,
  globalTid INTEGER, textId INTEGER);
INSERT INTO NVTX_EVENTS VALUES (100, 25000, 59, 'step', 302119224788637, NULL), (26000, NULL, 59, 'step',
  302119224788637, NULL), (500, NULL, 34, 'a mark', 302119224788637, NULL);
)sql"));
  ASSERT_TRUE(r.status.ok()) << r.status.message();
  EXPECT_EQ(r.stats.count("nsys_bad_times"), 1);        // ends before it starts
  EXPECT_EQ(r.stats.count("nsys_unknown_string"), 1);   // name id 99
  EXPECT_EQ(r.stats.count("nsys_bad_kernel_dims"), 2);  // grid 0, block 4096
  EXPECT_EQ(r.stats.count("nsys_bad_copy_sizes"), 1);
  EXPECT_EQ(r.stats.count("nsys_nvtx_unclosed"), 1);  // the mark is no range
  EXPECT_EQ(r.tl.gpu_ops.size(), 4u);
  ASSERT_EQ(r.tl.cpu_ranges.size(), 1u);
  EXPECT_EQ(r.tl.strings.view(r.tl.cpu_ranges.name[0]), "step");
}

TEST(NsysImporter, RefusesADatabaseThatIsNoExport) {
  Imported r = import(database("CREATE TABLE songs (title TEXT); INSERT INTO songs VALUES ('x');"));
  ASSERT_FALSE(r.status.ok());
  EXPECT_NE(r.status.message().find("not an Nsight Systems export"), std::string::npos) << r.status.message();
}

TEST(NsysImporter, RefusesBytesThatAreNoDatabase) {
  Imported r = import(std::string("SQLite format 3\0", 16) + std::string(4000, 'x'));
  ASSERT_FALSE(r.status.ok());
  EXPECT_NE(r.status.message().find("SQLite"), std::string::npos) << r.status.message();
}

// A real export cut anywhere is refused or read up to the cut, never a crash.
TEST(NsysImporter, ACutExportIsReadUpToTheCut) {
  std::ifstream in(std::string(CHOKEPOINT_TEST_DATA) + "/nsys/known_counts_nvtx.sqlite", std::ios::binary);
  std::stringstream ss;
  ss << in.rdbuf();
  const std::string whole = ss.str();
  ASSERT_GT(whole.size(), 16384u);
  EXPECT_FALSE(import(whole.substr(0, 100)).status.ok()) << "not even the first page";
  for (size_t cut : {size_t{4096}, whole.size() / 2, whole.size() - 4096}) {
    Imported r = import(whole.substr(0, cut));
    if (r.status.ok()) EXPECT_LE(r.tl.gpu_ops.size(), 110u);
  }
  Imported full = import(whole);
  ASSERT_TRUE(full.status.ok()) << full.status.message();
  EXPECT_EQ(full.tl.gpu_ops.size(), 110u);
  EXPECT_EQ(full.stats.count("nsys_damaged"), 0);
}

}  // namespace
}  // namespace chokepoint::importers
