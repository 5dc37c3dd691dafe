// Will `run --trace` work here, and with which CUPTI: the injection library's place, the
// libcupti it needs (the build machine's toolkit, or the one PyTorch's nvidia-* wheels put
// in the job's Python environment), and a probe that loads both in a child process.
// Used by `run --trace` before the job starts and by `doctor` (rule trace-ready).
#pragma once

#include <string>
#include <vector>

namespace chokepoint::tracer {

// $CHOKEPOINT_TRACER_LIB when set (its absolute path, "" when it does not exist), else
// libchokepoint_tracer.so next to the running executable; "" when there is none.
std::string find_tracer_library();

// What loading the tracer library showed.
struct TracerProbe {
  std::string library;  // the injection library probed
  bool loads = false;   // it and its libcupti loaded
  std::string error;    // the loader's message when not
  // The CUPTI it needs ("libcupti.so.13"), from the loader's message when missing, else
  // from the library that was loaded.
  std::string cupti_soname;
  std::string cupti_path;        // the libcupti that was loaded
  unsigned cupti_api_version{};  // cuptiGetVersion (CUPTI_API_VERSION: 130001 for CUDA 13.0 U1)
  int cupti_major = 0;           // the CUDA major its soname names (13)
};

// Loads `library` in a forked child (so nothing of it stays in this process), after
// `preload_cupti` when given (a libcupti found elsewhere, loaded first under its soname).
TracerProbe probe_tracer(const std::string& library, const std::string& preload_cupti = "");

// The Python interpreter a command runs: argv[0] when it is python*, else the interpreter
// of argv[0]'s #! line when that is a python (torchrun, accelerate); resolved on `path_env`
// (PATH's form). "" when the command is not a Python program.
std::string python_of_command(const std::vector<std::string>& argv, const std::string& path_env);

// The site-packages folders of the environment `python` belongs to (a venv's or a conda
// prefix's lib/python3*/site-packages), without running it.
std::vector<std::string> site_packages_of(const std::string& python);

// `soname` (libcupti.so.13) under the given site-packages: the nvidia-* wheels' lib
// folders (nvidia/cuda_cupti/lib, nvidia/cu13/lib ...) and torch/lib. "" when none.
std::string find_wheel_cupti(const std::vector<std::string>& site_packages, const std::string& soname);

// What `run --trace` will use, decided before the job starts.
struct TraceSetup {
  enum class Outcome {
    kNoLibrary,   // no libchokepoint_tracer.so: --trace cannot work (refused)
    kLoads,       // the tracer loads here with the CUPTI it was built against
    kWheelCupti,  // it loads with the CUPTI of the job's Python environment (cupti_dir)
    kUnsure,      // it does not load on its own (probe.error): used, the job may bring one
  };
  Outcome outcome = Outcome::kNoLibrary;
  std::string library;    // the tracer library
  std::string cupti_dir;  // kWheelCupti: the folder of the wheel's libcupti, for LD_LIBRARY_PATH
  std::string wheel;      // kWheelCupti: that libcupti
  std::string python;     // the job's Python interpreter, "" when it is none
  TracerProbe probe;      // what loading the tracer alone showed
};

// The tracer library, probed; when it does not load on its own, a CUPTI of the soname it
// needs from the Python environment `command` runs in (resolved on `path_env`, PATH's form).
TraceSetup resolve_trace_setup(const std::vector<std::string>& command, const std::string& path_env);

// The CUDA major version a libcupti soname or path names: 13 for ".../libcupti.so.13"; 0 when none.
int cupti_major_of(const std::string& soname_or_path);

}  // namespace chokepoint::tracer
