# flashps_check_public_includes(SOURCES DIR): stops configuration with the file, line and include
# when a source uses a header outside the public surface: allowed are <flashps/...>, CLI11
# (<CLI/...>), <nlohmann/...>, system headers without a folder (<cstdio>, <unistd.h>) or under
# sys/, and quoted includes of files in DIR itself (the CLI's own headers).
function(flashps_check_public_includes sources dir)
  foreach(source IN LISTS sources)
    file(STRINGS ${source} lines REGEX "^[ \t]*#[ \t]*include")
    foreach(line IN LISTS lines)
      string(REGEX MATCH "include[ \t]*([<\"][^>\"]*[>\"])" matched "${line}")
      set(target "${CMAKE_MATCH_1}")
      set(allowed FALSE)
      if(target MATCHES "^<(flashps|CLI|nlohmann)/")
        set(allowed TRUE)
      elseif(target MATCHES "^<sys/[a-z_]+\\.h>$" OR target MATCHES "^<[a-z_0-9]+(\\.h)?>$")
        set(allowed TRUE)
      elseif(target MATCHES "^\"([^\"/]+)\"$")
        # A quoted include must be one of the CLI's own files (not a path into sdk/src).
        get_filename_component(source_dir ${source} DIRECTORY)
        if(EXISTS ${dir}/${CMAKE_MATCH_1} OR EXISTS ${source_dir}/${CMAKE_MATCH_1})
          set(allowed TRUE)
        endif()
      endif()
      if(NOT allowed)
        file(RELATIVE_PATH shown ${PROJECT_SOURCE_DIR} ${source})
        message(FATAL_ERROR "${shown}: #include ${target}: the CLI may use only the public API "
                            "(<flashps/...>), CLI11, nlohmann_json and standard headers; SDK internals "
                            "belong in flashps-bench (tools/bench)")
      endif()
    endforeach()
  endforeach()
endfunction()
