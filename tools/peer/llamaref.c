// llamaref: greedy reference decoding through llama.cpp's public llama.h API,
// for specd's conformance test.
//
//   llamaref -m MODEL.gguf --ids 1,2,3 -n 64 [--threads N] [--logits FILE] [--top2 FILE] [--ubatch N]
//
// Loads MODEL on the CPU with llama.cpp's default model and context parameters
// (so flash attention and the KV cache types are llama.cpp's defaults; the ones
// in effect are reported on stderr), decodes the prompt ids in one batch, then
// decodes n tokens one at a time, each the argmax of the previous step's
// logits (ties go to the lowest id; llama.cpp's samplers are not used). Prints
// the n generated ids space-separated on one line of stdout. With --logits,
// writes the first step's logits (after the prompt) as little-endian float32.
// With --top2, writes one line per step: "id1 logit1 id2 logit2", the two
// best tokens and their logits, so a caller can see each step's margin.
// --ubatch sets llama.cpp's n_ubatch: with 1, the prompt goes through the
// one-token (decode) kernels instead of the batched prompt kernels, whose
// rounding for repacked Q4_K weights depends on the batch size.
#include "llama.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static void usage(void) {
    fprintf(stderr, "usage: llamaref -m MODEL.gguf --ids 1,2,3 -n 64 [--threads N] [--logits FILE] [--top2 FILE] [--ubatch N]\n");
    exit(2);
}

// log_filter passes on llama.cpp's errors, warnings and the few info lines
// that say which attention path and KV cache types are in effect.
static void log_filter(enum ggml_log_level level, const char *text, void *user) {
    (void)user;
    if (level == GGML_LOG_LEVEL_ERROR || level == GGML_LOG_LEVEL_WARN ||
        strstr(text, "flash_attn") || strstr(text, "Flash Attention") ||
        strstr(text, "llama_kv_cache: size") || strstr(text, "n_ctx ")) {
        fprintf(stderr, "llamaref: llama.cpp: %s", text);
    }
}

// parse_ids parses a comma-separated list of non-negative token ids.
static int parse_ids(const char *s, llama_token **out) {
    int cap = 16, n = 0;
    llama_token *ids = malloc(sizeof(llama_token) * cap);
    const char *p = s;
    while (*p) {
        char *end;
        long v = strtol(p, &end, 10);
        if (end == p || v < 0 || v > 0x7fffffff) {
            fprintf(stderr, "llamaref: bad token id near \"%s\"\n", p);
            exit(2);
        }
        if (n == cap) {
            cap *= 2;
            ids = realloc(ids, sizeof(llama_token) * cap);
        }
        ids[n++] = (llama_token)v;
        p = end;
        if (*p == ',') {
            p++;
        } else if (*p) {
            fprintf(stderr, "llamaref: bad token id list near \"%s\"\n", p);
            exit(2);
        }
    }
    *out = ids;
    return n;
}

// top2 returns the index of the largest logit (the lowest such on ties) and
// sets *second to the index of the next largest (n >= 2).
static llama_token top2(const float *logits, int n, llama_token *second) {
    int best = logits[1] > logits[0] ? 1 : 0;
    int next = 1 - best;
    for (int i = 2; i < n; i++) {
        if (logits[i] > logits[best]) {
            next = best;
            best = i;
        } else if (logits[i] > logits[next]) {
            next = i;
        }
    }
    *second = next;
    return best;
}

int main(int argc, char **argv) {
    const char *model_path = NULL, *ids_arg = NULL, *logits_path = NULL, *top2_path = NULL;
    int n_gen = 64, threads = 0, ubatch = 0;
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        if (i + 1 >= argc) {
            usage();
        }
        if (!strcmp(a, "-m")) {
            model_path = argv[++i];
        } else if (!strcmp(a, "--ids")) {
            ids_arg = argv[++i];
        } else if (!strcmp(a, "-n")) {
            n_gen = atoi(argv[++i]);
        } else if (!strcmp(a, "--threads") || !strcmp(a, "-t")) {
            threads = atoi(argv[++i]);
        } else if (!strcmp(a, "--logits")) {
            logits_path = argv[++i];
        } else if (!strcmp(a, "--top2")) {
            top2_path = argv[++i];
        } else if (!strcmp(a, "--ubatch")) {
            ubatch = atoi(argv[++i]);
        } else {
            usage();
        }
    }
    if (!model_path || !ids_arg || n_gen < 0) {
        usage();
    }
    llama_token *prompt = NULL;
    int n_prompt = parse_ids(ids_arg, &prompt);
    if (n_prompt == 0) {
        fprintf(stderr, "llamaref: empty prompt\n");
        return 2;
    }

    llama_log_set(log_filter, NULL);
    llama_backend_init();

    struct llama_model_params mp = llama_model_default_params();
    mp.n_gpu_layers = 0;
    struct llama_model *model = llama_model_load_from_file(model_path, mp);
    if (!model) {
        fprintf(stderr, "llamaref: cannot load %s\n", model_path);
        return 1;
    }
    const struct llama_vocab *vocab = llama_model_get_vocab(model);
    const int n_vocab = llama_vocab_n_tokens(vocab);
    if (n_vocab < 2) {
        fprintf(stderr, "llamaref: vocabulary of %d tokens\n", n_vocab);
        return 1;
    }
    for (int i = 0; i < n_prompt; i++) {
        if (prompt[i] >= n_vocab) {
            fprintf(stderr, "llamaref: prompt id %d out of range (vocab %d)\n", prompt[i], n_vocab);
            return 2;
        }
    }

    struct llama_context_params cp = llama_context_default_params();
    uint32_t need = (uint32_t)(n_prompt + n_gen);
    cp.n_ctx = (need + 255) / 256 * 256;
    if (cp.n_batch < (uint32_t)n_prompt) {
        cp.n_batch = (uint32_t)n_prompt;
    }
    if (ubatch > 0) {
        cp.n_ubatch = (uint32_t)ubatch;
    }
    if (threads > 0) {
        cp.n_threads = threads;
        cp.n_threads_batch = threads;
    }
    fprintf(stderr, "llamaref: n_ctx=%u n_batch=%u n_ubatch=%u threads=%d flash_attn_type=%s type_k=%s type_v=%s\n",
            cp.n_ctx, cp.n_batch, cp.n_ubatch, cp.n_threads, llama_flash_attn_type_name(cp.flash_attn_type),
            ggml_type_name(cp.type_k), ggml_type_name(cp.type_v));
    struct llama_context *ctx = llama_init_from_model(model, cp);
    if (!ctx) {
        fprintf(stderr, "llamaref: cannot create context\n");
        return 1;
    }

    struct llama_batch batch = llama_batch_init(n_prompt > 1 ? n_prompt : 1, 0, 1);
    batch.n_tokens = n_prompt;
    for (int i = 0; i < n_prompt; i++) {
        batch.token[i] = prompt[i];
        batch.pos[i] = i;
        batch.n_seq_id[i] = 1;
        batch.seq_id[i][0] = 0;
        batch.logits[i] = i == n_prompt - 1;
    }
    if (llama_decode(ctx, batch) != 0) {
        fprintf(stderr, "llamaref: prompt decode failed\n");
        return 1;
    }
    const float *logits = llama_get_logits_ith(ctx, -1);
    if (logits_path) {
        FILE *f = fopen(logits_path, "wb");
        if (!f || fwrite(logits, sizeof(float), (size_t)n_vocab, f) != (size_t)n_vocab || fclose(f) != 0) {
            fprintf(stderr, "llamaref: cannot write %s\n", logits_path);
            return 1;
        }
    }

    FILE *top2_file = NULL;
    if (top2_path && !(top2_file = fopen(top2_path, "w"))) {
        fprintf(stderr, "llamaref: cannot write %s\n", top2_path);
        return 1;
    }
    for (int step = 0; step < n_gen; step++) {
        llama_token second;
        llama_token tok = top2(logits, n_vocab, &second);
        printf(step ? " %d" : "%d", tok);
        if (top2_file) {
            fprintf(top2_file, "%d %.9g %d %.9g\n", tok, logits[tok], second, logits[second]);
        }
        if (step + 1 == n_gen) {
            break;
        }
        batch.n_tokens = 1;
        batch.token[0] = tok;
        batch.pos[0] = n_prompt + step;
        batch.n_seq_id[0] = 1;
        batch.seq_id[0][0] = 0;
        batch.logits[0] = 1;
        if (llama_decode(ctx, batch) != 0) {
            fprintf(stderr, "llamaref: decode failed at step %d\n", step + 1);
            return 1;
        }
        logits = llama_get_logits_ith(ctx, -1);
    }
    printf("\n");
    if (top2_file && fclose(top2_file) != 0) {
        fprintf(stderr, "llamaref: cannot write %s\n", top2_path);
        return 1;
    }

    llama_batch_free(batch);
    llama_free(ctx);
    llama_model_free(model);
    llama_backend_free();
    free(prompt);
    return 0;
}
