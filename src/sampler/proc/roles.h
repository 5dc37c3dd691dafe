// Which part of an ML job a process is, from its comm, its argv and its parent's, the
// only things /proc shows without ptrace:
//   launched           the PID `run` started or `watch` attached to.
//   dataloader_worker  comm "pt_data_worker": PyTorch's DataLoader worker loop names
//                      itself so (torch/utils/data/_utils/worker.py calls
//                      torch.multiprocessing._set_thread_name("pt_data_worker")), which
//                      sets the worker's main thread name, i.e. /proc/PID/comm.
//   torchrun_rank      a Python child of a torchrun agent: the parent's argv runs
//                      `torchrun`, `-m torch.distributed.run` or `-m torch.distributed.launch`.
//                      The rank is RANK from /proc/PID/environ when we may read it.
//   child              anything else below the launched process (shells, compile
//                      workers, other multiprocessing pools).
// A DataLoader worker whose PyTorch predates the name stays "child".
#pragma once

#include <string>
#include <vector>

#include "samples/metadata.h"

namespace chokepoint::sampler::proc {

bool is_torchrun_agent(const std::vector<std::string>& argv);
bool is_python(const std::vector<std::string>& argv);

samples::ProcessRole infer_role(bool is_root, const std::string& comm, const std::vector<std::string>& argv,
                                const std::vector<std::string>* parent_argv);

}  // namespace chokepoint::sampler::proc
