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
  EXPECT_EQ(reporter_formats(), "text, json, md (markdown), html");
  EXPECT_EQ(reporter_names(), "text, json, md, html");
}

TEST(ReporterRegistry, EveryRegisteredNameAndAliasMakesAReporter) {
  for (const ReporterFormat& f : reporter_registry()) {
    EXPECT_NE(make_reporter(f.name), nullptr) << f.name;
    if (!f.alias.empty()) {
      EXPECT_NE(make_reporter(f.alias), nullptr) << f.alias;
    }
  }
}

TEST(ReporterRegistry, UnknownFormatIsNull) {
  EXPECT_EQ(make_reporter("html5"), nullptr);
  EXPECT_EQ(make_reporter(""), nullptr);
}

}  // namespace
}  // namespace chokepoint::report
