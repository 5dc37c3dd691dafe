// Renders a DoctorReport: text for people (grouped by system / GPU / host, advice under
// each problem), JSON for tools ("chokepoint.doctor/1": stable keys, nulls never zeros).
#pragma once

#include <string>

#include "doctor/doctor.h"

namespace chokepoint::doctor {

inline constexpr const char* kDoctorSchema = "chokepoint.doctor/1";

struct TextOptions {
  bool color = false;
  int width = 100;
};

std::string render_text(const DoctorReport& report, const TextOptions& options);
std::string render_json(const DoctorReport& report);

}  // namespace chokepoint::doctor
