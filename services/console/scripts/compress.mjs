// Writes a brotli (.br) and a gzip (.gz) copy beside every built script and style sheet, once at
// build time: the gateway serves the smallest the browser accepts (services/gateway/src/console.ts),
// with no compression work per request. ADR 0050.
import { readdirSync, readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { brotliCompressSync, constants, gzipSync } from 'node:zlib';

const dist = path.join(path.dirname(fileURLToPath(import.meta.url)), '..', 'dist');
// The console's assets, and the customer portal's (dist/portal, ADR 0069).
for (const [name, assets] of [['console', path.join(dist, 'assets')], ['portal', path.join(dist, 'portal', 'assets')]]) {
  let raw = 0;
  let br = 0;
  let gz = 0;
  for (const file of readdirSync(assets).filter((n) => /\.(js|css)$/.test(n)).map((n) => path.join(assets, n))) {
    const body = readFileSync(file);
    const brotli = brotliCompressSync(body, { params: { [constants.BROTLI_PARAM_QUALITY]: 11, [constants.BROTLI_PARAM_SIZE_HINT]: body.length } });
    const gzip = gzipSync(body, { level: 9 });
    writeFileSync(`${file}.br`, brotli);
    writeFileSync(`${file}.gz`, gzip);
    raw += body.length;
    br += brotli.length;
    gz += gzip.length;
  }
  console.log(`${name} assets: ${(raw / 1024).toFixed(1)} KB, ${(br / 1024).toFixed(1)} KB with brotli, ${(gz / 1024).toFixed(1)} KB with gzip`);
}
