#include "report/formats.h"

#include <gtest/gtest.h>

namespace chokepoint::report {
namespace {

TEST(Formats, NamesAndTheAlias) {
  EXPECT_EQ(parse_format("md", kAnalyzeFormats).value(), Format::kMarkdown);
  EXPECT_EQ(parse_format("markdown", kAnalyzeFormats).value(), Format::kMarkdown);
  EXPECT_EQ(parse_format("html", kDiffFormats).value(), Format::kHtml);
  EXPECT_EQ(format_name(Format::kJson), "json");
  EXPECT_EQ(format_names(kAnalyzeFormats), "text, json, md, html");
  EXPECT_EQ(format_names(kKernelsFormats, true), "text, json, md (markdown)");
}

TEST(Formats, AnUnknownNameAndOneTheCommandLacksAreUsageErrors) {
  auto bogus = parse_format("yaml", kDoctorFormats);
  ASSERT_FALSE(bogus.ok());
  EXPECT_EQ(bogus.status().code(), ErrorCode::kUsage);
  EXPECT_EQ(bogus.status().message(), "unknown format 'yaml' (use text, json)");
  auto html = parse_format("html", kKernelsFormats);
  ASSERT_FALSE(html.ok());
  EXPECT_EQ(html.status().message(), "'html' is not a format of this command (use text, json, md)");
  EXPECT_FALSE(parse_format("", kBenchFormats).ok());
  EXPECT_FALSE(parse_format("JSON", kBenchFormats).ok());  // names are lower case, as help lists them
}

}  // namespace
}  // namespace chokepoint::report
