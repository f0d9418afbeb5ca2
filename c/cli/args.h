/* args.h — the command line read into a cli (args.c). */
#ifndef ATTNLAB_ARGS_H
#define ATTNLAB_ARGS_H

#include <stdio.h>

#include "cli.h"

/* argv into *c, with every default set: 0, or the exit code (2) once it said why on stderr. */
int parse_args(cli *c, int argc, char **argv);
/* The usage text (--help): the commands, the evidence measures (measures.h), the flags. */
void print_usage(FILE *f);

#endif
