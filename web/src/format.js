// Numbers for people: milliseconds, percentages, times, ratios.
// A duration given in ms: "8.25 ms", "873.4 ms"; from a second up as `seconds` writes it ("28.7 s",
// "4.2 min"), never "28686.3 ms".
export const ms = (v) => (v === null || v === undefined ? '–'
    : Math.abs(v) >= 999.95 ? seconds(Number(v) / 1000) : `${Number(v).toFixed(v < 10 ? 2 : 1)} ms`);
export const pct = (v) => (v === null || v === undefined ? '–' : `${Number(v).toFixed(1)}%`);
export const slower = (ratio) => `${((ratio - 1) * 100).toFixed(1)}% slower`;
export const time = (ns) => (ns ? new Date(Number(ns) / 1e6).toISOString().replace('T', ' ').slice(0, 19) + 'Z' : '–');
export const seconds = (s) => (Math.abs(s) < 120 ? `${s.toFixed(1)} s` : Math.abs(s) < 7200 ? `${(s / 60).toFixed(1)} min` : `${(s / 3600).toFixed(1)} h`);
