// Writes a brotli (.br) and a gzip (.gz) copy beside every built script and style sheet, once at
// build time: the gateway serves the smallest the browser accepts (services/gateway/src/console.ts),
// with no compression work per request. ADR 0050.
import { readdirSync, readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { brotliCompressSync, constants, gzipSync } from 'node:zlib';

const assets = path.join(path.dirname(fileURLToPath(import.meta.url)), '..', 'dist', 'assets');
let raw = 0;
let br = 0;
for (const name of readdirSync(assets)) {
  if (!/\.(js|css)$/.test(name)) continue;
  const file = path.join(assets, name);
  const body = readFileSync(file);
  const brotli = brotliCompressSync(body, { params: { [constants.BROTLI_PARAM_QUALITY]: 11, [constants.BROTLI_PARAM_SIZE_HINT]: body.length } });
  writeFileSync(`${file}.br`, brotli);
  writeFileSync(`${file}.gz`, gzipSync(body, { level: 9 }));
  raw += body.length;
  br += brotli.length;
}
console.log(`console assets: ${(raw / 1024).toFixed(1)} KB, ${(br / 1024).toFixed(1)} KB with brotli`);
