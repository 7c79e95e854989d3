// The conformance suite (0.1.16) imports `globSync` from `fs`, which Node
// has only since 22; Debian's Node is 20. It uses it only in its
// `tier-check` command, never in client or server mode. On a Node without
// it, this loader hook drops that import and defines a stand-in that fails
// loudly if it is ever called. Use: node --import ./node20-compat.mjs ...
import * as fs from 'node:fs';
import { register } from 'node:module';

if (typeof fs.globSync !== 'function') {
  register('data:text/javascript,' + encodeURIComponent(`
    export async function load(url, context, next) {
      const result = await next(url, context);
      if (url.includes('/@modelcontextprotocol/conformance/dist/') && result.source) {
        const source = String(result.source);
        const m = source.match(/globSync as (\\w+),/);
        if (m) {
          return { ...result, source: source.replace(m[0], '') +
            '\\nfunction ' + m[1] + '() { throw new Error("fs.globSync needs Node >= 22"); }\\n' };
        }
      }
      return result;
    }`));
}
