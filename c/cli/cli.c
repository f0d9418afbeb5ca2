/* cli.c — what every command of the tool uses: errors reported on stderr
 * with the exit code, the built-in model found and a model loaded, a text
 * encoded, and the JSON and token output, written to stdout at once. */
#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli.h"

#ifndef ALAB_DEFAULT_MODEL_DIR
#define ALAB_DEFAULT_MODEL_DIR ""
#endif

/* ---- errors -------------------------------------------------------------- */

int fail_rc(int rc, const char *what) {
    const char *detail = alab_last_error();
    fprintf(stderr, "attnlab: %s: %s%s%s\n", what, alab_strerror(rc), detail[0] ? ": " : "", detail);
    return 1;
}

int usage_error(const char *fmt, const char *arg) {
    fprintf(stderr, "attnlab: ");
    fprintf(stderr, fmt, arg);
    fprintf(stderr, "\n(run `attnlab --help` for usage)\n");
    return 2;
}

/* ---- the model and its inputs -------------------------------------------- */

static int dir_has_model(const char *dir) {
    char path[PATH_MAX];
    snprintf(path, sizeof path, "%s/config.json", dir);
    return access(path, R_OK) == 0;
}

/* The built-in model: $ATTNLAB_MODEL_DIR, the directory compiled in, or
 * models/brown-gpt2 beside the executable's tree (repository or install). */
const char *find_builtin_model(char *buf, size_t cap) {
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

int load(alab_model **m, const cli *c) {
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

int encode(int **ids, int *n, const alab_model *m, const char *text) {
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

/* ---- output ------------------------------------------------------------- */

void json_str(FILE *f, const char *s, size_t n) {
    fputc('"', f);
    for (size_t i = 0; i < n; i++) {
        unsigned char c = (unsigned char)s[i];
        if (c == '"' || c == '\\') fprintf(f, "\\%c", c);
        else if (c < 0x20) fprintf(f, "\\u%04x", c);
        else fputc(c, f);
    }
    fputc('"', f);
}

void json_floats(FILE *f, const float *x, size_t n) {
    fputc('[', f);
    for (size_t i = 0; i < n; i++) {
        if (i) fputc(',', f);
        if (isfinite(x[i])) fprintf(f, "%.9g", x[i]);
        else fputs("null", f);
    }
    fputc(']', f);
}

void json_ints(FILE *f, const int *x, int n) {
    fputc('[', f);
    for (int i = 0; i < n; i++) fprintf(f, i ? ",%d" : "%d", x[i]);
    fputc(']', f);
}

/* A token's display string in a buffer that grows to fit it (a token of an added-token table may have 1024
 * bytes, and its display up to 4 bytes for each: a fixed buffer once turned such labels into ""). Valid until the
 * next call. */
const char *display(const alab_bpe *bpe, int id, size_t *len) {
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

void json_tokens(FILE *f, const alab_bpe *bpe, const int *ids, int n) {
    size_t len;
    fputc('[', f);
    for (int i = 0; i < n; i++) {
        if (i) fputc(',', f);
        const char *d = display(bpe, ids[i], &len);
        json_str(f, d, len);
    }
    fputc(']', f);
}

int write_stdout(char *out, size_t len) {
    if (fwrite(out, 1, len, stdout) != len || fflush(stdout) != 0) {
        fprintf(stderr, "attnlab: cannot write the output\n");
        return 1;
    }
    return 0;
}
