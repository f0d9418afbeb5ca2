/* attnlab — the native command-line tool.
 *
 *   attnlab run [--model DIR] --text TEXT [--do L,H|all,ROW,COL,hard]
 *               [--do L,H|all,ROW,COL,soft,LAMBDA] [--ablate L.H,...]
 *               [--mask causal|full|window:W] [--scale S] [--capture L,H]
 *               [--top K] [--threads N] [--half] [--json]
 *   attnlab tokenize [--model DIR] --text TEXT [--json]
 *   attnlab generate [--model DIR] --text TEXT [--max-new N] [--temperature T]
 *               [--top-k K] [--seed S] [--threads N] [--json]
 *   attnlab evidence --kind K ...   (the measures of measures.h; attnlab --help)
 *
 * JSON goes to stdout as one object, built in memory first so that an error
 * never leaves partial output; errors go to stderr with a non-zero exit.
 *
 * main.c reads the command line (args.c), loads the model (cli.c) and hands
 * both to the command: commands.c (run, tokenize, generate), measures.c
 * (evidence).
 */
#include <stdio.h>
#include <string.h>

#include "args.h"
#include "commands.h"
#include "evidence.h"

static const struct {
    const char *name;
    int (*run)(const cli *c, alab_model *m);
} COMMANDS[] = {
    {"run", cmd_run},
    {"tokenize", cmd_tokenize},
    {"generate", cmd_generate},
    {"evidence", cmd_evidence},
};

int main(int argc, char **argv) {
    if (argc >= 2 && (strcmp(argv[1], "--help") == 0 || strcmp(argv[1], "-h") == 0)) {
        print_usage(stdout);
        return 0;
    }
    if (argc >= 2 && strcmp(argv[1], "--version") == 0) {
        printf("attnlab %s\n", ALAB_VERSION);
        return 0;
    }
    cli c;
    int rc = parse_args(&c, argc, argv);
    if (rc) return rc;
    size_t k = 0;
    while (k < sizeof COMMANDS / sizeof COMMANDS[0] && strcmp(c.cmd, COMMANDS[k].name)) k++;
    if (k == sizeof COMMANDS / sizeof COMMANDS[0]) return usage_error("unknown command %s", c.cmd);
    alab_model *m = NULL;
    if (load(&m, &c)) return 1;
    rc = COMMANDS[k].run(&c, m);
    alab_model_free(m);
    return rc;
}
