// Numbers for people: milliseconds, percentages, times, ratios.
export const ms = (v) => (v === null || v === undefined ? '–' : `${Number(v).toFixed(v < 10 ? 2 : 1)} ms`);
export const pct = (v) => (v === null || v === undefined ? '–' : `${Number(v).toFixed(1)}%`);
export const slower = (ratio) => `${((ratio - 1) * 100).toFixed(1)}% slower`;
export const time = (ns) => (ns ? new Date(Number(ns) / 1e6).toISOString().replace('T', ' ').slice(0, 19) + 'Z' : '–');
export const seconds = (s) => (s < 120 ? `${s.toFixed(1)} s` : s < 7200 ? `${(s / 60).toFixed(1)} min` : `${(s / 3600).toFixed(1)} h`);
