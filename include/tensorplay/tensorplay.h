/* TensorPlay — the whole public API. */
#ifndef TENSORPLAY_TENSORPLAY_H
#define TENSORPLAY_TENSORPLAY_H

#include "status.h"
#include "tensor.h"
#include "attrs.h"
#include "ops.h"
#include "graph.h"
#include "passes.h"
#include "compile.h"
#include "backend.h"
#include "onnx.h"
#include "profile.h"

#endif
