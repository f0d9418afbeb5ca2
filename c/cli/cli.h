/* cli.h — what the command-line tool's files share: the options of one
 * command line (args.c fills them), and cli.c's helpers for every command:
 * errors on stderr, the model (--model or the built-in one), a text's ids,
 * and the output, built in memory and written at once. */
#ifndef ATTNLAB_CLI_H
#define ATTNLAB_CLI_H

#include <stddef.h>
#include <stdio.h>

#include "attnlab.h"

#define BUILTIN_NAME "brown-gpt2"

struct cli_measure;

typedef struct {
    const char *cmd, *model, *text;
    const char *kind, *reference, *corrupt;  /* evidence */
    const struct cli_measure *measure;       /* --kind's row of measures.h (evidence.h) */
    int ev_layer, ev_head, answers[2], has_answers; /* has_answers: how many ids --answers gave (1 or 2) */
    const char *answers_arg;
    alab_path_receiver recv[ALAB_MAX_INTERVENTIONS]; /* --receivers (path); none: the logits */
    int n_recv, direction, freeze_mlp, n_null;
    int ko_mode, token_mode, neutral, draws, has_seed;
    const char *set;                         /* evidence over a set of inputs */
    int limit, n_boot, n_perm;
    double level, epsilon;                   /* epsilon < 0: from the noise floor */
    double budget;                           /* --budget: the work an evidence kind may do, in multiply-adds */
    const char *given[64];                   /* the flags given, each once (evidence refuses those of another kind) */
    int n_given;
    int json, top, max_new, top_k, threads;
    int half;   /* --half: ALAB_WEIGHTS_HALF */
    float temperature;
    unsigned long long seed;
    alab_intervention interv[256];
    int n_interv;
    alab_run_opts run;
} cli;

/* ---- errors: each says why on stderr and returns the exit code ------------- */
int fail_rc(int rc, const char *what);               /* an engine error: 1 */
int usage_error(const char *fmt, const char *arg);   /* a usage error: 2 */

/* ---- the model and its inputs ------------------------------------------------ */
/* The built-in model's folder (in buf, or a string of the environment), or NULL. */
const char *find_builtin_model(char *buf, size_t cap);
/* --model DIR (or the built-in model) loaded with --half and --threads; 0, or 1 when it said why. */
int load(alab_model **m, const cli *c);
/* The ids of text in *ids (malloc'd, the caller frees it whatever the result); 0, or 1 when it said why. */
int encode(int **ids, int *n, const alab_model *m, const char *text);

/* ---- output ------------------------------------------------------------------ */
void json_str(FILE *f, const char *s, size_t n);
void json_floats(FILE *f, const float *x, size_t n);  /* null for a value that is not finite */
void json_ints(FILE *f, const int *x, int n);
void json_tokens(FILE *f, const alab_bpe *bpe, const int *ids, int n);
/* A token's display string, valid until the next call. */
const char *display(const alab_bpe *bpe, int id, size_t *len);
/* out[0..len) to stdout; 0, or 1 when it could not be written. */
int write_stdout(char *out, size_t len);

#endif
