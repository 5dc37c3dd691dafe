#include "pipeline/rank_inputs.h"

#include <gtest/gtest.h>

namespace chokepoint::pipeline {
namespace {

TEST(RankInputs, RankFromTheHeadOfAKinetoTrace) {
  EXPECT_EQ(rank_in_head(R"({"schemaVersion": 1, "distributedInfo": {"backend": "nccl", "rank": 12, "world_size": 64},)"
                         R"( "traceEvents": [)"),
            12);
  // world_size before rank, no spaces.
  EXPECT_EQ(rank_in_head(R"({"distributedInfo":{"world_size":8,"rank":3},"traceEvents":[)"), 3);
  EXPECT_EQ(rank_in_head(R"({"schemaVersion": 1, "traceEvents": [{"name": "x", "args": {"rank": 5}}]})"), -1);
  // A "rank" after distributedInfo's object belongs to something else.
  EXPECT_EQ(rank_in_head(R"({"distributedInfo": {"backend": "gloo"}, "traceEvents": [{"args": {"rank": 5}}]})"), -1);
  EXPECT_EQ(rank_in_head(R"({"distributedInfo": {"rank": "N/A"}})"), -1);
}

TEST(RankInputs, PidOfATracerFile) {
  EXPECT_EQ(pid_of_trace_file("/rec/trace-4242.cptrace"), 4242);
  EXPECT_EQ(pid_of_trace_file("trace-77-w2.cptrace.gz"), 77);
  EXPECT_EQ(pid_of_trace_file("/rec/rank0.json.gz"), -1);
  EXPECT_EQ(pid_of_trace_file("trace-.cptrace"), -1);
}

}  // namespace
}  // namespace chokepoint::pipeline
