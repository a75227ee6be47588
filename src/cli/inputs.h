/*
 * inputs.h - the files a project is read from, which a verb that writes a
 * file of its own (render's document, dashboard's page) must never replace.
 */
#ifndef BENCHGATE_CLI_INPUTS_H
#define BENCHGATE_CLI_INPUTS_H

#include "cli/cli.h"

/*
 * What writing path (absolute, or relative to the working directory) would
 * replace or make: "the registry", "the store", "a file of the experiments
 * folder", "the lock of promotions", "the machine lease", ... (a static
 * string), or NULL when it is none of the project's inputs nor of
 * benchgate's own state. The registry's generated document counts when
 * generated is true (it is render's own output). Files there are compared
 * by device and inode, links followed (the atomic writer writes the file a
 * link leads to), and by name, as are files not there yet (benchgate.json,
 * the store, RUNS.md, a lock: read or locked once made; a link to nothing
 * by the name it leads to); a path through folders not made yet is
 * compared as it will be once they are ("new/../benchmarks/x.json" is
 * benchmarks/x.json).
 */
const char *bg_cli_input_at(const char *path, const struct bg_registry *reg, bool generated);

/*
 * bg_cli_input_at without a registry at hand (measure --export-jsonl):
 * the same files but the registry's evidence imports, the generated
 * document included.
 */
const char *bg_cli_project_file_at(const struct bg_config *cfg, const char *path);
/*
 * path as bg_path_named_later gives it, a link to nothing followed to the
 * name it leads to (the file a write through it would make); NULL when no
 * folder on the way is there. The caller frees it.
 */
char *bg_cli_named_later_followed(const char *path);
/* Whether path (there or not yet) lies in folder or below it, links resolved. */
bool bg_cli_file_within(const char *path, const char *folder);

#endif
