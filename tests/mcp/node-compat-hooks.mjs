export async function resolve(specifier, context, next) {
  if ((specifier === 'fs' || specifier === 'node:fs') &&
      context.parentURL && (context.parentURL.includes('/@modelcontextprotocol/conformance/') ||
                            context.parentURL.includes('/node_modules/conformance-next/'))) {
    return { url: new URL('./node-compat-fs.mjs', import.meta.url).href, shortCircuit: true };
  }
  return next(specifier, context);
}
