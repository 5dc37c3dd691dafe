#include "samples/stacks.h"

#include <algorithm>
#include <array>
#include <climits>
#include <cstdint>
#include <map>
#include <set>
#include <string_view>
#include <tuple>

namespace chokepoint::samples {

namespace {

// Python's standard library modules (sys.stdlib_module_names of CPython 3.11, public ones)
// and the packages a training job imports: a trace names their files relative to
// site-packages ("torch/nn/modules/module.py", "threading.py"), like the job's own.
constexpr std::string_view kLibraryModules[] = {"__future__",
                                                "abc",
                                                "aifc",
                                                "antigravity",
                                                "argparse",
                                                "array",
                                                "ast",
                                                "asynchat",
                                                "asyncio",
                                                "asyncore",
                                                "atexit",
                                                "audioop",
                                                "base64",
                                                "bdb",
                                                "binascii",
                                                "bisect",
                                                "builtins",
                                                "bz2",
                                                "cProfile",
                                                "calendar",
                                                "cgi",
                                                "cgitb",
                                                "chunk",
                                                "cmath",
                                                "cmd",
                                                "code",
                                                "codecs",
                                                "codeop",
                                                "collections",
                                                "colorsys",
                                                "compileall",
                                                "concurrent",
                                                "configparser",
                                                "contextlib",
                                                "contextvars",
                                                "copy",
                                                "copyreg",
                                                "crypt",
                                                "csv",
                                                "ctypes",
                                                "curses",
                                                "dataclasses",
                                                "datetime",
                                                "dbm",
                                                "decimal",
                                                "difflib",
                                                "dis",
                                                "distutils",
                                                "doctest",
                                                "email",
                                                "encodings",
                                                "ensurepip",
                                                "enum",
                                                "errno",
                                                "faulthandler",
                                                "fcntl",
                                                "filecmp",
                                                "fileinput",
                                                "fnmatch",
                                                "fractions",
                                                "ftplib",
                                                "functools",
                                                "gc",
                                                "genericpath",
                                                "getopt",
                                                "getpass",
                                                "gettext",
                                                "glob",
                                                "graphlib",
                                                "grp",
                                                "gzip",
                                                "hashlib",
                                                "heapq",
                                                "hmac",
                                                "html",
                                                "http",
                                                "idlelib",
                                                "imaplib",
                                                "imghdr",
                                                "imp",
                                                "importlib",
                                                "inspect",
                                                "io",
                                                "ipaddress",
                                                "itertools",
                                                "json",
                                                "keyword",
                                                "lib2to3",
                                                "linecache",
                                                "locale",
                                                "logging",
                                                "lzma",
                                                "mailbox",
                                                "mailcap",
                                                "marshal",
                                                "math",
                                                "mimetypes",
                                                "mmap",
                                                "modulefinder",
                                                "msilib",
                                                "msvcrt",
                                                "multiprocessing",
                                                "netrc",
                                                "nis",
                                                "nntplib",
                                                "nt",
                                                "ntpath",
                                                "nturl2path",
                                                "numbers",
                                                "opcode",
                                                "operator",
                                                "optparse",
                                                "os",
                                                "ossaudiodev",
                                                "pathlib",
                                                "pdb",
                                                "pickle",
                                                "pickletools",
                                                "pipes",
                                                "pkgutil",
                                                "platform",
                                                "plistlib",
                                                "poplib",
                                                "posix",
                                                "posixpath",
                                                "pprint",
                                                "profile",
                                                "pstats",
                                                "pty",
                                                "pwd",
                                                "py_compile",
                                                "pyclbr",
                                                "pydoc",
                                                "pydoc_data",
                                                "pyexpat",
                                                "queue",
                                                "quopri",
                                                "random",
                                                "re",
                                                "readline",
                                                "reprlib",
                                                "resource",
                                                "rlcompleter",
                                                "runpy",
                                                "sched",
                                                "secrets",
                                                "select",
                                                "selectors",
                                                "shelve",
                                                "shlex",
                                                "shutil",
                                                "signal",
                                                "site",
                                                "smtpd",
                                                "smtplib",
                                                "sndhdr",
                                                "socket",
                                                "socketserver",
                                                "spwd",
                                                "sqlite3",
                                                "sre_compile",
                                                "sre_constants",
                                                "sre_parse",
                                                "ssl",
                                                "stat",
                                                "statistics",
                                                "string",
                                                "stringprep",
                                                "struct",
                                                "subprocess",
                                                "sunau",
                                                "symtable",
                                                "sys",
                                                "sysconfig",
                                                "syslog",
                                                "tabnanny",
                                                "tarfile",
                                                "telnetlib",
                                                "tempfile",
                                                "termios",
                                                "textwrap",
                                                "this",
                                                "threading",
                                                "time",
                                                "timeit",
                                                "tkinter",
                                                "token",
                                                "tokenize",
                                                "tomllib",
                                                "trace",
                                                "traceback",
                                                "tracemalloc",
                                                "tty",
                                                "turtle",
                                                "turtledemo",
                                                "types",
                                                "typing",
                                                "unicodedata",
                                                "unittest",
                                                "urllib",
                                                "uu",
                                                "uuid",
                                                "venv",
                                                "warnings",
                                                "wave",
                                                "weakref",
                                                "webbrowser",
                                                "winreg",
                                                "winsound",
                                                "wsgiref",
                                                "xdrlib",
                                                "xml",
                                                "xmlrpc",
                                                "zipapp",
                                                "zipfile",
                                                "zipimport",
                                                "zlib",
                                                "zoneinfo",
                                                "torch",
                                                "torchvision",
                                                "torchaudio",
                                                "torchtext",
                                                "numpy",
                                                "PIL",
                                                "tqdm",
                                                "transformers",
                                                "accelerate",
                                                "datasets",
                                                "lightning",
                                                "pytorch_lightning",
                                                "lightning_fabric",
                                                "triton",
                                                "safetensors",
                                                "tokenizers",
                                                "timm",
                                                "diffusers",
                                                "wandb",
                                                "tensorboard",
                                                "sklearn",
                                                "scipy",
                                                "pandas",
                                                "cv2",
                                                "einops",
                                                "apex",
                                                "deepspeed",
                                                "peft",
                                                "jax",
                                                "flax",
                                                "huggingface_hub",
                                                "torchmetrics",
                                                "xformers",
                                                "flash_attn",
                                                "sentencepiece",
                                                "tiktoken",
                                                "pyarrow",
                                                "h5py",
                                                "webdataset",
                                                "fsspec",
                                                "hydra",
                                                "omegaconf",
                                                "mlflow",
                                                "pydantic",
                                                "yaml",
                                                "requests",
                                                "filelock",
                                                "packaging",
                                                "typing_extensions",
                                                "regex",
                                                "nvidia",
                                                "cupy",
                                                "numba",
                                                "pynvml",
                                                "psutil"};

}  // namespace

namespace {

// Where a burst ran, and the processes it sampled.
struct BurstSpan {
  int64_t start = INT64_MAX, end = INT64_MIN;
  std::set<int64_t> pids;
};

BurstSpan span_of(const PyStacks& b) {
  BurstSpan sp;
  for (const auto& g : b.segments) {
    if (g.thread < 0 || static_cast<size_t>(g.thread) >= b.threads.size()) continue;
    sp.start = std::min(sp.start, g.start_ns);
    sp.end = std::max(sp.end, g.end_ns);
    sp.pids.insert(b.threads[g.thread].pid);
  }
  return sp;
}

// [a, e) less the spans of bursts that sampled `pid`.
std::vector<std::pair<int64_t, int64_t>> outside_bursts(int64_t a, int64_t e, int64_t pid,
                                                        const std::vector<BurstSpan>& spans) {
  std::vector<std::pair<int64_t, int64_t>> keep = {{a, e}};
  for (const auto& sp : spans) {
    if (!sp.pids.count(pid)) continue;
    std::vector<std::pair<int64_t, int64_t>> next;
    for (const auto& [x, y] : keep) {
      if (y <= sp.start || x >= sp.end) {
        next.emplace_back(x, y);
        continue;
      }
      if (x < sp.start) next.emplace_back(x, sp.start);
      if (y > sp.end) next.emplace_back(sp.end, y);
    }
    keep = std::move(next);
  }
  return keep;
}

// The frames, stacks and threads of `out`, by what they are, to add others' to it.
class Ids {
 public:
  explicit Ids(PyStacks& out) : out_(out) {
    for (size_t i = 0; i < out.frames.size(); ++i) frames_.emplace(out.frames[i], static_cast<int32_t>(i));
    for (size_t i = 0; i < out.stacks.size(); ++i) stacks_.emplace(out.stacks[i], static_cast<int32_t>(i));
    for (size_t i = 0; i < out.threads.size(); ++i) threads_.emplace(key(out.threads[i]), static_cast<int32_t>(i));
  }
  // `b`'s segments added to `segs`, in `out`'s ids.
  void add(const PyStacks& b, std::vector<PyStackSegment>& segs) {
    std::vector<int32_t> frame(b.frames.size()), stack(b.stacks.size()), thread(b.threads.size());
    for (size_t i = 0; i < b.frames.size(); ++i) frame[i] = id(frames_, b.frames[i], out_.frames);
    for (size_t i = 0; i < b.stacks.size(); ++i) {
      std::vector<int32_t> st;
      st.reserve(b.stacks[i].size());
      for (int32_t f : b.stacks[i]) st.push_back(f >= 0 && static_cast<size_t>(f) < frame.size() ? frame[f] : f);
      stack[i] = id(stacks_, st, out_.stacks);
    }
    for (size_t i = 0; i < b.threads.size(); ++i) {
      auto [it, fresh] = threads_.emplace(key(b.threads[i]), static_cast<int32_t>(out_.threads.size()));
      if (fresh) out_.threads.push_back(b.threads[i]);
      thread[i] = it->second;
    }
    for (const auto& g : b.segments) {
      if (g.thread >= 0 && static_cast<size_t>(g.thread) < thread.size() && g.stack >= 0 &&
          static_cast<size_t>(g.stack) < stack.size()) {
        segs.push_back({thread[g.thread], stack[g.stack], g.start_ns, g.end_ns});
      }
    }
  }

 private:
  using ThreadKey = std::tuple<int64_t, int64_t, std::string>;
  static ThreadKey key(const PyThread& t) { return {t.pid, t.tid, t.tid != 0 ? std::string() : t.name}; }
  template <typename T>
  static int32_t id(std::map<T, int32_t>& ids, const T& v, std::vector<T>& table) {
    auto [it, fresh] = ids.emplace(v, static_cast<int32_t>(table.size()));
    if (fresh) table.push_back(v);
    return it->second;
  }
  PyStacks& out_;
  std::map<PyFrame, int32_t> frames_;
  std::map<std::vector<int32_t>, int32_t> stacks_;
  std::map<ThreadKey, int32_t> threads_;
};

}  // namespace

PyStacks with_bursts(const PyStacks& base, const std::vector<PyStacks>& bursts) {
  PyStacks out = base;
  std::vector<BurstSpan> spans;
  for (const auto& b : bursts) {
    if (BurstSpan sp = span_of(b); sp.start < sp.end) spans.push_back(std::move(sp));
  }
  if (spans.empty()) return out;
  std::vector<PyStackSegment> segs;
  for (const auto& g : base.segments) {
    const bool known = g.thread >= 0 && static_cast<size_t>(g.thread) < base.threads.size();
    for (const auto& [a, e] : outside_bursts(g.start_ns, g.end_ns, known ? base.threads[g.thread].pid : -1, spans)) {
      segs.push_back({g.thread, g.stack, a, e});
    }
  }
  Ids ids(out);
  for (const auto& b : bursts) ids.add(b, segs);
  std::sort(segs.begin(), segs.end(), [](const PyStackSegment& a, const PyStackSegment& b) {
    return std::tie(a.thread, a.start_ns) < std::tie(b.thread, b.start_ns);
  });
  out.segments = std::move(segs);
  return out;
}

bool is_library_file(const std::string& f) {
  if (f.empty() || f[0] == '<') return true;  // <frozen os>, <built-in>, <string>
  for (const char* s : {"/site-packages/", "/dist-packages/", "/lib/python", "/lib64/python"}) {
    if (f.find(s) != std::string::npos) return true;
  }
  if (f[0] == '/') return false;
  // A relative name: its first component (without .py) names the module.
  std::string_view first(f);
  first = first.substr(0, first.find('/'));
  if (first.size() > 3 && first.substr(first.size() - 3) == ".py") first.remove_suffix(3);
  return std::find(std::begin(kLibraryModules), std::end(kLibraryModules), first) != std::end(kLibraryModules);
}

}  // namespace chokepoint::samples
