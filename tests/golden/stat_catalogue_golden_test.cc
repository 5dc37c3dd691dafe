// Every import stat a real or damaged input raises is one of the catalogue's
// (base/stat_catalogue.h), with the catalogue's severity and description: readers raise
// stats by id only, and this checks what reaches the reports from every fixture kind
// (Kineto traces, hazards, CUPTI traces, recordings, damaged recordings).
#include <gtest/gtest.h>

#include <filesystem>
#include <string>
#include <vector>

#include "base/stat_catalogue.h"
#include "pipeline/analyze_pipeline.h"
#include "published_ceilings.h"

namespace {

namespace fs = std::filesystem;
const std::string kData = std::string(CHOKEPOINT_TEST_DATA);

// The inputs of one fixture folder: its trace files and recording directories.
std::vector<std::string> inputs_in(const std::string& dir) {
  std::vector<std::string> out;
  for (const auto& e : fs::directory_iterator(kData + "/" + dir)) {
    const std::string name = e.path().filename().string();
    if (e.is_directory() || name.ends_with(".json") || name.ends_with(".json.gz") || name.ends_with(".cptrace.gz")) {
      if (name != "expected.json" && name != "measured.json" && name != "measured_stack.json") {
        out.push_back(e.path().string());
      }
    }
  }
  return out;
}

TEST(StatCatalogueGolden, EveryRaisedStatIsInTheCatalogue) {
  int raised = 0;
  for (const char* dir :
       {"kineto", "kineto/hazards", "hostile", "hostile/damaged", "live", "tracer/steps", "tracer/ddp"}) {
    for (const std::string& path : inputs_in(dir)) {
      auto r = chokepoint::golden::analyze_fixture({path});
      if (!r.ok()) continue;  // unreadable inputs raise no stats
      for (const auto& s : r.value().import_stats) {
        ++raised;
        const auto id = chokepoint::find_stat(s.name);
        ASSERT_TRUE(id.has_value()) << path << " raised '" << s.name << "', which the catalogue lacks";
        const chokepoint::StatDef& def = chokepoint::stat_def(*id);
        EXPECT_EQ(s.severity, def.severity) << s.name;
        // The description is the catalogue's, with its "{}" filled in.
        const std::string_view d = def.description;
        const size_t hole = d.find("{}");
        const std::string_view head = d.substr(0, hole);
        EXPECT_EQ(s.description.substr(0, head.size()), head) << s.name;
        if (hole == std::string_view::npos) {
          EXPECT_EQ(s.description, d) << s.name;
        }
      }
    }
  }
  EXPECT_GT(raised, 10);  // the fixtures do raise stats: the loop checked something
}

}  // namespace
