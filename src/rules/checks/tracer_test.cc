#include <gtest/gtest.h>

#include "rules/checks/checks.h"

namespace chokepoint::rules::checks {
namespace {

using namespace doctor;

HostFacts with(const TracerFacts& t) {
  HostFacts h;
  h.tracer = t;
  return h;
}

NvmlFacts driver_for_cuda(int version) {
  NvmlFacts n;
  n.available = true;
  n.cuda_driver_version = nvml::Value<int>::ok(version);
  return n;
}

TracerFacts loading(const std::string& cupti) {
  TracerFacts t;
  t.library = "/opt/chokepoint/libchokepoint_tracer.so";
  t.probe.library = t.library;
  t.probe.loads = true;
  t.probe.cupti_path = cupti;
  t.probe.cupti_major = tracer::cupti_major_of(cupti);
  t.probe.cupti_api_version = 130001;
  return t;
}

TEST(TraceReady, NotCheckedForACapturedHost) {
  const Assessment a = check_trace_ready(HostFacts{}, NvmlFacts{});
  EXPECT_EQ(verdict_of(a), "skip");
  EXPECT_EQ(a.id, "trace-ready");
}

TEST(TraceReady, LoadsWithTheToolkitsCupti) {
  const Assessment a = check_trace_ready(with(loading("/usr/local/cuda/lib64/libcupti.so.13")), driver_for_cuda(13000));
  EXPECT_EQ(verdict_of(a), "ok");
  EXPECT_EQ(a.observed, "loads with /usr/local/cuda/lib64/libcupti.so.13, CUPTI API 130001");
}

TEST(TraceReady, NoLibraryInThisBuild) {
  const Assessment a = check_trace_ready(with(TracerFacts{}), driver_for_cuda(13000));
  EXPECT_EQ(verdict_of(a), "warning");
  EXPECT_NE(a.advice.find("scripts/build.sh"), std::string::npos) << a.advice;
}

TEST(TraceReady, MissingCuptiNamesTheSonameAndTheWheel) {
  TracerFacts t;
  t.library = "/opt/chokepoint/libchokepoint_tracer.so";
  t.probe.error = "libcupti.so.13: cannot open shared object file: No such file or directory";
  t.probe.cupti_soname = "libcupti.so.13";
  const Assessment a = check_trace_ready(with(t), driver_for_cuda(13000));
  EXPECT_EQ(verdict_of(a), "warning");
  EXPECT_NE(a.observed.find("cannot open shared object file"), std::string::npos);
  EXPECT_NE(a.advice.find("It needs libcupti.so.13"), std::string::npos) << a.advice;
  EXPECT_NE(a.advice.find("nvidia-cuda-cupti"), std::string::npos) << a.advice;
}

TEST(TraceReady, TheWheelsCuptiServesWhenTheToolkitsIsGone) {
  TracerFacts t;
  t.library = "/opt/chokepoint/libchokepoint_tracer.so";
  t.probe.cupti_soname = "libcupti.so.13";
  t.wheel_cupti = "/venv/lib/python3.12/site-packages/nvidia/cu13/lib/libcupti.so.13";
  t.wheel_loads = true;
  const Assessment a = check_trace_ready(with(t), driver_for_cuda(13000));
  EXPECT_EQ(verdict_of(a), "ok");
  EXPECT_NE(a.observed.find("(the Python environment's wheel)"), std::string::npos) << a.observed;
}

TEST(TraceReady, ADriverOlderThanTheCupti) {
  const Assessment a = check_trace_ready(with(loading("/usr/local/cuda/lib64/libcupti.so.13")), driver_for_cuda(12040));
  EXPECT_EQ(verdict_of(a), "warning");
  EXPECT_NE(a.observed.find("the driver runs CUDA up to 12.4"), std::string::npos) << a.observed;
  EXPECT_NE(a.advice.find("CUPTI 13 needs a driver for CUDA 13"), std::string::npos) << a.advice;
}

TEST(TraceReady, AnotherToolsInjection) {
  TracerFacts t = loading("/usr/local/cuda/lib64/libcupti.so.13");
  t.other_injection = "/opt/nsight/libToolsInjection64.so";
  const Assessment a = check_trace_ready(with(t), driver_for_cuda(13000));
  EXPECT_EQ(verdict_of(a), "warning");
  EXPECT_NE(a.observed.find("CUDA_INJECTION64_PATH is set to /opt/nsight/libToolsInjection64.so"), std::string::npos);
}

}  // namespace
}  // namespace chokepoint::rules::checks
