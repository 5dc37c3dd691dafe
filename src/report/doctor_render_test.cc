#include "report/doctor_render.h"

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

namespace chokepoint::report {
namespace {

DoctorReport report_without_gpu() {
  DoctorReport r;
  r.nvml.available = false;
  r.nvml.error = "NVIDIA driver library not found";
  using rules::Assessment;
  Assessment driver{"nvidia-driver", "NVIDIA driver",           -1,         Assessment::Outcome::kSkipped,
                    Severity::kInfo, "no usable NVIDIA driver", "a driver", "GPU checks skipped."};
  Assessment swap{"host-swapping",
                  "Swap and memory pressure",
                  -1,
                  Assessment::Outcome::kFinding,
                  Severity::kWarning,
                  "2.0 GiB of 8.0 GiB swap used",
                  "no swap use",
                  "This host has swapped.",
                  Assessment::Scope::kHost};
  r.checks = {driver, swap};
  return r;
}

TEST(DoctorRender, JsonKeepsNullsAndSchema) {
  const auto j = nlohmann::json::parse(render_doctor_json(report_without_gpu()));
  EXPECT_EQ(j.at("schema"), kDoctorSchema);
  EXPECT_EQ(j.at("nvml").at("available"), false);
  EXPECT_TRUE(j.at("nvml").at("driver_version").is_null()) << "unknown is null, never \"\" or 0";
  EXPECT_TRUE(j.at("nvml").at("device_count").is_null());
  EXPECT_TRUE(j.at("checks").at(0).at("gpu").is_null());
  EXPECT_EQ(j.at("checks").at(1).at("status"), "warning");
  EXPECT_EQ(j.at("summary").at("warning"), 1);
  EXPECT_EQ(j.at("summary").at("skip"), 1);
  EXPECT_EQ(j.at("exit_code"), 0);
}

TEST(DoctorRender, TextSaysNoGpuOnceAndShowsAdvice) {
  const std::string text = render_doctor_text(report_without_gpu(), RenderOptions{false, 100});
  EXPECT_EQ(text.rfind("chokepoint doctor: no NVIDIA GPU or driver usable here; host checks only.\n", 0), 0u) << text;
  EXPECT_NE(text.find("\nSystem\n"), std::string::npos);
  EXPECT_NE(text.find("\nHost\n"), std::string::npos);
  EXPECT_NE(text.find("  warning   Swap and memory pressure"), std::string::npos) << text;
  EXPECT_NE(text.find("        expected: no swap use"), std::string::npos) << text;
  EXPECT_NE(text.find("\n0 ok, 1 warning, 0 critical, 1 skipped ("), std::string::npos) << text;
  EXPECT_EQ(text.find("\033["), std::string::npos);
  const std::string colored = render_doctor_text(report_without_gpu(), RenderOptions{true, 100});
  EXPECT_NE(colored.find("\033[33mwarning\033[0m"), std::string::npos);
}

TEST(DoctorRender, LongTextWraps) {
  DoctorReport r = report_without_gpu();
  r.checks[1].advice = std::string(30, 'a') + " " + std::string(30, 'b') + " " + std::string(30, 'c');
  const std::string text = render_doctor_text(r, RenderOptions{false, 60});
  EXPECT_NE(text.find("\n        " + std::string(30, 'b')), std::string::npos) << text;
}

TEST(DoctorRender, CommandsInBackticksStayOnOneLine) {
  DoctorReport r = report_without_gpu();
  r.checks[1].advice = std::string(40, 'a') + " run `sudo nvidia-smi -pm 1` now";
  const std::string text = render_doctor_text(r, RenderOptions{false, 60});
  EXPECT_NE(text.find("`sudo nvidia-smi -pm 1`"), std::string::npos) << text;
}

TEST(DoctorRender, ExitCode) {
  using rules::Assessment;
  std::vector<Assessment> checks(2);
  checks[0].outcome = Assessment::Outcome::kFinding;
  checks[0].severity = Severity::kWarning;
  checks[1].outcome = Assessment::Outcome::kSkipped;
  EXPECT_EQ(rules::exit_code_for(checks), 0);
  checks[1].outcome = Assessment::Outcome::kFinding;
  checks[1].severity = Severity::kCritical;
  EXPECT_EQ(rules::exit_code_for(checks), 1);
}

}  // namespace
}  // namespace chokepoint::report
