'use strict';
// zod.cjs: tools declared with a zod 4 schema (classic or mini). zod is an
// optional peer dependency: it is loaded only when a schema is one of its.
//
// capstan validates the model's arguments against the schema's JSON Schema
// (zod's own z.toJSONSchema, the input side: what the model may send), so the
// model reads capstan's errors; zod then parses the checked arguments, so the
// tool gets zod's output (transforms applied) and refinements JSON Schema
// cannot say (.refine, .check) still hold.

let core = null;

/** Whether `schema` is a zod 4 schema. */
function isZod(schema) {
  return schema !== null && typeof schema === 'object' && schema._zod !== null && typeof schema._zod === 'object' && schema._zod.def !== undefined;
}

function zodCore(name) {
  if (core === null) {
    try {
      core = require('zod/v4/core');
    } catch (e) {
      throw new TypeError(`tool ${JSON.stringify(name)}: its parameters are a zod schema, but zod 4 cannot be loaded (npm install zod): ${e.message}`);
    }
  }
  return core;
}

/**
 * For tool `name` declared with zod schema `schema`: the JSON Schema text to
 * register and `wrap(fn)`, the function capstan calls (zod's parse, then `fn`).
 */
function zodTool(name, schema) {
  const z = zodCore(name);
  let json;
  try {
    json = z.toJSONSchema(schema, { io: 'input' });
  } catch (e) {
    throw new TypeError(`tool ${JSON.stringify(name)}: its zod schema has no JSON Schema (${e.message}); a tool's arguments are JSON`);
  }
  // The draft is capstan's own (2020-12); the providers take no "$schema".
  delete json.$schema;
  const invalid = (error) => new Error(`Invalid arguments:\n${z.prettifyError(error)}`);
  const wrap = (fn) => (args, ctx) => {
    let parsed;
    try {
      parsed = z.safeParse(schema, args);
    } catch (e) {
      if (!(e instanceof z.$ZodAsyncError)) throw e;
      // An async refinement or transform: parse, then run.
      return z.safeParseAsync(schema, args).then((r) => {
        if (!r.success) throw invalid(r.error);
        return fn(r.data, ctx);
      });
    }
    if (!parsed.success) throw invalid(parsed.error);
    return fn(parsed.data, ctx);
  };
  return { parameters: JSON.stringify(json), wrap };
}

module.exports = { isZod, zodTool };
