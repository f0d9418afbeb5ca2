/* commands.h — the commands that run the model once (commands.c), each
 * given the options and the loaded model, each returning the exit code. */
#ifndef ATTNLAB_COMMANDS_H
#define ATTNLAB_COMMANDS_H

#include "cli.h"

int cmd_run(const cli *c, alab_model *m);
int cmd_tokenize(const cli *c, alab_model *m);
int cmd_generate(const cli *c, alab_model *m);

#endif
