/* OpenCL error codes by name ("CL_OUT_OF_RESOURCES"), for messages a user
 * can search for. */
#ifndef TP_OPENCL_ERRORS_H
#define TP_OPENCL_ERRORS_H

#include <CL/cl.h>

/* The CL_* name of `code`; "CL_UNKNOWN_ERROR(<code>)" text is written into
 * a static buffer for codes it does not know (not thread-safe for those). */
const char *ocl_error_name(cl_int code);

#endif
