/* Retention settings reloaded on SIGHUP (issue 23): the configuration is read again from where it
 * came from (the config file, the environment, the command line: rs_server_config.reread, which
 * main.c sets), and what changed of retention-s, raw-retention-s, rollup-window-s and
 * disk-budget-gb applies from the next maintenance sweep and space check, with one RS-AUDIT line
 * saying what changed (old -> new). Every other setting still takes a restart. */
#include "server/server_int.h"

#include "common/log.h"
#include "server/maintenance.h"
#include "server/space.h"

#include <stdio.h>

/* Appends " key=old->new" to buf when they differ; returns whether they did. */
static bool
changed(char *buf, size_t len, const char *key, double old, double now)
{
    size_t used = strlen(buf);

    if (old == now)
        return false;
    snprintf(buf + used, len - used, "%s%s=%g->%g", used ? " " : "", key, old, now);
    return true;
}

void
rs__server_retention_reload(struct rs_server *srv, rs_maintenance *m, rs_space *space,
                            struct rs_retention_settings *cur)
{
    const struct rs_server_config *cfg = srv->cfg;
    struct rs_server_config fresh;
    char err[256] = "", what[512] = "";

    if (!cfg->reread)
        return;
    if (cfg->reread(&fresh, err, sizeof err) != 0) {
        cfg->reread_free(&fresh);
        rs_log(RS_LOG_ERROR, "RS-RETENTION-RELOAD",
               "the configuration could not be read again, retention unchanged: %s", err);
        return;
    }
    struct rs_retention_settings next = {fresh.retention_s, fresh.raw_retention_s,
                                         fresh.rollup_window_s, fresh.disk_budget_gb};
    cfg->reread_free(&fresh);
    bool any = changed(what, sizeof what, "retention_s", (double)cur->retention_s,
                       (double)next.retention_s);
    any |= changed(what, sizeof what, "raw_retention_s", (double)cur->raw_retention_s,
                   (double)next.raw_retention_s);
    any |= changed(what, sizeof what, "rollup_window_s", (double)cur->rollup_window_s,
                   (double)next.rollup_window_s);
    any |= changed(what, sizeof what, "disk_budget_gb", cur->disk_budget_gb, next.disk_budget_gb);
    if (!any) {
        rs__server_audit(&rs__server_self, "retention-reload", "unchanged retention_s=%lld",
                         (long long)cur->retention_s);
        return;
    }
    struct rs_maintenance_options mo = {(uint64_t)next.retention_s, (uint64_t)next.raw_retention_s,
                                        (uint64_t)next.rollup_window_s, 0};
    if (rs_maintenance_set_options(m, &mo) != 0) {
        rs_log(RS_LOG_ERROR, "RS-RETENTION-RELOAD",
               "raw-retention-s %lld needs rollup-window-s: retention unchanged",
               (long long)next.raw_retention_s);
        return;
    }
    rs_space_set_budget(space, (uint64_t)(next.disk_budget_gb * (double)(1ull << 30)));
    *cur = next;
    rs__server_audit(&rs__server_self, "retention-reload", "%s", what);
}
