#include <sstream>

#include <gtest/gtest.h>

#include "report/reporter.h"
#include "report/testing_report.h"

namespace chokepoint::report {
namespace {

TEST(ReporterRegistry, MakesEveryListedFormat) {
  for (const char* format : {"text", "json", "md", "markdown", "html"}) {
    const auto reporter = make_reporter(format);
    ASSERT_NE(reporter, nullptr) << format;
    std::ostringstream out;
    EXPECT_TRUE(reporter->write(testing::input_bound_report(), out, RenderOptions{}).ok());
    EXPECT_FALSE(out.str().empty()) << format;
  }
}

// Every format analyze offers has its reporter, and only those.
TEST(ReporterRegistry, OneReporterForEachOfAnalyzesFormats) {
  ASSERT_EQ(reporter_registry().size(), std::size(kAnalyzeFormats));
  for (const Format f : kAnalyzeFormats) EXPECT_NE(make_reporter(f), nullptr) << format_name(f);
}

TEST(ReporterRegistry, UnknownFormatIsNull) {
  EXPECT_EQ(make_reporter("html5"), nullptr);
  EXPECT_EQ(make_reporter(""), nullptr);
}

}  // namespace
}  // namespace chokepoint::report
