# One static library per layer folder (docs/ARCHITECTURE.md, "Layers"): its sources are the
# folder's *.cc (recursively) except *_test.cc and its cuda/ folder; its tests are the
# *_test.cc beside them, built into one test program per layer and registered with CTest.
#
# The layers a layer may include are its DEPS, transitively (src/CMakeLists.txt is the one
# place that says them; scripts/check_layers.sh reads the same lines). The build enforces
# it: a layer's include root is not src/ but a directory of the build tree holding one
# symbolic link per allowed layer (build/layers/<name>/<layer> -> src/<layer>), so
# `#include "analyses/x.h"` from a layer below analyses does not compile. Layers must be
# declared after the layers they depend on.
function(chokepoint_layer name dir)
  cmake_parse_arguments(L "" "" "DEPS" ${ARGN})
  if(NOT name STREQUAL dir)
    message(FATAL_ERROR "layer '${name}' must be the folder src/${name}")
  endif()
  file(GLOB_RECURSE srcs CONFIGURE_DEPENDS ${dir}/*.cc)
  file(GLOB_RECURSE tests CONFIGURE_DEPENDS ${dir}/*_test.cc)
  if(tests)
    list(REMOVE_ITEM srcs ${tests})
  endif()
  # A layer's cuda/ folder is built apart, only with the CUDA toolkit (bench, tracer).
  file(GLOB_RECURSE cuda_srcs CONFIGURE_DEPENDS ${dir}/cuda/*.cc)
  if(cuda_srcs)
    list(REMOVE_ITEM srcs ${cuda_srcs})
  endif()
  if(srcs)
    add_library(chokepoint_${name} STATIC ${srcs})
    set(scope PUBLIC)
  else()
    add_library(chokepoint_${name} INTERFACE)
    set(scope INTERFACE)
  endif()
  chokepoint_allowed_layers(allowed ${name} ${L_DEPS})
  chokepoint_include_root(root ${name} ${allowed})
  set_property(GLOBAL PROPERTY chokepoint_layer_${name} ${allowed})
  set_property(TARGET chokepoint_${name} PROPERTY CHOKEPOINT_INCLUDE_ROOT ${root})
  target_include_directories(chokepoint_${name} ${scope} ${root} ${CMAKE_BINARY_DIR}/generated)
  target_link_libraries(chokepoint_${name} ${scope} ${L_DEPS})
  if(CHOKEPOINT_TESTS AND tests)
    add_executable(${name}_tests ${tests})
    target_link_libraries(${name}_tests PRIVATE chokepoint_${name} GTest::gtest_main GTest::gmock)
    target_compile_definitions(${name}_tests PRIVATE
      CHOKEPOINT_TEST_DATA="${PROJECT_SOURCE_DIR}/tests/data")
    chokepoint_test_program(${name}_tests)
    gtest_discover_tests(${name}_tests DISCOVERY_TIMEOUT 60)
  endif()
endfunction()

# out = `self` plus every layer the chokepoint_* targets among the dependencies may use.
function(chokepoint_allowed_layers out self)
  set(allowed ${self})
  foreach(d ${ARGN})
    if(d MATCHES "^chokepoint_(.+)$")
      get_property(known GLOBAL PROPERTY chokepoint_layer_${CMAKE_MATCH_1} SET)
      if(NOT known)
        message(FATAL_ERROR "layer '${self}' depends on '${CMAKE_MATCH_1}', declared after it "
                            "(declare layers bottom-up)")
      endif()
      get_property(theirs GLOBAL PROPERTY chokepoint_layer_${CMAKE_MATCH_1})
      list(APPEND allowed ${theirs})
    endif()
  endforeach()
  list(REMOVE_DUPLICATES allowed)
  list(SORT allowed)
  set(${out} ${allowed} PARENT_SCOPE)
endfunction()

# out = build/layers/<name>, holding a link to src/<layer> for each allowed layer (and
# nothing else: a link left over from an earlier configure is removed).
function(chokepoint_include_root out name)
  set(root ${CMAKE_BINARY_DIR}/layers/${name})
  file(REMOVE_RECURSE ${root})
  file(MAKE_DIRECTORY ${root})
  foreach(l ${ARGN})
    file(CREATE_LINK ${PROJECT_SOURCE_DIR}/src/${l} ${root}/${l} SYMBOLIC)
  endforeach()
  set(${out} ${root} PARENT_SCOPE)
endfunction()
