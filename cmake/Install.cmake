# Installing TensorPlay and packaging it (included at the end of the
# top-level CMakeLists.txt, once every target exists).
#
# Paths are GNUInstallDirs' (with prefix /usr on Debian, <libdir> is the
# multiarch lib/<triplet>):
#   <libdir>/libtensorplay.so.0 (+ .so link)         component core
#   <prefix>/include/tensorplay/*.h                  core
#   <prefix>/include/tensorplay-plugin/tensorplay/plugin.h
#                                     the plugin header alone (TensorPlay::plugin)
#   <libdir>/cmake/TensorPlay/                       find_package(TensorPlay)
#   <libdir>/pkgconfig/tensorplay.pc, tensorplay-plugin.pc
#   <prefix>/bin/tpc, tp-backends, tp-bench (when built)
#   <prefix>/share/man/man1/tpc.1, tp-backends.1, tp-bench.1
#   <prefix>/share/man/man7/tensorplay-ops.7         the op reference (docs/CMakeLists.txt)
#   <prefix>/share/doc/tensorplay/ops.txt            the same as text
#   <prefix>/share/tensorplay/conformance/           the conformance corpus
#   <prefix>/share/tensorplay/sdk/                   the guide and the template plugin
#   <libdir>/tensorplay/plugins/BACKEND.so           component plugin-BACKEND, one per
#     (+ stax-gemm-*.prebuilt beside stax-llvm.so: its prebuilt micro-kernels)
#   <prefix>/share/tensorplay/backends.d/BACKEND.ini in-tree plugin that is built
#
# `cpack -G DEB` in the build folder makes one package per component:
# tensorplay (core, tools, SDK) and tensorplay-plugin-BACKEND per built plugin,
# each plugin package with its own INI, so the registry of an install lists
# exactly the plugins installed. Third-party backend packages put their INI in
# /etc/tensorplay/backends.d (see sdk/README.md). Every file is installed once
# (tests/sdk/run_sdk_test.sh checks install_manifest.txt).
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
# They find libtensorplay through $ORIGIN/../<libdir> unless <libdir> is one
# the dynamic linker searches anyway (a /usr install: no RPATH, as Debian
# policy wants).
list(FIND CMAKE_C_IMPLICIT_LINK_DIRECTORIES ${CMAKE_INSTALL_FULL_LIBDIR} TP_LIBDIR_IS_SYSTEM)
foreach(tool tpc tp-backends tp-bench)
  if(TARGET ${tool})
    if(TP_LIBDIR_IS_SYSTEM LESS 0)
      set_target_properties(${tool} PROPERTIES INSTALL_RPATH "$ORIGIN/../${CMAKE_INSTALL_LIBDIR}")
    endif()
    install(TARGETS ${tool} EXPORT TensorPlayTargets RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR}
            COMPONENT core)
  endif()
endforeach()
# Man pages install gzip-compressed (as Debian policy wants; man reads them).
set(TP_MAN1_COMPRESSED "")
foreach(page tpc tp-backends tp-bench)
  set(compressed ${PROJECT_BINARY_DIR}/man/${page}.1.gz)
  add_custom_command(OUTPUT ${compressed}
    COMMAND ${CMAKE_COMMAND} -E copy ${PROJECT_SOURCE_DIR}/docs/man/${page}.1
            ${PROJECT_BINARY_DIR}/man/${page}.1
    COMMAND gzip -9nf ${PROJECT_BINARY_DIR}/man/${page}.1
    DEPENDS ${PROJECT_SOURCE_DIR}/docs/man/${page}.1 VERBATIM)
  list(APPEND TP_MAN1_COMPRESSED ${compressed})
endforeach()
add_custom_target(man_pages ALL DEPENDS ${TP_MAN1_COMPRESSED})
install(FILES ${TP_MAN1_COMPRESSED} DESTINATION ${CMAKE_INSTALL_MANDIR}/man1 COMPONENT core)

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
    install(FILES ${PROJECT_BINARY_DIR}/conf/installed/${plugin}.ini
            DESTINATION ${TP_BACKENDS_INSTALL_DIR} COMPONENT plugin-${plugin})
    # stax's prebuilt micro-kernel objects go beside the plugin (it looks there)
    get_property(tp_plugin_extra_files GLOBAL PROPERTY STAX_PREBUILT_FILES)
    if(plugin STREQUAL "stax" AND tp_plugin_extra_files)
      install(FILES ${tp_plugin_extra_files} DESTINATION ${TP_PLUGIN_INSTALL_DIR}
              COMPONENT plugin-${plugin})
    endif()
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
# Debian packages: configure with -DCMAKE_INSTALL_PREFIX=/usr (the library
# has its prefix built in: the registry's search path; GNUInstallDirs then
# picks the multiarch libdir), build, `cpack -G DEB`
# (tests/packaging/deb-test.sh does all of it and checks with lintian).
set(CPACK_PACKAGE_NAME tensorplay)
set(CPACK_PACKAGE_VENDOR "TensorPlay")
set(CPACK_PACKAGE_CONTACT "TensorPlay maintainers <tensorplay@example.org>")
# No CPACK_PACKAGE_DESCRIPTION_SUMMARY: CPack would put it before every
# package's own first line (its summary); CPack indents the other lines.
set(CPACK_PACKAGE_VERSION ${PROJECT_VERSION})
set(CPACK_PACKAGING_INSTALL_PREFIX ${CMAKE_INSTALL_PREFIX})
set(CPACK_DEB_COMPONENT_INSTALL ON)
set(CPACK_DEBIAN_FILE_NAME DEB-DEFAULT)
set(CPACK_DEBIAN_PACKAGE_RELEASE 1)
set(CPACK_DEBIAN_PACKAGE_SECTION libs)
# The shared libraries' dependencies (libinih1, libllvm19, ocl-icd-libopencl1,
# libc6, ...) come from dpkg-shlibdeps; only the core dependency is spelled.
set(CPACK_DEBIAN_PACKAGE_SHLIBDEPS ON)
set(CPACK_DEBIAN_PACKAGE_GENERATE_SHLIBS ON)
set(CPACK_STRIP_FILES ON)
# The core package runs ldconfig through a trigger (activate-noawait
# ldconfig) rather than CPack's postinst/postrm calls, which lintian
# refuses: listing our own (empty) maintainer scripts stops CPack from
# writing them.
set(CPACK_DEBIAN_CORE_PACKAGE_CONTROL_EXTRA ${CMAKE_CURRENT_LIST_DIR}/debian/triggers
    ${CMAKE_CURRENT_LIST_DIR}/debian/postinst ${CMAKE_CURRENT_LIST_DIR}/debian/postrm)
set(CPACK_DEBIAN_PACKAGE_CONTROL_STRICT_PERMISSION ON)
set(CPACK_DEBIAN_CORE_PACKAGE_NAME tensorplay)
set(CPACK_DEBIAN_CORE_PACKAGE_SECTION libdevel)
set(CPACK_DEBIAN_CORE_DESCRIPTION "tensor compiler framework: core library, tools and plugin SDK
libtensorplay (tensors, the IR, the compile frontend, the backend
registry), its headers, CMake and pkg-config files, the tools tpc,
tp-backends and tp-bench, the op reference (tensorplay-ops(7)) and the
plugin SDK (guide, conformance corpus, template plugin).")
set(CPACK_COMPONENTS_ALL core)
set(TP_DEB_DESCRIPTION_stax "LLVM JIT for CPUs, the default backend")
set(TP_DEB_DESCRIPTION_opencl "OpenCL C code generation through the ICD loader")
set(TP_DEB_DESCRIPTION_cuda "CUDA C through NVRTC and the CUDA driver API")
foreach(plugin ${TP_INSTALLED_PLUGINS})
  list(APPEND CPACK_COMPONENTS_ALL plugin-${plugin})
  string(TOUPPER "PLUGIN-${plugin}" TP_COMPONENT_UPPER)
  set(CPACK_DEBIAN_${TP_COMPONENT_UPPER}_PACKAGE_NAME tensorplay-plugin-${plugin})
  set(CPACK_DEBIAN_${TP_COMPONENT_UPPER}_PACKAGE_DEPENDS
      "tensorplay (= ${PROJECT_VERSION}-${CPACK_DEBIAN_PACKAGE_RELEASE})")
  set(CPACK_DEBIAN_${TP_COMPONENT_UPPER}_DESCRIPTION
      "${plugin} backend plugin for the TensorPlay tensor compiler
${TP_DEB_DESCRIPTION_${plugin}}. Installs the plugin and its
registry entry (share/tensorplay/backends.d/${plugin}.ini).")
endforeach()
# cuda.so dlopen()s libcuda and libnvrtc, which a Debian package cannot
# depend on without non-free: it loads and reports them missing.

# Each package's /usr/share/doc/PACKAGE: copyright and changelog.Debian.gz.
string(TIMESTAMP TP_DEB_DATE "%a, %d %b %Y %H:%M:%S +0000" UTC)
foreach(component ${CPACK_COMPONENTS_ALL})
  if(component STREQUAL "core")
    set(TP_DEB_PACKAGE tensorplay)
  else()
    string(REPLACE "plugin-" "tensorplay-plugin-" TP_DEB_PACKAGE ${component})
  endif()
  set(TP_DEB_DOC ${PROJECT_BINARY_DIR}/debian-doc/${TP_DEB_PACKAGE})
  configure_file(${CMAKE_CURRENT_LIST_DIR}/debian/changelog.in ${TP_DEB_DOC}/changelog.Debian @ONLY)
  execute_process(COMMAND gzip -9nf ${TP_DEB_DOC}/changelog.Debian)
  install(FILES ${CMAKE_CURRENT_LIST_DIR}/debian/copyright ${TP_DEB_DOC}/changelog.Debian.gz
          DESTINATION ${CMAKE_INSTALL_DATADIR}/doc/${TP_DEB_PACKAGE} COMPONENT ${component})
endforeach()
include(CPack)
cpack_add_component(core DISPLAY_NAME "TensorPlay core, tools and SDK" REQUIRED)
foreach(plugin ${TP_INSTALLED_PLUGINS})
  cpack_add_component(plugin-${plugin} DISPLAY_NAME "TensorPlay ${plugin} backend" DEPENDS core)
endforeach()
