#include "samples/series.h"

#include <gtest/gtest.h>

namespace chokepoint::samples {
namespace {

TEST(MetricCatalogue, NamesAreUniqueAndFindable) {
  for (const MetricInfo& m : metric_catalogue()) {
    EXPECT_EQ(find_metric(m.name), m.id) << m.name;
    EXPECT_FALSE(m.unit.empty()) << m.name;
  }
  EXPECT_EQ(metric_info(MetricId::kGpuSmActive).name, "gpu.sm_active");
  EXPECT_EQ(metric_info(MetricId::kProcRunqWaitNsPerS).entity, EntityKind::kProcess);
  EXPECT_FALSE(find_metric("gpu.no_such_metric"));
}

TEST(Entity, FormatsAndParses) {
  for (const Entity& e : {Entity::host(), Entity::gpu(3), Entity::process(4242), Entity::thread(4242, 4250)}) {
    Entity back;
    ASSERT_TRUE(parse_entity(format_entity(e), &back)) << format_entity(e);
    EXPECT_EQ(back, e);
  }
  EXPECT_EQ(format_entity(Entity::thread(1, 2)), "tid:1/2");
  Entity e;
  EXPECT_FALSE(parse_entity("pid:", &e));
  EXPECT_FALSE(parse_entity("tid:12", &e));
  EXPECT_FALSE(parse_entity("gpu:1x", &e));
}

TEST(SampleStore, KeepsOneColumnarSeriesPerMetricAndEntity) {
  SampleStore store;
  Tick t1{100, {}};
  t1.add(MetricId::kGpuSmActive, Entity::gpu(0), 50);
  t1.add(MetricId::kGpuSmActive, Entity::gpu(1), 10);
  t1.add_invalid(MetricId::kGpuTensorActive, Entity::gpu(0));
  Tick t2{200, {}};
  t2.add(MetricId::kGpuSmActive, Entity::gpu(0), 60);
  store.append(t1);
  store.append(t2);
  ASSERT_EQ(store.series().size(), 3u);
  const Series* s = store.find(MetricId::kGpuSmActive, Entity::gpu(0));
  ASSERT_NE(s, nullptr);
  EXPECT_EQ(s->time_ns, (std::vector<int64_t>{100, 200}));
  EXPECT_EQ(s->values, (std::vector<double>{50, 60}));
  const Series* tensor = store.find(MetricId::kGpuTensorActive, Entity::gpu(0));
  ASSERT_NE(tensor, nullptr);
  EXPECT_EQ(tensor->valid, (std::vector<uint8_t>{0}));
  EXPECT_EQ(store.of_metric(MetricId::kGpuSmActive).size(), 2u);
  EXPECT_EQ(store.find(MetricId::kGpuSmActive, Entity::gpu(2)), nullptr);
}

}  // namespace
}  // namespace chokepoint::samples
