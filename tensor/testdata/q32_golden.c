// q32_golden writes q32.golden: activations in Q8_0 and Q8_1, Q4_1, Q5_0,
// Q5_1 and IQ4_NL weights, and what llama.cpp's own code computes from them,
// for TestQ32Golden. Build it against the CPU libraries shipped in
// @node-llama-cpp/linux-x64 (the AVX2 "haswell" variant), from the
// repository root after tools/peer/fetch.sh:
//
//	LIB=$PWD/.cache/npm/node_modules/@node-llama-cpp/linux-x64/bins/linux-x64
//	cc -O1 -I .cache/llama.cpp/ggml/include tensor/testdata/q32_golden.c -L$LIB -l:libggml-base.so -l:libggml-cpu-haswell.so -Wl,-rpath,$LIB -lm -o /tmp/q32_golden
//	/tmp/q32_golden > tensor/testdata/q32.golden
//
// File layout (little-endian): "Q32GLD1\n", int32 nb, rows, ntok, ntypes, then
//   float32 x[ntok*nb*32]          activations (token 0 has edge-case blocks)
//   q8_0    [ntok*nb]              the CPU backend's from_float for Q8_0
//   q8_1    [ntok*nb]              the CPU backend's from_float for Q8_1
//   float32 w[rows*nb*32]          weights
//   per type, in the order Q4_1, Q5_0, Q5_1, IQ4_NL:
//     int32   type id
//     block   [rows*nb]            ggml_quantize_chunk without an importance
//                                  matrix (what llama-quantize writes)
//     float32 [rows*nb*32]         the type's to_float (dequantize_row_*)
//     float32 [ntok*rows]          vec_dot against the vec_dot_type activations
//     float32 [ntok*rows]          MUL_MAT of all ntok tokens through a ggml
//                                  graph on one thread (no repacking: for
//                                  Q5_0 and IQ4_NL that is llamafile's
//                                  tinyBLAS, for Q4_1 and Q5_1 vec_dot)
//   float32 [ntok*rows]            IQ4_NL rows repacked eight at a time
//                                  (block_iq4_nlx8), ggml_gemv_iq4_nl_8x8_q8_0
//                                  per token: what llama.cpp runs for IQ4_NL
//   float32 [ntok*rows]            the same, ggml_gemm_iq4_nl_8x8_q8_0 over the
//                                  four tokens (ggml_quantize_mat_q8_0_4x8)
#include "ggml.h"
#include "ggml-cpu.h"

#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

enum { NB = 8, ROWS = 8, NTOK = 4, QK = 32, N = NB * QK, NTYPES = 4 };

void ggml_gemv_iq4_nl_8x8_q8_0(int n, float *s, size_t bs, const void *vx, const void *vy, int nr, int nc);
void ggml_gemm_iq4_nl_8x8_q8_0(int n, float *s, size_t bs, const void *vx, const void *vy, int nr, int nc);
void ggml_quantize_mat_q8_0_4x8(const float *x, void *vy, int64_t k);

static uint64_t state = 0x2545f4914f6cdd1dull;

static double uniform(void) {
    state = state * 6364136223846793005ull + 1442695040888963407ull;
    return (double)(state >> 11) / 9007199254740992.0;
}

static float normal(void) {
    double u = uniform() + 1e-12, v = uniform();
    return (float)(sqrt(-2 * log(u)) * cos(6.283185307179586 * v));
}

static void put(const void *p, size_t n) {
    if (fwrite(p, 1, n, stdout) != n) {
        perror("q32_golden");
        exit(1);
    }
}

static float x[NTOK][N], w[ROWS][N];

// mulmat runs MUL_MAT of the ROWS×N weights q of type t with the NTOK
// activation rows x through a graph on one thread, into out[NTOK][ROWS].
static void mulmat(enum ggml_type t, const void *q, size_t qsize, float *out) {
    struct ggml_init_params ip = {64 << 20, NULL, false};
    struct ggml_context *ctx = ggml_init(ip);
    struct ggml_tensor *a = ggml_new_tensor_2d(ctx, t, N, ROWS);
    struct ggml_tensor *b = ggml_new_tensor_2d(ctx, GGML_TYPE_F32, N, NTOK);
    memcpy(a->data, q, qsize);
    memcpy(b->data, x, sizeof x);
    struct ggml_tensor *c = ggml_mul_mat(ctx, a, b);
    struct ggml_cgraph *gf = ggml_new_graph(ctx);
    ggml_build_forward_expand(gf, c);
    if (ggml_graph_compute_with_ctx(ctx, gf, 1) != GGML_STATUS_SUCCESS) {
        fprintf(stderr, "q32_golden: graph failed\n");
        exit(1);
    }
    memcpy(out, c->data, NTOK * ROWS * sizeof(float));
    ggml_free(ctx);
}

int main(void) {
    ggml_cpu_init();

    // Token 0: a normal block, exact ties (amax 127 makes d = 1), a zero
    // block, small values with outliers, then normal ones. Tokens 1-3:
    // normal at different scales.
    for (int j = 0; j < N; j++) {
        x[0][j] = normal();
    }
    for (int j = 0; j < QK; j++) {
        x[0][QK + j] = (float)(j % 16) - 7.5f;
        x[0][2 * QK + j] = 0;
        x[0][3 * QK + j] = 1e-3f * normal() * (j % 11 == 0 ? 50 : 1);
    }
    x[0][QK + 3] = 127;
    for (int t = 1; t < NTOK; t++) {
        for (int j = 0; j < N; j++) {
            x[t][j] = (float)ldexp(normal(), 2 * t - 3);
        }
    }
    for (int r = 0; r < ROWS; r++) {
        for (int j = 0; j < N; j++) {
            w[r][j] = 0.02f * normal() + (r == 2 ? 0.01f : 0);
        }
    }
    memset(w[1] + QK, 0, QK * sizeof(float)); // an all-zero block
    // Row 3: constant, constant negative, tiny (below GROUP_MAX_EPS for
    // IQ4_NL), positive only, negative only, one spike, ties of the grid.
    for (int j = 0; j < 32; j++) {
        w[3][j] = 0.25f;
        w[3][32 + j] = -0.5f;
        w[3][64 + j] = 1e-20f * normal();
        w[3][96 + j] = fabsf(w[3][96 + j]) + 0.1f;
        w[3][128 + j] = -fabsf(w[3][128 + j]);
        w[3][160 + j] = j == 7 ? 3.0f : 0;
        w[3][192 + j] = (float)(j - 16) / 16;
    }
    // Row 5: large magnitudes.
    for (int j = 0; j < N; j++) {
        w[5][j] *= 1000;
    }

    static uint8_t q8_0[NTOK][NB * 34], q8_1[NTOK][NB * 36];
    for (int t = 0; t < NTOK; t++) {
        ggml_get_type_traits_cpu(GGML_TYPE_Q8_0)->from_float(x[t], q8_0[t], N);
        ggml_get_type_traits_cpu(GGML_TYPE_Q8_1)->from_float(x[t], q8_1[t], N);
    }

    int32_t hdr[4] = {NB, ROWS, NTOK, NTYPES};
    put("Q32GLD1\n", 8);
    put(hdr, sizeof hdr);
    put(x, sizeof x);
    put(q8_0, sizeof q8_0);
    put(q8_1, sizeof q8_1);
    put(w, sizeof w);

    static const enum ggml_type tys[NTYPES] = {GGML_TYPE_Q4_1, GGML_TYPE_Q5_0, GGML_TYPE_Q5_1, GGML_TYPE_IQ4_NL};
    static uint8_t q[ROWS * NB * 64];
    static float deq[ROWS][N];
    float dot[NTOK][ROWS], mm[NTOK][ROWS];
    for (int k = 0; k < NTYPES; k++) {
        const enum ggml_type t = tys[k];
        const size_t rs = ggml_row_size(t, N);
        const struct ggml_type_traits_cpu *tc = ggml_get_type_traits_cpu(t);
        ggml_quantize_chunk(t, &w[0][0], q, 0, ROWS, N, NULL);
        for (int r = 0; r < ROWS; r++) {
            ggml_get_type_traits(t)->to_float(q + r * rs, deq[r], N);
            for (int i = 0; i < NTOK; i++) {
                const void *a = tc->vec_dot_type == GGML_TYPE_Q8_1 ? (const void *)q8_1[i] : (const void *)q8_0[i];
                tc->vec_dot(N, &dot[i][r], 0, q + r * rs, 0, a, 0, 1);
            }
        }
        mulmat(t, q, ROWS * rs, &mm[0][0]);
        int32_t id = t;
        put(&id, 4);
        put(q, ROWS * rs);
        put(deq, sizeof deq);
        put(dot, sizeof dot);
        put(mm, sizeof mm);
    }

    // IQ4_NL (the last type quantized, still in q) repacked as
    // block_iq4_nlx8: the eight d, then the quants 8 bytes from each row in
    // turn.
    const size_t rs = ggml_row_size(GGML_TYPE_IQ4_NL, N);
    static uint8_t packed[NB * (16 + 128)], q8x4[NTOK * NB * 34];
    for (int b = 0; b < NB; b++) {
        uint8_t *o = packed + b * (16 + 128);
        for (int r = 0; r < 8; r++) {
            memcpy(o + 2 * r, q + r * rs + b * 18, 2);
        }
        for (int c = 0; c < 16; c++) {
            memcpy(o + 16 + 8 * c, q + (c % 8) * rs + b * 18 + 2 + 8 * (c / 8), 8);
        }
    }
    float gv[NTOK][ROWS], gm[NTOK][ROWS];
    for (int t = 0; t < NTOK; t++) {
        ggml_gemv_iq4_nl_8x8_q8_0(N, gv[t], ROWS, packed, q8_0[t], 1, ROWS);
    }
    ggml_quantize_mat_q8_0_4x8(&x[0][0], q8x4, N);
    ggml_gemm_iq4_nl_8x8_q8_0(N, &gm[0][0], ROWS, packed, q8x4, NTOK, ROWS);
    put(gv, sizeof gv);
    put(gm, sizeof gm);
    return 0;
}
