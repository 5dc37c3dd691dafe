// Linux CPU lists ("0-3,8,10-11"): the format of sysfs local_cpulist, node cpulist and
// /proc/self/status Cpus_allowed_list.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace chokepoint {

// Sorted, unique CPU ids; nullopt when the text is not a CPU list. "" is an empty set.
std::optional<std::vector<unsigned>> parse_cpu_list(std::string_view text);

// The compact form: {0,1,2,3,8} -> "0-3,8".
std::string format_cpu_list(const std::vector<unsigned>& cpus);

// Elements of both (inputs sorted).
std::vector<unsigned> intersect_cpus(const std::vector<unsigned>& a, const std::vector<unsigned>& b);

}  // namespace chokepoint
