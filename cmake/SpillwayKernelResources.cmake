# The module lives in the Python package (checker/spillway/cmake/), so an
# installed spillway carries it (`spillway cmake-dir` prints the folder).  This
# file keeps `list(APPEND CMAKE_MODULE_PATH <spillway checkout>/cmake)` working.
include("${CMAKE_CURRENT_LIST_DIR}/../checker/spillway/cmake/SpillwayKernelResources.cmake")
