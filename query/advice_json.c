/* The advisor's findings as JSON (advice.h): per kind its name, title, what its numbers mean, how
 * its cost is estimated, and what to change in PyTorch terms. The one place these texts live. */
#include "query/advice.h"

#include "query/advice_int.h"

#include <stdio.h>

struct kind_text {
    const char *name, *title;
    const char *seen[RS_ADVICE_SEEN]; /* JSON keys of the numbers seen; NULL: unused */
    const char *how, *fix;
};

static const struct kind_text texts[RS_ADVICE_KIND_COUNT] = {
    [RS_ADVICE_LAUNCH_BOUND] =
        {"launch_bound",
         "the GPU waits for the host to launch kernels",
         {"idle_between_kernels_ms", "idle_share_pct", "kernels_per_ms", "median_kernel_us"},
         "median per step of the GPU idle between kernels that neither opens the step nor follows "
         "a host synchronization: all of it goes if the host queues work faster than the GPU "
         "runs it",
         "launch fewer, larger kernels: capture the step in CUDA graphs (torch.compile("
         "mode=\"reduce-overhead\") or torch.cuda.graphs), torch.compile to fuse small ops, or a "
         "larger batch per step; move Python work out of the step"},
    [RS_ADVICE_HOST_SYNC] =
        {"host_sync",
         "host synchronizations inside the step leave the GPU idle",
         {"syncs_per_step", "idle_after_syncs_ms", "idle_per_sync_us", NULL},
         "median per step of the GPU idle that begins where a host synchronization ended "
         "(within 50 us): without the synchronization the host would have queued that work "
         "ahead",
         "remove .item(), .cpu(), .tolist(), print(tensor) and torch.cuda.synchronize() from the "
         "step: keep metrics on the GPU and read them every N steps, use non_blocking copies, "
         "avoid data-dependent Python branches on GPU values (torch.where instead)"},
    [RS_ADVICE_INPUT] =
        {"input_pipeline",
         "the GPU idles at the start of each step waiting for its input",
         {"idle_at_step_start_ms", "steps_with_idle_pct", NULL, NULL},
         "median per step of the GPU idle from the step's start to its first kernel or copy: "
         "all of it goes when the next batch is ready before the step begins",
         "prepare batches ahead: DataLoader(num_workers>0, pin_memory=True, prefetch_factor, "
         "persistent_workers=True), move decoding/augmentation off the training thread, copy "
         "with .to(device, non_blocking=True) from pinned memory"},
    [RS_ADVICE_PAGEABLE_COPY] =
        {"pageable_copy",
         "host-device copies from pageable memory block the host",
         {"slow_copies_per_step", "mb_per_step", "gb_per_s", "copy_ms_per_step"},
         "median per step of the copies' time beyond the same bytes at pinned bandwidth (50 "
         "GB/s), plus the launch idle of the steps they are in (a synchronous copy stops the host "
         "from running ahead); copies of 1 MB or more below 15 GB/s count as pageable",
         "allocate host tensors in pinned memory (tensor.pin_memory(), DataLoader(pin_memory="
         "True)) and copy with .to(device, non_blocking=True); keep tensors that do not change "
         "on the GPU instead of copying them every step"},
    [RS_ADVICE_FP32_GEMM] =
        {"fp32_gemm",
         "matrix multiplies run in fp32 without tensor cores",
         {"fp32_gemm_ms_per_step", "share_of_gpu_busy_pct", "fp32_gemms_per_step", NULL},
         "median per step of the fp32 GEMM kernels' time times 1 - 67/494 (H100 dense FP32 vs "
         "TF32 tensor-core peak): what is left if they ran at tensor-core speed",
         "torch.backends.cuda.matmul.allow_tf32 = True (or torch.set_float32_matmul_precision("
         "\"high\")), or run the model under torch.autocast(\"cuda\", dtype=torch.bfloat16)"},
    [RS_ADVICE_UNFUSED] =
        {"unfused_elementwise",
         "chains of small elementwise kernels repeat every step",
         {"chains_per_step", "kernels_in_chains_per_step", "chain_ms_per_step", NULL},
         "for each chain of 3 or more elementwise kernels back to back on one stream seen in at "
         "least half the steps: its time minus its longest kernel (one fused kernel reads and "
         "writes the tensors once), summed per step",
         "fuse them: torch.compile the model or the function, or use the fused op PyTorch has "
         "(F.gelu(approximate=\"tanh\"), F.silu, F.layer_norm, torch.addcmul, fused optimizers "
         "with foreach/fused=True)"},
    [RS_ADVICE_EXPOSED_COMM] =
        {"exposed_comm",
         "NCCL communication is not overlapped with compute",
         {"exposed_comm_ms_per_step", "nccl_ms_per_step", "waiting_for_slowest_ms", NULL},
         "median per step of the NCCL time during which no compute kernel ran, less the rank's "
         "compute deficit against the slowest rank (waiting for it: load_imbalance): what is "
         "left goes if it were hidden under compute",
         "overlap it: DDP(bucket_cap_mb=...) so buckets are ready earlier, gradient_as_bucket_view"
         "=True, no_sync() for gradient accumulation; FSDP: forward/backward_prefetch, "
         "limit_all_gathers; fewer, larger collectives"},
    [RS_ADVICE_MEMORY_BOUND] =
        {"memory_bound",
         "kernels spend most PC samples stalled on memory",
         {"memory_stall_pct", "gpu_busy_ms_per_step", "samples", NULL},
         "the GPU's busy time per step times the share of memory stalls above one half (PC "
         "sampling): an upper bound of what better memory access would save",
         "lower memory traffic: fuse ops (torch.compile), use bf16/fp16 activations, "
         "channels_last for convolutions, larger tiles/batch per kernel"},
    [RS_ADVICE_LOAD_IMBALANCE] =
        {"load_imbalance",
         "one rank computes longer than the others every step",
         {"rank_compute_ms", "others_compute_ms", "extra_pct", NULL},
         "the rank's median compute per step minus the median of the other ranks': the others "
         "wait that long for it at each synchronizing collective",
         "balance the work: equal batch/sequence lengths per rank (bucketing, padding, "
         "DistributedSampler with drop_last), rebalanced pipeline stages, MoE capacity limits; "
         "check that no rank does extra work (logging, evaluation, checkpointing) in the step"},
    [RS_ADVICE_BATCH_SIZE] =
        {"batch_size",
         "GPU memory is free and the GPU idles every step: a larger batch would use both",
         {"memory_used_mib", "memory_total_mib", "idle_share_pct", "batch_factor"},
         "median per step of the GPU idle between kernels and after host synchronizations "
         "(launch_bound's and host_sync's: per-step costs that a larger batch does not "
         "multiply, it makes the kernels longer; not the idle at the step's start nor copies, "
         "which grow with the batch) times 1 - 1/batch_factor, per current batch of samples; "
         "batch_factor: how many times the batch fits in 80% of the fullest GPU's memory (NVML's "
         "largest reading over the steps, at least their last 10 s), counting all memory used "
         "as growing with the batch, at most 8",
         "raise the batch per GPU by up to batch_factor (DataLoader(batch_size=...)), scaling the "
         "learning rate with it (linear scaling with warmup, or LAMB/LARS for large batches); if "
         "the global batch must stay, lower gradient accumulation steps "
         "(fewer, larger micro-batches) instead of more optimizer steps; check peak memory with "
         "torch.cuda.max_memory_allocated() after the change"},
};

const char *
rs_advice_kind_name(enum rs_advice_kind k)
{
    return k < RS_ADVICE_KIND_COUNT ? texts[k].name : "unknown";
}

static json_t *
finding_json(const struct rs_advice_finding *f)
{
    const struct kind_text *t = &texts[f->kind];
    json_t *seen = json_object(), *names = json_array();

    for (int i = 0; seen && i < RS_ADVICE_SEEN; i++)
        if (t->seen[i])
            json_object_set_new(seen, t->seen[i], json_real(f->seen[i]));
    for (uint32_t i = 0; names && i < f->n_names; i++)
        json_array_append_new(names, json_string(f->names[i]));
    return json_pack("{s:s, s:s, s:I, s:I, s:f, s:f, s:f, s:o, s:o, s:s, s:s}", "kind", t->name,
                     "title", t->title, "rank", (json_int_t)f->rank, "ranks", (json_int_t)f->ranks,
                     "cost_ms", (double)f->cost_ns / 1e6, "step_ms", (double)f->step_ns / 1e6,
                     "cost_share", f->step_ns ? (double)f->cost_ns / (double)f->step_ns : 0.0,
                     "seen", seen ? seen : json_null(), "kernels", names ? names : json_null(),
                     "how", t->how, "fix", t->fix);
}

/* Why batch_size was not checked: no readings, or no room for twice the batch. */
static void
skip_batch(json_t *skipped, const struct rs_advice *a)
{
    char why[240];

    if (a->ranks_with_memory == 0)
        snprintf(why, sizeof why,
                 "no GPU memory telemetry for the ranks' GPUs in the steps analysed (NVML readings "
                 "come from a live node agent; imported traces have none)");
    else if (a->batch_factor == 0)
        snprintf(why, sizeof why,
                 "memory near full: rank %u's GPU used %.0f of %.0f MiB (%.0f%%); twice the batch "
                 "would not fit in %.0f%% of it",
                 a->fullest_rank, a->fullest_used_mib, a->fullest_total_mib,
                 100.0 * a->fullest_used_mib / a->fullest_total_mib, 100.0 * RS__ADVICE_BATCH_FILL);
    else
        return;
    json_array_append_new(skipped, json_pack("{s:s, s:s}", "kind", "batch_size", "why", why));
}

json_t *
rs_advice_json(const char *job, const struct rs_advice *a)
{
    json_t *list = json_array(), *skipped = json_array();

    for (size_t i = 0; list && i < a->n; i++)
        json_array_append_new(list, finding_json(&a->findings[i]));
    if (skipped && !a->stalls_seen)
        json_array_append_new(skipped, json_pack("{s:s, s:s}", "kind", "memory_bound", "why",
                                                 "no PC-sampling samples in the steps analysed"));
    if (skipped)
        skip_batch(skipped, a);
    if (skipped && a->ranks_without_kernels > 0) {
        char why[200];
        snprintf(why, sizeof why,
                 "%zu rank(s) have no kernel records in their steps (an agent that summarizes, or "
                 "records rolled up): the idle, copy and kernel findings are not checked there",
                 a->ranks_without_kernels);
        json_array_append_new(skipped, json_pack("{s:s, s:s}", "kind", "timeline", "why", why));
    }
    if (skipped && a->ranks < 2)
        json_array_append_new(skipped,
                              json_pack("{s:s, s:s}", "kind", "load_imbalance", "why", "one rank"));
    if (!list || !skipped) {
        json_decref(list);
        json_decref(skipped);
        return NULL;
    }
    return json_pack(
        "{s:s, s:o, s:s, s:I, s:I, s:I, s:f, s:f, s:f, s:I, s:o, s:o}", "job", job, "rank",
        a->rank == RS_ADVICE_ALL_RANKS ? json_null() : json_integer((json_int_t)a->rank),
        "steps_source", a->steps_source, "ranks", (json_int_t)a->ranks, "ranks_with_steps",
        (json_int_t)a->ranks_with_steps, "steps_analysed", (json_int_t)a->steps_analysed,
        "median_step_ms", (double)a->median_step_ns / 1e6, "min_share", RS_ADVICE_MIN_SHARE,
        "min_cost_ms", (double)RS_ADVICE_MIN_COST_NS / 1e6, "below_threshold",
        (json_int_t)a->below_threshold, "findings", list, "skipped", skipped);
}
