// kquants2_bench times llama.cpp's own K-quant and IQ4_XS vec_dot kernels on
// one 4096-element row against Q8_K activations (the shape of specd's
// BenchmarkDotQ*_K / BenchmarkDotIQ4_XS), in thread CPU time (best of 7
// runs), for comparison with specd's kernels. Build from the repository
// root against the shipped CPU libraries (haswell = AVX2, zen4 = AVX-512):
//
//	LIB=$PWD/.cache/npm/node_modules/@node-llama-cpp/linux-x64/bins/linux-x64
//	cc -O2 -I .cache/llama.cpp/ggml/include tensor/testdata/kquants2_bench.c -L$LIB -l:libggml-base.so -l:libggml-cpu-haswell.so -Wl,-rpath,$LIB -lm -o /tmp/kquants2_bench && /tmp/kquants2_bench
#include "ggml.h"
#include "ggml-cpu.h"
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

void quantize_row_q2_K_ref(const float *x, void *y, int64_t k);
void quantize_row_q3_K_ref(const float *x, void *y, int64_t k);
void quantize_row_q4_K_ref(const float *x, void *y, int64_t k);
void quantize_row_q5_K_ref(const float *x, void *y, int64_t k);
void quantize_row_q6_K_ref(const float *x, void *y, int64_t k);
void quantize_row_iq4_xs_ref(const float *x, void *y, int64_t k);

enum { N = 4096 };

static double now(void) {
    struct timespec t;
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t);
    return t.tv_sec + t.tv_nsec * 1e-9;
}

int main(void) {
    ggml_cpu_init();
    static float w[N], x[N];
    static uint8_t q[N], q8[16 * 292];
    for (int i = 0; i < N; i++) {
        w[i] = (rand() % 2001 - 1000) / 50000.0f;
        x[i] = (rand() % 2001 - 1000) / 1000.0f;
    }
    ggml_get_type_traits_cpu(GGML_TYPE_Q8_K)->from_float(x, q8, N);
    const struct {
        const char *name;
        enum ggml_type t;
        void (*quant)(const float *, void *, int64_t);
    } ts[] = {
        {"Q2_K", GGML_TYPE_Q2_K, quantize_row_q2_K_ref},     {"Q3_K", GGML_TYPE_Q3_K, quantize_row_q3_K_ref},
        {"Q4_K", GGML_TYPE_Q4_K, quantize_row_q4_K_ref},     {"Q5_K", GGML_TYPE_Q5_K, quantize_row_q5_K_ref},
        {"Q6_K", GGML_TYPE_Q6_K, quantize_row_q6_K_ref},     {"IQ4_XS", GGML_TYPE_IQ4_XS, quantize_row_iq4_xs_ref},
    };
    for (size_t k = 0; k < sizeof ts / sizeof ts[0]; k++) {
        ts[k].quant(w, q, N);
        const struct ggml_type_traits_cpu *tt = ggml_get_type_traits_cpu(ts[k].t);
        float sink = 0, r;
        double best = 1e9;
        for (int rep = 0; rep < 7; rep++) {
            const int it = 200000;
            double t0 = now();
            for (int i = 0; i < it; i++) {
                tt->vec_dot(N, &r, 0, q, 0, q8, 0, 1);
                sink += r;
            }
            double dt = (now() - t0) / it * 1e9;
            if (dt < best) {
                best = dt;
            }
        }
        printf("%-7s vec_dot, 4096 elements: %6.1f cpu-ns (%g)\n", ts[k].name, best, sink);
    }
    return 0;
}
