# Installing TensorPlay and packaging it (included at the end of the
# top-level CMakeLists.txt, once every target exists).
#
#   <prefix>/lib/libtensorplay.so.0 (+ .so link)     component core
#   <prefix>/include/tensorplay/*.h                  core
#   <prefix>/include/tensorplay-plugin/tensorplay/plugin.h
#                                     the plugin header alone (TensorPlay::plugin)
#   <prefix>/lib/cmake/TensorPlay/                   find_package(TensorPlay)
#   <prefix>/lib/pkgconfig/tensorplay.pc, tensorplay-plugin.pc
#   <prefix>/bin/tpc, tp-backends, tp-bench (when built)
#   <prefix>/share/man/man1/tpc.1, tp-backends.1
#   <prefix>/share/tensorplay/backends.d/tensorplay.ini   (conf/CMakeLists.txt)
#   <prefix>/share/tensorplay/conformance/               the conformance corpus
#   <prefix>/share/tensorplay/sdk/                       the guide and the template plugin
#   <prefix>/lib/tensorplay/plugins/*.so             component plugin-BACKEND, one per
#                                                    in-tree plugin that is built
#
# `cpack -G DEB` in the build folder makes one package per component:
# tensorplay (core, tools, SDK) and tensorplay-plugin-BACKEND per built plugin.
include(CMakePackageConfigHelpers)

set(TP_CMAKE_INSTALL_DIR ${CMAKE_INSTALL_LIBDIR}/cmake/TensorPlay)
set(TP_PLUGIN_HEADER_INSTALL_DIR ${CMAKE_INSTALL_INCLUDEDIR}/tensorplay-plugin)
set(TP_CONFORMANCE_INSTALL_DIR ${CMAKE_INSTALL_DATADIR}/tensorplay/conformance)
set(TP_SDK_INSTALL_DIR ${CMAKE_INSTALL_DATADIR}/tensorplay/sdk)
file(STRINGS ${PROJECT_SOURCE_DIR}/include/tensorplay/plugin.h TP_CONTRACT_LINE
     REGEX "^#define TP_BACKEND_CONTRACT_VERSION [0-9]+")
string(REGEX REPLACE ".* ([0-9]+)$" "\\1" TP_CONTRACT_VERSION "${TP_CONTRACT_LINE}")

# In-tree plugins this file knows how to package, as TARGET=BACKEND (their
# targets are defined by plugins/*/CMakeLists.txt when their toolkit is found;
# the backend name names the component and the package).
set(TP_KNOWN_PLUGINS stax-llvm=stax opencl=opencl cuda_plugin=cuda cuda=cuda)

# ---- the library and the headers ---------------------------------------------
add_library(TensorPlay::tensorplay ALIAS tensorplay)
install(TARGETS tensorplay EXPORT TensorPlayTargets
        LIBRARY DESTINATION ${CMAKE_INSTALL_LIBDIR} COMPONENT core NAMELINK_COMPONENT core)
file(GLOB TP_PUBLIC_HEADERS ${PROJECT_SOURCE_DIR}/include/tensorplay/*.h)
install(FILES ${TP_PUBLIC_HEADERS} DESTINATION ${CMAKE_INSTALL_INCLUDEDIR}/tensorplay
        COMPONENT core)

# TensorPlay::plugin: header-only, and its include folder holds plugin.h and
# plugin_ops.h alone, so a plugin cannot include the core's other headers by mistake.
add_library(tensorplay_plugin_header INTERFACE)
add_library(TensorPlay::plugin ALIAS tensorplay_plugin_header)
set_target_properties(tensorplay_plugin_header PROPERTIES EXPORT_NAME plugin)
target_include_directories(tensorplay_plugin_header INTERFACE
  $<BUILD_INTERFACE:${PROJECT_SOURCE_DIR}/include>
  $<INSTALL_INTERFACE:${TP_PLUGIN_HEADER_INSTALL_DIR}>)
install(TARGETS tensorplay_plugin_header EXPORT TensorPlayTargets COMPONENT core)
install(FILES ${PROJECT_SOURCE_DIR}/include/tensorplay/plugin.h
              ${PROJECT_SOURCE_DIR}/include/tensorplay/plugin_ops.h
        DESTINATION ${TP_PLUGIN_HEADER_INSTALL_DIR}/tensorplay COMPONENT core)

# ---- the tools -----------------------------------------------------------------
foreach(tool tpc tp-backends tp-bench)
  if(TARGET ${tool})
    set_target_properties(${tool} PROPERTIES INSTALL_RPATH "$ORIGIN/../${CMAKE_INSTALL_LIBDIR}")
    install(TARGETS ${tool} EXPORT TensorPlayTargets RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR}
            COMPONENT core)
  endif()
endforeach()
install(FILES ${PROJECT_SOURCE_DIR}/docs/man/tpc.1 ${PROJECT_SOURCE_DIR}/docs/man/tp-backends.1
        DESTINATION ${CMAKE_INSTALL_MANDIR}/man1 COMPONENT core)

# ---- the SDK: conformance corpus, guide, template plugin ---------------------------
# Where `tp-backends check --conformance` finds the corpus: the source tree
# when it runs from this build tree, else next to the installed tool, else here.
if(TARGET tp-backends)
  target_compile_definitions(tp-backends PRIVATE
    TP_CONFORMANCE_SOURCE_DIR="${PROJECT_SOURCE_DIR}/sdk/conformance"
    TP_CONFORMANCE_BUILD_DIR="${PROJECT_BINARY_DIR}"
    TP_CONFORMANCE_INSTALL_DIR="${CMAKE_INSTALL_FULL_DATADIR}/tensorplay/conformance")
endif()
install(DIRECTORY ${PROJECT_SOURCE_DIR}/sdk/conformance/ DESTINATION ${TP_CONFORMANCE_INSTALL_DIR}
        COMPONENT core FILES_MATCHING PATTERN "*.tpir" PATTERN "README.md")
install(FILES ${PROJECT_SOURCE_DIR}/sdk/README.md DESTINATION ${TP_SDK_INSTALL_DIR} COMPONENT core)
install(DIRECTORY ${PROJECT_SOURCE_DIR}/sdk/template DESTINATION ${TP_SDK_INSTALL_DIR}
        COMPONENT core PATTERN "build*" EXCLUDE)

# ---- in-tree plugins: one component each ----------------------------------------------
set(TP_INSTALLED_PLUGINS "")
foreach(pair ${TP_KNOWN_PLUGINS})
  string(REPLACE "=" ";" pair "${pair}")
  list(GET pair 0 target)
  list(GET pair 1 plugin)
  if(TARGET ${target} AND NOT plugin IN_LIST TP_INSTALLED_PLUGINS)
    install(TARGETS ${target} LIBRARY DESTINATION ${TP_PLUGIN_INSTALL_DIR}
            COMPONENT plugin-${plugin})
    list(APPEND TP_INSTALLED_PLUGINS ${plugin})
  endif()
endforeach()
message(STATUS "TensorPlay: plugins installed and packaged: ${TP_INSTALLED_PLUGINS}")

# ---- find_package(TensorPlay) ---------------------------------------------------------
install(EXPORT TensorPlayTargets NAMESPACE TensorPlay:: DESTINATION ${TP_CMAKE_INSTALL_DIR}
        COMPONENT core)
set(TP_BACKENDS_RELDIR ${TP_BACKENDS_INSTALL_DIR})
configure_package_config_file(${CMAKE_CURRENT_LIST_DIR}/TensorPlayConfig.cmake.in
  ${PROJECT_BINARY_DIR}/cmake/TensorPlayConfig.cmake
  INSTALL_DESTINATION ${TP_CMAKE_INSTALL_DIR}
  PATH_VARS CMAKE_INSTALL_INCLUDEDIR TP_PLUGIN_HEADER_INSTALL_DIR TP_PLUGIN_INSTALL_DIR
            TP_BACKENDS_RELDIR TP_CONFORMANCE_INSTALL_DIR)
# 0.x: a minor release may change the API, so only the same minor matches.
write_basic_package_version_file(${PROJECT_BINARY_DIR}/cmake/TensorPlayConfigVersion.cmake
  VERSION ${PROJECT_VERSION} COMPATIBILITY SameMinorVersion)
install(FILES ${PROJECT_BINARY_DIR}/cmake/TensorPlayConfig.cmake
              ${PROJECT_BINARY_DIR}/cmake/TensorPlayConfigVersion.cmake
        DESTINATION ${TP_CMAKE_INSTALL_DIR} COMPONENT core)

# ---- pkg-config ------------------------------------------------------------------------
# prefix is written relative to the .pc file's folder (${pcfiledir}), so the
# files stay right when the installed tree moves.
file(RELATIVE_PATH TP_PC_PREFIX_FROM_PCDIR ${CMAKE_INSTALL_FULL_LIBDIR}/pkgconfig
     ${CMAKE_INSTALL_PREFIX})
string(REGEX REPLACE "/$" "" TP_PC_PREFIX_FROM_PCDIR "${TP_PC_PREFIX_FROM_PCDIR}")
foreach(pc tensorplay tensorplay-plugin)
  configure_file(${CMAKE_CURRENT_LIST_DIR}/${pc}.pc.in ${PROJECT_BINARY_DIR}/pkgconfig/${pc}.pc @ONLY)
  install(FILES ${PROJECT_BINARY_DIR}/pkgconfig/${pc}.pc
          DESTINATION ${CMAKE_INSTALL_LIBDIR}/pkgconfig COMPONENT core)
endforeach()

# ---- CPack: .deb per component ----------------------------------------------------------
set(CPACK_PACKAGE_NAME tensorplay)
set(CPACK_PACKAGE_VENDOR "TensorPlay")
set(CPACK_PACKAGE_CONTACT "TensorPlay maintainers <tensorplay@localhost>")
set(CPACK_PACKAGE_DESCRIPTION_SUMMARY "TensorPlay tensor compiler framework")
set(CPACK_PACKAGE_VERSION ${PROJECT_VERSION})
# The library has its install prefix built in (the registry's search path):
# the packages install under that same prefix.
set(CPACK_PACKAGING_INSTALL_PREFIX ${CMAKE_INSTALL_PREFIX})
set(CPACK_DEB_COMPONENT_INSTALL ON)
set(CPACK_DEBIAN_FILE_NAME DEB-DEFAULT)
set(CPACK_DEBIAN_PACKAGE_SHLIBDEPS OFF)
set(CPACK_DEBIAN_CORE_PACKAGE_NAME tensorplay)
set(CPACK_DEBIAN_CORE_PACKAGE_DEPENDS "libinih1")
set(CPACK_COMPONENTS_ALL core)
foreach(plugin ${TP_INSTALLED_PLUGINS})
  list(APPEND CPACK_COMPONENTS_ALL plugin-${plugin})
  string(TOUPPER "PLUGIN-${plugin}" TP_COMPONENT_UPPER)
  set(CPACK_DEBIAN_${TP_COMPONENT_UPPER}_PACKAGE_NAME tensorplay-plugin-${plugin})
  set(CPACK_DEBIAN_${TP_COMPONENT_UPPER}_PACKAGE_DEPENDS "tensorplay (= ${PROJECT_VERSION})")
endforeach()
set(CPACK_DEBIAN_PLUGIN-STAX_PACKAGE_DEPENDS "tensorplay (= ${PROJECT_VERSION}), libllvm19")
set(CPACK_DEBIAN_PLUGIN-OPENCL_PACKAGE_DEPENDS "tensorplay (= ${PROJECT_VERSION}), ocl-icd-libopencl1")
include(CPack)
cpack_add_component(core DISPLAY_NAME "TensorPlay core, tools and SDK" REQUIRED)
foreach(plugin ${TP_INSTALLED_PLUGINS})
  cpack_add_component(plugin-${plugin} DISPLAY_NAME "TensorPlay ${plugin} backend" DEPENDS core)
endforeach()
