# One static library per layer folder (DESIGN.md): its sources are the folder's *.cc
# (recursively) except *_test.cc and its cuda/ folder; its tests are the *_test.cc beside them, built into
# one test program per layer and registered with CTest.
function(chokepoint_layer name dir)
  cmake_parse_arguments(L "" "" "DEPS" ${ARGN})
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
  target_include_directories(chokepoint_${name} ${scope} ${PROJECT_SOURCE_DIR}/src
                             ${CMAKE_BINARY_DIR}/generated)
  target_link_libraries(chokepoint_${name} ${scope} ${L_DEPS})
  if(CHOKEPOINT_TESTS AND tests)
    add_executable(${name}_tests ${tests})
    target_link_libraries(${name}_tests PRIVATE chokepoint_${name} GTest::gtest_main GTest::gmock)
    target_compile_definitions(${name}_tests PRIVATE
      CHOKEPOINT_TEST_DATA="${PROJECT_SOURCE_DIR}/tests/data")
    gtest_discover_tests(${name}_tests DISCOVERY_TIMEOUT 60)
  endif()
endfunction()
