// kquants_bench times llama.cpp's own K-quant kernels on the shapes of
// BenchmarkGemvQ4_K / BenchmarkGemvQ6_K (64 rows of 512 columns), in thread
// CPU time (minimum of 7 runs), for comparison with specd's kernels. Build
// from the repository root against the shipped CPU libraries (haswell =
// AVX2, zen4 = this machine's native variant):
//
//	LIB=$PWD/.cache/npm/node_modules/@node-llama-cpp/linux-x64/bins/linux-x64
//	cc -O2 -I .cache/llama.cpp/ggml/include tensor/testdata/kquants_bench.c -L$LIB -l:libggml-base.so -l:libggml-cpu-haswell.so -Wl,-rpath,$LIB -lm -o /tmp/kquants_bench && /tmp/kquants_bench
#include "ggml.h"
#include "ggml-cpu.h"
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <stdint.h>
#include <time.h>
void quantize_row_q4_K_ref(const float *x, void *y, int64_t k);
void quantize_row_q6_K_ref(const float *x, void *y, int64_t k);
void ggml_gemv_q4_K_8x8_q8_K(int n, float *s, size_t bs, const void *vx, const void *vy, int nr, int nc);
void ggml_gemm_q4_K_8x8_q8_K(int n, float *s, size_t bs, const void *vx, const void *vy, int nr, int nc);
void ggml_quantize_mat_q8_K_4x8(const float *x, void *vy, int64_t k);
enum { NB = 2, N = 512, ROWS = 64 };
static void q4k_scale_min(const uint8_t *q, int j, uint8_t *sc, uint8_t *mn) {
    if (j < 4) { *sc = q[j] & 63; *mn = q[j + 4] & 63; }
    else { *sc = (q[j + 4] & 15) | ((q[j - 4] >> 6) << 4); *mn = (q[j + 4] >> 4) | ((q[j] >> 6) << 4); }
}
static void repack8(uint8_t *rows, int i, uint8_t *out) { // rows: 8 rows of NB*144
    for (int r = 0; r < 8; r++) { memcpy(out + 2*r, rows + r*NB*144 + i*144, 2); memcpy(out + 16 + 2*r, rows + r*NB*144 + i*144 + 2, 2); }
    for (int sb = 0; sb < 8; sb++) { uint8_t sc[8], mn[8];
        for (int r = 0; r < 8; r++) q4k_scale_min(rows + r*NB*144 + i*144 + 4, sb, &sc[r], &mn[r]);
        uint8_t *o = out + 32 + 12*sb;
        for (int k = 0; k < 4; k++) { o[k] = (sc[k]&63)|((sc[k+4]>>4)<<6); o[k+4] = (mn[k]&63)|((mn[k+4]>>4)<<6); o[k+8] = (sc[k+4]&15)|((mn[k+4]&15)<<4); } }
    for (int c = 0; c < 128; c++) memcpy(out + 128 + 8*c, rows + (c%8)*NB*144 + i*144 + 16 + 8*(c/8), 8);
}
static double now(void){struct timespec t; clock_gettime(CLOCK_THREAD_CPUTIME_ID,&t); return t.tv_sec+t.tv_nsec*1e-9;}
int main(void){
  ggml_cpu_init();
  static float w[ROWS*N], x[4*N]; static uint8_t q4[ROWS*NB*144], packed[ROWS/8*NB*1152], q8[NB*292], q8x4[4*NB*292], q6[ROWS*NB*210];
  for (int i=0;i<ROWS*N;i++) w[i]=(rand()%2001-1000)/50000.0f;
  for (int i=0;i<4*N;i++) x[i]=(rand()%2001-1000)/1000.0f;
  quantize_row_q4_K_ref(w,q4,ROWS*N); quantize_row_q6_K_ref(w,q6,ROWS*N);
  for (int g=0; g<ROWS/8; g++) for (int i=0;i<NB;i++) repack8(q4 + g*8*NB*144, i, packed + (g*NB+i)*1152);
  const struct ggml_type_traits_cpu *t8=ggml_get_type_traits_cpu(GGML_TYPE_Q8_K), *t6=ggml_get_type_traits_cpu(GGML_TYPE_Q6_K), *t4=ggml_get_type_traits_cpu(GGML_TYPE_Q4_K);
  t8->from_float(x,q8,N); ggml_quantize_mat_q8_K_4x8(x, q8x4, N);
  float s[4*ROWS]; double best;
  #define BENCH(label, body) best=1e9; for(int rep=0;rep<7;rep++){int it=20000; double t0=now(); for(int i=0;i<it;i++){body;} double dt=(now()-t0)/it*1e9; if(dt<best)best=dt;} printf("%-40s %8.1f cpu-ns\n", label, best);
  BENCH("q4_K repacked gemv, 64 rows x 512, 1 tok", ggml_gemv_q4_K_8x8_q8_K(N, s, ROWS, packed, q8, 1, ROWS))
  BENCH("q4_K repacked gemm, 64 rows x 512, 4 tok", ggml_gemm_q4_K_8x8_q8_K(N, s, ROWS, packed, q8x4, 4, ROWS))
  BENCH("q4_K vec_dot, 64 rows x 512, 1 tok", for(int r=0;r<ROWS;r++) t4->vec_dot(N, &s[r], 0, q4 + r*NB*144, 0, q8, 0, 1))
  BENCH("q6_K vec_dot, 64 rows x 512, 1 tok", for(int r=0;r<ROWS;r++) t6->vec_dot(N, &s[r], 0, q6 + r*NB*210, 0, q8, 0, 1))
  return 0;
}
