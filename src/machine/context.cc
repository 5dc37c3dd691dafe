#include "machine/context.h"

namespace chokepoint::machine {

MachineContext published_context(const std::vector<DeviceSpec>& devices) {
  MachineContext c;
  c.devices.reserve(devices.size());
  for (const auto& d : devices) c.devices.push_back(published_ceilings_for(d));
  return c;
}

}  // namespace chokepoint::machine
