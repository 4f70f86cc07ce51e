// Hardware numbers for people (the GPU, advice and fleet panels): figures NVML did not give are
// null in the API and shown as "–".
const num = (v) => v !== null && v !== undefined && Number.isFinite(Number(v));

export const dash = (v, f) => (num(v) ? f(Number(v)) : '–');
export const int = (v) => dash(v, (x) => Math.round(x).toLocaleString('en-US'));
export const share = (v) => dash(v, (x) => `${(x * 100).toFixed(0)}%`);
export const mhz = (v) => dash(v, (x) => `${Math.round(x).toLocaleString('en-US')} MHz`);
export const watts = (v) => dash(v, (x) => `${x.toFixed(0)} W`);
export const mib = (v) => dash(v, (x) => (x >= 1024 ? `${(x / 1024).toFixed(1)} GiB` : `${x.toFixed(0)} MiB`));
export const celsius = (v) => dash(v, (x) => `${x.toFixed(0)} °C`);

// A ratio as a bar cell's text and a CSS class: `low` when under `warn` of the maximum.
export function ofMax(v, max, warn = 0.95) {
    if (!num(v) || !num(max) || max <= 0) return { text: '–', low: false };
    return { text: `${Math.round((v / max) * 100)}%`, low: v / max < warn };
}
