// kquants_golden writes kquants.golden: Q8_K activations, Q4_K and Q6_K
// weights and the results of llama.cpp's own kernels on them, for
// TestKQuantsGolden. Build it against the CPU libraries shipped in
// @node-llama-cpp/linux-x64 (the AVX2 "haswell" variant), from the
// repository root after tools/peer/fetch.sh:
//
//	LIB=$PWD/.cache/npm/node_modules/@node-llama-cpp/linux-x64/bins/linux-x64
//	cc -O1 -I .cache/llama.cpp/ggml/include tensor/testdata/kquants_golden.c -L$LIB -l:libggml-base.so -l:libggml-cpu-haswell.so -Wl,-rpath,$LIB -lm -o /tmp/kquants_golden
//	/tmp/kquants_golden > tensor/testdata/kquants.golden
//
// File layout (little-endian): "KQGOLD1\n", int32 nb, int32 rows, then
//   float32 x[nb*256]            activations
//   q8_K    [nb]                 quantize_row_q8_K (the CPU backend's from_float)
//   q4_K    [rows*nb]            quantize_row_q4_K_ref of random weights
//   q6_K    [rows*nb]            quantize_row_q6_K_ref of the same weights
//   float32 [rows*nb*256]        dequantize_row_q4_K
//   float32 [rows*nb*256]        dequantize_row_q6_K
//   float32 [rows]               vec_dot q4_K·q8_K (AVX2 build)
//   float32 [rows]               vec_dot q6_K·q8_K (AVX2 build)
//   float32 w[rows*nb*256]       the weights quantized above
//   float32 [rows]               Q4_K gemv on weights repacked 8 rows at a time
//                                (ggml_gemv_q4_K_8x8_q8_K, AVX2)
//   float32 [rows]               Q4_K gemm, the same, four activation rows
//                                (ggml_gemm_q4_K_8x8_q8_K, AVX2; it rounds per
//                                64 elements, so it differs from the gemv in
//                                the last bits)
#include "ggml.h"
#include "ggml-cpu.h"

#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

void quantize_row_q4_K_ref(const float *x, void *y, int64_t k);
void quantize_row_q6_K_ref(const float *x, void *y, int64_t k);
void dequantize_row_q4_K(const void *x, float *y, int64_t k);
void dequantize_row_q6_K(const void *x, float *y, int64_t k);
enum { NB = 4, ROWS = 4, QK = 256, N = NB * QK };

void ggml_gemv_q4_K_8x8_q8_K(int n, float *s, size_t bs, const void *vx, const void *vy, int nr, int nc);
void ggml_gemm_q4_K_8x8_q8_K(int n, float *s, size_t bs, const void *vx, const void *vy, int nr, int nc);
void ggml_quantize_mat_q8_K_4x8(const float *x, void *vy, int64_t k);

// q4k_scale_min returns sub-block j's 6-bit scale and min from a Q4_K
// block's 12 scale bytes.
static void q4k_scale_min(const uint8_t *q, int j, uint8_t *sc, uint8_t *mn) {
    if (j < 4) {
        *sc = q[j] & 63;
        *mn = q[j + 4] & 63;
    } else {
        *sc = (q[j + 4] & 15) | ((q[j - 4] >> 6) << 4);
        *mn = (q[j + 4] >> 4) | ((q[j] >> 6) << 4);
    }
}

// repack8 writes block i of eight Q4_K rows in the interleaved layout the
// x86 repack kernels read (block_q4_Kx8, 1152 bytes): the eight d, the eight
// dmin, per sub-block the eight rows' scale and min packed in the usual
// 12-byte form, then the quants taken 8 bytes from each row in turn.
static void repack8(uint8_t rows[8][NB * 144], int i, uint8_t *out) {
    for (int r = 0; r < 8; r++) {
        memcpy(out + 2 * r, rows[r] + i * 144, 2);
        memcpy(out + 16 + 2 * r, rows[r] + i * 144 + 2, 2);
    }
    uint8_t *sc12 = out + 32;
    for (int sb = 0; sb < 8; sb++) {
        uint8_t sc[8], mn[8];
        for (int r = 0; r < 8; r++) {
            q4k_scale_min(rows[r] + i * 144 + 4, sb, &sc[r], &mn[r]);
        }
        uint8_t *o = sc12 + 12 * sb;
        for (int k = 0; k < 4; k++) {
            o[k] = (sc[k] & 63) | ((sc[k + 4] >> 4) << 6);
            o[k + 4] = (mn[k] & 63) | ((mn[k + 4] >> 4) << 6);
            o[k + 8] = (sc[k + 4] & 15) | ((mn[k + 4] & 15) << 4);
        }
    }
    uint8_t *qs = out + 32 + 96;
    for (int c = 0; c < 128; c++) {
        memcpy(qs + 8 * c, rows[c % 8] + i * 144 + 16 + 8 * (c / 8), 8);
    }
}


static uint64_t state = 0x9e3779b97f4a7c15ull;

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
        perror("kquants_golden");
        exit(1);
    }
}

int main(void) {
    ggml_cpu_init();
    const struct ggml_type_traits_cpu *t8 = ggml_get_type_traits_cpu(GGML_TYPE_Q8_K);
    const struct ggml_type_traits_cpu *t4 = ggml_get_type_traits_cpu(GGML_TYPE_Q4_K);
    const struct ggml_type_traits_cpu *t6 = ggml_get_type_traits_cpu(GGML_TYPE_Q6_K);

    static float x[N], w[ROWS][N], deq4[ROWS][N], deq6[ROWS][N];
    static uint8_t q8[NB * 292], q4[ROWS][NB * 144], q6[ROWS][NB * 210];
    float dot4[ROWS], dot6[ROWS];

    // Block 0: normal; block 1: exact ties (max -127 makes the scale 1);
    // block 2: zeros; block 3: small values with outliers.
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
    memset(w[1] + QK, 0, QK * sizeof(float)); // an all-zero weight block
    // Row 3: constant, tiny, one-signed and sparse sub-blocks.
    for (int j = 0; j < 32; j++) {
        w[3][j] = 0.25f;              // max == min
        w[3][32 + j] = -0.5f;         // constant negative
        w[3][64 + j] = 1e-20f * normal(); // below GROUP_MAX_EPS for Q6_K
        w[3][96 + j] = fabsf(w[3][96 + j]) + 0.1f; // positive only (min > 0)
        w[3][128 + j] = -fabsf(w[3][128 + j]);     // negative only
        w[3][160 + j] = j == 7 ? 3.0f : 0;         // one spike
    }

    memset(q8, 0, sizeof q8);
    t8->from_float(x, q8, N);
    for (int r = 0; r < ROWS; r++) {
        quantize_row_q4_K_ref(w[r], q4[r], N);
        quantize_row_q6_K_ref(w[r], q6[r], N);
        dequantize_row_q4_K(q4[r], deq4[r], N);
        dequantize_row_q6_K(q6[r], deq6[r], N);
        t4->vec_dot(N, &dot4[r], 0, q4[r], 0, q8, 0, 1);
        t6->vec_dot(N, &dot6[r], 0, q6[r], 0, q8, 0, 1);
    }

    // Rows 0-3 and again 0-3 as the eight rows of one repacked group.
    static uint8_t rows8[8][NB * 144], packed[NB * 1152], q8x4[4 * NB * 292];
    static float x4[4 * N];
    float gv[8], gm[4 * 8];
    for (int r = 0; r < 8; r++) {
        memcpy(rows8[r], q4[r % 4], NB * 144);
    }
    for (int i = 0; i < NB; i++) {
        repack8(rows8, i, packed + i * 1152);
    }
    ggml_gemv_q4_K_8x8_q8_K(N, gv, 8, packed, q8, 1, 8);
    for (int t = 0; t < 4; t++) {
        memcpy(x4 + t * N, x, sizeof x);
    }
    ggml_quantize_mat_q8_K_4x8(x4, q8x4, N);
    ggml_gemm_q4_K_8x8_q8_K(N, gm, 8, packed, q8x4, 4, 8);
    for (int j = 0; j < 8; j++) {
        for (int t = 1; t < 4; t++) {
            if (memcmp(&gm[t * 8 + j], &gm[j], 4) != 0) {
                fprintf(stderr, "kquants_golden: gemm rows differ\n");
                return 1;
            }
        }
        if (memcmp(&gv[j], &gv[j % 4], 4) != 0 || memcmp(&gm[j], &gm[j % 4], 4) != 0) {
            fprintf(stderr, "kquants_golden: repeated rows differ\n");
            return 1;
        }
    }

    int32_t hdr[2] = {NB, ROWS};
    put("KQGOLD1\n", 8);
    put(hdr, sizeof hdr);
    put(x, sizeof x);
    put(q8, sizeof q8);
    put(q4, sizeof q4);
    put(q6, sizeof q6);
    put(deq4, sizeof deq4);
    put(deq6, sizeof deq6);
    put(dot4, sizeof dot4);
    put(dot6, sizeof dot6);
    put(w, sizeof w);
    put(gv, 4 * sizeof(float));
    put(gm, 4 * sizeof(float));
    return 0;
}
