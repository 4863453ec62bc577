# Who may include what, for every C/C++ source the product is made of, in one table and one
# check (docs/ARCHITECTURE.md draws it). The SDK's folders (sdk/src/<folder>) are layers: a folder
# includes only the folders listed for it. The front ends (command line, desktop app, plugins, the
# HTTP server) and the public headers are written on the public API (<flashps/...>) alone.
# flashps_check_layering() runs at configure time (top-level CMakeLists.txt) and as ctest
# sdk.layering (tests/sdk/layering_check.sh, which also proves each kind of violation is
# refused); it fails naming every file, include and rule broken.

if(CMAKE_SCRIPT_MODE_FILE)
  cmake_minimum_required(VERSION 3.22)  # the project's policies, also when run as a script
endif()

# --- SDK layers, bottom to top: core; engine, schedulers, edit, workload, classical; cache, models;
# pipeline, dev; serve, training, app; serve_tools; bench; api. A folder may always include
# itself; "flashps" is the public API. Libraries (<ATen/...>, <nlohmann/...>) are not layers.
set(FLASHPS_LAYER_USES_core "")
set(FLASHPS_LAYER_USES_engine "core")
set(FLASHPS_LAYER_USES_schedulers "core")
set(FLASHPS_LAYER_USES_edit "core")
set(FLASHPS_LAYER_USES_workload "core")
set(FLASHPS_LAYER_USES_classical "core")
set(FLASHPS_LAYER_USES_cache "core;engine")
set(FLASHPS_LAYER_USES_models "core;engine;schedulers")
set(FLASHPS_LAYER_USES_pipeline "core;engine;schedulers;classical;models")
set(FLASHPS_LAYER_USES_dev "core;schedulers;models")
set(FLASHPS_LAYER_USES_serve "core;engine;pipeline")
set(FLASHPS_LAYER_USES_training "core;schedulers;workload;models;pipeline")
set(FLASHPS_LAYER_USES_app "core;cache;models")
set(FLASHPS_LAYER_USES_serve_tools "core;engine;workload;pipeline;serve")
# bench http measures the server as users reach it: through the public API (flashps/).
set(FLASHPS_LAYER_USES_bench "core;engine;schedulers;workload;classical;cache;models;pipeline;serve;training;serve_tools;flashps")
set(FLASHPS_LAYER_USES_api "core;engine;edit;cache;models;pipeline;serve;app;serve_tools;http;flashps")

# --- What a layer never reaches, not even through the headers of a folder it may use (the whole
# chain of includes is followed). A table row that lists one of these is refused as well.
# engine owns the contracts models and the store implement: it knows no family and no store.
set(FLASHPS_LAYER_NEVER_engine "models;pipeline;cache")
# serve schedules edits by the pipeline's cost profiles: it never sees a model or the store.
set(FLASHPS_LAYER_NEVER_serve "models;cache")

# --- Front ends and the public headers: only <flashps/...>, standard and system headers (no
# folder, or sys/, arpa/, netinet/), their own files, and the LIBRARIES named (the first part of
# an include's path, a regular expression). ALSO_OWN: folders whose files it includes by name.
set(FLASHPS_FRONT_ENDS "")
macro(flashps_front_end folder)
  cmake_parse_arguments(_flashps_front_end "" "" "LIBRARIES;ALSO_OWN" ${ARGN})
  list(APPEND FLASHPS_FRONT_ENDS ${folder})
  set(FLASHPS_FRONT_END_LIBRARIES_${folder} "${_flashps_front_end_LIBRARIES}")
  set(FLASHPS_FRONT_END_OWN_${folder} ${folder} ${_flashps_front_end_ALSO_OWN})
endmacro()
flashps_front_end(sdk/include)                                        # the public API itself
flashps_front_end(sdk/src/http LIBRARIES nlohmann)                    # the HTTP server
flashps_front_end(cli LIBRARIES CLI nlohmann)
flashps_front_end(desktop_app/src LIBRARIES "Qt.*" nlohmann)
flashps_front_end(desktop_app/tests LIBRARIES "Qt.*" nlohmann ALSO_OWN desktop_app/src)
flashps_front_end(plugins/include)                                    # the plugin ABI
flashps_front_end(plugins/core LIBRARIES nlohmann)
flashps_front_end(plugins/host LIBRARIES nlohmann ALSO_OWN plugins/core)
flashps_front_end(plugins/runner LIBRARIES nlohmann ALSO_OWN plugins/core)
flashps_front_end(plugins/filters)
flashps_front_end(plugins/gimp_common)                                # the GIMP plug-ins' shared fill (GLib)
flashps_front_end(plugins/gimp LIBRARIES libgimp ALSO_OWN plugins/gimp_common)
flashps_front_end(plugins/gimp3 LIBRARIES libgimp ALSO_OWN plugins/gimp_common)

# Every folder under these that holds sources must have a row above (a layer or a front end).
set(FLASHPS_PLACED_FOLDERS sdk/src plugins desktop_app)

set(FLASHPS_SOURCE_GLOBS *.h *.hpp *.c *.cpp *.cu)

# Checks the sources of one row. unit: its folder from the project root; layer: its sdk/src
# folder ("" for a front end); uses: the layers it may include ("flashps": the public API);
# libraries: "*" for any, else regular expressions; own_dirs: folders whose files it includes by
# name. Appends to the global property FLASHPS_LAYERING_VIOLATIONS, and for a layer records each
# file's includes of SDK files (FLASHPS_INCLUDES_<path from sdk/src>) for the NEVER rules.
function(_flashps_check_unit project_root unit layer uses libraries own_dirs)
  set(src ${project_root}/sdk/src)
  if(layer AND NOT uses)
    set(rule "${layer}/ may use: nothing")
  elseif(layer)
    string(REPLACE ";" ", " rule "${layer}/ may use: ${uses}")
  else()
    set(shown_libraries "none")
    if(libraries)
      string(REPLACE ";" ", " shown_libraries "${libraries}")
    endif()
    string(CONCAT rule "${unit}/ may use only the public API <flashps/...>, standard headers, its own "
                       "files and the libraries: ${shown_libraries}")
  endif()
  # A folder of sdk/src includes its own files by their path from there ("http/responses.h").
  set(home "")
  if(unit MATCHES "^sdk/src/([^/]+)$")
    set(home ${CMAKE_MATCH_1})
  endif()
  list(TRANSFORM FLASHPS_SOURCE_GLOBS PREPEND ${project_root}/${unit}/ OUTPUT_VARIABLE globs)
  file(GLOB_RECURSE sources ${globs})
  foreach(source IN LISTS sources)
    file(RELATIVE_PATH shown ${project_root} ${source})
    get_filename_component(source_dir ${source} DIRECTORY)
    set(edges "")
    file(STRINGS ${source} lines REGEX "^[ \t]*#[ \t]*include")
    foreach(line IN LISTS lines)
      if(NOT line MATCHES "^[ \t]*#[ \t]*include")
        continue()  # the rest of a line that held a ';' (CMake splits lists there)
      elseif(NOT line MATCHES "#[ \t]*include[ \t]*([<\"])([^>\"]+)[>\"]")
        set_property(GLOBAL APPEND_STRING PROPERTY FLASHPS_LAYERING_VIOLATIONS
                     "\n  ${shown}: ${line} (an include the check cannot read: name the header)")
        continue()
      endif()
      set(quoted FALSE)
      if(CMAKE_MATCH_1 STREQUAL "\"")
        set(quoted TRUE)
      endif()
      set(target ${CMAKE_MATCH_2})
      set(first "")
      if(target MATCHES "^([^/]+)/")
        set(first ${CMAKE_MATCH_1})
      endif()

      # Which file the compiler takes: the including file's folder first (quoted), then the
      # row's own folders, then (in the SDK) sdk/src.
      set(own FALSE)
      if(quoted AND EXISTS ${source_dir}/${target})
        set(own TRUE)
        if(layer)
          file(RELATIVE_PATH edge ${src} ${source_dir}/${target})
          list(APPEND edges ${edge})
        endif()
      elseif(layer AND EXISTS ${src}/${target} AND NOT IS_DIRECTORY ${src}/${target})
        list(APPEND edges ${target})
      endif()
      foreach(dir IN LISTS own_dirs)
        if(EXISTS ${project_root}/${dir}/${target} AND NOT IS_DIRECTORY ${project_root}/${dir}/${target})
          set(own TRUE)
        endif()
      endforeach()
      if(home AND first STREQUAL home)
        set(own TRUE)
      endif()

      set(allowed FALSE)
      set(why "")
      if(target MATCHES "(^|/)\\.\\.(/|$)")
        set(why "a path out of its folder; ")
      elseif(own)
        set(allowed TRUE)
      elseif(first STREQUAL "flashps" OR (first AND IS_DIRECTORY ${src}/${first}))
        list(FIND uses ${first} position)
        list(FIND FLASHPS_LAYER_NEVER_${layer} ${first} never)
        if(NOT position EQUAL -1)
          set(allowed TRUE)
        elseif(layer AND NOT never EQUAL -1)
          string(REPLACE ";" ", " why "${FLASHPS_LAYER_NEVER_${layer}}")
          set(why "${layer}/ never reaches ${why}; ")
        endif()
      elseif(quoted AND target MATCHES "\\.moc$")
        set(allowed TRUE)  # Qt's moc output, generated in the build folder
      elseif(quoted)
        set(why "a quoted include names a file of its own; ")
      elseif(NOT first OR first MATCHES "^(sys|arpa|netinet)$" OR libraries STREQUAL "*")
        set(allowed TRUE)
      else()
        foreach(library IN LISTS libraries)
          if(first MATCHES "^(${library})$")
            set(allowed TRUE)
          endif()
        endforeach()
      endif()
      if(NOT allowed)
        set_property(GLOBAL APPEND_STRING PROPERTY FLASHPS_LAYERING_VIOLATIONS
                     "\n  ${shown}: ${line} (${why}${rule})")
      endif()
    endforeach()
    if(layer)
      file(RELATIVE_PATH key ${src} ${source})
      set_property(GLOBAL PROPERTY FLASHPS_INCLUDES_${key} "${edges}")
      set_property(GLOBAL APPEND PROPERTY FLASHPS_LAYER_FILES_${layer} ${key})
    endif()
  endforeach()
endfunction()

# A NEVER rule over the whole chain of includes: a breadth-first walk from every file of the
# layer. Each forbidden file reached through another folder's header is named once, with a chain
# that leads there (a direct include is already the folder table's violation).
function(_flashps_check_never layer)
  set(never ${FLASHPS_LAYER_NEVER_${layer}})
  get_property(queue GLOBAL PROPERTY FLASHPS_LAYER_FILES_${layer})
  foreach(start IN LISTS queue)
    set(seen_${start} TRUE)
    set(via_${start} "")
  endforeach()
  set(next 0)
  list(LENGTH queue count)
  while(next LESS count)
    list(GET queue ${next} current)
    math(EXPR next "${next} + 1")
    get_property(includes GLOBAL PROPERTY FLASHPS_INCLUDES_${current})
    foreach(included IN LISTS includes)
      if(DEFINED seen_${included})
        continue()
      endif()
      set(seen_${included} TRUE)
      set(via_${included} ${current})
      string(REGEX MATCH "^[^/]+" folder ${included})
      list(FIND never ${folder} position)
      if(position EQUAL -1)
        list(APPEND queue ${included})
        math(EXPR count "${count} + 1")
      elseif(NOT current MATCHES "^${layer}/")
        set(chain ${included})
        set(step ${current})
        while(NOT step STREQUAL "")
          set(chain "${step} -> ${chain}")
          set(step "${via_${step}}")
        endwhile()
        string(REPLACE ";" ", " shown_never "${never}")
        set_property(GLOBAL APPEND_STRING PROPERTY FLASHPS_LAYERING_VIOLATIONS
                     "\n  sdk/src/${chain} (${layer}/ never reaches ${shown_never}, not even through another folder)")
      endif()
    endforeach()
  endwhile()
endfunction()

# project_root: the folder holding sdk/, cli/, desktop_app/ and plugins/. Fails listing every
# violation.
function(flashps_check_layering project_root)
  set(src ${project_root}/sdk/src)
  set_property(GLOBAL PROPERTY FLASHPS_LAYERING_VIOLATIONS "")
  set(violations "")
  file(GLOB layers RELATIVE ${src} ${src}/*)

  # The table itself: a row may not allow what a NEVER rule forbids.
  foreach(layer IN LISTS layers)
    foreach(forbidden IN LISTS FLASHPS_LAYER_NEVER_${layer})
      list(FIND FLASHPS_LAYER_USES_${layer} ${forbidden} position)
      if(NOT position EQUAL -1)
        string(APPEND violations "\n  sdk/layering.cmake: ${layer}/ may use ${forbidden}/, which it must never reach")
      endif()
    endforeach()
  endforeach()

  # Every folder with sources has a row.
  foreach(parent IN LISTS FLASHPS_PLACED_FOLDERS)
    file(GLOB children RELATIVE ${project_root}/${parent} ${project_root}/${parent}/*)
    foreach(child IN LISTS children)
      set(folder ${parent}/${child})
      list(TRANSFORM FLASHPS_SOURCE_GLOBS PREPEND ${project_root}/${folder}/ OUTPUT_VARIABLE globs)
      file(GLOB_RECURSE sources ${globs})
      list(FIND FLASHPS_FRONT_ENDS ${folder} front_end)
      if(NOT IS_DIRECTORY ${project_root}/${folder} OR NOT sources OR NOT front_end EQUAL -1
         OR (parent STREQUAL "sdk/src" AND DEFINED FLASHPS_LAYER_USES_${child}))
        continue()
      endif()
      string(APPEND violations "\n  ${folder}/: a folder with no place in the layering (add it to sdk/layering.cmake)")
    endforeach()
  endforeach()

  foreach(layer IN LISTS layers)
    if(IS_DIRECTORY ${src}/${layer} AND DEFINED FLASHPS_LAYER_USES_${layer})
      set_property(GLOBAL PROPERTY FLASHPS_LAYER_FILES_${layer} "")
      _flashps_check_unit(${project_root} sdk/src/${layer} ${layer} "${FLASHPS_LAYER_USES_${layer}}" "*" "")
    endif()
  endforeach()
  foreach(unit IN LISTS FLASHPS_FRONT_ENDS)
    if(NOT IS_DIRECTORY ${project_root}/${unit})
      string(APPEND violations "\n  ${unit}/: a front end in sdk/layering.cmake that is not there")
      continue()
    endif()
    _flashps_check_unit(${project_root} ${unit} "" "flashps" "${FLASHPS_FRONT_END_LIBRARIES_${unit}}"
                        "${FLASHPS_FRONT_END_OWN_${unit}}")
  endforeach()
  foreach(layer IN LISTS layers)
    if(DEFINED FLASHPS_LAYER_NEVER_${layer} AND DEFINED FLASHPS_LAYER_USES_${layer})
      _flashps_check_never(${layer})
    endif()
  endforeach()

  get_property(found GLOBAL PROPERTY FLASHPS_LAYERING_VIOLATIONS)
  string(APPEND violations "${found}")
  if(violations)
    message(FATAL_ERROR "FlashPS layering: these includes break the rules of sdk/layering.cmake "
                        "(docs/ARCHITECTURE.md):${violations}\nA front end reaches the SDK through "
                        "<flashps/...>; developer commands that need its internals belong in "
                        "flashps-bench (tools/bench).")
  endif()
endfunction()

# Run as a script: cmake -DPROJECT_ROOT=<project> -P sdk/layering.cmake checks a tree;
# cmake -DPRINT_RULES=ON -P sdk/layering.cmake prints the tables, one line a row, for the test
# that compares them with docs/ARCHITECTURE.md.
if(CMAKE_SCRIPT_MODE_FILE AND PROJECT_ROOT)
  flashps_check_layering(${PROJECT_ROOT})
endif()
if(CMAKE_SCRIPT_MODE_FILE AND PRINT_RULES)
  get_cmake_property(names VARIABLES)
  foreach(name IN LISTS names)
    if(name MATCHES "^FLASHPS_LAYER_(USES|NEVER)_(.+)$")
      string(TOLOWER ${CMAKE_MATCH_1} kind)
      string(REPLACE ";" ", " value "${${name}}")
      message("${kind} ${CMAKE_MATCH_2}: ${value}")
    endif()
  endforeach()
  foreach(unit IN LISTS FLASHPS_FRONT_ENDS)
    string(REPLACE ";" ", " libraries "${FLASHPS_FRONT_END_LIBRARIES_${unit}}")
    set(also ${FLASHPS_FRONT_END_OWN_${unit}})
    list(REMOVE_AT also 0)
    string(REPLACE ";" ", " also "${also}")
    message("front ${unit}: ${libraries}; ${also}")
  endforeach()
endif()
