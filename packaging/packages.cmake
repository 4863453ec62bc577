# CPack: one Debian package per install COMPONENT (Debian's naming), and one .tar.gz of them all.
#
#   component    .deb                    what
#   runtime      libflashps<ABI>         libflashps.so.<ABI> (its SONAME's number), the bundled model
#   development  libflashps-dev          headers, CMake package, flashps.pc, libflashps.a, samples
#   tools        flashps                 flashps (serve, bench, plugin), flashps-plugin-runner, the
#                                        first-party filters, the systemd unit: no Qt, for servers
#   plugin-host  libflashps-plugin-host  libflashps_plugin_host.so + plugin_host.hpp (FlashPS::plugin_host)
#   paint        flashps-paint           the Qt 6 editor, its .desktop file and icon
#   gimp         gimp-plugin-flashps     the GIMP 2.10 plug-in (one package for a GIMP user)
#   gimp3        gimp3-plugin-flashps    the GIMP 3 plug-in, where libgimp-3.0 is there to build it
#   krita        krita-plugin-flashps    the Krita Python plugin
#
# Depends: dpkg-shlibdeps on each package's ELF files (Qt only in flashps-paint, libgimp only in
# gimp-plugin-flashps), plus the lines below. dpkg-shlibdeps cannot name the package of a library
# built here (libflashps.so.<ABI>: CPack lets it pass with --ignore-missing-info), so every package
# built from this tree names libflashps<ABI> at this exact version by hand, as Debian's
# (= ${binary:Version}) does. Only components that install something become packages (a gimp3
# component that was not built is left out).
get_target_property(FLASHPS_ABI_VERSION flashps_shared SOVERSION)  # sdk/CMakeLists.txt: from common.h
set(FLASHPS_DEB_VERSION ${PROJECT_VERSION})
set(FLASHPS_DEB_RUNTIME "libflashps${FLASHPS_ABI_VERSION} (= ${FLASHPS_DEB_VERSION})")
set(FLASHPS_DEB_TOOLS "flashps (= ${FLASHPS_DEB_VERSION})")

set(CPACK_PACKAGE_NAME flashps)
set(CPACK_PACKAGE_VENDOR "FlashPS")
# No CPACK_PACKAGE_DESCRIPTION_SUMMARY: CPackDeb would put it above every package's own summary.
set(CPACK_PACKAGE_VERSION ${PROJECT_VERSION})
set(CPACK_GENERATOR "TGZ;DEB")
set(CPACK_DEB_COMPONENT_INSTALL ON)
set(CPACK_COMPONENTS_GROUPING IGNORE)           # one package per component
set(CPACK_ARCHIVE_COMPONENT_INSTALL OFF)        # the .tar.gz: one archive with every component
set(CPACK_DEBIAN_PACKAGE_MAINTAINER "FlashPS developers")
set(CPACK_DEBIAN_FILE_NAME DEB-DEFAULT)         # <package>_<version>_<arch>.deb
set(CPACK_DEBIAN_PACKAGE_SHLIBDEPS ON)
# Where dpkg-shlibdeps finds the libraries built here that the packaged files need.
set(CPACK_DEBIAN_PACKAGE_SHLIBDEPS_PRIVATE_DIRS ${PROJECT_BINARY_DIR}/sdk ${PROJECT_BINARY_DIR}/lib)

# Every installed file belongs to a package: an install() without COMPONENT would land in
# "Unspecified" and in no .deb.
get_cmake_property(FLASHPS_INSTALL_COMPONENTS COMPONENTS)
if("Unspecified" IN_LIST FLASHPS_INSTALL_COMPONENTS)
  message(FATAL_ERROR "packaging: an install() has no COMPONENT (see the table in packaging/packages.cmake)")
endif()
set(CPACK_COMPONENTS_ALL ${FLASHPS_INSTALL_COMPONENTS})

# flashps_deb_package(<component> <package> <section> <summary> [DEPENDS <deps>] [RECOMMENDS <r>]
#                     [ARCHITECTURE all])
function(flashps_deb_package component package section summary)
  cmake_parse_arguments(DEB "" "DEPENDS;RECOMMENDS;ARCHITECTURE" "" ${ARGN})
  string(TOUPPER ${component} key)
  set(CPACK_DEBIAN_${key}_PACKAGE_NAME ${package} PARENT_SCOPE)
  set(CPACK_DEBIAN_${key}_PACKAGE_SECTION ${section} PARENT_SCOPE)
  set(CPACK_COMPONENT_${key}_DESCRIPTION "${summary}" PARENT_SCOPE)
  set(CPACK_DEBIAN_${key}_PACKAGE_DEPENDS "${DEB_DEPENDS}" PARENT_SCOPE)
  set(CPACK_DEBIAN_${key}_PACKAGE_RECOMMENDS "${DEB_RECOMMENDS}" PARENT_SCOPE)
  if(DEB_ARCHITECTURE)
    set(CPACK_DEBIAN_${key}_PACKAGE_ARCHITECTURE ${DEB_ARCHITECTURE} PARENT_SCOPE)
    set(CPACK_DEBIAN_${key}_PACKAGE_SHLIBDEPS OFF PARENT_SCOPE)
  endif()
endfunction()

# OpenBLAS by hand: LibTorch links the generic libblas.so.3, and the reference BLAS that would
# otherwise provide it is ~15x slower.
flashps_deb_package(runtime libflashps${FLASHPS_ABI_VERSION} libs
  "FlashPS generative image editing library (runtime)
libflashps.so.${FLASHPS_ABI_VERSION}, the C API of FlashPS, and the bundled default model."
  DEPENDS "libopenblas0-openmp")
# The shlibs file of a Debian shared library package (libflashps<ABI>, libflashps-plugin-host;
# CPack has no per-component switch), so packages built elsewhere get ">= this version".
set(CPACK_DEBIAN_PACKAGE_GENERATE_SHLIBS ON)
set(CPACK_DEBIAN_PACKAGE_GENERATE_SHLIBS_POLICY ">=")
# The static library's own dependencies (find_package(FlashPS COMPONENTS static)) are suggested:
# the shared library needs none of them.
flashps_deb_package(development libflashps-dev libdevel
  "FlashPS generative image editing library (development files)
Headers (flashps/flashps.h, flashps/flashps.hpp, flashps/plugin.h), the CMake package
(find_package(FlashPS)), pkg-config's flashps.pc, the static library and consumer samples."
  DEPENDS "${FLASHPS_DEB_RUNTIME}")
set(CPACK_DEBIAN_DEVELOPMENT_PACKAGE_SUGGESTS
  "libtorch-dev, libsqlite3-dev, libpng-dev, libjpeg-dev, libicu-dev, libxxhash-dev, libcpp-httplib-dev, libdnnl-dev")
flashps_deb_package(tools flashps graphics
  "FlashPS command-line tools and HTTP server
flashps (edit, serve, plugin, bench), flashps-plugin-runner and the first-party filter plugins.
Needs no Qt: for servers."
  DEPENDS "${FLASHPS_DEB_RUNTIME}")
# The runner and the first-party filters it finds are in flashps.
flashps_deb_package(plugin-host libflashps-plugin-host libdevel
  "FlashPS plugin host library
libflashps_plugin_host.so and flashps/plugin_host.hpp (CMake: find_package(FlashPS COMPONENTS
plugin_host), target FlashPS::plugin_host): find filter plugins and run them on an image."
  DEPENDS "${FLASHPS_DEB_RUNTIME}, libflashps-dev (= ${FLASHPS_DEB_VERSION}), ${FLASHPS_DEB_TOOLS}")
flashps_deb_package(paint flashps-paint graphics
  "FlashPS Paint: paint a mask and regenerate it
A Qt 6 editor: paint a mask over an image, regenerate it with FlashPS, run filter plugins."
  DEPENDS "${FLASHPS_DEB_RUNTIME}, ${FLASHPS_DEB_TOOLS}")
flashps_deb_package(gimp gimp-plugin-flashps graphics
  "FlashPS Generative Fill for GIMP 2.10
Filters > FlashPS > Generative Fill: regenerates the selection into a new layer with a mask."
  DEPENDS "${FLASHPS_DEB_RUNTIME}, gimp (>= 2.10)")
flashps_deb_package(gimp3 gimp3-plugin-flashps graphics
  "FlashPS Generative Fill for GIMP 3
Filters > FlashPS > Generative Fill: regenerates the selection into a new layer with a mask."
  DEPENDS "${FLASHPS_DEB_RUNTIME}, gimp (>= 3.0)")
# Python: no ELF file. It talks to a `flashps serve`, here or on another machine.
flashps_deb_package(krita krita-plugin-flashps graphics
  "FlashPS docker for Krita
Regenerates the selection with a FlashPS server (flashps serve). Enable it in Settings >
Configure Krita > Python Plugin Manager."
  DEPENDS "krita (>= 1:5), python3-pyqt5" RECOMMENDS "${FLASHPS_DEB_TOOLS}" ARCHITECTURE all)

include(CPack)
