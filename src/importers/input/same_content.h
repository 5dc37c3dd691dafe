// Inputs that are one input under two names. The same trace given twice (a copy under
// another name, a second path to the same file, a trace-window file duplicated in a
// recording) would count its steps twice, pool as two ranks, or halve a mean (issue 47):
// it is read once, and the report says which names were dropped.
#pragma once

#include <string>
#include <utility>
#include <vector>

namespace chokepoint::importers {

// True when `a` and `b` are the same file (device and inode) or regular files of equal
// size and equal bytes. Reads the two only when their sizes match, and stops at the first
// difference.
bool same_content(const std::string& a, const std::string& b);

// `paths` in their order without each one whose content equals one kept before it;
// `dropped` (when not null) gets each dropped path with the path it duplicates.
std::vector<std::string> distinct_contents(const std::vector<std::string>& paths,
                                           std::vector<std::pair<std::string, std::string>>* dropped = nullptr);

}  // namespace chokepoint::importers
