// probe prints llama.cpp reference outputs as JSON lines; it produced the
// *.golden.jsonl files next to this directory. Build against the libllama
// that node-llama-cpp ships (from the repository root):
//
//   L=.cache/npm/node_modules/@node-llama-cpp/linux-x64/bins/linux-x64
//   gcc -O1 -o /tmp/probe tokenizer/testdata/llamaprobe/probe.c \
//     -I.cache/llama.cpp/include -I.cache/llama.cpp/ggml/include \
//     $L/libllama.v0.4.0.so $L/libggml.v0.4.0.so $L/libggml-base.so -Wl,-rpath,$L
//
// Chat templates (names or Jinja files; paths rewritten to templates/...):
//   /tmp/probe chat chatml llama2 llama2-sys llama2-sys-bos llama2-sys-strip llama3 \
//     .cache/llama.cpp/models/templates/*.jinja
// Tokenization (texts.txt: cases separated by "\n__ggml_vocab_test__\n"):
//   /tmp/probe tok .cache/llama.cpp/models/ggml-vocab-NAME.gguf tokenizer/testdata/llamaprobe/texts.txt
#include "llama.h"
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static void jstr(const char *s, int n) {
    putchar('"');
    for (int i = 0; i < n; i++) {
        unsigned char c = s[i];
        if (c == '"' || c == '\\') { putchar('\\'); putchar(c); }
        else if (c < 0x20) printf("\\u%04x", c);
        else putchar(c);
    }
    putchar('"');
}

static char *readfile(const char *p) {
    FILE *f = fopen(p, "rb"); if (!f) return NULL;
    fseek(f, 0, SEEK_END); long n = ftell(f); fseek(f, 0, SEEK_SET);
    char *b = malloc(n + 1); fread(b, 1, n, f); b[n] = 0; fclose(f); return b;
}

int main(int argc, char **argv) {
    llama_log_set(NULL, NULL);
    if (argc >= 2 && strcmp(argv[1], "chat") == 0) {
        // chat <name-or-file>...
        llama_chat_message sets[3][5] = {
            {{"system", "You are a helpful assistant."}, {"user", "Hello"}, {"assistant", "Hi there"}, {"user", "Who are you"}},
            {{"user", "  spaced\n"}, {"assistant", " reply "}, {"user", "again"}},
            {{"system", "\tsys "}, {"user", "only"}},
        };
        int nmsg[3] = {4, 3, 2};
        for (int a = 2; a < argc; a++) {
            char *tmpl = readfile(argv[a]);
            const char *name = argv[a];
            if (!tmpl) { tmpl = strdup(argv[a]); }
            for (int s = 0; s < 3; s++) for (int add = 0; add < 2; add++) {
                static char buf[1 << 16];
                int n = llama_chat_apply_template(tmpl, sets[s], nmsg[s], add, buf, sizeof buf);
                printf("{\"template\":"); jstr(name, strlen(name));
                printf(",\"set\":%d,\"add\":%s,\"n\":%d,\"out\":", s, add ? "true" : "false", n);
                if (n >= 0) jstr(buf, n); else printf("null");
                printf("}\n");
            }
            free(tmpl);
        }
        return 0;
    }
    // tok <vocab> <textfile>: texts separated by \n__ggml_vocab_test__\n
    struct llama_model_params mp = llama_model_default_params();
    mp.vocab_only = true;
    struct llama_model *m = llama_model_load_from_file(argv[2], mp);
    if (!m) { fprintf(stderr, "load failed\n"); return 1; }
    const struct llama_vocab *v = llama_model_get_vocab(m);
    int nv = llama_vocab_n_tokens(v);
    printf("{\"eog\":[");
    int first = 1;
    for (int i = 0; i < nv; i++) if (llama_vocab_is_eog(v, i)) { printf(first ? "%d" : ",%d", i); first = 0; }
    printf("],\"bos\":%d,\"eos\":%d,\"eot\":%d,\"add_bos\":%s,\"add_eos\":%s}\n", llama_vocab_bos(v), llama_vocab_eos(v), llama_vocab_eot(v),
        llama_vocab_get_add_bos(v) ? "true" : "false", llama_vocab_get_add_eos(v) ? "true" : "false");
    char *raw = readfile(argv[3]);
    const char *sep = "\n__ggml_vocab_test__\n";
    char *p = raw;
    static llama_token toks[1 << 16];
    static char out[1 << 18];
    while (p && *p) {
        char *e = strstr(p, sep);
        int len = e ? (int)(e - p) : (int)strlen(p);
        for (int add = 0; add < 2; add++) for (int ps = 0; ps < 2; ps++) {
            int n = llama_tokenize(v, p, len, toks, 1 << 16, add, ps);
            printf("{\"text\":"); jstr(p, len);
            printf(",\"add_special\":%s,\"parse_special\":%s,\"ids\":[", add ? "true" : "false", ps ? "true" : "false");
            for (int i = 0; i < n; i++) printf(i ? ",%d" : "%d", toks[i]);
            printf("],\"detok\":");
            int dn = llama_detokenize(v, toks, n, out, sizeof out, false, true);
            jstr(out, dn < 0 ? 0 : dn);
            printf(",\"detok_nospecial\":");
            dn = llama_detokenize(v, toks, n, out, sizeof out, false, false);
            jstr(out, dn < 0 ? 0 : dn);
            printf("}\n");
        }
        p = e ? e + strlen(sep) : NULL;
    }
    return 0;
}
