/* The hook between the straggler rule (stragglers.c) and the hardware evidence (gpu_evidence.c):
 * kept apart so that either changes without the other. */
#include "query/stragglers.h"

#include "common/error.h"

#include <errno.h>
#include <stdlib.h>

/* NVML readings come every second or so and the rule's windows may be shorter: this much on each
 * side of the verdict's span is read too. */
#define MARGIN_NS 2000000000ull

int
rs__query_straggler_hardware(rs_store_read *r, struct rs_straggler_report *rep)
{
    if (rep->n_verdicts == 0 || !rep->has_window)
        return 0;
    uint32_t *ranks = calloc(rep->n_verdicts, sizeof *ranks);
    struct rs_gpu_evidence *ev = calloc(rep->n_verdicts, sizeof *ev);
    uint64_t t0 = rep->window.since_ns;
    int rc = 0;

    if (!ranks || !ev) {
        rc = -ENOMEM;
        goto out;
    }
    for (size_t i = 0; i < rep->n_verdicts; i++) {
        ranks[i] = rep->verdicts[i].rank;
        if (rep->verdicts[i].since_ns && rep->verdicts[i].since_ns < t0)
            t0 = rep->verdicts[i].since_ns;
    }
    t0 = t0 > MARGIN_NS ? t0 - MARGIN_NS : 0;
    if ((rc = rs_gpu_evidence_for_ranks(r, rep->job, ranks, rep->n_verdicts, t0,
                                        rep->window.until_ns + MARGIN_NS, ev)) != 0)
        goto out;
    for (size_t i = 0; i < rep->n_verdicts; i++) {
        struct rs_straggler_verdict *v = &rep->verdicts[i];
        v->hardware = ev[i];
        for (size_t k = 0; k < ev[i].n; k++)
            if (ev[i].items[k].kind == RS_GPU_EV_ECC || ev[i].items[k].kind == RS_GPU_EV_XID)
                v->action = RS_STRAGGLER_ACTION_DRAIN_CANDIDATE;
        if (v->action > rep->action)
            rep->action = v->action;
    }
out:
    free(ranks);
    free(ev);
    return rc;
}
