# xxHash and oneDNN ship no CMake package on Debian, so they are imported targets found by library
# name. The same file creates them in the build (sdk/CMakeLists.txt) and in an installed
# FlashPSConfig.cmake that asks for the static library: the exported link interface then names
# FlashPS::xxhash / FlashPS::dnnl, never a path on the machine that built FlashPS.
#
# flashps_import_library(<target> <library name> [REQUIRED] [GLOBAL])
# GLOBAL in the build, where targets of other folders (tests, tools) link through flashps.
function(flashps_import_library target library_name)
  if(TARGET ${target})
    return()
  endif()
  string(TOUPPER "FLASHPS_${library_name}_LIBRARY" cache_variable)
  find_library(${cache_variable} NAMES ${library_name})
  if(NOT ${cache_variable})
    if("REQUIRED" IN_LIST ARGN)
      message(FATAL_ERROR "FlashPS: library '${library_name}' not found (Debian: lib${library_name}-dev)")
    endif()
    return()
  endif()
  set(scope)
  if("GLOBAL" IN_LIST ARGN)
    set(scope GLOBAL)
  endif()
  add_library(${target} UNKNOWN IMPORTED ${scope})
  set_target_properties(${target} PROPERTIES IMPORTED_LOCATION "${${cache_variable}}")
endfunction()
