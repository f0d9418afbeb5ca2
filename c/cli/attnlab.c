/* attnlab — the native command-line tool.
 *
 *   attnlab run [--model DIR] --text TEXT [--do L,H|all,ROW,COL,hard]
 *               [--do L,H|all,ROW,COL,soft,LAMBDA] [--ablate L.H,...]
 *               [--mask causal|full|window:W] [--scale S] [--capture L,H]
 *               [--top K] [--threads N] [--half] [--json]
 *   attnlab tokenize [--model DIR] --text TEXT [--json]
 *   attnlab generate [--model DIR] --text TEXT [--max-new N] [--temperature T]
 *               [--top-k K] [--seed S] [--threads N] [--json]
 *
 * JSON goes to stdout as one object, built in memory first so that an error
 * never leaves partial output; errors go to stderr with a non-zero exit.
 */
#include <errno.h>
#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "attnlab.h"

#ifndef ALAB_DEFAULT_MODEL_DIR
#define ALAB_DEFAULT_MODEL_DIR ""
#endif
#define BUILTIN_NAME "brown-gpt2"

static const char *USAGE =
    "usage:\n"
    "  attnlab run [--model DIR] --text TEXT [options] [--json]\n"
    "      --do L,H|all,ROW,COL,hard        hard do: that attention row becomes one-hot at COL\n"
    "      --do L,H|all,ROW,COL,soft,LAMBDA soft do: LAMBDA added to the pre-softmax score\n"
    "      --ablate L.H[,L.H...]            zero a head's output before the projection\n"
    "      --mask causal|full|window:W      attention mask (default causal)\n"
    "      --scale S                        score scale instead of 1/sqrt(d_head)\n"
    "      --capture L,H                    include q and k of that head in the JSON\n"
    "      --top K                          number of next tokens to list (default 10)\n"
    "      --threads N                      split the forward pass over N threads (same numbers, bit for bit)\n"
    "      --half                           keep F16/BF16 weights in 16 bits (half the memory, slower)\n"
    "  attnlab tokenize [--model DIR] --text TEXT [--json]\n"
    "  attnlab generate [--model DIR] --text TEXT [--max-new N] [--temperature T] [--top-k K] [--seed S] [--threads N] [--json]\n"
    "  attnlab --version\n"
    "Indices are 0-based. Without --model the built-in model (" BUILTIN_NAME ") is used.\n";

/* ---- small helpers ------------------------------------------------------ */

static int fail_rc(int rc, const char *what) {
    const char *detail = alab_last_error();
    fprintf(stderr, "attnlab: %s: %s%s%s\n", what, alab_strerror(rc), detail[0] ? ": " : "", detail);
    return 1;
}

static int usage_error(const char *fmt, const char *arg) {
    fprintf(stderr, "attnlab: ");
    fprintf(stderr, fmt, arg);
    fprintf(stderr, "\n(run `attnlab --help` for usage)\n");
    return 2;
}

static int parse_int(const char *s, int *out) {
    char *end;
    errno = 0;
    long v = strtol(s, &end, 10);
    if (errno || end == s || *end || v < INT_MIN || v > INT_MAX) return -1;
    *out = (int)v;
    return 0;
}

static int parse_float(const char *s, float *out) {
    char *end;
    errno = 0;
    double v = strtod(s, &end);
    if (errno || end == s || *end) return -1;
    *out = (float)v;
    return 0;
}

static int dir_has_model(const char *dir) {
    char path[PATH_MAX];
    snprintf(path, sizeof path, "%s/config.json", dir);
    return access(path, R_OK) == 0;
}

/* The built-in model: $ATTNLAB_MODEL_DIR, the directory compiled in, or
 * models/brown-gpt2 beside the executable's tree (repository or install). */
static const char *find_builtin_model(char *buf, size_t cap) {
    const char *env = getenv("ATTNLAB_MODEL_DIR");
    if (env && *env && dir_has_model(env)) return env;
    if (ALAB_DEFAULT_MODEL_DIR[0] && dir_has_model(ALAB_DEFAULT_MODEL_DIR)) return ALAB_DEFAULT_MODEL_DIR;
    char exe[PATH_MAX];
    ssize_t n = readlink("/proc/self/exe", exe, sizeof exe - 1);
    if (n > 0) {
        exe[n] = '\0';
        char *slash = strrchr(exe, '/');
        if (slash) *slash = '\0';
        static const char *rel[] = {"../models/" BUILTIN_NAME, "../share/attnlab/models/" BUILTIN_NAME,
                                    "models/" BUILTIN_NAME};
        for (size_t i = 0; i < sizeof rel / sizeof rel[0]; i++) {
            int w = snprintf(buf, cap, "%s/%s", exe, rel[i]);
            if (w > 0 && (size_t)w < cap && dir_has_model(buf)) return buf;
        }
    }
    return NULL;
}

/* ---- JSON output -------------------------------------------------------- */

static void json_str(FILE *f, const char *s, size_t n) {
    fputc('"', f);
    for (size_t i = 0; i < n; i++) {
        unsigned char c = (unsigned char)s[i];
        if (c == '"' || c == '\\') fprintf(f, "\\%c", c);
        else if (c < 0x20) fprintf(f, "\\u%04x", c);
        else fputc(c, f);
    }
    fputc('"', f);
}

static void json_floats(FILE *f, const float *x, size_t n) {
    fputc('[', f);
    for (size_t i = 0; i < n; i++) {
        if (i) fputc(',', f);
        if (isfinite(x[i])) fprintf(f, "%.9g", x[i]);
        else fputs("null", f);
    }
    fputc(']', f);
}

static void json_ints(FILE *f, const int *x, int n) {
    fputc('[', f);
    for (int i = 0; i < n; i++) fprintf(f, i ? ",%d" : "%d", x[i]);
    fputc(']', f);
}

/* Display string of a token, in a static-free caller buffer. */
static const char *display(char *buf, size_t cap, const alab_bpe *bpe, int id, size_t *len) {
    int rc = alab_bpe_display(buf, cap, len, bpe, id);
    if (rc == ALAB_ERANGE && id >= 0) {
        /* an id of the model's vocabulary that its tokenizer lacks (a padded
         * or short vocabulary, issue 21 item 10): a label, not "" */
        int n = snprintf(buf, cap, "<|id %d|>", id);
        *len = n > 0 && (size_t)n < cap ? (size_t)n : 0;
        return buf;
    }
    if (rc != ALAB_OK || *len >= cap) {
        *len = 0;
        buf[0] = '\0';
    }
    return buf;
}

static void json_tokens(FILE *f, const alab_bpe *bpe, const int *ids, int n) {
    char buf[1024];
    size_t len;
    fputc('[', f);
    for (int i = 0; i < n; i++) {
        if (i) fputc(',', f);
        display(buf, sizeof buf, bpe, ids[i], &len);
        json_str(f, buf, len);
    }
    fputc(']', f);
}

/* ---- options ------------------------------------------------------------ */

typedef struct {
    const char *cmd, *model, *text;
    int json, top, max_new, top_k, threads;
    int half;   /* --half: ALAB_WEIGHTS_HALF */
    float temperature;
    unsigned long long seed;
    alab_intervention interv[256];
    int n_interv;
    alab_run_opts run;
} cli;

static int parse_do(cli *c, const char *arg) {
    /* L,H|all,ROW,COL,hard  or  L,H|all,ROW,COL,soft,LAMBDA */
    char tmp[256];
    if (strlen(arg) >= sizeof tmp) return usage_error("--do argument too long: %s", arg);
    strcpy(tmp, arg);
    char *parts[7];
    int n = 0;
    for (char *tok = strtok(tmp, ","); tok && n < 7; tok = strtok(NULL, ",")) parts[n++] = tok;
    if (c->n_interv >= (int)(sizeof c->interv / sizeof c->interv[0])) return usage_error("too many interventions at %s", arg);
    alab_intervention *v = &c->interv[c->n_interv];
    memset(v, 0, sizeof *v);
    if (n < 5) return usage_error("--do needs L,H|all,ROW,COL,hard or L,H|all,ROW,COL,soft,LAMBDA (got %s)", arg);
    if (parse_int(parts[0], &v->layer)) return usage_error("--do: bad layer in %s", arg);
    if (strcmp(parts[1], "all") == 0) v->head = ALAB_ALL_HEADS;
    else if (parse_int(parts[1], &v->head) || v->head < 0) return usage_error("--do: bad head in %s (a number or 'all')", arg);
    if (parse_int(parts[2], &v->row) || parse_int(parts[3], &v->col)) return usage_error("--do: bad row or col in %s", arg);
    if (strcmp(parts[4], "hard") == 0 && n == 5) {
        v->kind = ALAB_DO_HARD;
    } else if (strcmp(parts[4], "soft") == 0 && n == 6) {
        v->kind = ALAB_DO_SOFT;
        if (parse_float(parts[5], &v->lambda)) return usage_error("--do: bad lambda in %s", arg);
    } else {
        return usage_error("--do: expected ...,hard or ...,soft,LAMBDA (got %s)", arg);
    }
    c->n_interv++;
    return 0;
}

static int parse_ablate(cli *c, const char *arg) {
    char tmp[1024];
    if (strlen(arg) >= sizeof tmp) return usage_error("--ablate argument too long: %s", arg);
    strcpy(tmp, arg);
    for (char *tok = strtok(tmp, ","); tok; tok = strtok(NULL, ",")) {
        char *dot = strchr(tok, '.');
        if (!dot) return usage_error("--ablate expects L.H[,L.H...] (got %s)", arg);
        *dot = '\0';
        if (c->n_interv >= (int)(sizeof c->interv / sizeof c->interv[0])) return usage_error("too many interventions at %s", arg);
        alab_intervention *v = &c->interv[c->n_interv];
        memset(v, 0, sizeof *v);
        v->kind = ALAB_ABLATE;
        if (parse_int(tok, &v->layer) || parse_int(dot + 1, &v->head) || v->head < 0)
            return usage_error("--ablate: bad L.H in %s", arg);
        c->n_interv++;
    }
    return 0;
}

static int parse_args(cli *c, int argc, char **argv) {
    memset(c, 0, sizeof *c);
    c->top = 10;
    c->max_new = 20;
    c->temperature = 0.8f;
    c->top_k = 40;
    c->seed = 42;
    c->threads = 1;
    alab_run_opts_init(&c->run);
    if (argc < 2) return usage_error("%s", "no command given");
    c->cmd = argv[1];
    for (int i = 2; i < argc; i++) {
        const char *a = argv[i];
        const char *val = i + 1 < argc ? argv[i + 1] : NULL;
#define NEED_VAL() do { if (!val) return usage_error("%s needs a value", a); i++; } while (0)
        if (strcmp(a, "--json") == 0) c->json = 1;
        else if (strcmp(a, "--half") == 0) c->half = 1;
        else if (strcmp(a, "--model") == 0) { NEED_VAL(); c->model = val; }
        else if (strcmp(a, "--text") == 0) { NEED_VAL(); c->text = val; }
        else if (strcmp(a, "--do") == 0) { NEED_VAL(); if (parse_do(c, val)) return 2; }
        else if (strcmp(a, "--ablate") == 0) { NEED_VAL(); if (parse_ablate(c, val)) return 2; }
        else if (strcmp(a, "--mask") == 0) {
            NEED_VAL();
            if (strcmp(val, "causal") == 0) c->run.mask = ALAB_MASK_CAUSAL;
            else if (strcmp(val, "full") == 0) c->run.mask = ALAB_MASK_FULL;
            else if (strncmp(val, "window:", 7) == 0 && parse_int(val + 7, &c->run.window) == 0) c->run.mask = ALAB_MASK_WINDOW;
            else return usage_error("--mask expects causal, full or window:W (got %s)", val);
        } else if (strcmp(a, "--scale") == 0) {
            NEED_VAL();
            if (parse_float(val, &c->run.scale)) return usage_error("--scale: not a number: %s", val);
            c->run.scale_override = 1;
        } else if (strcmp(a, "--capture") == 0) {
            NEED_VAL();
            if (sscanf(val, "%d,%d", &c->run.capture_layer, &c->run.capture_head) != 2)
                return usage_error("--capture expects L,H (got %s)", val);
        } else if (strcmp(a, "--top") == 0) {
            NEED_VAL();
            if (parse_int(val, &c->top) || c->top < 1) return usage_error("--top expects a positive integer (got %s)", val);
        } else if (strcmp(a, "--max-new") == 0) {
            NEED_VAL();
            if (parse_int(val, &c->max_new) || c->max_new < 0) return usage_error("--max-new expects an integer >= 0 (got %s)", val);
        } else if (strcmp(a, "--temperature") == 0) {
            NEED_VAL();
            if (parse_float(val, &c->temperature)) return usage_error("--temperature: not a number: %s", val);
        } else if (strcmp(a, "--top-k") == 0) {
            NEED_VAL();
            if (parse_int(val, &c->top_k) || c->top_k < 0) return usage_error("--top-k expects an integer >= 0 (got %s)", val);
        } else if (strcmp(a, "--threads") == 0) {
            NEED_VAL();
            if (parse_int(val, &c->threads) || c->threads < 1 || c->threads > 16)
                return usage_error("--threads expects an integer in [1, 16] (got %s)", val);
        } else if (strcmp(a, "--seed") == 0) {
            NEED_VAL();
            char *end;
            c->seed = strtoull(val, &end, 10);
            if (*end || end == val) return usage_error("--seed expects an integer (got %s)", val);
        } else return usage_error("unknown option %s", a);
#undef NEED_VAL
    }
    c->run.interventions = c->interv;
    c->run.n_interventions = c->n_interv;
    if (!c->text) return usage_error("%s", "--text is required");
    return 0;
}

/* ---- commands ----------------------------------------------------------- */

static int load(alab_model **m, const cli *c) {
    char buf[PATH_MAX];
    const char *dir = c->model;
    if (!dir) {
        dir = find_builtin_model(buf, sizeof buf);
        if (!dir) {
            fprintf(stderr, "attnlab: no built-in model found (set ATTNLAB_MODEL_DIR or pass --model DIR, a directory with "
                            "config.json, model.safetensors, vocab.json and merges.txt)\n");
            return 1;
        }
    }
    int rc = alab_model_load_dir_ex(m, dir, c->half ? ALAB_WEIGHTS_HALF : ALAB_WEIGHTS_AUTO);
    if (rc) {
        char what[PATH_MAX + 32];
        snprintf(what, sizeof what, "cannot load model from %s", dir);
        return fail_rc(rc, what);
    }
    if (c->threads > 1 && (rc = alab_model_set_threads(*m, c->threads))) {
        alab_model_free(*m);
        *m = NULL;
        return fail_rc(rc, "--threads");
    }
    return 0;
}

static int encode(int **ids, int *n, const alab_model *m, const char *text) {
    size_t len = strlen(text);
    int cap = (int)(len < 16 ? 16 : len + 1);
    *ids = malloc((size_t)cap * sizeof(int));
    if (!*ids) return fail_rc(ALAB_ENOMEM, "tokenize");
    int rc = alab_model_encode(*ids, cap, n, m, text, len);
    if (rc == ALAB_ELIMIT && *n > cap) { /* invalid UTF-8 can need up to 3 ids a byte (U+FFFD) */
        int *more = realloc(*ids, (size_t)*n * sizeof(int));
        if (!more) return fail_rc(ALAB_ENOMEM, "tokenize");
        *ids = more;
        cap = *n;
        rc = alab_model_encode(*ids, cap, n, m, text, len);
    }
    if (rc) return fail_rc(rc, "tokenize");
    return 0;
}

static int emit(char *out, size_t len) {
    if (fwrite(out, 1, len, stdout) != len || fflush(stdout) != 0) {
        fprintf(stderr, "attnlab: cannot write the output\n");
        return 1;
    }
    return 0;
}

static int cmd_tokenize(const cli *c, alab_model *m) {
    int *ids = NULL, n = 0;
    if (encode(&ids, &n, m, c->text)) { free(ids); return 1; }
    char *out = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&out, &len);
    if (!f) { free(ids); return fail_rc(ALAB_ENOMEM, "output"); }
    if (c->json) {
        fputs("{\"ids\":", f);
        json_ints(f, ids, n);
        fputs(",\"tokens\":", f);
        json_tokens(f, alab_model_bpe(m), ids, n);
        fputs("}\n", f);
    } else {
        char buf[1024];
        size_t dl;
        for (int i = 0; i < n; i++)
            fprintf(f, "%4d  %6d  '%s'\n", i, ids[i], display(buf, sizeof buf, alab_model_bpe(m), ids[i], &dl));
    }
    fclose(f);
    int rc = emit(out, len);
    free(out);
    free(ids);
    return rc;
}

static int cmd_run(const cli *c, alab_model *m) {
    const alab_config *cfg = alab_model_config(m);
    const alab_bpe *bpe = alab_model_bpe(m);
    int *ids = NULL, T = 0;
    if (encode(&ids, &T, m, c->text)) { free(ids); return 1; }
    int rc = alab_forward(m, ids, T, &c->run);
    if (rc) { free(ids); return fail_rc(rc, "run"); }

    const int L = cfg->n_layer, NH = cfg->n_head, HS = cfg->head_dim;
    const size_t TT = (size_t)T * T;
    const float *att = alab_result_attention(m);
    const float *last = att + (size_t)(L - 1) * NH * TT;
    float *avg = malloc(TT * sizeof(float));
    double *head_dag = malloc((size_t)NH * sizeof(double));
    int k = c->top < cfg->vocab_size ? c->top : cfg->vocab_size;
    int *top_ids = malloc((size_t)k * sizeof(int));
    float *top_p = malloc((size_t)k * sizeof(float));
    char *out = NULL;
    size_t len = 0;
    FILE *f = NULL;
    if (!avg || !head_dag || !top_ids || !top_p || !(f = open_memstream(&out, &len))) {
        rc = fail_rc(ALAB_ENOMEM, "run");
        goto done;
    }
    alab_head_average(avg, last, NH, T);
    for (int h = 0; h < NH; h++) head_dag[h] = alab_dag_score(last + (size_t)h * TT, T);
    double dag = alab_dag_score(avg, T), null_dag = alab_null_dag_score(T);
    if ((rc = alab_result_topk(top_ids, top_p, k, m))) { rc = fail_rc(rc, "top-k"); goto done; }

    char buf[1024];
    size_t dl;
    if (c->json) {
        fprintf(f, "{\"model\":{\"n_layer\":%d,\"n_head\":%d,\"n_embd\":%d,\"vocab_size\":%d,\"n_positions\":%d},",
                L, NH, cfg->n_embd, cfg->vocab_size, cfg->n_positions);
        fputs("\"ids\":", f);
        json_ints(f, ids, T);
        fputs(",\"tokens\":", f);
        json_tokens(f, bpe, ids, T);
        fputs(",\"attentions\":[", f);
        for (int l = 0; l < L; l++) {
            fputs(l ? ",[" : "[", f);
            for (int h = 0; h < NH; h++) {
                fputs(h ? ",[" : "[", f);
                for (int i = 0; i < T; i++) {
                    if (i) fputc(',', f);
                    json_floats(f, att + ((size_t)(l * NH + h) * T + i) * T, (size_t)T);
                }
                fputc(']', f);
            }
            fputc(']', f);
        }
        fprintf(f, "],\"dag_score\":%.9g,\"dag_scores_last_layer\":[", dag);
        for (int h = 0; h < NH; h++) fprintf(f, h ? ",%.9g" : "%.9g", head_dag[h]);
        fprintf(f, "],\"null_dag_score\":%.9g,\"top\":[", null_dag);
        for (int i = 0; i < k; i++) {
            fprintf(f, "%s{\"id\":%d,\"token\":", i ? "," : "", top_ids[i]);
            display(buf, sizeof buf, bpe, top_ids[i], &dl);
            json_str(f, buf, dl);
            fprintf(f, ",\"prob\":%.9g}", top_p[i]);
        }
        fputs("],\"logits\":", f);
        json_floats(f, alab_result_logits(m), (size_t)cfg->vocab_size);
        if (alab_result_q(m)) {
            fprintf(f, ",\"capture\":{\"layer\":%d,\"head\":%d,\"q\":", c->run.capture_layer, c->run.capture_head);
            json_floats(f, alab_result_q(m), (size_t)T * HS);
            fputs(",\"k\":", f);
            json_floats(f, alab_result_k(m), (size_t)T * HS);
            fputc('}', f);
        }
        fputs("}\n", f);
    } else {
        fprintf(f, "model: %d layers, %d heads, d=%d, vocab %d, context %d\n", L, NH, cfg->n_embd, cfg->vocab_size,
                cfg->n_positions);
        fprintf(f, "tokens (%d):", T);
        for (int i = 0; i < T; i++) fprintf(f, " [%s]", display(buf, sizeof buf, bpe, ids[i], &dl));
        fprintf(f, "\n\nlast layer, head-averaged attention (row = effect i, column = cause j):\n");
        for (int i = 0; i < T; i++) {
            fprintf(f, "%3d ", i);
            for (int j = 0; j < T; j++) fprintf(f, " %5.3f", avg[(size_t)i * T + j]);
            fputc('\n', f);
        }
        fprintf(f, "\nDAG score (last layer, head average): %.4f   null for causal attention, T=%d: %.4f   "
                   "bidirectional random: 0.5\n", dag, T, null_dag);
        fprintf(f, "per head:");
        for (int h = 0; h < NH; h++) fprintf(f, " h%d=%.4f", h, head_dag[h]);
        fprintf(f, "\n\nnext token (top %d%s):\n", k, c->n_interv ? ", after the interventions" : "");
        for (int i = 0; i < k; i++)
            fprintf(f, "  %2d. %-16s %6.2f%%  (id %d)\n", i + 1, display(buf, sizeof buf, bpe, top_ids[i], &dl),
                    100.0 * top_p[i], top_ids[i]);
    }
    fclose(f);
    f = NULL;
    rc = emit(out, len);
done:
    if (f) fclose(f);
    free(out);
    free(avg);
    free(head_dag);
    free(top_ids);
    free(top_p);
    free(ids);
    return rc;
}

static int cmd_generate(const cli *c, alab_model *m) {
    int *ids = NULL, T = 0;
    if (encode(&ids, &T, m, c->text)) { free(ids); return 1; }
    int *out_ids = malloc((size_t)(c->max_new ? c->max_new : 1) * sizeof(int));
    int n = 0;
    uint64_t rng = c->seed;
    int rc = out_ids ? alab_generate(out_ids, &n, m, ids, T, c->max_new, c->temperature, c->top_k, &rng) : ALAB_ENOMEM;
    if (rc) { free(ids); free(out_ids); return fail_rc(rc, "generate"); }
    size_t need = 0;
    alab_model_decode(NULL, 0, &need, m, out_ids, n);
    char *text = malloc(need + 1);
    char *out = NULL;
    size_t len = 0;
    FILE *f = text ? open_memstream(&out, &len) : NULL;
    if (!f) { free(text); free(ids); free(out_ids); return fail_rc(ALAB_ENOMEM, "generate"); }
    alab_model_decode(text, need + 1, &need, m, out_ids, n);
    if (c->json) {
        fputs("{\"prompt_ids\":", f);
        json_ints(f, ids, T);
        fputs(",\"ids\":", f);
        json_ints(f, out_ids, n);
        fputs(",\"text\":", f);
        json_str(f, text, need);
        fputs("}\n", f);
    } else {
        fprintf(f, "%s%.*s\n", c->text, (int)need, text);
    }
    fclose(f);
    rc = emit(out, len);
    free(out);
    free(text);
    free(ids);
    free(out_ids);
    return rc;
}

int main(int argc, char **argv) {
    if (argc >= 2 && (strcmp(argv[1], "--help") == 0 || strcmp(argv[1], "-h") == 0)) {
        fputs(USAGE, stdout);
        return 0;
    }
    if (argc >= 2 && strcmp(argv[1], "--version") == 0) {
        printf("attnlab %s\n", ALAB_VERSION);
        return 0;
    }
    cli c;
    int rc = parse_args(&c, argc, argv);
    if (rc) return rc;
    if (strcmp(c.cmd, "run") && strcmp(c.cmd, "tokenize") && strcmp(c.cmd, "generate"))
        return usage_error("unknown command %s", c.cmd);
    alab_model *m = NULL;
    if (load(&m, &c)) return 1;
    if (strcmp(c.cmd, "run") == 0) rc = cmd_run(&c, m);
    else if (strcmp(c.cmd, "tokenize") == 0) rc = cmd_tokenize(&c, m);
    else rc = cmd_generate(&c, m);
    alab_model_free(m);
    return rc;
}
