# The SDK's folders are layers (docs/ARCHITECTURE.md): a folder may include only the folders
# listed for it here, so an include from a lower layer into a higher one fails the configure
# step, naming the file, the include and what the folder may use. Run at configure time
# (sdk/CMakeLists.txt) and as ctest sdk.layering (tests/sdk/layering_check.sh), which also
# proves a violation is refused.
#
# Bottom to top: core; engine, schedulers, edit, workload; cache, models; pipeline, dev;
# serve, training, app; serve_tools; bench; http (public API only); api.
set(FLASHPS_LAYER_USES_core "")
set(FLASHPS_LAYER_USES_engine "core")
set(FLASHPS_LAYER_USES_schedulers "core")
set(FLASHPS_LAYER_USES_edit "core")
set(FLASHPS_LAYER_USES_workload "core")
set(FLASHPS_LAYER_USES_cache "core;engine")
set(FLASHPS_LAYER_USES_models "core;engine;schedulers")
set(FLASHPS_LAYER_USES_pipeline "core;engine;schedulers;models")
set(FLASHPS_LAYER_USES_dev "core;schedulers;models")
set(FLASHPS_LAYER_USES_serve "core;engine;pipeline")
set(FLASHPS_LAYER_USES_training "core;schedulers;workload;models;pipeline")
set(FLASHPS_LAYER_USES_app "core;cache;models")
set(FLASHPS_LAYER_USES_serve_tools "core;engine;workload;pipeline;serve")
# bench http measures the server as users reach it: through the public API (flashps/).
set(FLASHPS_LAYER_USES_bench "core;engine;schedulers;workload;cache;models;pipeline;serve;training;serve_tools;flashps")
# http: the HTTP server, written on the public API alone (as any outside program could be).
set(FLASHPS_LAYER_USES_http "flashps")
set(FLASHPS_LAYER_USES_api "core;engine;edit;cache;models;pipeline;serve;app;serve_tools;http;flashps")

# source_root: the folder holding the layers (sdk/src). Fails listing every violation.
function(flashps_check_layering source_root)
  file(GLOB layers RELATIVE ${source_root} ${source_root}/*)
  set(violations "")
  foreach(layer IN LISTS layers)
    if(NOT IS_DIRECTORY ${source_root}/${layer})
      continue()
    endif()
    if(NOT DEFINED FLASHPS_LAYER_USES_${layer})
      string(APPEND violations "\n  sdk/src/${layer}/: a folder with no place in the layering (add it to sdk/layering.cmake)")
      continue()
    endif()
    set(allowed ${FLASHPS_LAYER_USES_${layer}})
    file(GLOB_RECURSE sources ${source_root}/${layer}/*.h ${source_root}/${layer}/*.cpp ${source_root}/${layer}/*.cu)
    foreach(source IN LISTS sources)
      file(STRINGS ${source} lines REGEX "^[ \t]*#[ \t]*include[ \t]*[<\"][a-z_]+/")
      foreach(line IN LISTS lines)
        string(REGEX MATCH "include[ \t]*[<\"]([a-z_]+)/" matched "${line}")
        set(used ${CMAKE_MATCH_1})
        # Only the SDK's own folders are layers; <ATen/...>, <nlohmann/...> and the like are not.
        if(used STREQUAL layer OR (NOT IS_DIRECTORY ${source_root}/${used} AND NOT used STREQUAL "flashps"))
          continue()
        endif()
        list(FIND allowed ${used} position)
        if(position EQUAL -1)
          file(RELATIVE_PATH shown ${source_root} ${source})
          string(APPEND violations "\n  sdk/src/${shown}: ${line} (${layer}/ may use: ${allowed})")
        endif()
      endforeach()
    endforeach()
  endforeach()
  if(violations)
    message(FATAL_ERROR "FlashPS layering: a folder includes one above it or beside it "
                        "(docs/ARCHITECTURE.md):${violations}")
  endif()
endfunction()

if(CMAKE_SCRIPT_MODE_FILE AND SOURCE_ROOT)  # cmake -DSOURCE_ROOT=<sdk/src> -P sdk/layering.cmake
  flashps_check_layering(${SOURCE_ROOT})
endif()
