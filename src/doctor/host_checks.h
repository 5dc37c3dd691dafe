// Host checks: pure functions of HostFacts. Each says what it saw, what a GPU training
// host should show, and why it matters for a GPU job.
#pragma once

#include <vector>

#include "doctor/check.h"
#include "doctor/host_facts.h"

namespace chokepoint::doctor {

std::vector<Check> host_checks(const HostFacts& facts);

Check check_cpu_governor(const HostFacts& f);
Check check_swap(const HostFacts& f);
Check check_transparent_hugepages(const HostFacts& f);
Check check_memlock(const HostFacts& f);
Check check_dev_shm(const HostFacts& f);

}  // namespace chokepoint::doctor
