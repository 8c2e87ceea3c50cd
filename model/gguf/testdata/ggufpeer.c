// ggufpeer: a small client of ggml's own GGUF code, used by peer_test.go to
// check that specd's reader and writer agree with llama.cpp.
//
//   ggufpeer dump FILE    print FILE as ggml reads it, in the format of
//                         peer_test.go's dump
//   ggufpeer write FILE   write a GGUF file with ggml's writer
#include <ctype.h>
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "ggml.h"
#include "gguf.h"

static void hexstr(const char *s) {
    size_t n = strlen(s);
    printf("%zu:", n);
    for (size_t i = 0; i < n; i++) printf("%02x", (unsigned char)s[i]);
}

// scalar prints element i of data, an array of type t.
static void scalar(enum gguf_type t, const void *data, size_t i) {
    switch (t) {
    case GGUF_TYPE_UINT8:   printf("%u", ((const uint8_t *)data)[i]); break;
    case GGUF_TYPE_INT8:    printf("%d", ((const int8_t *)data)[i]); break;
    case GGUF_TYPE_UINT16:  printf("%u", ((const uint16_t *)data)[i]); break;
    case GGUF_TYPE_INT16:   printf("%d", ((const int16_t *)data)[i]); break;
    case GGUF_TYPE_UINT32:  printf("%" PRIu32, ((const uint32_t *)data)[i]); break;
    case GGUF_TYPE_INT32:   printf("%" PRId32, ((const int32_t *)data)[i]); break;
    case GGUF_TYPE_UINT64:  printf("%" PRIu64, ((const uint64_t *)data)[i]); break;
    case GGUF_TYPE_INT64:   printf("%" PRId64, ((const int64_t *)data)[i]); break;
    case GGUF_TYPE_BOOL:    printf("%d", ((const int8_t *)data)[i] != 0); break;
    case GGUF_TYPE_FLOAT32: { uint32_t b; memcpy(&b, (const char *)data + 4 * i, 4); printf("f%08" PRIx32, b); } break;
    case GGUF_TYPE_FLOAT64: { uint64_t b; memcpy(&b, (const char *)data + 8 * i, 8); printf("d%016" PRIx64, b); } break;
    default: printf("?"); break;
    }
}

static int dump(const char *path) {
    struct gguf_init_params p = { .no_alloc = true, .ctx = NULL };
    struct gguf_context *ctx = gguf_init_from_file(path, p);
    if (!ctx) {
        printf("error\n");
        return 1;
    }
    printf("version %" PRIu32 "\n", gguf_get_version(ctx));
    printf("alignment %zu\n", gguf_get_alignment(ctx));
    printf("data_offset %zu\n", gguf_get_data_offset(ctx));
    for (int64_t k = 0; k < gguf_get_n_kv(ctx); k++) {
        enum gguf_type t = gguf_get_kv_type(ctx, k);
        printf("kv %s %s ", gguf_get_key(ctx, k), gguf_type_name(t));
        if (t == GGUF_TYPE_ARRAY) {
            enum gguf_type et = gguf_get_arr_type(ctx, k);
            size_t n = gguf_get_arr_n(ctx, k);
            printf("%s %zu\n", gguf_type_name(et), n);
            for (size_t i = 0; i < n; i++) {
                printf("  ");
                if (et == GGUF_TYPE_STRING) hexstr(gguf_get_arr_str(ctx, k, i));
                else scalar(et, gguf_get_arr_data(ctx, k), i);
                printf("\n");
            }
        } else if (t == GGUF_TYPE_STRING) {
            hexstr(gguf_get_val_str(ctx, k));
            printf("\n");
        } else {
            scalar(t, gguf_get_val_data(ctx, k), 0);
            printf("\n");
        }
    }
    for (int64_t i = 0; i < gguf_get_n_tensors(ctx); i++) {
        const int64_t *ne = gguf_get_tensor_ne(ctx, i);
        char tn[32];
        snprintf(tn, sizeof tn, "%s", ggml_type_name(gguf_get_tensor_type(ctx, i)));
        for (char *c = tn; *c; c++) *c = (char)tolower((unsigned char)*c);
        printf("tensor %s %s %" PRId64 " %" PRId64 " %" PRId64 " %" PRId64 " %zu %zu\n",
               gguf_get_tensor_name(ctx, i), tn,
               ne[0], ne[1], ne[2], ne[3], gguf_get_tensor_offset(ctx, i), gguf_get_tensor_size(ctx, i));
    }
    gguf_free(ctx);
    return 0;
}

static int write_file(const char *path) {
    struct ggml_init_params ip = { .mem_size = 1 << 20, .mem_buffer = NULL, .no_alloc = false };
    struct ggml_context *g = ggml_init(ip);
    struct gguf_context *ctx = gguf_init_empty();
    gguf_set_val_str(ctx, "general.architecture", "llama");
    gguf_set_val_u32(ctx, "llama.block_count", 3);
    gguf_set_val_i32(ctx, "i32", -5);
    gguf_set_val_f32(ctx, "f32", 0.1f);
    gguf_set_val_f64(ctx, "f64", -2.5);
    gguf_set_val_bool(ctx, "yes", true);
    gguf_set_val_u64(ctx, "u64", 1ull << 40);
    gguf_set_val_i8(ctx, "i8", -128);
    const char *toks[] = { "<unk>", "a", "\xe2\x96\x81" "b" };
    gguf_set_arr_str(ctx, "tokens", toks, 3);
    const float scores[] = { 0.0f, -1.0f, 2.5f };
    gguf_set_arr_data(ctx, "scores", GGUF_TYPE_FLOAT32, scores, 3);
    const int32_t types[] = { 2, 1, 1 };
    gguf_set_arr_data(ctx, "types", GGUF_TYPE_INT32, types, 3);
    struct { const char *name; enum ggml_type t; int64_t ne0, ne1; } ts[] = {
        { "a.weight", GGML_TYPE_F32, 5, 3 },
        { "b.weight", GGML_TYPE_Q8_0, 64, 2 },
        { "c.weight", GGML_TYPE_F16, 7, 1 },
        { "d.weight", GGML_TYPE_Q4_K, 256, 1 },
    };
    for (int k = 0; k < 4; k++) {
        struct ggml_tensor *t = ggml_new_tensor_2d(g, ts[k].t, ts[k].ne0, ts[k].ne1);
        ggml_set_name(t, ts[k].name);
        unsigned char *d = t->data;
        for (size_t i = 0; i < ggml_nbytes(t); i++) d[i] = (unsigned char)(i * 7 + k);
        gguf_add_tensor(ctx, t);
    }
    bool ok = gguf_write_to_file(ctx, path, false);
    gguf_free(ctx);
    ggml_free(g);
    return ok ? 0 : 1;
}

int main(int argc, char **argv) {
    if (argc == 3 && strcmp(argv[1], "dump") == 0) return dump(argv[2]);
    if (argc == 3 && strcmp(argv[1], "write") == 0) return write_file(argv[2]);
    fprintf(stderr, "usage: ggufpeer dump|write FILE\n");
    return 2;
}
