# The public op list for plugins, <tensorplay/plugin_ops.h>, made from the
# core's op table (core/ops/op_list.def). The header is committed: op ids are
# part of the plugin ABI (a plugin binary compares them), so a change to the
# list must show up in review, and an id that changes breaks the build.
#
#   include(cmake/PluginOps.cmake)  at configure time: regenerates the header
#       into the build tree and stops with instructions when the committed
#       one differs.
#   cmake -DTP_WRITE=ON -P cmake/PluginOps.cmake   rewrites the committed
#       header (scripts/gen-plugin-ops.sh), refusing to renumber an op.
cmake_minimum_required(VERSION 3.20)
get_filename_component(_tp_ops_root "${CMAKE_CURRENT_LIST_DIR}/.." ABSOLUTE)
set(_tp_ops_def "${_tp_ops_root}/core/ops/op_list.def")
set(_tp_ops_header "${_tp_ops_root}/include/tensorplay/plugin_ops.h")

function(_tp_ops_generate out_text out_ids)
  file(STRINGS "${_tp_ops_def}" lines REGEX "^TP_OP\\(")
  set(index 0)
  set(defines "")
  set(list_entries "")
  set(ids "")
  foreach(line IN LISTS lines)
    if(NOT line MATCHES "^TP_OP\\(([A-Z0-9_]+), *\"([a-z0-9_]+)\", *([A-Z]+), *([0-9]+), *([0-9]+),")
      message(FATAL_ERROR "${_tp_ops_def}: cannot read the op line '${line}'")
    endif()
    set(id ${CMAKE_MATCH_1})
    set(name ${CMAKE_MATCH_2})
    set(kind ${CMAKE_MATCH_3})
    set(min_arity ${CMAKE_MATCH_4})
    set(max_arity ${CMAKE_MATCH_5})
    string(LENGTH "${id}" len)
    math(EXPR pad "22 - ${len}")
    if(pad LESS 1)
      set(pad 1)
    endif()
    string(REPEAT " " ${pad} spaces)
    string(APPEND defines "#define TP_PLUGIN_OP_${id}${spaces}${index}\n")
    string(APPEND list_entries "    X(${id}, \"${name}\", ${kind}, ${min_arity}, ${max_arity}) \\\n")
    list(APPEND ids "${id}=${index}")
    math(EXPR index "${index} + 1")
  endforeach()
  string(REGEX REPLACE " \\\\\n$" "\n" list_entries "${list_entries}")
  set(text "/* TensorPlay — the op ids plugins see (tp_plugin_node.op_id).
 *
 * GENERATED from the core's op table by cmake/PluginOps.cmake; do not edit.
 * Standalone, like plugin.h. Ids are stable across releases: a new op gets
 * the next free id, so a plugin built against this header meets ids >=
 * TP_PLUGIN_OP_COUNT only for ops newer than itself (refuse them in
 * supports).
 *
 * TP_PLUGIN_OP_LIST(X) calls X(ID, \"name\", KIND, MIN_ARITY, MAX_ARITY) once
 * per op in id order; KIND is POINTWISE, REDUCTION, MATMUL, SHAPE, CREATION
 * or COMPOSITE (TP_PLUGIN_KIND_##KIND in plugin.h). A table indexed by op id
 * can check its length against TP_PLUGIN_OP_COUNT at build time, so an op
 * added to the core cannot be forgotten:
 *   _Static_assert(sizeof table / sizeof table[0] == TP_PLUGIN_OP_COUNT, ...);
 */
#ifndef TENSORPLAY_PLUGIN_OPS_H
#define TENSORPLAY_PLUGIN_OPS_H
/* clang-format off */

${defines}
#define TP_PLUGIN_OP_COUNT ${index}

#define TP_PLUGIN_OP_LIST(X) \\
${list_entries}
/* clang-format on */
#endif
")
  set(${out_text} "${text}" PARENT_SCOPE)
  set(${out_ids} "${ids}" PARENT_SCOPE)
endfunction()

_tp_ops_generate(_tp_ops_text _tp_ops_ids)

if(CMAKE_SCRIPT_MODE_FILE AND TP_WRITE)
  if(EXISTS "${_tp_ops_header}")
    file(STRINGS "${_tp_ops_header}" old REGEX "^#define TP_PLUGIN_OP_[A-Z0-9_]+ +[0-9]+$")
    foreach(line IN LISTS old)
      string(REGEX MATCH "TP_PLUGIN_OP_([A-Z0-9_]+) +([0-9]+)" _ "${line}")
      set(old_id ${CMAKE_MATCH_1})
      set(old_index ${CMAKE_MATCH_2})
      if(old_id STREQUAL "COUNT")
        continue()
      endif()
      list(FIND _tp_ops_ids "${old_id}=${old_index}" found)
      if(found LESS 0)
        message(FATAL_ERROR "op ${old_id} had id ${old_index} in ${_tp_ops_header} and would "
          "change or vanish: op ids are plugin ABI. Keep every op's line in place in "
          "core/ops/op_list.def and add new ops at the end of the file.")
      endif()
    endforeach()
  endif()
  file(WRITE "${_tp_ops_header}" "${_tp_ops_text}")
  message(STATUS "wrote ${_tp_ops_header}")
elseif(NOT CMAKE_SCRIPT_MODE_FILE)
  set(_tp_ops_generated "${CMAKE_BINARY_DIR}/generated/plugin_ops.h")
  file(WRITE "${_tp_ops_generated}" "${_tp_ops_text}")
  file(READ "${_tp_ops_header}" _tp_ops_committed)
  if(NOT _tp_ops_committed STREQUAL _tp_ops_text)
    message(FATAL_ERROR "include/tensorplay/plugin_ops.h is out of date with "
      "core/ops/op_list.def (see ${_tp_ops_generated}). Run scripts/gen-plugin-ops.sh, then "
      "teach plugins/common and the SDK template the new op: their op tables check their "
      "length against TP_PLUGIN_OP_COUNT.")
  endif()
  set_property(DIRECTORY APPEND PROPERTY CMAKE_CONFIGURE_DEPENDS "${_tp_ops_def}" "${_tp_ops_header}")
endif()
