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
#include <float.h>
#include <stdarg.h>
#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "attnlab.h"
#include "io.h"
#include "json.h"
#include "reference_text.h"

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
    "  attnlab evidence --kind edge|tokens|ablation|patch|pattern-value|path|dla|value-norms|trace\n"
    "                   [--model DIR] --text TEXT [options]\n"
    "      --layer L --head H|all           edge: the head (default: last layer, all heads)\n"
    "      --knockout renorm|zero           edge/tokens: renormalise the row after a knockout (default) or not\n"
    "      --token-mode column|delete|replace  tokens: knock out token j's column (default), delete it from\n"
    "                                       the input, or replace it by --neutral ID (default: \" the\")\n"
    "      --reference TEXT                 ablation: the text of the mean / resample ablation (default: the\n"
    "                                       held-out passage the JS API uses, web/src/evidence-reference.js)\n"
    "      --draws K --seed S               ablation: resample draws (default 20) and their seed (default 1)\n"
    "      --corrupt TEXT --answers A,B     patch, pattern-value, path, trace: the corrupted text (as many tokens\n"
    "                                       as TEXT) and the two answer ids (default: each run's top next token)\n"
    "      --kind pattern-value             each head's attention pattern, values, or both, patched in each\n"
    "                                       direction (denoise: into the corrupted run; noise: into the clean one)\n"
    "      --receivers R[,R...]             path: each R is L.H.q, L.H.k, L.H.v (that input of head H of layer L)\n"
    "                                       or logits (default); one sender grid per receiver, null below it\n"
    "      --direction denoise|noise        path: patch into the corrupted run (default) or the clean one\n"
    "      --freeze-mlp                     path: freeze the MLPs too (only the direct residual path is left)\n"
    "      --answers A[,B]                  dla: the logit difference A - B, or the logit of A alone (default:\n"
    "                                       the run's top next token and its second)\n"
    "      --kind value-norms               ||v_j W_O^h|| of every layer, head and position j\n"
    "      --kind trace                     each layer's attention and MLP output at each position, denoising\n"
    "  attnlab evidence --kind composition [--model DIR] [--n-null N] [--seed S]\n"
    "      Q-, K- and V-composition of every head pair in adjacent layers (weights only, no --text) and\n"
    "      their Gaussian null over N draws (default 200, 0 to 100000) seeded S (default 1)\n"
    "  attnlab evidence --kind edge|tokens --set heldout|repeated|FILE [--limit N] [options]\n"
    "      over a set of inputs (FILE: one text a line): the mean per-input rank correlation with its\n"
    "      95 % bootstrap interval, a within-row permutation null and its p-value, the uniform and\n"
    "      row-permuted baselines, the noise floor (the same numbers as model.edgeKnockoutSet; tokens: the\n"
    "      last layer, rollout and flow against token knockouts, as model.tokenKnockoutSet)\n"
    "      --n-boot B --n-perm P --seed S   resamples (default 1000 each) and their seed (default 1)\n"
    "      --epsilon E                      the noise floor (default: 10 x the largest no-op knockout KL)\n"
    "      (always JSON; docs/evidence.md defines every number)\n"
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

/* ---- strict number parsing ----------------------------------------------
 * A number is the whole token: decimal digits with an optional leading '-'
 * (integers) or a plain decimal float (digits, '.', an exponent; no hex, no
 * inf/nan, no spaces), within the range of the flag. Anything else is refused
 * with the flag and the value named (exit 2). */

static int refuse(const char *flag, const char *whole, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 3, 4)))
#endif
    ;
static int refuse(const char *flag, const char *whole, const char *fmt, ...) {
    va_list ap;
    fprintf(stderr, "attnlab: %s '%s': ", flag, whole);
    va_start(ap, fmt);
    vfprintf(stderr, fmt, ap);
    va_end(ap);
    fprintf(stderr, "\n(run `attnlab --help` for usage)\n");
    return 2;
}

/* A whole-token integer in [lo, hi] (no overflow: digits are accumulated in
 * 64 bits with a bound check before each step). what names the field. */
static int int_arg(int *out, const char *s, long long lo, long long hi, const char *flag, const char *whole,
                   const char *what) {
    const char *p = s;
    int neg = 0;
    if (*p == '-') { neg = 1; p++; }
    if (!*p) return refuse(flag, whole, "%s '%s' is not an integer", what, s);
    unsigned long long v = 0, lim = neg ? (unsigned long long)(-(lo + 1)) + 1 : (unsigned long long)(hi < 0 ? 0 : hi);
    for (; *p; p++) {
        if (*p < '0' || *p > '9') return refuse(flag, whole, "%s '%s' is not an integer", what, s);
        unsigned d = (unsigned)(*p - '0');
        if (v > (lim - d) / 10) return refuse(flag, whole, "%s %s is out of range [%lld, %lld]", what, s, lo, hi);
        v = v * 10 + d;
    }
    if (neg && lo >= 0 && v != 0) return refuse(flag, whole, "%s %s is out of range [%lld, %lld]", what, s, lo, hi);
    long long x = neg ? -(long long)v : (long long)v;
    if (x < lo || x > hi) return refuse(flag, whole, "%s %s is out of range [%lld, %lld]", what, s, lo, hi);
    *out = (int)x;
    return 0;
}

/* A whole-token unsigned 64-bit integer (the seed): digits only. */
static int u64_arg(unsigned long long *out, const char *s, const char *flag) {
    if (!*s) return refuse(flag, s, "not an integer");
    unsigned long long v = 0;
    for (const char *p = s; *p; p++) {
        if (*p < '0' || *p > '9') return refuse(flag, s, "not an integer in [0, 2^64 - 1]");
        unsigned d = (unsigned)(*p - '0');
        if (v > (ULLONG_MAX - d) / 10) return refuse(flag, s, "out of range [0, 2^64 - 1]");
        v = v * 10 + d;
    }
    *out = v;
    return 0;
}

/* A whole-token finite decimal that is finite as a float, in [lo, hi]. */
static int float_arg(float *out, const char *s, double lo, double hi, const char *flag, const char *whole,
                     const char *what) {
    if (!*s || strspn(s, "0123456789+-.eE") != strlen(s) || !((*s >= '0' && *s <= '9') || *s == '-' || *s == '.'))
        return refuse(flag, whole, "%s '%s' is not a finite decimal number", what, s);
    char *end;
    errno = 0;
    double v = strtod(s, &end);
    if (end == s || *end) return refuse(flag, whole, "%s '%s' is not a finite decimal number", what, s);
    if (!isfinite(v) || fabs(v) > FLT_MAX) return refuse(flag, whole, "%s %s does not fit a float", what, s);
    if (v < lo || v > hi) return refuse(flag, whole, "%s %s is out of range [%g, %g]", what, s, lo, hi);
    *out = (float)v;
    return 0;
}

/* Split a copy of arg at every ',' (empty fields kept, so "1,,2" and "1,"
 * have an empty field the caller refuses). Returns the field count, or -1 if
 * there are more than max. */
static int split_commas(char *tmp, char **fields, int max) {
    int n = 0;
    char *p = tmp;
    for (;;) {
        if (n == max) return -1;
        fields[n++] = p;
        char *comma = strchr(p, ',');
        if (!comma) break;
        *comma = '\0';
        p = comma + 1;
    }
    return n;
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
/* A token's display string in a buffer that grows to fit it (a token of an added-token table may have 1024
 * bytes, and its display up to 4 bytes for each: a fixed buffer once turned such labels into ""). Valid until the
 * next call. */
static const char *display(const alab_bpe *bpe, int id, size_t *len) {
    static char small[256], *buf = small;
    static size_t cap = sizeof small;
    int rc = alab_bpe_display(buf, cap, len, bpe, id);
    if (rc == ALAB_ELIMIT && *len + 1 > cap) {
        char *big = malloc(*len + 1);
        if (big) {
            if (buf != small) free(buf);
            buf = big;
            cap = *len + 1;
            rc = alab_bpe_display(buf, cap, len, bpe, id);
        }
    }
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
    size_t len;
    fputc('[', f);
    for (int i = 0; i < n; i++) {
        if (i) fputc(',', f);
        const char *d = display(bpe, ids[i], &len);
        json_str(f, d, len);
    }
    fputc(']', f);
}

/* ---- options ------------------------------------------------------------ */

typedef struct {
    const char *cmd, *model, *text;
    const char *kind, *reference, *corrupt;  /* evidence */
    int ev_layer, ev_head, answers[2], has_answers; /* has_answers: how many ids --answers gave (1 or 2) */
    const char *answers_arg;
    alab_path_receiver recv[ALAB_MAX_INTERVENTIONS]; /* --receivers (path); none: the logits */
    int n_recv, direction, freeze_mlp, n_null;
    int ko_mode, token_mode, neutral, draws, has_seed;
    const char *set;                         /* evidence over a set of inputs */
    int limit, n_boot, n_perm;
    double level, epsilon;                   /* epsilon < 0: from the noise floor */
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
    if (strlen(arg) >= sizeof tmp) return refuse("--do", arg, "too long");
    strcpy(tmp, arg);
    char *f[7] = {0};
    int n = split_commas(tmp, f, 7);
    if (n != 5 && n != 6)
        return refuse("--do", arg, "expects L,H|all,ROW,COL,hard or L,H|all,ROW,COL,soft,LAMBDA");
    if (c->n_interv >= (int)(sizeof c->interv / sizeof c->interv[0])) return refuse("--do", arg, "too many interventions");
    alab_intervention *v = &c->interv[c->n_interv];
    memset(v, 0, sizeof *v);
    if (int_arg(&v->layer, f[0], 0, ALAB_MAX_LAYERS - 1, "--do", arg, "layer")) return 2;
    if (strcmp(f[1], "all") == 0) v->head = ALAB_ALL_HEADS;
    else if (int_arg(&v->head, f[1], 0, ALAB_MAX_HEADS - 1, "--do", arg, "head (a number or 'all')")) return 2;
    if (int_arg(&v->row, f[2], 0, ALAB_MAX_POSITIONS - 1, "--do", arg, "row")) return 2;
    if (int_arg(&v->col, f[3], 0, ALAB_MAX_POSITIONS - 1, "--do", arg, "col")) return 2;
    if (strcmp(f[4], "hard") == 0 && n == 5) {
        v->kind = ALAB_DO_HARD;
    } else if (strcmp(f[4], "soft") == 0 && n == 6) {
        v->kind = ALAB_DO_SOFT;
        if (float_arg(&v->lambda, f[5], -FLT_MAX, FLT_MAX, "--do", arg, "lambda")) return 2;
    } else {
        return refuse("--do", arg, "expected ...,hard or ...,soft,LAMBDA");
    }
    c->n_interv++;
    return 0;
}

static int parse_ablate(cli *c, const char *arg) {
    char tmp[1024];
    if (strlen(arg) >= sizeof tmp) return refuse("--ablate", arg, "too long");
    strcpy(tmp, arg);
    char *f[256];
    int n = split_commas(tmp, f, 256);
    if (n < 0) return refuse("--ablate", arg, "more than 256 heads");
    for (int i = 0; i < n; i++) {
        char *dot = strchr(f[i], '.');
        if (!dot) return refuse("--ablate", arg, "'%s' is not L.H (expects L.H[,L.H...])", f[i]);
        *dot = '\0';
        if (c->n_interv >= (int)(sizeof c->interv / sizeof c->interv[0])) return refuse("--ablate", arg, "too many interventions");
        alab_intervention *v = &c->interv[c->n_interv];
        memset(v, 0, sizeof *v);
        v->kind = ALAB_ABLATE;
        if (int_arg(&v->layer, f[i], 0, ALAB_MAX_LAYERS - 1, "--ablate", arg, "layer") ||
            int_arg(&v->head, dot + 1, 0, ALAB_MAX_HEADS - 1, "--ablate", arg, "head"))
            return 2;
        c->n_interv++;
    }
    return 0;
}

/* --receivers R[,R...]: each R is L.H.q, L.H.k, L.H.v or logits. Layers and heads are checked against the
 * model by alab_path_patching (ALAB_ERANGE). */
static int parse_receivers(cli *c, const char *arg) {
    char *tmp = strdup(arg);
    char **f = malloc(ALAB_MAX_INTERVENTIONS * sizeof *f);
    if (!tmp || !f) { free(tmp); free(f); fprintf(stderr, "attnlab: --receivers: no memory\n"); return 2; }
    int n = split_commas(tmp, f, ALAB_MAX_INTERVENTIONS), rc = 0;
    if (n < 0) rc = refuse("--receivers", arg, "more than %d receivers", ALAB_MAX_INTERVENTIONS);
    for (int i = 0; i < n && !rc; i++) {
        alab_path_receiver *r = &c->recv[i];
        if (strcmp(f[i], "logits") == 0) {
            r->layer = r->head = -1;
            r->input = ALAB_PATH_LOGITS;
            continue;
        }
        char *d1 = strchr(f[i], '.'), *d2 = d1 ? strchr(d1 + 1, '.') : NULL;
        const char *in = d2 ? d2 + 1 : "";
        if (!d2 || strchr(in, '.') || (strcmp(in, "q") && strcmp(in, "k") && strcmp(in, "v"))) {
            rc = refuse("--receivers", arg, "'%s' is not L.H.q, L.H.k, L.H.v or logits", f[i]);
            break;
        }
        *d1 = *d2 = '\0';
        r->input = in[0] == 'q' ? ALAB_PATH_Q : in[0] == 'k' ? ALAB_PATH_K : ALAB_PATH_V;
        if (int_arg(&r->layer, f[i], 0, ALAB_MAX_LAYERS - 1, "--receivers", arg, "layer") ||
            int_arg(&r->head, d1 + 1, 0, ALAB_MAX_HEADS - 1, "--receivers", arg, "head"))
            rc = 2;
    }
    if (!rc) c->n_recv = n;
    free(tmp);
    free(f);
    return rc;
}

static int is_kind(const cli *c, const char *kind) { return c->kind && strcmp(c->kind, kind) == 0; }

static int parse_args(cli *c, int argc, char **argv) {
    memset(c, 0, sizeof *c);
    c->top = 10;
    c->max_new = 20;
    c->temperature = 0.8f;
    c->top_k = 40;
    c->seed = 42;
    c->threads = 1;
    c->ev_layer = -1;
    c->ev_head = -1;
    c->neutral = -1;
    c->n_boot = 1000;
    c->n_perm = 1000;
    c->level = 0.95;
    c->epsilon = -1.0;
    c->n_null = 200;
    alab_run_opts_init(&c->run);
    if (argc < 2) return usage_error("%s", "no command given");
    c->cmd = argv[1];
    for (int i = 2; i < argc; i++) {
        const char *a = argv[i];
        const char *val = i + 1 < argc ? argv[i + 1] : NULL;
#define NEED_VAL() do { if (!val) return usage_error("%s needs a value", a); i++; } while (0)
        if (strcmp(a, "--json") == 0) c->json = 1;
        else if (strcmp(a, "--half") == 0) c->half = 1;
        else if (strcmp(a, "--model") == 0) {
            NEED_VAL();
            if (!val[0]) return refuse("--model", val, "an empty directory name");
            c->model = val;
        }
        else if (strcmp(a, "--text") == 0) { NEED_VAL(); c->text = val; }
        else if (strcmp(a, "--do") == 0) { NEED_VAL(); if (parse_do(c, val)) return 2; }
        else if (strcmp(a, "--ablate") == 0) { NEED_VAL(); if (parse_ablate(c, val)) return 2; }
        else if (strcmp(a, "--mask") == 0) {
            NEED_VAL();
            if (strcmp(val, "causal") == 0) c->run.mask = ALAB_MASK_CAUSAL;
            else if (strcmp(val, "full") == 0) c->run.mask = ALAB_MASK_FULL;
            else if (strncmp(val, "window:", 7) == 0) {
                if (int_arg(&c->run.window, val + 7, 1, ALAB_MAX_POSITIONS, "--mask", val, "window")) return 2;
                c->run.mask = ALAB_MASK_WINDOW;
            } else return refuse("--mask", val, "expects causal, full or window:W");
        } else if (strcmp(a, "--scale") == 0) {
            NEED_VAL();
            if (float_arg(&c->run.scale, val, -FLT_MAX, FLT_MAX, "--scale", val, "scale")) return 2;
            c->run.scale_override = 1;
        } else if (strcmp(a, "--capture") == 0) {
            NEED_VAL();
            char tmp[64], *f[3];
            if (strlen(val) >= sizeof tmp) return refuse("--capture", val, "too long");
            strcpy(tmp, val);
            if (split_commas(tmp, f, 3) != 2) return refuse("--capture", val, "expects L,H");
            if (int_arg(&c->run.capture_layer, f[0], 0, ALAB_MAX_LAYERS - 1, "--capture", val, "layer") ||
                int_arg(&c->run.capture_head, f[1], 0, ALAB_MAX_HEADS - 1, "--capture", val, "head"))
                return 2;
        } else if (strcmp(a, "--top") == 0) {
            NEED_VAL();
            if (int_arg(&c->top, val, 1, ALAB_MAX_VOCAB, "--top", val, "count")) return 2;
        } else if (strcmp(a, "--max-new") == 0) {
            NEED_VAL();
            if (int_arg(&c->max_new, val, 0, ALAB_MAX_POSITIONS, "--max-new", val, "count")) return 2;
        } else if (strcmp(a, "--temperature") == 0) {
            NEED_VAL();
            if (float_arg(&c->temperature, val, 0.0, ALAB_MAX_TEMPERATURE, "--temperature", val, "temperature")) return 2;
        } else if (strcmp(a, "--top-k") == 0) {
            NEED_VAL();
            if (int_arg(&c->top_k, val, 0, ALAB_MAX_VOCAB, "--top-k", val, "count")) return 2;
        } else if (strcmp(a, "--threads") == 0) {
            NEED_VAL();
            if (int_arg(&c->threads, val, 1, 16, "--threads", val, "count")) return 2;
        } else if (strcmp(a, "--seed") == 0) {
            NEED_VAL();
            if (u64_arg(&c->seed, val, "--seed")) return 2;
            c->has_seed = 1;
        } else if (strcmp(a, "--kind") == 0) {
            NEED_VAL();
            static const char *kinds[] = {"edge", "tokens", "ablation", "patch", "pattern-value", "path", "dla",
                                          "value-norms", "trace", "composition"};
            size_t k = 0;
            while (k < sizeof kinds / sizeof kinds[0] && strcmp(val, kinds[k])) k++;
            if (k == sizeof kinds / sizeof kinds[0])
                return refuse("--kind", val, "expects edge, tokens, ablation, patch, pattern-value, path, dla, value-norms, "
                                             "trace or composition");
            c->kind = val;
        } else if (strcmp(a, "--layer") == 0) {
            NEED_VAL();
            if (int_arg(&c->ev_layer, val, 0, ALAB_MAX_LAYERS - 1, "--layer", val, "layer")) return 2;
        } else if (strcmp(a, "--head") == 0) {
            NEED_VAL();
            if (strcmp(val, "all") == 0) c->ev_head = -1;
            else if (int_arg(&c->ev_head, val, 0, ALAB_MAX_HEADS - 1, "--head", val, "head")) return 2;
        } else if (strcmp(a, "--knockout") == 0) {
            NEED_VAL();
            if (strcmp(val, "renorm") == 0) c->ko_mode = ALAB_KO_RENORM;
            else if (strcmp(val, "zero") == 0) c->ko_mode = ALAB_KO_ZERO;
            else return refuse("--knockout", val, "expects renorm or zero");
        } else if (strcmp(a, "--token-mode") == 0) {
            NEED_VAL();
            if (strcmp(val, "column") == 0) c->token_mode = ALAB_TOKEN_COLUMN;
            else if (strcmp(val, "delete") == 0) c->token_mode = ALAB_TOKEN_DELETE;
            else if (strcmp(val, "replace") == 0) c->token_mode = ALAB_TOKEN_REPLACE;
            else return refuse("--token-mode", val, "expects column, delete or replace");
        } else if (strcmp(a, "--neutral") == 0) {
            NEED_VAL();
            if (int_arg(&c->neutral, val, 0, ALAB_MAX_VOCAB - 1, "--neutral", val, "token id")) return 2;
        } else if (strcmp(a, "--draws") == 0) {
            NEED_VAL();
            if (int_arg(&c->draws, val, 1, 10000, "--draws", val, "count")) return 2;
        } else if (strcmp(a, "--set") == 0) { NEED_VAL(); c->set = val; }
        else if (strcmp(a, "--limit") == 0) {
            NEED_VAL();
            if (int_arg(&c->limit, val, 1, 1000000, "--limit", val, "count")) return 2;
        } else if (strcmp(a, "--n-boot") == 0) {
            NEED_VAL();
            if (int_arg(&c->n_boot, val, 0, 1000000, "--n-boot", val, "count")) return 2;
        } else if (strcmp(a, "--n-perm") == 0) {
            NEED_VAL();
            if (int_arg(&c->n_perm, val, 0, 1000000, "--n-perm", val, "count")) return 2;
        } else if (strcmp(a, "--epsilon") == 0) {
            NEED_VAL();
            char *end;
            errno = 0;
            c->epsilon = strtod(val, &end);
            if (errno || *end || end == val || !(c->epsilon >= 0.0) || !isfinite(c->epsilon))
                return refuse("--epsilon", val, "expects a number >= 0");
        } else if (strcmp(a, "--reference") == 0) { NEED_VAL(); c->reference = val; }
        else if (strcmp(a, "--corrupt") == 0) { NEED_VAL(); c->corrupt = val; }
        else if (strcmp(a, "--answers") == 0) {
            NEED_VAL();
            char tmp[64], *f[3];
            if (strlen(val) >= sizeof tmp) return refuse("--answers", val, "too long");
            strcpy(tmp, val);
            const int n = split_commas(tmp, f, 3);
            if (n != 1 && n != 2) return refuse("--answers", val, "expects A,B (two token ids)");
            for (int k = 0; k < n; k++)
                if (int_arg(&c->answers[k], f[k], 0, ALAB_MAX_VOCAB - 1, "--answers", val, "answer")) return 2;
            c->has_answers = n;
            c->answers_arg = val;
        } else if (strcmp(a, "--receivers") == 0) {
            NEED_VAL();
            if (parse_receivers(c, val)) return 2;
        } else if (strcmp(a, "--direction") == 0) {
            NEED_VAL();
            if (strcmp(val, "denoise") == 0) c->direction = ALAB_DENOISE;
            else if (strcmp(val, "noise") == 0) c->direction = ALAB_NOISE;
            else return refuse("--direction", val, "expects denoise or noise");
        } else if (strcmp(a, "--freeze-mlp") == 0) c->freeze_mlp = 1;
        else if (strcmp(a, "--n-null") == 0) {
            NEED_VAL();
            if (int_arg(&c->n_null, val, 0, 100000, "--n-null", val, "count")) return 2;
        } else return usage_error("unknown option %s", a);
#undef NEED_VAL
    }
    c->run.interventions = c->interv;
    c->run.n_interventions = c->n_interv;
    const int evidence = c->cmd && strcmp(c->cmd, "evidence") == 0;
    if (evidence && is_kind(c, "composition") && (c->text || c->set))
        return usage_error("%s", "--kind composition reads the weights alone: it takes no --text or --set");
    if (!c->text && !(evidence && (c->set || is_kind(c, "composition"))))
        return usage_error("%s", "--text is required (or, for evidence, --set)");
    if (c->has_answers == 1 && !(evidence && is_kind(c, "dla")))
        return refuse("--answers", c->answers_arg, "expects A,B (two token ids; one id A is for --kind dla only)");
    if (c->set && c->text) return usage_error("%s", "give --text or --set, not both");
    if (c->set && c->kind && strcmp(c->kind, "edge") && strcmp(c->kind, "tokens"))
        return usage_error("%s", "--set works with --kind edge or tokens");
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
        size_t dl;
        for (int i = 0; i < n; i++)
            fprintf(f, "%4d  %6d  '%s'\n", i, ids[i], display(alab_model_bpe(m), ids[i], &dl));
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
    /* the null of the mask the last layer ran under (the CLI sets one mask for every layer; "causal" is the layer's
       own, within its sliding window when config.json gives one: Mistral, Gemma 3) */
    const int own_window = c->run.mask == ALAB_MASK_CAUSAL ? alab_model_layer_window(m, L - 1) : 0;
    const int null_mode = own_window > 0 ? ALAB_MASK_WINDOW : c->run.mask, null_window = own_window > 0 ? own_window : c->run.window;
    double dag = alab_dag_score(avg, T), null_dag = alab_mask_null_dag_score(null_mode, null_window, T);
    if ((rc = alab_result_topk(top_ids, top_p, k, m))) { rc = fail_rc(rc, "top-k"); goto done; }

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
            const char *d = display(bpe, top_ids[i], &dl);
            json_str(f, d, dl);
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
        for (int i = 0; i < T; i++) fprintf(f, " [%s]", display(bpe, ids[i], &dl));
        fprintf(f, "\n\nlast layer, head-averaged attention (row = effect i, column = cause j):\n");
        for (int i = 0; i < T; i++) {
            fprintf(f, "%3d ", i);
            for (int j = 0; j < T; j++) fprintf(f, " %5.3f", avg[(size_t)i * T + j]);
            fputc('\n', f);
        }
        char mask_name[32];
        if (null_mode == ALAB_MASK_WINDOW) snprintf(mask_name, sizeof mask_name, "window:%d", null_window);
        else snprintf(mask_name, sizeof mask_name, "%s", null_mode == ALAB_MASK_FULL ? "full" : "causal");
        fprintf(f, "\nDAG score (last layer, head average): %.4f   null (uniform attention, mask %s, T=%d): %.4f\n",
                dag, mask_name, T, null_dag);
        fprintf(f, "per head:");
        for (int h = 0; h < NH; h++) fprintf(f, " h%d=%.4f", h, head_dag[h]);
        fprintf(f, "\n\nnext token (top %d%s):\n", k, c->n_interv ? ", after the interventions" : "");
        for (int i = 0; i < k; i++)
            fprintf(f, "  %2d. %-16s %6.2f%%  (id %d)\n", i + 1, display(bpe, top_ids[i], &dl),
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

/* ---- evidence (docs/evidence.md) ------------------------------------------ */

static void json_num(FILE *f, double v) {
    if (isfinite(v)) fprintf(f, "%.9g", v);
    else fputs("null", f);
}

static int ev_rank(FILE *f, const char *name, const double *a, const double *b, int n) {
    double rho, tau;
    int rc = alab_spearman(&rho, a, b, n);
    if (!rc) rc = alab_kendall_tau_b(&tau, a, b, n);
    if (rc) return rc;
    fprintf(f, ",\"%s\":{\"spearman\":", name);
    json_num(f, rho);
    fputs(",\"kendall\":", f);
    json_num(f, tau);
    fputc('}', f);
    return 0;
}

static int ev_edge(FILE *f, const cli *c, alab_model *m, const int *ids, int T) {
    const alab_config *cfg = alab_model_config(m);
    const int layer = c->ev_layer < 0 ? cfg->n_layer - 1 : c->ev_layer;
    const size_t TT = (size_t)T * T;
    float *buf = malloc(3 * TT * sizeof *buf);
    double *a = malloc(2 * TT * sizeof *a);
    if (!buf || !a) { free(buf); free(a); return ALAB_ENOMEM; }
    float *A = buf, *E = buf + TT, *EL = buf + 2 * TT;
    int rc = alab_edge_knockout(A, E, EL, m, ids, T, layer, c->ev_head, 0, T, c->ko_mode);
    if (!rc) {
        int n = 0;
        for (int i = 0; i < T; i++)
            for (int j = 0; j <= i; j++, n++) { a[n] = A[i * T + j]; a[TT + n] = E[i * T + j]; }
        fprintf(f, ",\"layer\":%d,\"head\":", layer);
        if (c->ev_head < 0) fputs("\"all\"", f); else fprintf(f, "%d", c->ev_head);
        fputs(",\"A\":", f); json_floats(f, A, TT);
        fputs(",\"E\":", f);
        fputc('[', f);
        for (size_t x = 0; x < TT; x++) { if (x) fputc(',', f); json_num(f, E[x]); }
        fputs("],\"E_last\":[", f);
        for (size_t x = 0; x < TT; x++) { if (x) fputc(',', f); json_num(f, EL[x]); }
        fputc(']', f);
        rc = ev_rank(f, "A_vs_E", a, a + TT, n);
        double share;
        if (!rc && !(rc = alab_top_k_overlap(&share, a, a + TT, n, T))) {
            fprintf(f, ",\"top_k\":%d,\"top_k_overlap\":", T < n ? T : n);
            json_num(f, share);
        }
    }
    free(buf);
    free(a);
    return rc;
}

static int ev_tokens(FILE *f, const cli *c, alab_model *m, const int *ids, int T) {
    const alab_config *cfg = alab_model_config(m);
    const int L = cfg->n_layer, NH = cfg->n_head;
    float *eff = malloc((size_t)T * sizeof *eff), *R = malloc((size_t)T * T * sizeof *R), *fl = malloc((size_t)T * sizeof *fl);
    double *d = malloc(4 * (size_t)T * sizeof *d);
    int neutral = c->neutral;
    if (c->token_mode == ALAB_TOKEN_REPLACE && neutral < 0) { /* the JS API's default: " the" when one token, else 0 */
        int *t = NULL, nt = 0;
        if (encode(&t, &nt, m, " the")) { free(t); free(eff); free(R); free(fl); free(d); return -1000; }
        neutral = nt == 1 ? t[0] : 0;
        free(t);
    }
    int rc = eff && R && fl && d ? alab_token_knockout(eff, m, ids, T, 0, T,
        c->token_mode == ALAB_TOKEN_COLUMN && c->ko_mode == ALAB_KO_ZERO ? ALAB_TOKEN_COLUMN_ZERO : c->token_mode, neutral) : ALAB_ENOMEM;
    if (!rc) rc = alab_forward(m, ids, T, NULL);
    if (!rc) rc = alab_attention_rollout(R, alab_result_attention(m), L, NH, T);
    if (!rc) rc = alab_attention_flow(fl, alab_result_attention(m), L, NH, T, T - 1);
    if (!rc) {
        const float *att = alab_result_attention(m) + (size_t)(L - 1) * NH * T * T;
        for (int j = 0; j < T; j++) {
            double s = 0.0;
            for (int h = 0; h < NH; h++) s += att[(size_t)h * T * T + (size_t)(T - 1) * T + j];
            d[j] = eff[j];
            d[T + j] = s / NH;
            d[2 * T + j] = R[(size_t)(T - 1) * T + j];
            d[3 * T + j] = fl[j];
        }
        fputs(",\"effect\":", f); json_floats(f, eff, (size_t)T);
        fputs(",\"readings\":{\"last_layer\":[", f);
        for (int j = 0; j < T; j++) { if (j) fputc(',', f); json_num(f, d[T + j]); }
        fputs("],\"rollout\":", f); json_floats(f, R + (size_t)(T - 1) * T, (size_t)T);
        fputs(",\"flow\":", f); json_floats(f, fl, (size_t)T);
        fputc('}', f);
        rc = ev_rank(f, "last_layer", d + T, d, T);
        if (!rc) rc = ev_rank(f, "rollout", d + 2 * T, d, T);
        if (!rc) rc = ev_rank(f, "flow", d + 3 * T, d, T);
    }
    free(eff); free(R); free(fl); free(d);
    return rc;
}

static int evidence_seed_bad(const cli *c);

static int ev_ablation(FILE *f, const cli *c, alab_model *m, const int *ids, int T) {
    const alab_config *cfg = alab_model_config(m);
    const int L = cfg->n_layer, NH = cfg->n_head, C = NH * cfg->head_dim, LH = L * NH; /* C: head outputs */
    int *ref = NULL, Tr = 0;
    /* the default reference is the JS API's (web/src/evidence-reference.js, generated into reference_text.h) */
    if (encode(&ref, &Tr, m, c->reference ? c->reference : ALAB_REFERENCE_TEXT)) { free(ref); return -1000; }
    if (Tr > cfg->n_positions) Tr = cfg->n_positions;
    float *hv = malloc((size_t)L * (Tr ? Tr : 1) * C * sizeof *hv), *delta = malloc(3 * (size_t)LH * sizeof *delta);
    double *dd = malloc(3 * (size_t)LH * sizeof *dd);
    int rc = hv && delta && dd ? alab_capture_head_outputs(hv, m, ref, Tr) : ALAB_ENOMEM;
    static const char *names[3] = {"zero", "mean", "resample"};
    for (int mode = 0; mode < 3 && !rc; mode++) {
        double base;
        rc = alab_head_importance_mode(delta + mode * LH, &base, m, ids, T, mode, mode ? hv : NULL, mode ? Tr : 0);
        if (rc) break;
        fprintf(f, ",\"%s\":{\"base_loss\":", names[mode]);
        json_num(f, base);
        fputs(",\"delta\":", f);
        json_floats(f, delta + mode * LH, (size_t)LH);
        fputc('}', f);
        for (int i = 0; i < LH; i++) dd[mode * LH + i] = delta[mode * LH + i];
    }
    /* resample averaged over K draws of a window of the reference (alab_resample_draws) */
    const int K = c->draws ? c->draws : 20;
    if (evidence_seed_bad(c)) {
        free(ref); free(hv); free(delta); free(dd);
        return -2000;
    }
    const unsigned seed = c->has_seed ? (unsigned)c->seed : 1u;
    float *draws = rc ? NULL : malloc((size_t)K * LH * sizeof *draws);
    int *offs = rc ? NULL : malloc((size_t)K * sizeof *offs);
    if (!rc && (!draws || !offs)) rc = ALAB_ENOMEM;
    if (!rc) {
        double base;
        rc = alab_resample_draws(delta + 2 * LH, draws, offs, &base, m, ids, T, hv, Tr, K, seed);
        if (!rc) {
            fprintf(f, ",\"resample_draws\":{\"K\":%d,\"seed\":%u,\"offsets\":", K, seed);
            json_ints(f, offs, K);
            fputs(",\"delta\":", f);
            json_floats(f, delta + 2 * LH, (size_t)LH);
            fputs(",\"draws\":", f);
            json_floats(f, draws, (size_t)K * LH);
            fputc('}', f);
            for (int i = 0; i < LH; i++) dd[2 * LH + i] = delta[2 * LH + i];
        }
    }
    free(draws);
    free(offs);
    if (!rc) rc = ev_rank(f, "zero_vs_mean", dd, dd + LH, LH);
    if (!rc) rc = ev_rank(f, "zero_vs_resample", dd, dd + 2 * LH, LH);
    if (!rc) rc = ev_rank(f, "mean_vs_resample", dd + LH, dd + 2 * LH, LH);
    free(ref); free(hv); free(delta); free(dd);
    return rc;
}

/* The corrupted input of a pair kind (patch, pattern-value, path, trace): --corrupt, as many tokens as the
 * clean text, and the answers: --answers, or each run's top next token (clean, corrupted). *d is the caller's
 * to free, whatever the result; -1000 / -2000 once the reason is on stderr. */
static int ev_pair(int **d, int ans[2], const cli *c, alab_model *m, const int *ids, int T) {
    *d = NULL;
    if (!c->corrupt) {
        usage_error("--kind %s needs --corrupt TEXT", c->kind);
        return -2000;
    }
    int Td = 0;
    if (encode(d, &Td, m, c->corrupt)) return -1000;
    if (Td != T) {
        fprintf(stderr, "attnlab: the clean text has %d tokens and the corrupted one %d; patching needs equal lengths\n", T, Td);
        return -2000;
    }
    ans[0] = c->answers[0];
    ans[1] = c->answers[1];
    int rc = 0;
    if (!c->has_answers) { /* each run's top next token */
        for (int k = 0; k < 2 && !rc; k++) {
            float p;
            rc = alab_forward(m, k ? *d : ids, T, NULL);
            if (!rc) rc = alab_result_topk(&ans[k], &p, 1, m);
        }
    }
    return rc;
}

/* ,"answers":[a,b],"ld_clean":x,"ld_corrupt":y */
static void json_pair(FILE *f, const int ans[2], double ldc, double ldd) {
    fprintf(f, ",\"answers\":[%d,%d],\"ld_clean\":", ans[0], ans[1]);
    json_num(f, ldc);
    fputs(",\"ld_corrupt\":", f);
    json_num(f, ldd);
}

static void json_doubles(FILE *f, const double *x, int n) {
    fputc('[', f);
    for (int i = 0; i < n; i++) {
        if (i) fputc(',', f);
        json_num(f, x[i]);
    }
    fputc(']', f);
}

static int ev_patch(FILE *f, const cli *c, alab_model *m, const int *ids, int T) {
    const alab_config *cfg = alab_model_config(m);
    const int L = cfg->n_layer, NH = cfg->n_head;
    int *d = NULL, ans[2];
    int rc = ev_pair(&d, ans, c, m, ids, T);
    float *rg = rc ? NULL : malloc((size_t)L * T * sizeof *rg), *hg = rc ? NULL : malloc((size_t)L * NH * sizeof *hg);
    double ldc = 0, ldd = 0;
    if (!rc) rc = rg && hg ? alab_activation_patching(rg, hg, &ldc, &ldd, m, ids, d, T, ans[0], ans[1]) : ALAB_ENOMEM;
    if (!rc) {
        json_pair(f, ans, ldc, ldd);
        fputs(",\"resid\":", f); json_floats(f, rg, (size_t)L * T);
        fputs(",\"heads\":", f); json_floats(f, hg, (size_t)L * NH);
    }
    free(d); free(rg); free(hg);
    return rc;
}

/* Pattern versus value patching (alab_pattern_value_patching): per direction the pattern, value and both
 * grids, each (L, NH). */
static int ev_pattern_value(FILE *f, const cli *c, alab_model *m, const int *ids, int T) {
    const alab_config *cfg = alab_model_config(m);
    const size_t LH = (size_t)cfg->n_layer * cfg->n_head;
    int *d = NULL, ans[2];
    int rc = ev_pair(&d, ans, c, m, ids, T);
    float *g = rc ? NULL : malloc(6 * LH * sizeof *g);
    double ldc = 0, ldd = 0;
    if (!rc) rc = g ? alab_pattern_value_patching(g, &ldc, &ldd, m, ids, d, T, ans[0], ans[1]) : ALAB_ENOMEM;
    if (!rc) {
        static const char *dirs[2] = {"denoise", "noise"}, *parts[3] = {"pattern", "value", "both"};
        json_pair(f, ans, ldc, ldd);
        for (int dir = 0; dir < 2; dir++) {
            fprintf(f, ",\"%s\":{", dirs[dir]);
            for (int k = 0; k < 3; k++) {
                fprintf(f, "%s\"%s\":", k ? "," : "", parts[k]);
                json_floats(f, g + ((size_t)dir * 3 + k) * LH, LH);
            }
            fputc('}', f);
        }
    }
    free(d); free(g);
    return rc;
}

/* Path patching (alab_path_patching): one sender grid (L, NH) per receiver, null where no path exists. */
static int ev_path(FILE *f, const cli *c, alab_model *m, const int *ids, int T) {
    const alab_config *cfg = alab_model_config(m);
    const int L = cfg->n_layer, NH = cfg->n_head;
    const size_t LH = (size_t)L * NH;
    static const alab_path_receiver logits = {-1, -1, ALAB_PATH_LOGITS};
    const alab_path_receiver *recv = c->n_recv ? c->recv : &logits;
    const int n_recv = c->n_recv ? c->n_recv : 1;
    int *d = NULL, ans[2];
    int rc = ev_pair(&d, ans, c, m, ids, T);
    float *out = rc ? NULL : malloc((size_t)n_recv * LH * sizeof *out);
    double ldc = 0, ldd = 0;
    if (!rc)
        rc = out ? alab_path_patching(out, &ldc, &ldd, m, ids, d, T, ans[0], ans[1], recv, n_recv, c->direction,
                                      c->freeze_mlp ? ALAB_PATH_FREEZE_MLP : 0)
                 : ALAB_ENOMEM;
    if (rc == ALAB_ERANGE && ans[0] >= 0 && ans[0] < cfg->vocab_size && ans[1] >= 0 && ans[1] < cfg->vocab_size) {
        /* answers in the vocabulary: the range error is a receiver's, a usage error of --receivers */
        for (int k = 0; k < n_recv; k++)
            if (recv[k].input != ALAB_PATH_LOGITS && (recv[k].layer >= L || recv[k].head >= NH)) {
                fail_rc(rc, "--receivers");
                rc = -2000;
                break;
            }
    }
    if (!rc) {
        static const char *inputs[4] = {"q", "k", "v", "logits"};
        json_pair(f, ans, ldc, ldd);
        fprintf(f, ",\"direction\":\"%s\",\"freeze_mlp\":%s,\"receivers\":[", c->direction == ALAB_NOISE ? "noise" : "denoise",
                c->freeze_mlp ? "true" : "false");
        for (int k = 0; k < n_recv; k++) {
            if (recv[k].input == ALAB_PATH_LOGITS)
                fprintf(f, "%s{\"layer\":null,\"head\":null,\"input\":\"logits\"}", k ? "," : "");
            else
                fprintf(f, "%s{\"layer\":%d,\"head\":%d,\"input\":\"%s\"}", k ? "," : "", recv[k].layer, recv[k].head,
                        inputs[recv[k].input]);
        }
        fputs("],\"senders\":[", f);
        for (int k = 0; k < n_recv; k++) {
            if (k) fputc(',', f);
            json_floats(f, out + (size_t)k * LH, LH);
        }
        fputc(']', f);
    }
    free(d); free(out);
    return rc;
}

/* Direct logit attribution (alab_direct_logit_attribution) at the last position: the answers are --answers
 * (A alone: the logit of A), or the run's top next token and its second. */
static int ev_dla(FILE *f, const cli *c, alab_model *m, const int *ids, int T) {
    const alab_config *cfg = alab_model_config(m);
    const int L = cfg->n_layer;
    const size_t LH = (size_t)L * cfg->n_head;
    int ans[2] = {c->answers[0], c->has_answers == 1 ? -1 : c->answers[1]}, rc = 0;
    if (!c->has_answers) {
        float p[2];
        rc = alab_forward(m, ids, T, NULL);
        if (!rc) rc = alab_result_topk(ans, p, 2, m);
    }
    float *heads = malloc(LH * sizeof *heads), *src = malloc(LH * T * sizeof *src);
    double *terms = malloc((3 + 2 * (size_t)L) * sizeof *terms), ld = 0;
    if (!rc) rc = heads && src && terms ? alab_direct_logit_attribution(heads, src, terms, &ld, m, ids, T, ans[0], ans[1])
                                        : ALAB_ENOMEM;
    if (!rc) {
        if (ans[1] < 0) fprintf(f, ",\"answers\":[%d],\"ld\":", ans[0]);
        else fprintf(f, ",\"answers\":[%d,%d],\"ld\":", ans[0], ans[1]);
        json_num(f, ld);
        fputs(",\"heads\":", f); json_floats(f, heads, LH);
        fputs(",\"sources\":", f); json_floats(f, src, LH * T);
        fputs(",\"terms\":{\"token\":", f); json_num(f, terms[0]);
        fputs(",\"position\":", f); json_num(f, terms[1]);
        fputs(",\"final_bias\":", f); json_num(f, terms[2]);
        fputs(",\"attn_bias\":", f); json_doubles(f, terms + 3, L);
        fputs(",\"mlp\":", f); json_doubles(f, terms + 3 + L, L);
        fputc('}', f);
    }
    free(heads); free(src); free(terms);
    return rc;
}

/* Value-weighted attention's norms (alab_value_norms), (L, NH, T). */
static int ev_value_norms(FILE *f, const cli *c, alab_model *m, const int *ids, int T) {
    const alab_config *cfg = alab_model_config(m);
    const size_t n = (size_t)cfg->n_layer * cfg->n_head * T;
    float *norms = malloc(n * sizeof *norms);
    int rc = norms ? alab_value_norms(norms, m, ids, T) : ALAB_ENOMEM;
    if (!rc) {
        fputs(",\"norms\":", f);
        json_floats(f, norms, n);
    }
    free(norms);
    return rc;
}

/* Causal tracing by component (alab_component_tracing), denoising: attn and mlp, each (L, T). */
static int ev_trace(FILE *f, const cli *c, alab_model *m, const int *ids, int T) {
    const size_t LT = (size_t)alab_model_config(m)->n_layer * T;
    int *d = NULL, ans[2];
    int rc = ev_pair(&d, ans, c, m, ids, T);
    float *g = rc ? NULL : malloc(2 * LT * sizeof *g);
    double ldc = 0, ldd = 0;
    if (!rc) rc = g ? alab_component_tracing(g, g + LT, &ldc, &ldd, m, ids, d, T, ans[0], ans[1]) : ALAB_ENOMEM;
    if (!rc) {
        json_pair(f, ans, ldc, ldd);
        fputs(",\"attn\":", f); json_floats(f, g, LT);
        fputs(",\"mlp\":", f); json_floats(f, g + LT, LT);
    }
    free(d); free(g);
    return rc;
}

/* Composition scores of the weights (alab_composition_scores): Q, K, V, each (L - 1, NH, NH), and their
 * Gaussian null. No text. */
static int ev_composition(FILE *f, const cli *c, alab_model *m) {
    const alab_config *cfg = alab_model_config(m);
    if (evidence_seed_bad(c)) return -2000;
    const uint32_t seed = c->has_seed ? (uint32_t)c->seed : 1u;
    const size_t n = cfg->n_layer > 1 ? (size_t)(cfg->n_layer - 1) * cfg->n_head * cfg->n_head : 1;
    float *sc = malloc(3 * n * sizeof *sc);
    double null[9];
    int rc = sc ? alab_composition_scores(sc, null, m, c->n_null, seed) : ALAB_ENOMEM;
    if (!rc) {
        static const char *names[3] = {"q", "k", "v"};
        fprintf(f, ",\"n_null\":%d,\"seed\":%u", c->n_null, seed);
        for (int k = 0; k < 3; k++) {
            fprintf(f, ",\"%s\":", names[k]);
            json_floats(f, sc + (size_t)k * n, n);
        }
        fputs(",\"null\":{", f);
        for (int k = 0; k < 3; k++) {
            fprintf(f, "%s\"%s\":{\"mean\":", k ? "," : "", names[k]);
            json_num(f, null[3 * k]);
            fputs(",\"lo\":", f); json_num(f, null[3 * k + 1]);
            fputs(",\"hi\":", f); json_num(f, null[3 * k + 2]);
            fputc('}', f);
        }
        fputc('}', f);
    }
    free(sc);
    return rc;
}

/* ---- evidence over a set of inputs ---------------------------------------- */

/* Nonzero (and why, on stderr) when --seed does not fit the evidence seeds' 32 bits. */
static int evidence_seed_bad(const cli *c) {
    if (!c->has_seed || c->seed <= 0xFFFFFFFFull) return 0;
    fprintf(stderr, "attnlab: --seed %llu: the evidence seeds are 32-bit (0 to 4294967295)\n", c->seed);
    return 1;
}

/* The name a set is reported under: heldout, repeated, or "file". */
static const char *named_or_file(const char *set) {
    return strcmp(set, "heldout") == 0 || strcmp(set, "repeated") == 0 ? set : "file";
}

typedef struct {
    int **ids;
    int *T;
    int n;
} input_set;

static void set_free(input_set *s) {
    for (int k = 0; k < s->n; k++) free(s->ids[k]);
    free(s->ids);
    free(s->T);
    s->ids = NULL;
    s->T = NULL;
    s->n = 0;
}

static int set_push(input_set *s, int *ids, int T, int P, int index) {
    if (T < 2) {
        fprintf(stderr, "attnlab: --set: input %d has %d tokens; at least 2 are needed\n", index, T);
        free(ids);
        return 1;
    }
    int **ni = realloc(s->ids, (size_t)(s->n + 1) * sizeof *ni);
    if (ni) s->ids = ni;
    int *nt = ni ? realloc(s->T, (size_t)(s->n + 1) * sizeof *nt) : NULL;
    if (!ni || !nt) { free(ids); return fail_rc(ALAB_ENOMEM, "--set"); }
    s->T = nt;
    s->ids[s->n] = ids;
    s->T[s->n] = T > P ? P : T; /* cut at n_positions, as the JS API does */
    s->n++;
    return 0;
}

/* The inputs of --set: heldout / repeated (the built-in model's evidence/ folder) or a file of texts. */
static int load_set(input_set *s, const cli *c, alab_model *m) {
    char dir[PATH_MAX], path[PATH_MAX];
    const int P = alab_model_config(m)->n_positions;
    const int named = strcmp(c->set, "heldout") == 0 || strcmp(c->set, "repeated") == 0;
    if (named) {
        const char *d = find_builtin_model(dir, sizeof dir);
        if (!d) { fprintf(stderr, "attnlab: --set %s: the built-in model's folder is not found\n", c->set); return 1; }
        snprintf(path, sizeof path, "%s/evidence/%s", d,
                 strcmp(c->set, "heldout") == 0 ? "heldout-sentences.txt" : "repeated-tokens.json");
    } else {
        snprintf(path, sizeof path, "%s", c->set);
    }
    size_t len = 0;
    char *text = NULL; /* any size, and pipes too (--set <(...)) */
    if (alab_read_whole_file(&text, &len, path, UINT64_MAX, ALAB_READ_STREAMS)) {
        fprintf(stderr, "attnlab: --set: cannot read %s: %s\n", path, strerror(errno));
        return 1;
    }
    int rc = 0;
    if (named && strcmp(c->set, "repeated") == 0) {
        json_doc doc;
        const json_value *seqs = NULL;
        if (json_parse(&doc, text, len, 0) == ALAB_OK) seqs = json_get(doc.root, "sequences");
        if (!seqs || seqs->type != JSON_ARRAY) {
            fprintf(stderr, "attnlab: --set repeated: %s has no \"sequences\" array\n", path);
            rc = 1;
        }
        const int V = alab_model_config(m)->vocab_size;
        for (uint32_t k = 0; !rc && k < seqs->n && (!c->limit || s->n < c->limit); k++) {
            const json_value *q = &seqs->u.items[k];
            int *ids = malloc((q->n ? q->n : 1) * sizeof *ids);
            if (!ids) { rc = fail_rc(ALAB_ENOMEM, "--set"); break; }
            for (uint32_t t = 0; t < q->n; t++) {
                int64_t v;
                if (json_int64(&q->u.items[t], &v) || v < 0 || v >= V) {
                    fprintf(stderr, "attnlab: --set repeated: sequence %u holds a token id outside [0, %d)\n", k, V);
                    rc = 1;
                    break;
                }
                ids[t] = (int)v;
            }
            if (rc) { free(ids); break; }
            rc = set_push(s, ids, (int)q->n, P, (int)k);
        }
        json_free(&doc);
    } else {
        int index = 0;
        for (char *line = text; line && *line && !rc && (!c->limit || s->n < c->limit);) {
            char *nl = strchr(line, '\n');
            if (nl) *nl = '\0';
            size_t l = strlen(line);
            if (l && line[l - 1] == '\r') line[--l] = '\0';
            if (l) {
                int *ids = NULL, T = 0;
                if (encode(&ids, &T, m, line)) { free(ids); rc = 1; break; }
                rc = set_push(s, ids, T, P, index);
                index++;
            }
            line = nl ? nl + 1 : NULL;
        }
    }
    free(text);
    if (!rc && s->n == 0) { fprintf(stderr, "attnlab: --set %s holds no inputs\n", c->set); rc = 1; }
    return rc;
}

static void json_corr(FILE *f, const char *name, const alab_corr_summary *s) {
    fprintf(f, "\"%s\":{\"mean\":", name);
    json_num(f, s->mean);
    const char *keys[7] = {"lo", "hi", "null_mean", "null_lo", "null_hi", "p", "p_greater"};
    const double v[7] = {s->lo, s->hi, s->null_mean, s->null_lo, s->null_hi, s->p, s->p_greater};
    for (int i = 0; i < 7; i++) {
        fprintf(f, ",\"%s\":", keys[i]);
        json_num(f, v[i]);
    }
    fprintf(f, ",\"n_defined\":%d,\"n_points\":%d,\"n_above_floor\":%d}", s->n_defined, s->n_points, s->n_above_floor);
}

static void json_four(FILE *f, const char *name, const alab_corr_summary *sp, const alab_corr_summary *kd,
                      const alab_corr_summary *un, const alab_corr_summary *pm) {
    fprintf(f, ",\"%s\":{", name);
    json_corr(f, "spearman", sp);
    fputc(',', f);
    json_corr(f, "kendall", kd);
    fputc(',', f);
    json_corr(f, "uniform", un);
    fputc(',', f);
    json_corr(f, "permuted", pm);
    fputc('}', f);
}

/* The floor of a set measure, as the JS API derives it: --epsilon, or 10 x the largest KL a no-op
 * renormalisation leaves (alab_knockout_noise of `layer`, -1 for every layer) on the first n_noise inputs. */
static int set_noise_floor(double *eps, double *noise, const cli *c, alab_model *m, const input_set *s, int n_noise,
                           int layer) {
    int rc = ALAB_OK;
    *noise = 0.0;
    for (int k = 0; k < n_noise && rc == ALAB_OK; k++) {
        double x;
        if ((rc = alab_knockout_noise(&x, m, s->ids[k], s->T[k], layer)) == ALAB_OK && x > *noise) *noise = x;
    }
    *eps = c->epsilon < 0.0 ? 10.0 * *noise : c->epsilon;
    return rc;
}

static int ev_edge_set(FILE *f, const cli *c, alab_model *m) {
    const alab_config *cfg = alab_model_config(m);
    const int layer = c->ev_layer < 0 ? cfg->n_layer - 1 : c->ev_layer;
    if (layer >= cfg->n_layer) {
        fprintf(stderr, "attnlab: --layer %d: the model has %d layers\n", layer, cfg->n_layer);
        return -2000;
    }
    if (evidence_seed_bad(c)) return -2000;
    input_set s = {0};
    if (load_set(&s, c, m)) { set_free(&s); return -1000; }
    const int n = s.n;
    float **grids = calloc(3 * (size_t)n, sizeof *grids);
    double *per = malloc(4 * (size_t)n * sizeof *per);
    int rc = grids && per ? ALAB_OK : ALAB_ENOMEM;
    for (int k = 0; k < n && rc == ALAB_OK; k++) {
        const size_t TT = (size_t)s.T[k] * s.T[k];
        for (int g = 0; g < 3 && rc == ALAB_OK; g++)
            if (!(grids[g * n + k] = malloc(TT * sizeof(float)))) rc = ALAB_ENOMEM;
        if (rc == ALAB_OK)
            rc = alab_edge_knockout(grids[k], grids[n + k], grids[2 * n + k], m, s.ids[k], s.T[k], layer, c->ev_head, 0,
                                    s.T[k], c->ko_mode);
    }
    /* the noise floor: 10 x the largest KL a no-op renormalisation leaves, over the first 10 inputs */
    double noise = 0.0, eps = 0.0;
    const int n_noise = c->epsilon < 0.0 ? (n < 10 ? n : 10) : 0;
    if (rc == ALAB_OK) rc = set_noise_floor(&eps, &noise, c, m, &s, n_noise, layer);
    alab_edge_set r;
    const alab_set_stats st = {c->n_boot, c->n_perm, c->level, c->has_seed ? (uint32_t)c->seed : 1u};
    if (rc == ALAB_OK)
        rc = alab_edge_set_summary(&r, per, (const float *const *)grids, (const float *const *)grids + n,
                                   (const float *const *)grids + 2 * n, s.T, n, layer == cfg->n_layer - 1, eps, &st);
    if (rc == ALAB_OK) {
        fprintf(f, ",\"set\":\"%s\",\"n\":%d,\"layer\":%d,\"head\":", named_or_file(c->set), n, layer);
        if (c->ev_head < 0) fputs("\"all\"", f); else fprintf(f, "%d", c->ev_head);
        fprintf(f, ",\"knockout\":\"%s\",\"seed\":%u,\"n_boot\":%d,\"n_perm\":%d,\"level\":", c->ko_mode ? "zero" : "renorm",
                st.seed, st.n_boot, st.n_perm);
        json_num(f, st.level);
        fputs(",\"eps\":", f);
        json_num(f, eps);
        if (n_noise) {
            fputs(",\"noise\":{\"max_kl\":", f);
            json_num(f, noise);
            fprintf(f, ",\"factor\":10,\"inputs\":%d}", n_noise);
        }
        fprintf(f, ",\"last_row_only\":%s", layer == cfg->n_layer - 1 ? "true" : "false");
        json_four(f, "local", &r.local, &r.local_kendall, &r.local_uniform, &r.local_permuted);
        json_four(f, "last", &r.last, &r.last_kendall, &r.last_uniform, &r.last_permuted);
        fputs(",\"rows\":{\"mean\":", f); json_num(f, r.rows_mean);
        fputs(",\"lo\":", f); json_num(f, r.rows_lo);
        fputs(",\"hi\":", f); json_num(f, r.rows_hi);
        fputs("},\"top_k_overlap\":{\"mean\":", f); json_num(f, r.topk_mean);
        fputs(",\"lo\":", f); json_num(f, r.topk_lo);
        fputs(",\"hi\":", f); json_num(f, r.topk_hi);
        fputs("},\"mean_effect\":{\"mean\":", f); json_num(f, r.effect_mean);
        fputs(",\"lo\":", f); json_num(f, r.effect_lo);
        fputs(",\"hi\":", f); json_num(f, r.effect_hi);
        fputs("},\"per_input\":[", f);
        for (int k = 0; k < n; k++) {
            fprintf(f, "%s{\"T\":%d,\"spearman\":", k ? "," : "", s.T[k]);
            json_num(f, per[k]);
            fputs(",\"spearman_last\":", f); json_num(f, per[n + k]);
            fputs(",\"row_spearman\":", f); json_num(f, per[2 * n + k]);
            fputs(",\"top_k_overlap\":", f); json_num(f, per[3 * n + k]);
            fputc('}', f);
        }
        fputc(']', f);
    }
    for (int g = 0; grids && g < 3 * n; g++) free(grids[g]);
    free(grids);
    free(per);
    set_free(&s);
    return rc;
}

/* Token knockout over a set: per input the effects and the three readings, each reading's correlation over
 * the inputs (one permutation group per input), the noise floor of a token knockout (layer -1). */
static int ev_tokens_set(FILE *f, const cli *c, alab_model *m) {
    const alab_config *cfg = alab_model_config(m);
    const int L = cfg->n_layer, NH = cfg->n_head;
    if (evidence_seed_bad(c)) return -2000;
    input_set s = {0};
    if (load_set(&s, c, m)) { set_free(&s); return -1000; }
    const int n = s.n;
    size_t total = 0;
    for (int k = 0; k < n; k++) total += (size_t)s.T[k];
    double *rd = malloc(3 * total * sizeof *rd), *eff = malloc(total * sizeof *eff), *per = malloc(3 * (size_t)n * sizeof *per);
    int *off = malloc(((size_t)n + 1) * sizeof *off), *grp = calloc(total ? total : 1, sizeof *grp);
    int rc = rd && eff && per && off && grp ? ALAB_OK : ALAB_ENOMEM;
    const int mode = c->token_mode == ALAB_TOKEN_COLUMN && c->ko_mode == ALAB_KO_ZERO ? ALAB_TOKEN_COLUMN_ZERO : c->token_mode;
    int neutral = c->neutral;
    if (rc == ALAB_OK && mode == ALAB_TOKEN_REPLACE && neutral < 0) {
        int *t = NULL, nt = 0;
        if (encode(&t, &nt, m, " the")) { free(t); rc = -1000; }
        else neutral = nt == 1 ? t[0] : 0;
        free(t);
    }
    size_t o = 0;
    for (int k = 0; k < n && rc == ALAB_OK; k++) {
        const int T = s.T[k];
        float *e = malloc((size_t)T * sizeof *e), *R = malloc((size_t)T * T * sizeof *R), *fl = malloc((size_t)T * sizeof *fl);
        if (!e || !R || !fl) rc = ALAB_ENOMEM;
        if (rc == ALAB_OK) rc = alab_token_knockout(e, m, s.ids[k], T, 0, T, mode, neutral);
        if (rc == ALAB_OK) rc = alab_forward(m, s.ids[k], T, NULL);
        if (rc == ALAB_OK) rc = alab_attention_rollout(R, alab_result_attention(m), L, NH, T);
        if (rc == ALAB_OK) rc = alab_attention_flow(fl, alab_result_attention(m), L, NH, T, T - 1);
        if (rc == ALAB_OK) {
            const float *att = alab_result_attention(m) + (size_t)(L - 1) * NH * T * T;
            off[k] = (int)o;
            for (int j = 0; j < T; j++, o++) {
                double a = 0.0;
                for (int h = 0; h < NH; h++) a += att[(size_t)h * T * T + (size_t)(T - 1) * T + j];
                rd[o] = a / NH;
                rd[total + o] = R[(size_t)(T - 1) * T + j];
                rd[2 * total + o] = fl[j];
                eff[o] = e[j];
            }
        }
        free(e); free(R); free(fl);
    }
    if (rc == ALAB_OK) off[n] = (int)o;
    double noise = 0.0, eps = 0.0;
    const int n_noise = c->epsilon < 0.0 ? (n < 10 ? n : 10) : 0;
    if (rc == ALAB_OK) rc = set_noise_floor(&eps, &noise, c, m, &s, n_noise, -1);
    const uint32_t seed = c->has_seed ? (uint32_t)c->seed : 1u;
    static const char *names[4] = {"last_layer", "rollout", "flow", "permuted"};
    alab_corr_summary sum[4];
    for (int r = 0; r < 4 && rc == ALAB_OK; r++) {
        /* the baseline: the last layer's reading shuffled once within each input (seed + 2) */
        if (r == 3 && (rc = alab_permute_within_groups(rd, off, NULL, n, seed + 2)) != ALAB_OK) break;
        alab_corr_spec sp = {n, off, rd + (size_t)(r == 3 ? 0 : r) * total, eff, grp, ALAB_CORR_SPEARMAN, eps, 4, c->n_boot,
                             c->n_perm, c->level, seed};
        rc = alab_corr_dataset(&sum[r], r == 3 ? NULL : per + (size_t)r * n, &sp);
    }
    if (rc == ALAB_OK) {
        static const char *mnames[4] = {"column", "column_zero", "delete", "replace"};
        fprintf(f, ",\"set\":\"%s\",\"n\":%d,\"mode\":\"%s\",\"seed\":%u,\"n_boot\":%d,\"n_perm\":%d,\"eps\":", named_or_file(c->set),
                n, mnames[mode], seed, c->n_boot, c->n_perm);
        json_num(f, eps);
        if (n_noise) {
            fputs(",\"noise\":{\"max_kl\":", f);
            json_num(f, noise);
            fprintf(f, ",\"factor\":10,\"inputs\":%d}", n_noise);
        }
        fputs(",\"readings\":{", f);
        for (int r = 0; r < 3; r++) {
            if (r) fputc(',', f);
            json_corr(f, names[r], &sum[r]);
        }
        fputs("},\"baselines\":{", f);
        json_corr(f, names[3], &sum[3]);
        fputs("},\"per_input\":[", f);
        for (int k = 0; k < n; k++) {
            fprintf(f, "%s{\"T\":%d", k ? "," : "", s.T[k]);
            for (int r = 0; r < 3; r++) {
                fprintf(f, ",\"%s\":", names[r]);
                json_num(f, per[(size_t)r * n + k]);
            }
            fputc('}', f);
        }
        fputc(']', f);
    }
    free(rd); free(eff); free(per); free(off); free(grp);
    set_free(&s);
    return rc;
}

static int cmd_evidence(const cli *c, alab_model *m) {
    if (!c->kind)
        return usage_error("%s", "evidence needs --kind edge|tokens|ablation|patch|pattern-value|path|dla|value-norms|"
                                 "trace|composition");
    if (c->set || is_kind(c, "composition")) { /* no text: no ids or tokens */
        char *out = NULL;
        size_t len = 0;
        FILE *f = open_memstream(&out, &len);
        if (!f) return fail_rc(ALAB_ENOMEM, "output");
        fprintf(f, "{\"kind\":\"%s\"", c->kind);
        int rc = !c->set ? ev_composition(f, c, m) : strcmp(c->kind, "tokens") == 0 ? ev_tokens_set(f, c, m)
                                                                                   : ev_edge_set(f, c, m);
        fputs("}\n", f);
        fclose(f);
        if (rc) {
            free(out);
            if (rc == -1000) return 1;
            if (rc == -2000) return 2;
            return fail_rc(rc, "evidence");
        }
        rc = emit(out, len);
        free(out);
        return rc;
    }
    int *ids = NULL, T = 0;
    if (encode(&ids, &T, m, c->text)) { free(ids); return 1; }
    if (T > alab_model_config(m)->n_positions) { /* before any grid is sized by T (60 001 tokens once asked for 43 GB) */
        const int P = alab_model_config(m)->n_positions;
        free(ids);
        fprintf(stderr, "attnlab: evidence: %s: %d tokens, but the model's context is %d (n_positions)\n",
                alab_strerror(ALAB_ETOOLONG), T, P);
        return 1;
    }
    char *out = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&out, &len);
    if (!f) { free(ids); return fail_rc(ALAB_ENOMEM, "output"); }
    fprintf(f, "{\"kind\":\"%s\",\"ids\":", c->kind);
    json_ints(f, ids, T);
    fputs(",\"tokens\":", f);
    json_tokens(f, alab_model_bpe(m), ids, T);
    int rc;
    if (strcmp(c->kind, "edge") == 0) rc = ev_edge(f, c, m, ids, T);
    else if (strcmp(c->kind, "tokens") == 0) rc = ev_tokens(f, c, m, ids, T);
    else if (strcmp(c->kind, "ablation") == 0) rc = ev_ablation(f, c, m, ids, T);
    else if (strcmp(c->kind, "patch") == 0) rc = ev_patch(f, c, m, ids, T);
    else if (strcmp(c->kind, "pattern-value") == 0) rc = ev_pattern_value(f, c, m, ids, T);
    else if (strcmp(c->kind, "path") == 0) rc = ev_path(f, c, m, ids, T);
    else if (strcmp(c->kind, "dla") == 0) rc = ev_dla(f, c, m, ids, T);
    else if (strcmp(c->kind, "value-norms") == 0) rc = ev_value_norms(f, c, m, ids, T);
    else rc = ev_trace(f, c, m, ids, T);
    fputs("}\n", f);
    fclose(f);
    free(ids);
    if (rc) { /* nothing on stdout when it failed */
        free(out);
        if (rc == -1000) return 1;  /* encode already said why */
        if (rc == -2000) return 2;  /* a usage error, already said */
        return fail_rc(rc, "evidence");
    }
    rc = emit(out, len);
    free(out);
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
    if (strcmp(c.cmd, "run") && strcmp(c.cmd, "tokenize") && strcmp(c.cmd, "generate") && strcmp(c.cmd, "evidence"))
        return usage_error("unknown command %s", c.cmd);
    alab_model *m = NULL;
    if (load(&m, &c)) return 1;
    if (strcmp(c.cmd, "run") == 0) rc = cmd_run(&c, m);
    else if (strcmp(c.cmd, "tokenize") == 0) rc = cmd_tokenize(&c, m);
    else if (strcmp(c.cmd, "evidence") == 0) rc = cmd_evidence(&c, m);
    else rc = cmd_generate(&c, m);
    alab_model_free(m);
    return rc;
}
