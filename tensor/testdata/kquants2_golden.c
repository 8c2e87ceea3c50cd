// kquants2_golden writes kquants2.golden: Q8_K activations, Q2_K, Q3_K,
// Q5_K and IQ4_XS weights and the results of llama.cpp's own functions on
// them, for TestKQuants2Golden. Build it against the CPU libraries shipped in
// @node-llama-cpp/linux-x64 (the AVX2 "haswell" variant), from the
// repository root after tools/peer/fetch.sh:
//
//	LIB=$PWD/.cache/npm/node_modules/@node-llama-cpp/linux-x64/bins/linux-x64
//	cc -O1 -I .cache/llama.cpp/ggml/include tensor/testdata/kquants2_golden.c -L$LIB -l:libggml-base.so -l:libggml-cpu-haswell.so -Wl,-rpath,$LIB -lm -o /tmp/kquants2_golden
//	/tmp/kquants2_golden > tensor/testdata/kquants2.golden
//
// File layout (little-endian): "KQGOLD2\n", int32 nb, int32 rows, then
//   float32 x[nb*256]             activations (as kquants_golden.c)
//   q8_K    [nb]                  the CPU backend's from_float of x
//   float32 w[rows*nb*256]        weights (as kquants_golden.c)
//   q8_K    [nb]                  arbitrary bytes (quants of −128, bsums that
//                                 disagree with the quants), d = 2^-7
//   then for each type of Q2_K, Q3_K, Q5_K, IQ4_XS:
//     block   [rows*nb]           quantize_row_<type>_ref of w
//     float32 [rows*nb*256]       dequantize_row_<type> of those
//     float32 [rows]              vec_dot of those with the q8_K of x (AVX2)
//     block   [rows*nb]           arbitrary bytes with sane F16 scales
//     float32 [rows]              vec_dot of those with the q8_K of x
//     float32 [rows]              vec_dot of those with the arbitrary q8_K
//   float32 [rows]                Q2_K: gemv on weights repacked 8 rows at a
//                                 time (ggml_gemv_q2_K_8x8_q8_K, what AVX-512
//                                 builds run)
//   float32 [rows]                Q2_K: the gemm, four activation rows
//   float32 [rows]                IQ4_XS: ggml_mul_mat of 8 rows by 1 token
//   float32 [rows]                IQ4_XS: ggml_mul_mat by 8 equal tokens (the
//                                 IQ panel gemm)
#include "ggml.h"
#include "ggml-cpu.h"

#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

void quantize_row_q2_K_ref(const float *x, void *y, int64_t k);
void quantize_row_q3_K_ref(const float *x, void *y, int64_t k);
void quantize_row_q5_K_ref(const float *x, void *y, int64_t k);
void quantize_row_iq4_xs_ref(const float *x, void *y, int64_t k);
void dequantize_row_q2_K(const void *x, float *y, int64_t k);
void dequantize_row_q3_K(const void *x, float *y, int64_t k);
void dequantize_row_q5_K(const void *x, float *y, int64_t k);
void dequantize_row_iq4_xs(const void *x, float *y, int64_t k);
void ggml_gemv_q2_K_8x8_q8_K(int n, float *s, size_t bs, const void *vx, const void *vy, int nr, int nc);
void ggml_gemm_q2_K_8x8_q8_K(int n, float *s, size_t bs, const void *vx, const void *vy, int nr, int nc);
// ggml::cpu::repack::repack<block_q2_K, 8, 8>: interleaves eight Q2_K rows
// into t->data (block_q2_Kx8).
int _ZN4ggml3cpu6repack6repackI10block_q2_KLl8ELl8EEEiP11ggml_tensorPKvm(struct ggml_tensor *t, const void *data, size_t size);
void ggml_quantize_mat_q8_K_4x8(const float *x, void *vy, int64_t k);

enum { NB = 4, ROWS = 4, QK = 256, N = NB * QK, NTYPES = 4 };

static uint64_t state = 0x9e3779b97f4a7c15ull;

static uint64_t next(void) {
    state = state * 6364136223846793005ull + 1442695040888963407ull;
    return state;
}

static double uniform(void) { return (double)(next() >> 11) / 9007199254740992.0; }

static float normal(void) {
    double u = uniform() + 1e-12, v = uniform();
    return (float)(sqrt(-2 * log(u)) * cos(6.283185307179586 * v));
}

static void put(const void *p, size_t n) {
    if (fwrite(p, 1, n, stdout) != n) {
        perror("kquants2_golden");
        exit(1);
    }
}

static const struct {
    enum ggml_type type;
    size_t size;
    void (*quant)(const float *, void *, int64_t);
    void (*deq)(const void *, float *, int64_t);
    int d_off[2]; // F16 scale offsets in a block (-1: none)
} types[NTYPES] = {
    {GGML_TYPE_Q2_K, 84, quantize_row_q2_K_ref, dequantize_row_q2_K, {80, 82}},
    {GGML_TYPE_Q3_K, 110, quantize_row_q3_K_ref, dequantize_row_q3_K, {108, -1}},
    {GGML_TYPE_Q5_K, 176, quantize_row_q5_K_ref, dequantize_row_q5_K, {0, 2}},
    {GGML_TYPE_IQ4_XS, 136, quantize_row_iq4_xs_ref, dequantize_row_iq4_xs, {0, -1}},
};

// mulmat runs ggml_mul_mat of the 8 rows at w (type t) by ntok copies of x
// through a CPU graph and stores token 0's results in out.
static void mulmat(enum ggml_type t, const void *w, size_t wsize, const float *x, int ntok, float *out) {
    struct ggml_init_params ip = {64 << 20, NULL, false};
    struct ggml_context *ctx = ggml_init(ip);
    struct ggml_tensor *a = ggml_new_tensor_2d(ctx, t, N, 8);
    struct ggml_tensor *b = ggml_new_tensor_2d(ctx, GGML_TYPE_F32, N, ntok);
    memcpy(a->data, w, wsize);
    for (int i = 0; i < ntok; i++) {
        memcpy((float *)b->data + i * N, x, N * sizeof(float));
    }
    struct ggml_tensor *c = ggml_mul_mat(ctx, a, b);
    struct ggml_cgraph *gf = ggml_new_graph(ctx);
    ggml_build_forward_expand(gf, c);
    if (ggml_graph_compute_with_ctx(ctx, gf, 1) != GGML_STATUS_SUCCESS) {
        fprintf(stderr, "kquants2_golden: graph failed\n");
        exit(1);
    }
    memcpy(out, c->data, 8 * sizeof(float));
    ggml_free(ctx);
}

int main(void) {
    ggml_cpu_init();
    const struct ggml_type_traits_cpu *t8 = ggml_get_type_traits_cpu(GGML_TYPE_Q8_K);

    static float x[N], w[ROWS][N], deq[ROWS][N];
    static uint8_t q8[NB * 292], q8raw[NB * 292], q[ROWS][NB * 176], raw[ROWS][NB * 176];

    // The activations and weights of kquants_golden.c.
    for (int j = 0; j < QK; j++) {
        x[j] = normal();
        x[QK + j] = (float)(j % 64) - 31.5f;
        x[2 * QK + j] = 0;
        x[3 * QK + j] = 1e-3f * normal() * (j % 37 == 0 ? 50 : 1);
    }
    x[QK + 5] = -127;
    for (int r = 0; r < ROWS; r++) {
        for (int j = 0; j < N; j++) {
            w[r][j] = 0.02f * normal() + (r == 2 ? 0.01f : 0);
        }
    }
    memset(w[1] + QK, 0, QK * sizeof(float));
    for (int j = 0; j < 32; j++) {
        w[3][j] = 0.25f;
        w[3][32 + j] = -0.5f;
        w[3][64 + j] = 1e-20f * normal();
        w[3][96 + j] = fabsf(w[3][96 + j]) + 0.1f;
        w[3][128 + j] = -fabsf(w[3][128 + j]);
        w[3][160 + j] = j == 7 ? 3.0f : 0;
    }
    memset(q8, 0, sizeof q8);
    t8->from_float(x, q8, N);
    for (size_t i = 0; i < sizeof q8raw; i++) {
        q8raw[i] = (uint8_t)(next() >> 56);
    }
    for (int i = 0; i < NB; i++) {
        float d = 1.0f / 128;
        memcpy(q8raw + 292 * i, &d, 4);
        q8raw[292 * i + 4 + 17] = 0x80; // at least one -128 per block
    }

    int32_t hdr[2] = {NB, ROWS};
    put("KQGOLD2\n", 8);
    put(hdr, sizeof hdr);
    put(x, sizeof x);
    put(q8, sizeof q8);
    put(w, sizeof w);
    put(q8raw, sizeof q8raw);

    static uint8_t q2[ROWS][NB * 84], iq4[ROWS][NB * 136];
    for (int ti = 0; ti < NTYPES; ti++) {
        const struct ggml_type_traits_cpu *tt = ggml_get_type_traits_cpu(types[ti].type);
        size_t bs = types[ti].size;
        float dots[ROWS], dr[ROWS], dr8[ROWS];
        for (int r = 0; r < ROWS; r++) {
            types[ti].quant(w[r], q[r], N);
            types[ti].deq(q[r], deq[r], N);
            tt->vec_dot(N, &dots[r], 0, q[r], 0, q8, 0, 1);
            for (size_t i = 0; i < NB * bs; i++) {
                raw[r][i] = (uint8_t)(next() >> 56);
            }
            for (int i = 0; i < NB; i++) {
                for (int k = 0; k < 2; k++) {
                    if (types[ti].d_off[k] >= 0) {
                        ggml_fp16_t h = ggml_fp32_to_fp16((0.0005f + 0.01f * (float)uniform()) * (k == 0 && next() >> 63 ? -1 : 1));
                        memcpy(raw[r] + i * bs + types[ti].d_off[k], &h, 2);
                    }
                }
            }
            tt->vec_dot(N, &dr[r], 0, raw[r], 0, q8, 0, 1);
            tt->vec_dot(N, &dr8[r], 0, raw[r], 0, q8raw, 0, 1);
        }
        for (int r = 0; r < ROWS; r++) {
            put(q[r], NB * bs);
        }
        put(deq, sizeof deq);
        put(dots, sizeof dots);
        for (int r = 0; r < ROWS; r++) {
            put(raw[r], NB * bs);
        }
        put(dr, sizeof dr);
        put(dr8, sizeof dr8);
        for (int r = 0; r < ROWS; r++) {
            if (types[ti].type == GGML_TYPE_Q2_K) {
                memcpy(q2[r], q[r], NB * 84);
            }
            if (types[ti].type == GGML_TYPE_IQ4_XS) {
                memcpy(iq4[r], q[r], NB * 136);
            }
        }
    }

    // Q2_K: rows 0-3 and again 0-3 as one repacked group of eight.
    static uint8_t rows8[8 * NB * 84], packed[8 * NB * 84];
    static uint8_t q8x4[4 * NB * 292];
    static float x4[4 * N];
    float gv[8], gm[4 * 8];
    for (int r = 0; r < 8; r++) {
        memcpy(rows8 + r * NB * 84, q2[r % 4], NB * 84);
    }
    struct ggml_tensor t;
    memset(&t, 0, sizeof t);
    t.type = GGML_TYPE_Q2_K;
    t.ne[0] = N;
    t.ne[1] = 8;
    t.ne[2] = t.ne[3] = 1;
    t.data = packed;
    if (_ZN4ggml3cpu6repack6repackI10block_q2_KLl8ELl8EEEiP11ggml_tensorPKvm(&t, rows8, sizeof rows8) != 0) {
        fprintf(stderr, "kquants2_golden: repack failed\n");
        return 1;
    }
    ggml_gemv_q2_K_8x8_q8_K(N, gv, 8, packed, q8, 1, 8);
    for (int k = 0; k < 4; k++) {
        memcpy(x4 + k * N, x, sizeof x);
    }
    ggml_quantize_mat_q8_K_4x8(x4, q8x4, N);
    ggml_gemm_q2_K_8x8_q8_K(N, gm, 8, packed, q8x4, 4, 8);
    for (int j = 0; j < 8; j++) {
        for (int k = 1; k < 4; k++) {
            if (memcmp(&gm[k * 8 + j], &gm[j], 4) != 0) {
                fprintf(stderr, "kquants2_golden: gemm rows differ\n");
                return 1;
            }
        }
        if (memcmp(&gv[j], &gv[j % 4], 4) != 0 || memcmp(&gm[j], &gm[j % 4], 4) != 0) {
            fprintf(stderr, "kquants2_golden: repeated rows differ\n");
            return 1;
        }
    }
    put(gv, 4 * sizeof(float));
    put(gm, 4 * sizeof(float));

    // IQ4_XS through ggml_mul_mat: one token (vec_dot) and eight (panel gemm).
    static uint8_t iq8[8 * NB * 136];
    float mm1[8], mm8[8];
    for (int r = 0; r < 8; r++) {
        memcpy(iq8 + r * NB * 136, iq4[r % 4], NB * 136);
    }
    mulmat(GGML_TYPE_IQ4_XS, iq8, sizeof iq8, x, 1, mm1);
    mulmat(GGML_TYPE_IQ4_XS, iq8, sizeof iq8, x, 8, mm8);
    put(mm1, 4 * sizeof(float));
    put(mm8, 4 * sizeof(float));
    return 0;
}
