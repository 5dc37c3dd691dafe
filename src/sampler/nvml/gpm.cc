// GPM (GPU Performance Monitoring, Hopper+): SM, tensor and DRAM activity that the
// classic utilization counter cannot show (docs/FORMATS.md "NVML and GPM"). Doctor only asks
// whether GPM works; the live sampler takes snapshot pairs and turns them into metrics.
#include <algorithm>
#include <memory>

#include "sampler/nvml/nvml.h"

namespace chokepoint::nvml {

GpmSample::~GpmSample() { reset(); }

GpmSample::GpmSample(GpmSample&& other) noexcept : api_(other.api_), handle_(other.handle_), taken_(other.taken_) {
  other.handle_ = nullptr;
  other.taken_ = false;
}

GpmSample& GpmSample::operator=(GpmSample&& other) noexcept {
  if (this != &other) {
    reset();
    api_ = other.api_;
    handle_ = other.handle_;
    taken_ = other.taken_;
    other.handle_ = nullptr;
    other.taken_ = false;
  }
  return *this;
}

void GpmSample::reset() {
  if (handle_ != nullptr && api_ != nullptr && api_->gpm_sample_free != nullptr) {
    api_->gpm_sample_free(handle_);
  }
  handle_ = nullptr;
  taken_ = false;
}

Value<bool> Device::gpm_supported() const {
  if (api_->gpm_query_device_support == nullptr) return Value<bool>::fail(kMissingSymbol);
  abi::GpmSupport s{};  // zeroed: the driver reads the version and may check the rest
  s.version = abi::kGpmSupportVersion;
  const abi::Return rc = api_->gpm_query_device_support(handle_, &s);
  return rc == abi::kSuccess ? Value<bool>::ok(s.is_supported_device != 0) : Value<bool>::fail(rc);
}

int Device::gpm_sample(GpmSample& sample) const {
  if (api_->gpm_sample_alloc == nullptr || api_->gpm_sample_get == nullptr || api_->gpm_sample_free == nullptr) {
    return kMissingSymbol;
  }
  if (sample.handle_ == nullptr) {
    sample.api_ = api_;
    const abi::Return rc = api_->gpm_sample_alloc(&sample.handle_);
    if (rc != abi::kSuccess) {
      sample.handle_ = nullptr;
      return rc;
    }
  }
  const abi::Return rc = api_->gpm_sample_get(handle_, sample.handle_);
  sample.taken_ = rc == abi::kSuccess;
  return rc;
}

Value<std::vector<GpmMetricValue>> Nvml::gpm_metrics(const GpmSample& earlier, const GpmSample& later,
                                                     std::span<const unsigned> ids) const {
  using Out = Value<std::vector<GpmMetricValue>>;
  if (api_.gpm_metrics_get == nullptr) return Out::fail(kMissingSymbol);
  if (!earlier.taken() || !later.taken()) return Out::fail(abi::kErrorInvalidArgument);
  // ~13 KB: on the heap, zeroed, reused for every chunk.
  auto request = std::make_unique<abi::GpmMetricsGet>();
  std::vector<GpmMetricValue> out;
  out.reserve(ids.size());
  for (size_t start = 0; start < ids.size(); start += abi::kGpmMaxMetricsPerCall) {
    const size_t n = std::min<size_t>(abi::kGpmMaxMetricsPerCall, ids.size() - start);
    *request = abi::GpmMetricsGet{};
    request->version = abi::kGpmMetricsGetVersion;
    request->num_metrics = static_cast<unsigned>(n);
    request->sample1 = earlier.handle_;
    request->sample2 = later.handle_;
    for (size_t i = 0; i < n; ++i) request->metrics[i].metric_id = ids[start + i];
    const abi::Return rc = api_.gpm_metrics_get(request.get());
    if (rc != abi::kSuccess) return Out::fail(rc);
    for (size_t i = 0; i < n; ++i) {
      const abi::GpmMetric& m = request->metrics[i];
      GpmMetricValue v;
      v.id = ids[start + i];
      v.value = m.nvml_return == abi::kSuccess ? Value<double>::ok(m.value) : Value<double>::fail(m.nvml_return);
      if (m.metric_info.short_name != nullptr) v.name = m.metric_info.short_name;
      if (m.metric_info.unit != nullptr) v.unit = m.metric_info.unit;
      out.push_back(std::move(v));
    }
  }
  return Out::ok(std::move(out));
}

}  // namespace chokepoint::nvml
