#include "sampler/proc/process_tree.h"

#include <cstdlib>
#include <map>
#include <string>

#include "sampler/proc/proc_parsers.h"

namespace chokepoint::sampler::proc {

std::vector<int64_t> process_tree(ProcFs& fs, int64_t root) {
  std::multimap<int64_t, int64_t> children;  // ppid -> pid, pids ascending
  std::map<int64_t, int64_t> parent;
  for (const std::string& name : fs.list_dir("/proc")) {
    const int64_t pid = std::atoll(name.c_str());
    if (pid <= 0) continue;
    std::string text;
    if (fs.read("/proc/" + name + "/stat", text) != 0) continue;  // gone, or not ours
    if (const auto st = parse_task_stat(text)) parent[pid] = st->ppid;
  }
  for (const auto& [pid, ppid] : parent) children.emplace(ppid, pid);
  std::vector<int64_t> tree{root};
  for (size_t i = 0; i < tree.size(); ++i) {
    const auto [lo, hi] = children.equal_range(tree[i]);
    for (auto it = lo; it != hi; ++it) {
      if (it->second != root) tree.push_back(it->second);
    }
  }
  return tree;
}

}  // namespace chokepoint::sampler::proc
