# How the test programs (every *_tests executable) are built.
#
# Their own files are heavy to compile (gtest's macros, nlohmann/json and fmt templates in
# every file) and light to run: the time of a test goes into the code under test. Two
# settings let a build spend less on them without touching that code:
#   - CHOKEPOINT_TEST_OPT: extra flags for the test programs' own files only, after the
#     build type's (scripts/test.sh passes -O0: half the compile time of -O1 under the
#     sanitizers, the libraries they test keep their -O1);
#   - CHOKEPOINT_PCH: the headers every test file includes are precompiled once per
#     program (target_precompile_headers) instead of parsed in each file.
set(CHOKEPOINT_TEST_OPT "" CACHE STRING "Extra compiler flags for the test programs' own files, e.g. -O0")
# CHOKEPOINT_GLUE_OPT: the same for the CLI's own files (they parse options and call a
# pipeline): under the sanitizers CLI11's templates take 2.6 times as long at -O1 as at
# -O0 (cli/main.cc 21.8 s against 8.3 s), and parsing options is no part of any test's
# time. Not report/ nor pipeline/: at -O0 the golden tests that render and attribute ran
# 10-30% slower (StatCatalogueGolden 50 s against 41 s). scripts/test.sh passes -O0.
set(CHOKEPOINT_GLUE_OPT "" CACHE STRING "Extra compiler flags for the CLI's own files, e.g. -O0")
function(chokepoint_glue_target target)
  if(CHOKEPOINT_GLUE_OPT)
    separate_arguments(opts UNIX_COMMAND "${CHOKEPOINT_GLUE_OPT}")
    target_compile_options(${target} PRIVATE ${opts})
  endif()
endfunction()
option(CHOKEPOINT_PCH "Precompile the headers the test programs' files share" ON)

# A program of fewer files than this gains nothing from a precompiled header (building it
# costs about what it saves in one file).
set(chokepoint_pch_min_files 3)

function(chokepoint_test_program target)
  if(CHOKEPOINT_TEST_OPT)
    separate_arguments(opts UNIX_COMMAND "${CHOKEPOINT_TEST_OPT}")
    target_compile_options(${target} PRIVATE ${opts})
  endif()
  get_target_property(srcs ${target} SOURCES)
  list(LENGTH srcs n)
  if(CHOKEPOINT_PCH AND n GREATER_EQUAL chokepoint_pch_min_files)
    target_precompile_headers(${target} PRIVATE
      <gtest/gtest.h> <nlohmann/json.hpp> <fmt/format.h>
      <algorithm> <cstdint> <filesystem> <fstream> <functional> <map> <memory> <optional> <set>
      <sstream> <string> <string_view> <vector>)
  endif()
endfunction()
