/* stax-llvm — how the convs over a padded input (stax_conv_shifted.c,
 * stax_conv_shifted_rows.c) share a batch between threads; the method
 * computes its units (stax_padded_runner.run_unit).
 *
 * A batch of at least as many images as threads runs whole images, one per
 * thread at a time: each thread pads its image into its own buffer and
 * computes all of its units in its own stage, as it would alone, so no
 * image's units are split (whose shares are rarely equal: a 14x14 map's 12
 * units left one thread 8% longer), there is one job for the batch instead
 * of two per image, and the padded image stays in its core's cache
 * (ResNet-18-b8's 3x3 convs 0.90-0.95x the split). Not for a product of
 * short k (an RGB stem's 27), bound by its stores rather than its
 * multiplies: MobileNetV2-b8's stem measured 6% slower whole. The rest of
 * the batch (and any batch below the thread count) runs an image at a time:
 * in shares, one a thread, where the method pads each share's part itself
 * (run_share), else padded by all threads and its units claimed in slices,
 * each slice with a stage of its own. */
#include <string.h>

#include "stax_internal.h"

static int64_t ceil_div(int64_t a, int64_t b) {
    return (a + b - 1) / b;
}

static int64_t aligned(int64_t floats) {
    return (floats + 15) / 16 * 16;
}

int64_t stax_padded_whole_image_threads(const stax_window *w, int64_t threads) {
    int64_t k = w->in_channels * w->kernel[0] * w->kernel[1];
    return threads > 1 && w->batch >= threads && k >= 64 ? threads : 0;
}

int64_t stax_padded_shares(const tp_plugin_host *host, int64_t threads) {
    return threads > 1 && host && host->parallel_for ? threads : 1;
}

/* The padded images in the workspace: one per thread that runs whole
 * images, and per share of a split image that pads its own, one at least
 * (sized for a pool: with none, fewer are used). The stages: as many, and
 * one per slice (stax_most_slices: at least one per share). */
static int64_t padded_images(const stax_padded_runner *r, int64_t threads) {
    int64_t whole = stax_padded_whole_image_threads(r->w, threads);
    int64_t shares = r->run_share && !r->shared_padding && threads > 1 ? threads : 1;
    return whole > shares ? whole : shares;
}

/* A stage's floats: room for a unit of either way of running. */
static int64_t stage_stride(const stax_padded_runner *r) {
    return aligned(r->split_stage > r->whole_stage ? r->split_stage : r->whole_stage);
}

size_t stax_padded_run_floats(const stax_padded_runner *r, int64_t threads) {
    int64_t images = padded_images(r, threads), slices = stax_most_slices(threads);
    int64_t stages = slices > images ? slices : images;
    return (size_t)(images * aligned(r->image_floats) + stages * stage_stride(r));
}

float *stax_padded_run_image(const stax_padded_runner *r, float *space, int64_t p) {
    return space + p * aligned(r->image_floats);
}

typedef struct padded_task {
    const stax_padded_runner *r;
    void **slots;
    float *space;
    float *stages; /* after the padded images, stage_stride floats apart */
    int64_t whole_threads, whole_images;
    int64_t grain;         /* the split's units per slice */
    int64_t shares;        /* or its shares */
    const float *input;    /* the split image's input */
    stax_padded_image now; /* the split image */
} padded_task;

/* Image n of the batch: its input (returned) and output. */
static const float *point_at_image(const padded_task *t, int64_t n, stax_padded_image *image) {
    const stax_window *w = t->r->w;
    int64_t in_image = w->in_channels * w->in[0] * w->in[1];
    int64_t out_image = w->out_channels * w->out[0] * w->out[1];
    image->out = (float *)t->slots[w->out_slot] + w->out_offset + n * out_image;
    image->first = n * out_image;
    return (const float *)t->slots[w->x_slot] + w->x_offset + n * in_image;
}

/* Thread share p of the whole images: its images one after another, each
 * padded into the share's own image and computed unit by unit in its stage. */
static void run_whole_images(void *context, int64_t begin, int64_t end) {
    const padded_task *t = context;
    const stax_padded_runner *r = t->r;
    for (int64_t p = begin; p < end; p++) {
        stax_padded_image image = {.padded = stax_padded_run_image(r, t->space, p)};
        float *stage = t->stages + p * stage_stride(r);
        int64_t n0 = p * t->whole_images / t->whole_threads;
        int64_t n1 = (p + 1) * t->whole_images / t->whole_threads;
        for (int64_t n = n0; n < n1; n++) {
            const float *input = point_at_image(t, n, &image);
            stax_pad_input_planes(r->w, r->pad, input, 0, r->w->in_channels * r->pad->phases,
                                  image.padded);
            for (int64_t u = 0; u < r->whole_units; u++)
                r->run_unit(r->method, &image, true, u, stage);
        }
    }
}

static void pad_planes(void *context, int64_t begin, int64_t end) {
    const padded_task *t = context;
    stax_pad_input_planes(t->r->w, t->r->pad, t->input, begin, end, t->now.padded);
}

/* Shares [begin, end) of the split image, each on its own padded buffer and stage. */
static void run_shares(void *context, int64_t begin, int64_t end) {
    const padded_task *t = context;
    const stax_padded_runner *r = t->r;
    for (int64_t s = begin; s < end; s++) {
        stax_padded_image image = t->now;
        if (!r->shared_padding) image.padded = stax_padded_run_image(r, t->space, s);
        r->run_share(r->method, t->input, &image, s, t->shares, t->stages + s * stage_stride(r));
    }
}

static void run_slices(void *context, int64_t begin, int64_t end) {
    const padded_task *t = context;
    const stax_padded_runner *r = t->r;
    for (int64_t s = begin; s < end; s++) {
        float *stage = t->stages + s * stage_stride(r);
        int64_t u1 = (s + 1) * t->grain < r->split_units ? (s + 1) * t->grain : r->split_units;
        for (int64_t u = s * t->grain; u < u1; u++)
            r->run_unit(r->method, &t->now, false, u, stage);
    }
}

void stax_padded_run(const tp_plugin_host *host, const stax_padded_runner *r, void **slots,
                     float *space, int64_t threads) {
    const stax_window *w = r->w;
    bool pool = threads > 1 && host && host->parallel_for;
    padded_task t = {.r = r, .slots = slots, .space = space};
    int64_t images = padded_images(r, threads);
    t.stages = stax_padded_run_image(r, space, images);
    /* what the method reads past an image (its image_floats): zeros, never written */
    for (int64_t p = 0; p < images; p++)
        memset(stax_padded_run_image(r, space, p) + r->pad->floats, 0,
               sizeof(float) * (size_t)(r->image_floats - r->pad->floats));
    t.whole_threads = pool ? stax_padded_whole_image_threads(w, threads) : 0;
    t.whole_images = t.whole_threads ? w->batch / t.whole_threads * t.whole_threads : 0;
    if (t.whole_images > 0) host->parallel_for(t.whole_threads, 1, run_whole_images, &t);
    if (t.whole_images == w->batch) return;
    if (r->run_share) {
        t.shares = stax_padded_shares(host, threads);
        t.now.padded = stax_padded_run_image(r, space, 0);
        for (int64_t n = t.whole_images; n < w->batch; n++) {
            t.input = point_at_image(&t, n, &t.now);
            if (r->shared_padding)
                stax_parallel_range(host, w->in_channels * r->pad->phases, 1, threads, pad_planes,
                                    &t);
            if (t.shares > 1)
                host->parallel_for(t.shares, 1, run_shares, &t);
            else
                run_shares(&t, 0, 1);
        }
        return;
    }
    t.grain = stax_grain(host, r->split_units, 1, threads);
    if (t.grain < ceil_div(r->split_units, stax_most_slices(threads)))
        t.grain = ceil_div(r->split_units, stax_most_slices(threads));
    int64_t slices = ceil_div(r->split_units, t.grain);
    t.now.padded = stax_padded_run_image(r, space, 0);
    for (int64_t n = t.whole_images; n < w->batch; n++) {
        t.input = point_at_image(&t, n, &t.now);
        stax_parallel_range(host, w->in_channels * r->pad->phases, 1, threads, pad_planes, &t);
        if (slices > 1 && pool)
            host->parallel_for(slices, 1, run_slices, &t);
        else
            run_slices(&t, 0, slices);
    }
}
