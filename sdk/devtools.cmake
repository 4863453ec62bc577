# flashps_devtools: benchmarks (src/bench), the fixture runner (src/dev) and the trainer
# (src/training). Developer tools reach the SDK's C++ internals, so they link the static library,
# and none of this is in the shipped libflashps.so. Linking flashps_devtools gives a target the
# internal headers (sdk/src); the test suite, flashps-train and the developer CLI link it.
add_library(flashps_devtools STATIC ${FLASHPS_DEVTOOLS_SOURCES})
target_include_directories(flashps_devtools PUBLIC ${CMAKE_CURRENT_SOURCE_DIR}/src)
target_link_libraries(flashps_devtools PUBLIC flashps nlohmann_json::nlohmann_json)
# The same flags and definitions as flashps_objects, so its precompiled header can be reused: GCC
# ignores a precompiled header when a macro defined at its creation is missing.
set_target_properties(flashps_devtools PROPERTIES
  POSITION_INDEPENDENT_CODE ON CXX_VISIBILITY_PRESET hidden VISIBILITY_INLINES_HIDDEN ON)
target_compile_definitions(flashps_devtools PRIVATE $<TARGET_PROPERTY:flashps_objects,COMPILE_DEFINITIONS>)
# cpp-httplib's build defines are compile options of flashps_objects (bench http includes it):
# every source needs them, or GCC ignores the shared precompiled header there.
target_compile_options(flashps_devtools PRIVATE ${FLASHPS_HTTPLIB_CFLAGS_OTHER})
target_precompile_headers(flashps_devtools REUSE_FROM flashps_objects)

# OpenCV's Telea inpainting is the classical baseline of `bench quality`. Only three modules are
# needed (Debian's libopencv-{core,imgproc,photo}-dev, which ship no CMake package config without
# the full libopencv-dev), so they are found directly. Optional.
find_path(OPENCV_INCLUDE_DIR opencv2/photo.hpp PATH_SUFFIXES opencv4)
find_library(OPENCV_PHOTO_LIBRARY NAMES opencv_photo)
find_library(OPENCV_IMGPROC_LIBRARY NAMES opencv_imgproc)
find_library(OPENCV_CORE_LIBRARY NAMES opencv_core)
set(FLASHPS_CLASSICAL_INPAINT_SOURCE ${CMAKE_CURRENT_SOURCE_DIR}/src/bench/classical_inpaint.cpp)
if(FLASHPS_OLD_CXX_ABI)
  message(STATUS "FlashPS: bench quality runs without the Telea baseline (OpenCV's C++ ABI differs from this LibTorch's)")
elseif(OPENCV_INCLUDE_DIR AND OPENCV_PHOTO_LIBRARY AND OPENCV_IMGPROC_LIBRARY AND OPENCV_CORE_LIBRARY)
  # On the one source that uses it, so the other sources keep the shared precompiled header's flags.
  set_property(SOURCE ${FLASHPS_CLASSICAL_INPAINT_SOURCE} APPEND PROPERTY COMPILE_DEFINITIONS FLASHPS_HAVE_OPENCV=1)
  set_property(SOURCE ${FLASHPS_CLASSICAL_INPAINT_SOURCE} APPEND PROPERTY INCLUDE_DIRECTORIES ${OPENCV_INCLUDE_DIR})
  target_link_libraries(flashps_devtools PRIVATE ${OPENCV_PHOTO_LIBRARY} ${OPENCV_IMGPROC_LIBRARY} ${OPENCV_CORE_LIBRARY})
  message(STATUS "FlashPS: Telea baseline from ${OPENCV_PHOTO_LIBRARY}")
else()
  message(STATUS "FlashPS: OpenCV photo module not found; bench quality runs without the Telea baseline")
endif()

# libcurl (what `curl` is) is the second client `bench http` times, beside httplib's: optional.
find_package(CURL QUIET)
if(CURL_FOUND)
  set_property(SOURCE ${CMAKE_CURRENT_SOURCE_DIR}/src/bench/http_bench_client.cpp APPEND PROPERTY
    COMPILE_DEFINITIONS FLASHPS_HAVE_LIBCURL=1)
  target_link_libraries(flashps_devtools PRIVATE CURL::libcurl)
else()
  message(STATUS "FlashPS: libcurl not found; bench http times httplib's client only")
endif()
