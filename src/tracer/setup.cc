#include "tracer/setup.h"

#include <dlfcn.h>
#include <fcntl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <regex>

namespace chokepoint::tracer {
namespace fs = std::filesystem;

namespace {

constexpr const char* kLibraryName = "libchokepoint_tracer.so";

// Reads all of `fd` (the child's report); closes it.
std::string read_all(int fd) {
  std::string out;
  std::array<char, 4096> buf{};
  for (;;) {
    const ssize_t n = ::read(fd, buf.data(), buf.size());
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) break;
    out.append(buf.data(), static_cast<size_t>(n));
  }
  ::close(fd);
  return out;
}

void write_all(int fd, const std::string& s) {
  size_t done = 0;
  while (done < s.size()) {
    const ssize_t n = ::write(fd, s.data() + done, s.size() - done);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return;
    done += static_cast<size_t>(n);
  }
}

// In the child: loads, and reports "ok\n<cupti path>\n<api version>" or "error\n<message>".
[[noreturn]] void probe_child(int fd, const std::string& library, const std::string& preload) {
  std::string report;
  if (!preload.empty() && dlopen(preload.c_str(), RTLD_NOW | RTLD_GLOBAL) == nullptr) {
    const char* e = dlerror();
    write_all(fd, std::string("error\n") + (e != nullptr ? e : "dlopen failed"));
    _exit(0);
  }
  void* h = dlopen(library.c_str(), RTLD_NOW | RTLD_LOCAL);
  if (h == nullptr) {
    const char* e = dlerror();
    write_all(fd, std::string("error\n") + (e != nullptr ? e : "dlopen failed"));
    _exit(0);
  }
  void* get_version = dlsym(h, "cuptiGetVersion");
  Dl_info info{};
  std::string path;
  if (get_version != nullptr && dladdr(get_version, &info) != 0 && info.dli_fname != nullptr) path = info.dli_fname;
  unsigned version = 0;
  if (get_version != nullptr) {
    using Fn = int (*)(unsigned*);
    reinterpret_cast<Fn>(get_version)(&version);  // NOLINT(cppcoreguidelines-pro-type-reinterpret-cast)
  }
  write_all(fd, "ok\n" + path + "\n" + std::to_string(version));
  _exit(0);
}

std::string first_line(std::string& rest) {
  const size_t nl = rest.find('\n');
  std::string line = rest.substr(0, nl);
  rest = nl == std::string::npos ? "" : rest.substr(nl + 1);
  return line;
}

bool is_python_name(const std::string& name) {
  static const std::regex re(R"(python[0-9.]*)");
  return std::regex_match(name, re);
}

// `name` on PATH (or itself when it has a slash); "" when not found.
std::string on_path(const std::string& name, const std::string& path_env) {
  std::error_code ec;
  if (name.find('/') != std::string::npos) return fs::exists(name, ec) ? name : "";
  size_t start = 0;
  while (start <= path_env.size()) {
    const size_t end = std::min(path_env.find(':', start), path_env.size());
    const std::string dir = path_env.substr(start, end - start);
    if (!dir.empty()) {
      const fs::path p = fs::path(dir) / name;
      if (fs::exists(p, ec) && ::access(p.c_str(), X_OK) == 0) return p.string();
    }
    start = end + 1;
  }
  return "";
}

}  // namespace

std::string find_tracer_library() {
  std::error_code ec;
  if (const char* env = std::getenv("CHOKEPOINT_TRACER_LIB"); env != nullptr && *env != '\0') {
    return fs::exists(env, ec) ? fs::absolute(env, ec).string() : std::string();
  }
  const fs::path exe = fs::read_symlink("/proc/self/exe", ec);
  if (ec) return "";
  const fs::path lib = exe.parent_path() / kLibraryName;
  return fs::exists(lib, ec) ? lib.string() : std::string();
}

int cupti_major_of(const std::string& s) {
  static const std::regex re(R"(libcupti\.so\.([0-9]+))");
  std::smatch m;
  return std::regex_search(s, m, re) ? std::atoi(m[1].str().c_str()) : 0;
}

TracerProbe probe_tracer(const std::string& library, const std::string& preload_cupti) {
  TracerProbe p;
  p.library = library;
  std::array<int, 2> fds{};
  if (::pipe2(fds.data(), O_CLOEXEC) != 0) {
    p.error = std::string("pipe: ") + std::strerror(errno);
    return p;
  }
  const pid_t pid = ::fork();
  if (pid < 0) {
    p.error = std::string("fork: ") + std::strerror(errno);
    ::close(fds[0]);
    ::close(fds[1]);
    return p;
  }
  if (pid == 0) {
    ::close(fds[0]);
    probe_child(fds[1], library, preload_cupti);
  }
  ::close(fds[1]);
  std::string report = read_all(fds[0]);
  int status = 0;
  while (::waitpid(pid, &status, 0) < 0 && errno == EINTR) {
  }
  const std::string head = first_line(report);
  if (head == "ok") {
    p.loads = true;
    p.cupti_path = first_line(report);
    p.cupti_api_version = static_cast<unsigned>(std::strtoul(report.c_str(), nullptr, 10));
  } else {
    p.error = head == "error" ? report : "the probe process died (status " + std::to_string(status) + ")";
  }
  const std::string& named = p.loads ? p.cupti_path : p.error;
  p.cupti_major = cupti_major_of(named);
  if (p.cupti_major > 0) p.cupti_soname = "libcupti.so." + std::to_string(p.cupti_major);
  return p;
}

std::string python_of_command(const std::vector<std::string>& argv, const std::string& path_env) {
  if (argv.empty()) return "";
  const std::string exe = on_path(argv[0], path_env);
  if (exe.empty()) return "";
  if (is_python_name(fs::path(argv[0]).filename().string())) return exe;
  std::ifstream in(exe);
  std::string line;
  if (!std::getline(in, line) || !line.starts_with("#!")) return "";
  // "#!/usr/bin/env python3" or "#!/opt/venv/bin/python3.12 -u"
  static const std::regex re(R"(^#!\s*(\S+)(?:\s+(\S+))?)");
  std::smatch m;
  if (!std::regex_search(line, m, re)) return "";
  const std::string first = m[1].str(), second = m[2].str();
  if (fs::path(first).filename() == "env" && is_python_name(second)) return on_path(second, path_env);
  return is_python_name(fs::path(first).filename().string()) ? first : "";
}

std::vector<std::string> site_packages_of(const std::string& python) {
  std::vector<std::string> out;
  if (python.empty()) return out;
  // bin/python3 -> the prefix above bin (a venv's or conda's; the system's /usr).
  const fs::path prefix = fs::path(python).parent_path().parent_path();
  std::error_code ec;
  for (fs::directory_iterator it(prefix / "lib", ec), end; !ec && it != end; it.increment(ec)) {
    const std::string name = it->path().filename().string();
    if (!name.starts_with("python3")) continue;
    for (const char* sub : {"site-packages", "dist-packages"}) {
      const fs::path p = it->path() / sub;
      if (fs::is_directory(p, ec)) out.push_back(p.string());
    }
  }
  std::sort(out.begin(), out.end());
  return out;
}

std::string find_wheel_cupti(const std::vector<std::string>& site_packages, const std::string& soname) {
  std::error_code ec;
  for (const std::string& sp : site_packages) {
    // nvidia/<package>/lib (CUDA 12 wheels: nvidia/cuda_cupti/lib) and one level deeper.
    std::vector<fs::path> dirs{fs::path(sp) / "torch" / "lib"};
    for (fs::directory_iterator it(fs::path(sp) / "nvidia", ec), end; !ec && it != end; it.increment(ec)) {
      dirs.push_back(it->path() / "lib");
      std::error_code ec2;
      for (fs::directory_iterator in(it->path(), ec2), e2; !ec2 && in != e2; in.increment(ec2)) {
        if (in->is_directory(ec2)) dirs.push_back(in->path() / "lib");
      }
    }
    ec.clear();
    std::sort(dirs.begin(), dirs.end());
    for (const fs::path& d : dirs) {
      const fs::path lib = d / soname;
      if (fs::exists(lib, ec)) return lib.string();
    }
  }
  return "";
}

TraceSetup resolve_trace_setup(const std::vector<std::string>& command, const std::string& path_env) {
  TraceSetup t;
  t.library = find_tracer_library();
  if (t.library.empty()) return t;  // kNoLibrary
  t.probe = probe_tracer(t.library);
  if (t.probe.loads) {
    t.outcome = TraceSetup::Outcome::kLoads;
    return t;
  }
  // No CUPTI where the build found it: PyTorch's wheels bring one into the job's Python
  // environment (nvidia-cuda-cupti), which the job then loads through LD_LIBRARY_PATH.
  t.python = python_of_command(command, path_env);
  const std::string wheel = t.probe.cupti_soname.empty()
                                ? std::string()
                                : find_wheel_cupti(site_packages_of(t.python), t.probe.cupti_soname);
  if (!wheel.empty() && probe_tracer(t.library, wheel).loads) {
    t.outcome = TraceSetup::Outcome::kWheelCupti;
    t.wheel = wheel;
    t.cupti_dir = std::filesystem::path(wheel).parent_path().string();
    return t;
  }
  // Not refused: the job may bring a CUPTI of its own that the loader reuses (PyTorch
  // loads one at import, from wherever its environment keeps it).
  t.outcome = TraceSetup::Outcome::kUnsure;
  return t;
}

}  // namespace chokepoint::tracer
