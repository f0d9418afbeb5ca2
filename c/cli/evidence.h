/* evidence.h — the evidence command (measures.c): its measures, one row of
 * measures.h each, and what args.c asks of them to check a command line. */
#ifndef ATTNLAB_EVIDENCE_H
#define ATTNLAB_EVIDENCE_H

#include <stddef.h>
#include <stdio.h>

#include "cli.h"

/* {"kind":K, ...} on stdout, or the reason on stderr; the exit code. */
int cmd_evidence(const cli *c, alab_model *m);

typedef struct cli_measure cli_measure;

/* The row of --kind K, or NULL. */
const cli_measure *cli_measure_find(const char *kind);
int cli_measure_reads_text(const cli_measure *ms); /* 0: the weights alone (no --text, no --set) */
int cli_measure_takes_set(const cli_measure *ms);  /* --set FILE */
int cli_measure_one_answer(const cli_measure *ms); /* --answers A alone */
/* The kinds of the rows keep accepts (NULL: all) in buf, in the table's order: "a<sep>b<last>c". */
const char *cli_measure_kinds(char *buf, size_t cap, int (*keep)(const cli_measure *), const char *sep,
                              const char *last);
/* 0, or (the reason on stderr) 2 when a flag of c->given does not apply to c's --kind (with or without --set). */
int cli_measure_check_flags(const cli *c);
/* The default of --budget: the estimated multiply-adds an evidence kind may do (docs/security.md, "Evidence"). */
#define CLI_DEFAULT_BUDGET 2e12
/* The evidence part of the usage text. */
void cli_measures_usage(FILE *f);

#endif
