// The conformance CLI imports fs.globSync (Node >= 22) at load time, for a
// report the server/client modes never write; Debian and NodeSource ship
// Node 20. Loaded with `node --import`, this hands the CLI an fs whose
// globSync exists (Node's own when there is one).
import { register } from 'node:module';
register('./node-compat-hooks.mjs', import.meta.url);
