// Machine-wide GPU checks: is there a driver at all, and can the PyTorch installed here
// run on it.
#include <cstdio>
#include <optional>
#include <string>

#include "rules/checks/checks.h"

namespace chokepoint::rules::checks {

using namespace doctor;
namespace {

struct MajorMinor {
  int major = 0;
  int minor = 0;
};

std::optional<MajorMinor> parse_major_minor(const std::string& s) {
  MajorMinor v;
  if (std::sscanf(s.c_str(), "%d.%d", &v.major, &v.minor) != 2) return std::nullopt;
  return v;
}

}  // namespace

Assessment check_nvidia_driver(const NvmlFacts& n) {
  Assessment c;
  c.id = "nvidia-driver";
  c.title = "NVIDIA driver";
  c.expected = "an NVIDIA driver and at least one GPU visible to this process";
  if (!n.available) {
    c.outcome = Assessment::Outcome::kSkipped;
    c.observed = "no usable NVIDIA driver: " + n.error;
    c.advice =
        "GPU checks skipped. On a GPU machine: install the NVIDIA driver, or run where the GPU is visible "
        "(containers need --gpus all / the NVIDIA container toolkit).";
    return c;
  }
  if (!n.device_count.valid) {
    raise(c, Severity::kCritical);
    c.observed = "NVML started but cannot count GPUs: " + describe_error(n, n.device_count.error);
    c.advice = "Check `nvidia-smi` and `dmesg` for driver errors.";
    return c;
  }
  std::string text = "driver " + n.driver_version.value_or("?");
  if (n.cuda_driver_version.valid)
    text += " (runs CUDA up to " + nvml::format_cuda_version(*n.cuda_driver_version) + ")";
  const unsigned count = *n.device_count;
  if (count == 0) {
    c.outcome = Assessment::Outcome::kSkipped;
    c.observed = text + ", but no GPU is visible";
    c.advice =
        "GPU checks skipped. The driver is loaded yet lists no GPU: check `nvidia-smi`, the container's "
        "--gpus flag, or NVIDIA_VISIBLE_DEVICES.";
    return c;
  }
  c.outcome = Assessment::Outcome::kPass;
  text += ", " + std::to_string(count) + " GPU" + (count > 1 ? "s" : "");
  if (!n.gpus.empty() && n.gpus[0].name.valid) text += ": " + *n.gpus[0].name;
  c.observed = text;
  return c;
}

Assessment check_cuda_compat(const NvmlFacts& n, const HostFacts& h) {
  Assessment c;
  c.id = "cuda-compat";
  c.title = "PyTorch CUDA vs driver";
  c.expected = "PyTorch's CUDA version no newer than the driver's";
  c.outcome = Assessment::Outcome::kSkipped;
  if (!n.available || !n.cuda_driver_version.valid) {
    c.observed = "driver CUDA version unknown";
    return c;
  }
  const int drv = *n.cuda_driver_version;
  const std::string drv_text = nvml::format_cuda_version(drv);
  if (!h.torch) {
    c.observed =
        "PyTorch not found (looked in the active venv/conda env, python3 on PATH, ~/.local, pyenv, /usr/local, /usr, "
        "/opt/conda); the driver runs CUDA up to " +
        drv_text;
    return c;
  }
  const TorchInstall& t = *h.torch;
  if (!t.cuda) {
    raise(c, Severity::kWarning);
    c.observed = "PyTorch " + t.version + " at " + t.path + " is a CPU-only build";
    c.advice = "It will not use the GPU. Install a CUDA build (a wheel whose version ends in +cuXXX, for CUDA " +
               drv_text + " or older).";
    return c;
  }
  const auto tv = parse_major_minor(*t.cuda);
  c.observed = "PyTorch " + t.version + " built for CUDA " + *t.cuda + "; driver runs CUDA up to " + drv_text;
  if (!tv) return c;
  const int torch_cuda = tv->major * 1000 + tv->minor * 10;
  c.outcome = Assessment::Outcome::kPass;
  if (tv->major > drv / 1000) {
    raise(c, Severity::kWarning);
    c.advice =
        "The driver is older than the CUDA major version PyTorch needs: torch.cuda.is_available() will be "
        "False (\"driver too old\"). Update the driver, or install a PyTorch build for CUDA " +
        std::to_string(drv / 1000) + ".x.";
  } else if (torch_cuda > drv) {
    c.advice =
        "Same major version: it runs through CUDA minor-version compatibility, but code that needs "
        "JIT compilation of newer PTX can fail. Updating the driver removes the caveat.";
  }
  return c;
}

}  // namespace chokepoint::rules::checks
