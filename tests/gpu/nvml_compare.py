#!/usr/bin/env python3
"""Compares one reading of each GPU through the agent's NVML code (rs-nvml-read's JSON) with
`nvidia-smi -q -x` taken right after it (tests/gpu/nvml.sh). Prints one line per field: the
agent's value, nvidia-smi's, and whether they agree — exactly for what does not move (maxima,
limits, totals, link maxima, error counters), within a tolerance for what does (clocks, power,
temperature, utilisation, memory used, current link). Ends with "nvml: N agree, N differ"."""
import json
import re
import sys
import xml.etree.ElementTree as ET


def num(text):
    m = re.search(r"-?\d+(\.\d+)?", text or "")
    return float(m.group(0)) if m else None


def find(gpu, *paths):
    for p in paths:
        e = gpu.find(p)
        if e is not None and e.text and e.text.strip() not in ("N/A", "Unknown"):
            return e.text.strip()
    return None


def main():
    agent = json.load(open(sys.argv[1]))
    smi = ET.parse(sys.argv[2]).getroot()
    agree = differ = 0
    for r in agent["readings"]:
        gpu = next((g for g in smi.findall("gpu") if find(g, "uuid") == r["uuid"]), None)
        if gpu is None:
            print("differ  uuid %s: nvidia-smi has no such GPU" % r["uuid"])
            differ += 1
            continue
        print("GPU %s (%s)" % (r["uuid"], find(gpu, "product_name")))
        rows = [
            # (field, agent value, nvidia-smi paths, tolerance: None exact, else (abs, rel))
            ("sm_max_mhz", r["sm_max_mhz"], ["max_clocks/sm_clock"], None),
            ("mem_max_mhz", r["mem_max_mhz"], ["max_clocks/mem_clock"], None),
            ("sm_mhz", r["sm_mhz"], ["clocks/sm_clock"], (30, 0.15)),
            ("mem_mhz", r["mem_mhz"], ["clocks/mem_clock"], (30, 0.15)),
            ("power_w", r["power_mw"] / 1000, ["gpu_power_readings/instant_power_draw",
                                                "gpu_power_readings/power_draw",
                                                "power_readings/power_draw"], (15, 0.25)),
            ("power_limit_w", r["power_limit_mw"] / 1000,
             ["gpu_power_readings/enforced_power_limit", "gpu_power_readings/current_power_limit",
              "power_readings/enforced_power_limit"], (0.5, 0)),
            ("temperature_c", r["temperature_c"], ["temperature/gpu_temp"], (2, 0)),
            ("util_gpu_pct", r["util_gpu_pct"], ["utilization/gpu_util"], (25, 0)),
            ("util_mem_pct", r["util_mem_pct"], ["utilization/memory_util"], (25, 0)),
            ("mem_total_mib", r["mem_total_bytes"] / 2**20, ["fb_memory_usage/total"], (1, 0)),
            ("mem_used_mib", r["mem_used_bytes"] / 2**20, ["fb_memory_usage/used"], (64, 0.05)),
            ("ecc_corrected", r["ecc_corrected"], ["ecc_errors/volatile/dram_correctable",
                                                    "ecc_errors/volatile/single_bit/total"], None),
            ("ecc_uncorrected", r["ecc_uncorrected"],
             ["ecc_errors/volatile/dram_uncorrectable", "ecc_errors/volatile/double_bit/total"],
             None),
            ("remapped_correctable", r["remapped_correctable"],
             ["remapped_rows/remapped_row_corr"], None),
            ("remapped_uncorrectable", r["remapped_uncorrectable"],
             ["remapped_rows/remapped_row_unc"], None),
            ("pcie_gen_max", r["pcie_gen_max"], ["pci/pci_gpu_link_info/pcie_gen/max_link_gen"],
             None),
            ("pcie_gen", r["pcie_gen"], ["pci/pci_gpu_link_info/pcie_gen/current_link_gen"],
             (1, 0)),
            ("pcie_width_max", r["pcie_width_max"],
             ["pci/pci_gpu_link_info/link_widths/max_link_width"], None),
            ("pcie_width", r["pcie_width"], ["pci/pci_gpu_link_info/link_widths/current_link_width"],
             None),
            ("pcie_replay", r["pcie_replay"], ["pci/replay_counter"], None),
        ]
        present = r["present"]
        for field, mine, paths, tol in rows:
            theirs_text = find(gpu, *paths)
            theirs = num(theirs_text)
            if theirs is None:
                print("  n/a     %-22s agent %-10s nvidia-smi %s" % (field, mine, theirs_text))
                continue
            if tol is None:
                ok = abs(mine - theirs) < 0.5
            else:
                ok = abs(mine - theirs) <= max(tol[0], tol[1] * abs(theirs))
            agree += ok
            differ += not ok
            print("  %-7s %-22s agent %-10g nvidia-smi %s" % ("agree" if ok else "DIFFER", field,
                                                               mine, theirs_text))
        print("  info    clock_reasons 0x%x, present fields 0x%x, nvlink_up %d, xids %d" %
              (r["clock_reasons"], present, r["nvlink_up"], r["xids"]))
    print("info    agent: %.1f us CPU, %.1f us wall per GPU reading (%d readings per GPU); "
          "%d NVML functions missing, %d errors, %d unsupported" %
          (agent["cpu_us_per_gpu_reading"], agent["wall_us_per_gpu_reading"],
           agent["reads_per_gpu"], agent["missing_functions"], agent["errors"],
           agent["unsupported"]))
    for f in agent.get("functions", []):
        print("info    %-42s %6d calls %9.1f us per call" % (f["function"], f["calls"],
                                                             f["us_per_call"]))
    print("nvml: %d agree, %d differ" % (agree, differ))
    return 0 if differ == 0 else 1


if __name__ == "__main__":
    sys.exit(main())
