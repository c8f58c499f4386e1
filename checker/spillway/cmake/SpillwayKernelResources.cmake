# SpillwayKernelResources: gate a built HIP binary's kernel resources in CTest.
#
# The module ships inside the Python package; `spillway cmake-dir` prints its
# folder (as `python -m pybind11 --cmakedir` does):
#
#   execute_process(COMMAND spillway cmake-dir OUTPUT_VARIABLE spillway_dir
#                   OUTPUT_STRIP_TRAILING_WHITESPACE COMMAND_ERROR_IS_FATAL ANY)
#   list(APPEND CMAKE_MODULE_PATH "${spillway_dir}")
#   include(SpillwayKernelResources)
#   enable_testing()
#   spillway_kernel_resources_test(
#     TARGET engine                      # a target (its file is checked) ...
#     # BINARY path/to/libengine.so      # ... or a file built some other way
#     BASELINE ${CMAKE_CURRENT_SOURCE_DIR}/checks/engine.json
#     [NAME kernel_resources_test]       # test name (default kernel_resources_test)
#     [GATE scratch,spills]              # override the baseline's gated metrics
#     [TARGETS gfx1151 gfx90a]           # only these GPU targets
#     [JUNIT ${CMAKE_BINARY_DIR}/kernel_resources.xml]
#     [NOTE "what the baseline describes"]  # for the baseline target (default: names the binary)
#     [LABELS cpu kernels])              # default: cpu;kernels
#
# The test runs `spillway check <binary> --baseline <file>`: it passes when
# every kernel is within its baseline and fails (exit 1) naming each kernel
# over it.  It reads the binary statically and needs no GPU, hence the `cpu`
# label.  Each failure ends with the `spillway baseline write ... --allow-key
# KEY --reason TEXT` command that accepts it.
#
# It also adds the target <NAME>_baseline, which writes the baseline when it
# is missing and tightens it otherwise (allowances only go down; growth needs
# the --allow-key command above):
#   cmake --build <build dir> --target kernel_resources_test_baseline
# A missing baseline makes the test fail with that command and the spillway
# command that does the same.
#
# spillway is found as the `spillway` program (set SPILLWAY_EXECUTABLE to
# choose one), else as `python3 -m spillway` when that Python can import it.
include_guard(GLOBAL)
set(_spillway_module_dir "${CMAKE_CURRENT_LIST_DIR}")

if(NOT SPILLWAY_COMMAND)
  find_program(SPILLWAY_EXECUTABLE spillway DOC "spillway, the kernel resource checker")
  if(SPILLWAY_EXECUTABLE)
    set(SPILLWAY_COMMAND "${SPILLWAY_EXECUTABLE}")
  else()
    find_package(Python3 COMPONENTS Interpreter QUIET)
    if(Python3_Interpreter_FOUND)
      execute_process(COMMAND "${Python3_EXECUTABLE}" -c "import spillway"
                      RESULT_VARIABLE _spillway_import OUTPUT_QUIET ERROR_QUIET)
      if(_spillway_import EQUAL 0)
        set(SPILLWAY_COMMAND "${Python3_EXECUTABLE};-m;spillway")
      endif()
    endif()
  endif()
endif()

function(spillway_kernel_resources_test)
  cmake_parse_arguments(PARSE_ARGV 0 ARG "" "NAME;TARGET;BINARY;BASELINE;GATE;JUNIT;NOTE" "LABELS;TARGETS")
  if(ARG_UNPARSED_ARGUMENTS)
    message(FATAL_ERROR "spillway_kernel_resources_test: unknown arguments: ${ARG_UNPARSED_ARGUMENTS}")
  endif()
  if(NOT ARG_NAME)
    set(ARG_NAME kernel_resources_test)
  endif()
  if(NOT ARG_BASELINE)
    message(FATAL_ERROR "spillway_kernel_resources_test(${ARG_NAME}): BASELINE <file> is required")
  endif()
  if(ARG_TARGET AND ARG_BINARY)
    message(FATAL_ERROR "spillway_kernel_resources_test(${ARG_NAME}): give TARGET or BINARY, not both")
  elseif(ARG_TARGET)
    if(NOT TARGET ${ARG_TARGET})
      message(FATAL_ERROR "spillway_kernel_resources_test(${ARG_NAME}): ${ARG_TARGET} is not a target")
    endif()
    set(binary "$<TARGET_FILE:${ARG_TARGET}>")
  elseif(ARG_BINARY)
    set(binary "${ARG_BINARY}")
  else()
    message(FATAL_ERROR "spillway_kernel_resources_test(${ARG_NAME}): TARGET <target> or BINARY <file> is required")
  endif()
  if(NOT ARG_LABELS)
    set(ARG_LABELS cpu kernels)
  endif()
  if(NOT SPILLWAY_COMMAND)
    message(SEND_ERROR "spillway_kernel_resources_test(${ARG_NAME}): spillway not found: pip install spillway, "
                       "or set SPILLWAY_EXECUTABLE")
    return()
  endif()
  get_filename_component(baseline "${ARG_BASELINE}" ABSOLUTE BASE_DIR "${CMAKE_CURRENT_SOURCE_DIR}")

  set(command ${SPILLWAY_COMMAND} check "${binary}" --baseline "${baseline}")
  set(selection "")
  if(ARG_GATE)
    list(APPEND command --gate "${ARG_GATE}")
  endif()
  if(ARG_TARGETS)
    string(REPLACE ";" "," targets "${ARG_TARGETS}")
    list(APPEND selection --target "${targets}")
  endif()
  list(APPEND command ${selection})
  if(ARG_JUNIT)
    list(APPEND command --junit "${ARG_JUNIT}" --suite "${ARG_NAME}")
  endif()
  add_test(NAME ${ARG_NAME} COMMAND ${command})
  set(baseline_target "${ARG_NAME}_baseline")
  set_tests_properties(${ARG_NAME} PROPERTIES LABELS "${ARG_LABELS}"
    ENVIRONMENT "SPILLWAY_WRITE_BASELINE=cmake --build ${CMAKE_BINARY_DIR} --target ${baseline_target}")

  # <NAME>_baseline: write the baseline if it is missing, tighten it otherwise.
  if(NOT ARG_NOTE)
    set(ARG_NOTE "written by the CMake target ${baseline_target} from ${binary}")
  endif()
  set(write_gate "")
  if(ARG_GATE)
    set(write_gate --gate "${ARG_GATE}")
  endif()
  string(REPLACE ";" "|" spillway_list "${SPILLWAY_COMMAND}")   # a list through one -D argument
  add_custom_target(${baseline_target}
    COMMAND "${CMAKE_COMMAND}" "-DSPILLWAY_COMMAND=${spillway_list}" "-DBINARY=${binary}" "-DBASELINE=${baseline}"
            "-DNOTE=${ARG_NOTE}" -P "${_spillway_module_dir}/SpillwayWriteBaseline.cmake" -- ${write_gate} ${selection}
    COMMENT "spillway baseline write ${baseline}"
    VERBATIM)
  if(ARG_TARGET)
    add_dependencies(${baseline_target} ${ARG_TARGET})
  endif()
  if(ARG_TARGET)
    # Re-running the test after a rebuild is what checks the new binary.
    set_property(TEST ${ARG_NAME} APPEND PROPERTY REQUIRED_FILES "$<TARGET_FILE:${ARG_TARGET}>")
  endif()
endfunction()
