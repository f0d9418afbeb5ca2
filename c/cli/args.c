/* args.c — the command line read into a cli: each flag and its value
 * checked whole (numbers, ranges, a measure's kind against the table of
 * measures.h), then the combinations a command and its measure allow; and
 * the usage text. Every refusal names the flag and the value (exit 2). */
#include <errno.h>
#include <float.h>
#include <limits.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "args.h"
#include "evidence.h"

static const char *USAGE_COMMANDS =
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
    "  attnlab generate [--model DIR] --text TEXT [--max-new N] [--temperature T] [--top-k K] [--seed S] [--threads N] [--json]\n";

static const char *USAGE_END =
    "  attnlab --version\n"
    "Indices are 0-based. Without --model the built-in model (" BUILTIN_NAME ") is used.\n";

void print_usage(FILE *f) {
    fputs(USAGE_COMMANDS, f);
    cli_measures_usage(f);
    fputs(USAGE_END, f);
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
    /* a receiver named twice would be computed twice (4096 copies of one ran ~5 min): refused, not merged */
    for (int i = 0; i < n && !rc; i++)
        for (int j = 0; j < i && !rc; j++)
            if (c->recv[i].input == c->recv[j].input &&
                (c->recv[i].input == ALAB_PATH_LOGITS || (c->recv[i].layer == c->recv[j].layer && c->recv[i].head == c->recv[j].head)))
                rc = refuse("--receivers", arg, "EINVAL: receiver %d repeats receiver %d; give each receiver once", i + 1, j + 1);
    if (!rc) c->n_recv = n;
    free(tmp);
    free(f);
    return rc;
}

int parse_args(cli *c, int argc, char **argv) {
    char kinds[1024]; /* a list of the measures' kinds, for a message */
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
    c->budget = CLI_DEFAULT_BUDGET;
    alab_run_opts_init(&c->run);
    if (argc < 2) return usage_error("%s", "no command given");
    c->cmd = argv[1];
    for (int i = 2; i < argc; i++) {
        const char *a = argv[i];
        const char *val = i + 1 < argc ? argv[i + 1] : NULL;
        if (strncmp(a, "--", 2) == 0) { /* remembered once, for the evidence kinds' check */
            int seen = 0;
            for (int k = 0; k < c->n_given && !seen; k++) seen = strcmp(c->given[k], a) == 0;
            if (!seen && c->n_given < (int)(sizeof c->given / sizeof c->given[0])) c->given[c->n_given++] = a;
        }
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
            if (!(c->measure = cli_measure_find(val)))
                return refuse("--kind", val, "expects %s", cli_measure_kinds(kinds, sizeof kinds, NULL, ", ", " or "));
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
            if (c->epsilon == 0.0) c->epsilon = 0.0; /* -0 is 0 (it was printed as -0) */
        } else if (strcmp(a, "--budget") == 0) {
            NEED_VAL();
            char *end;
            errno = 0;
            c->budget = strtod(val, &end);
            if (errno || *end || end == val || strspn(val, "0123456789.eE+") != strlen(val) || !(c->budget >= 1.0) ||
                !(c->budget <= 1e30))
                return refuse("--budget", val, "expects a number of multiply-adds in [1, 1e30] (default %g)", CLI_DEFAULT_BUDGET);
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
    /* the measure's own needs (measures.h): a text, or the weights alone; one answer; a set */
    const int evidence = c->cmd && strcmp(c->cmd, "evidence") == 0;
    const cli_measure *ms = evidence ? c->measure : NULL;
    const int weights_only = ms && !cli_measure_reads_text(ms);
    if (weights_only && (c->text || c->set))
        return usage_error("--kind %s reads the weights alone: it takes no --text or --set", c->kind);
    if (!c->text && !(evidence && (c->set || weights_only)))
        return usage_error("%s", "--text is required (or, for evidence, --set)");
    if (c->has_answers == 1 && !(ms && cli_measure_one_answer(ms)))
        return refuse("--answers", c->answers_arg, "expects A,B (two token ids; one id A is for --kind %s only)",
                      cli_measure_kinds(kinds, sizeof kinds, cli_measure_one_answer, ", ", " or "));
    if (c->set && c->text) return usage_error("%s", "give --text or --set, not both");
    if (c->set && c->measure && !cli_measure_takes_set(c->measure))
        return usage_error("--set works with --kind %s",
                           cli_measure_kinds(kinds, sizeof kinds, cli_measure_takes_set, ", ", " or "));
    if (ms && cli_measure_check_flags(c)) return 2;
    return 0;
}
