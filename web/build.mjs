// Bundles the dashboard (web/src/main.js and everything it imports, echarts included) into one
// minified script and one stylesheet under OUT/assets, and copies index.html: the files
// scripts/embed_assets.sh builds into rankscope-server. Runs on Node 18 (Debian 12).
import { build } from 'esbuild';
import { copyFileSync, mkdirSync, rmSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const here = dirname(fileURLToPath(import.meta.url));
const out = process.argv[2];
if (!out) {
    console.error('usage: node build.mjs OUT');
    process.exit(2);
}
rmSync(out, { recursive: true, force: true });
mkdirSync(join(out, 'assets'), { recursive: true });
await build({
    entryPoints: { app: join(here, 'src/main.js'), early: join(here, 'src/early.js'), style: join(here, 'src/style.css') },
    outdir: join(out, 'assets'),
    bundle: true,
    minify: true,
    format: 'iife',
    target: ['chrome100', 'firefox100', 'safari15'],
    legalComments: 'eof',
    logLevel: 'warning',
});
copyFileSync(join(here, 'index.html'), join(out, 'index.html'));
