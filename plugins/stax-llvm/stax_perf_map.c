/* stax-llvm — naming JIT code for `perf` (STAX_PERF_MAP=on): every function
 * of an object linked into the JIT gets a line "START SIZE NAME" (hex) in
 * /tmp/perf-PID.map, the file perf reads for code that no ELF file on disk
 * describes. Sizes and section offsets come from the object's symbol table;
 * where its sections landed comes from looking up one exported (keyed) name
 * per section in the JIT: a function's address is that section's base plus
 * the function's offset, so local functions are named too. Owns nothing but
 * the map file; the caller (stax_jit.c) holds the JIT lock. */
#include <inttypes.h>
#include <llvm-c/Core.h>
#include <llvm-c/Error.h>
#include <llvm-c/Object.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "stax_internal.h"
#include "stax_perf_map.h"

int32_t stax_perf_map_setting(const tp_plugin_host *host, bool *on, char *error, size_t size) {
    const char *setting = host && host->getenv ? host->getenv("STAX_PERF_MAP") : NULL;
    *on = setting && strcmp(setting, "on") == 0;
    if (setting && *setting && strcmp(setting, "on") && strcmp(setting, "off"))
        return tpcommon_error(error, size,
                              "stax: STAX_PERF_MAP is '%s'; use on or off (or unset it)", setting);
    return TP_PLUGIN_OK;
}

void stax_perf_map_path(char *path, size_t size) {
    snprintf(path, size, "/tmp/perf-%ld.map", (long)getpid());
}

/* .text, or .ltext under the large code model the JIT's objects use (and
 * their .text.NAME / .ltext.NAME function sections). */
static bool is_code_section(const char *name) {
    return name && (strncmp(name, ".text", 5) == 0 || strncmp(name, ".ltext", 6) == 0);
}

/* The load address of the section named `section`: found from one of its
 * symbols whose name carries the module's prefix (exported, so the JIT
 * resolves it). 0 when none does. */
static uint64_t section_base(LLVMOrcLLJITRef jit, LLVMBinaryRef binary, const char *section,
                             const char *prefix) {
    uint64_t base = 0;
    LLVMSymbolIteratorRef symbol = LLVMObjectFileCopySymbolIterator(binary);
    LLVMSectionIteratorRef in = LLVMObjectFileCopySectionIterator(binary);
    for (; !base && !LLVMObjectFileIsSymbolIteratorAtEnd(binary, symbol);
         LLVMMoveToNextSymbol(symbol)) {
        const char *name = LLVMGetSymbolName(symbol);
        if (!name || strncmp(name, prefix, strlen(prefix)) != 0) continue;
        LLVMMoveToContainingSection(in, symbol);
        if (LLVMObjectFileIsSectionIteratorAtEnd(binary, in)) continue;
        const char *in_name = LLVMGetSectionName(in);
        if (!in_name || strcmp(in_name, section) != 0) continue;
        LLVMOrcExecutorAddress address = 0;
        LLVMErrorRef err = LLVMOrcLLJITLookup(jit, &address, name);
        if (err) {
            LLVMConsumeError(err);
            continue;
        }
        base = address - LLVMGetSymbolAddress(symbol);
    }
    LLVMDisposeSectionIterator(in);
    LLVMDisposeSymbolIterator(symbol);
    return base;
}

void stax_perf_map_add(LLVMOrcLLJITRef jit, const char *prefix, const void *object,
                       size_t object_size) {
    LLVMMemoryBufferRef buffer =
        LLVMCreateMemoryBufferWithMemoryRange(object, object_size, "stax perf map", 0);
    char *message = NULL;
    LLVMBinaryRef binary = LLVMCreateBinary(buffer, NULL, &message);
    if (message) LLVMDisposeMessage(message);
    char path[64];
    stax_perf_map_path(path, sizeof path);
    FILE *map = binary ? fopen(path, "a") : NULL;
    if (map) {
        LLVMSymbolIteratorRef symbol = LLVMObjectFileCopySymbolIterator(binary);
        LLVMSectionIteratorRef in = LLVMObjectFileCopySectionIterator(binary);
        char last_section[256] = "";
        uint64_t base = 0;
        for (; !LLVMObjectFileIsSymbolIteratorAtEnd(binary, symbol); LLVMMoveToNextSymbol(symbol)) {
            const char *name = LLVMGetSymbolName(symbol);
            uint64_t length = LLVMGetSymbolSize(symbol);
            if (!name || !*name || length == 0) continue;
            LLVMMoveToContainingSection(in, symbol);
            if (LLVMObjectFileIsSectionIteratorAtEnd(binary, in)) continue;
            const char *section = LLVMGetSectionName(in);
            if (!is_code_section(section)) continue;
            if (strcmp(section, last_section) != 0) { /* symbols come grouped by section */
                snprintf(last_section, sizeof last_section, "%s", section);
                base = section_base(jit, binary, section, prefix);
            }
            if (base)
                fprintf(map, "%" PRIx64 " %" PRIx64 " %s\n", base + LLVMGetSymbolAddress(symbol),
                        length, name);
        }
        LLVMDisposeSectionIterator(in);
        LLVMDisposeSymbolIterator(symbol);
        fclose(map);
    }
    if (binary) LLVMDisposeBinary(binary);
    LLVMDisposeMemoryBuffer(buffer);
}
