# The ONNX importer (core/onnx): protobuf-c code generated at build time by
# protoc-c from the onnx.proto schema that Debian's libonnx-dev installs, so
# the schema is never copied into the tree and no protobuf decoding is written
# by hand. TP_WITH_ONNX is auto-detected (ON when protoc-c, libprotobuf-c and
# onnx.proto are all found); forcing it ON without them stops with the
# packages to install. When OFF, tp_graph_load_onnx reports that the build
# has no importer (core/onnx/onnx_unavailable.c).
#
# Sets TP_ONNX_CORE_SOURCES (the importer's sources, generated code included)
# and, when ON, links libprotobuf-c into every target defined after it.
find_program(TP_PROTOC_C NAMES protoc-c)
pkg_check_modules(PROTOBUF_C IMPORTED_TARGET libprotobuf-c)
find_file(TP_ONNX_PROTO onnx.proto PATHS /usr/include/onnx /usr/local/include/onnx NO_DEFAULT_PATH)
if(TP_PROTOC_C AND PROTOBUF_C_FOUND AND TP_ONNX_PROTO)
  set(_tp_onnx_default ON)
else()
  set(_tp_onnx_default OFF)
endif()
option(TP_WITH_ONNX "Build the ONNX importer (needs protobuf-c-compiler libprotobuf-c-dev libonnx-dev)"
       ${_tp_onnx_default})
if(TP_WITH_ONNX AND NOT _tp_onnx_default)
  message(FATAL_ERROR "TP_WITH_ONNX=ON but protoc-c (${TP_PROTOC_C}), libprotobuf-c "
                      "(${PROTOBUF_C_FOUND}) or onnx.proto (${TP_ONNX_PROTO}) is missing: install "
                      "protobuf-c-compiler libprotobuf-c-dev libonnx-dev")
endif()
message(STATUS "TensorPlay: ONNX importer (TP_WITH_ONNX): ${TP_WITH_ONNX} (schema: ${TP_ONNX_PROTO})")

file(GLOB TP_ONNX_CORE_SOURCES CONFIGURE_DEPENDS ${PROJECT_SOURCE_DIR}/core/onnx/*.c)
if(TP_WITH_ONNX)
  list(FILTER TP_ONNX_CORE_SOURCES EXCLUDE REGEX "onnx_unavailable\\.c$")
  get_filename_component(_tp_onnx_proto_dir ${TP_ONNX_PROTO} DIRECTORY)
  set(TP_ONNX_GENERATED_DIR ${PROJECT_BINARY_DIR}/generated/onnx)
  file(MAKE_DIRECTORY ${TP_ONNX_GENERATED_DIR})
  add_custom_command(
    OUTPUT ${TP_ONNX_GENERATED_DIR}/onnx.pb-c.c ${TP_ONNX_GENERATED_DIR}/onnx.pb-c.h
    COMMAND ${TP_PROTOC_C} --c_out=${TP_ONNX_GENERATED_DIR} --proto_path=${_tp_onnx_proto_dir}
            ${TP_ONNX_PROTO}
    DEPENDS ${TP_ONNX_PROTO}
    COMMENT "protoc-c: ${TP_ONNX_PROTO}"
    VERBATIM)
  # Generated code: not ours to keep warning-free.
  set_source_files_properties(${TP_ONNX_GENERATED_DIR}/onnx.pb-c.c PROPERTIES COMPILE_OPTIONS "-w")
  list(APPEND TP_ONNX_CORE_SOURCES ${TP_ONNX_GENERATED_DIR}/onnx.pb-c.c)
  include_directories(${TP_ONNX_GENERATED_DIR})
  link_libraries(PkgConfig::PROTOBUF_C)
  add_compile_definitions(TP_WITH_ONNX=1)
else()
  list(FILTER TP_ONNX_CORE_SOURCES INCLUDE REGEX "(onnx_unavailable|onnx_names)\\.c$")
endif()
