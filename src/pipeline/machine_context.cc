#include "pipeline/machine_context.h"

#include "machine/profile_store.h"

namespace chokepoint::pipeline {

Result<machine::MachineContext> resolve_machine_context(const std::vector<machine::DeviceSpec>& devices,
                                                        const CeilingsOptions& o) {
  machine::MachineContext ctx;
  std::optional<machine::Profile> named;
  if (!o.file.empty()) {
    auto p = machine::load_profile(o.file);
    if (!p.ok()) return Status::Error("--ceilings: " + p.status().message());  // the message names the file
    named = std::move(p).value();
  }
  for (const auto& d : devices) {
    if (named) {
      ctx.devices.push_back(machine::apply_profile(machine::published_ceilings_for(d), *named, d.name, o.file));
    } else if (o.saved_profiles) {
      ctx.devices.push_back(machine::ceilings_for(d));
    } else {
      ctx.devices.push_back(machine::published_ceilings_for(d));
    }
  }
  return ctx;
}

}  // namespace chokepoint::pipeline
