// Where saved machine profiles live and which one applies to a GPU.
//
// `chokepoint bench --save` writes one file per GPU model:
//   $XDG_CONFIG_HOME/chokepoint/profile-<slug>.json  (default ~/.config/chokepoint/...)
// where <slug> is the CUDA device name in lower case with every run of other characters
// turned into '-': "NVIDIA H200" -> profile-nvidia-h200.json. The key is the name, not
// the GPU UUID, because the traces `analyze` reads (Kineto) record the device name only;
// a profile holds every GPU of that model on the machine, and the ceilings use the
// median of them.
//
// $CHOKEPOINT_PROFILE overrides the lookup: a path to one profile file (used for every
// GPU model it contains), or "none" / "off" / "0" to ignore saved profiles (published
// figures only; what reproducible tests want).
#pragma once

#include <optional>
#include <string>
#include <string_view>

#include "base/status.h"
#include "machine/profile.h"

namespace chokepoint::machine {

inline constexpr const char* kProfileEnvVar = "CHOKEPOINT_PROFILE";

// "NVIDIA H200" -> "nvidia-h200"; "" for a name with no letters or digits.
std::string profile_slug(std::string_view gpu_name);

// $XDG_CONFIG_HOME/chokepoint or $HOME/.config/chokepoint; nullopt when neither is set.
std::optional<std::string> profile_dir();

// Where `bench --save` writes the profile of gpu_name; nullopt without a config dir.
std::optional<std::string> default_profile_path(std::string_view gpu_name);

// Whether $CHOKEPOINT_PROFILE turns saved profiles off.
bool profiles_disabled();

// The file to consult for gpu_name: $CHOKEPOINT_PROFILE when it names a file, else the
// default path when that file exists; nullopt when profiles are off or there is none.
std::optional<std::string> profile_path_for(std::string_view gpu_name);

Result<Profile> load_profile(const std::string& path);

// Writes atomically (temporary file + rename), creating the directory if needed.
Status save_profile(const Profile& p, const std::string& path);

// Case-insensitive, whitespace-trimmed equality of CUDA device names.
bool same_gpu_name(std::string_view a, std::string_view b);

}  // namespace chokepoint::machine
