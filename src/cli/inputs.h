/*
 * inputs.h - the files a project is read from, which a verb that writes a
 * file of its own (render's document, dashboard's page) must never replace.
 */
#ifndef BENCHGATE_CLI_INPUTS_H
#define BENCHGATE_CLI_INPUTS_H

#include "cli/cli.h"

/*
 * What writing path (absolute, or relative to the working directory) would
 * replace: "the registry", "the store", "a file of the experiments folder",
 * ... (a static string), or NULL when it replaces none of the project's
 * inputs. The registry's generated document counts when generated is true
 * (it is render's own output). Files are compared by device and inode,
 * links followed (the atomic writer writes the file a link leads to); a
 * path through folders not made yet is compared as it will be once they
 * are ("new/../benchmarks/x.json" is benchmarks/x.json).
 */
const char *bg_cli_input_at(const char *path, const struct bg_registry *reg, bool generated);

/*
 * What writing path would replace without a registry at hand (measure
 * --export-jsonl): benchgate.json's files and the store's
 * (bg_config_file_role), a file of the experiments folder, a device lease,
 * the machine lease; NULL for none. Static strings.
 */
const char *bg_cli_project_file_at(const struct bg_config *cfg, const char *path);
/* Whether path (there or not yet) lies in folder or below it, links resolved. */
bool bg_cli_file_within(const char *path, const char *folder);

#endif
